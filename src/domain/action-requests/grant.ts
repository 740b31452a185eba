/**
 * The CIBA grant at /token (OpenID CIBA Core 1.0 §10.1, §11; docs/design.md §21):
 * grant_type=urn:openid:params:grant-type:ciba with the auth_req_id, the client authenticated as
 * for any grant. Pending: authorization_pending, or slow_down for a poll sooner than the interval
 * (which then grows by 5 seconds, stored, so every node agrees). Denied (by the owner or the
 * policy): access_denied. Expired: expired_token. Approved: the tokens, once; a second request is
 * invalid_grant, as are an unknown auth_req_id and another client's.
 */
import type { Context } from '../../context.ts';
import { digest } from '../../crypto.ts';
import {
  AccessDenied,
  AuthorizationPending,
  ExpiredToken,
  InvalidGrant,
  InvalidRequest,
  SlowDown,
} from '../../errors.ts';
import { authenticateClient, type ClientCredentials } from '../client-authentication.ts';
import { type ActionTokenResponse, grantAgent, prepareActionTokens } from '../tokens.ts';
import { POLL_INTERVAL } from './ask.ts';
import { ACTION_OUTCOMES, actionAudit } from './decide.ts';

/** The auth_req_id the website was given: refused alike whether unknown, another client's or used. */
const INVALID = 'The auth_req_id is invalid, was issued to another client, or its tokens were issued already.';

/**
 * grant_type=urn:openid:params:grant-type:ciba: the answer to the website's action request.
 *
 * @throws InvalidClient, InvalidRequest, InvalidGrant, AuthorizationPending, SlowDown,
 *   AccessDenied (400), ExpiredToken.
 * @example
 * const tokens = await cibaGrant(ctx, { client_id, client_secret, auth_req_id });
 * tokens.authorization_details; // the approved action
 */
export async function cibaGrant(
  ctx: Context,
  input: ClientCredentials & { auth_req_id?: string },
  log?: (message: string) => void,
): Promise<ActionTokenResponse> {
  const client = await authenticateClient(ctx, input, log);
  if (!input.auth_req_id) throw new InvalidRequest('auth_req_id is required');
  const request = await ctx.store.actionRequests.findByDigest(digest(input.auth_req_id));
  if (!request || request.client_id !== client.id || request.status === 'issued') throw new InvalidGrant(INVALID);
  const now = ctx.clock();
  if (request.status === 'expired' || now >= request.expires_at)
    throw new ExpiredToken('The action request expired before it was decided or its tokens collected.');
  if (request.status === 'denied')
    throw new AccessDenied(
      request.answered_by === 'policy'
        ? "The agent's owner does not allow this action (their policy)."
        : "The agent's owner denied this action.",
      400,
    );
  if (request.status === 'pending') {
    if (!(await ctx.store.actionRequests.poll(request.id, now, POLL_INTERVAL)))
      throw new SlowDown(`Polled too soon: wait ${request.poll_interval + POLL_INTERVAL} seconds between polls.`);
    throw new AuthorizationPending("The agent's owner has not decided yet.");
  }

  // Approved: the tokens belong to the agent's grant here, which must still be usable.
  const [grant, agent] = await Promise.all([
    ctx.store.grants.find(request.grant_id),
    ctx.store.agents.find(request.agent_id),
  ]);
  const usable = grant && grantAgent({ token: null, grant, agent, clientActive: true }, now);
  if (!grant || !usable) throw new InvalidGrant("The agent's grant at this client was revoked, or the agent disabled.");
  const { response, accessToken } = await prepareActionTokens(ctx, {
    client,
    clientSecret: input.client_secret ?? null,
    grant,
    agent: usable,
    scope: request.scope,
    authorizationDetails: request.authorization_details,
    decidedAt: request.decided_at ?? now,
    now,
  });
  if (
    !(await ctx.store.actionRequests.issue(
      request.id,
      now,
      accessToken,
      actionAudit(request, ACTION_OUTCOMES.issued, now),
    ))
  )
    throw new InvalidGrant(INVALID);
  return response;
}
