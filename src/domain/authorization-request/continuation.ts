/**
 * The browser's side of a request, proven by its binding cookie: what the page's script is
 * told (authenticatedAgentFor), and POST /authorize/continue, authenticated → completed with
 * a code, or cancelled (continueAuthorization).
 */
import type { Context } from '../../context.ts';
import { digest, newCode, safeEqual } from '../../crypto.ts';
import {
  AccessDenied,
  InvalidClient,
  InvalidRequest,
  type OAuthError,
  RequestAlreadyUsed,
  RequestContested,
  RequestExpired,
} from '../../errors.ts';
import type { AgentRecord } from '../../store/agents.ts';
import type { ClientRecord } from '../../store/clients.ts';
import type { AuthorizationRequestRecord, RequestStatus, RequestWithClient } from '../../store/requests.ts';
import { redirectUriMatches } from '../clients.ts';
import { requestCancelled } from '../webhooks/events.ts';
import { errorResponseUri, type ReturnTarget, returnTarget, withQuery, withReturnTarget } from './return-tickets.ts';
import { NO_LONGER_REGISTERED } from './state.ts';
import { statusView } from './status.ts';

/**
 * What the website is told when the person at the page cancels (error access_denied); an owner's
 * denial tells it DENIED_DESCRIPTION (approvals.ts) instead.
 *
 * @example
 * new URL(location).searchParams.get('error_description'); // CANCELLED_DESCRIPTION after Cancel
 */
export const CANCELLED_DESCRIPTION = 'The user cancelled the authorization request.';

export type ContinueAction = 'approve' | 'cancel';

export type ContinueOutcome =
  | { kind: 'redirect'; location: string }
  /** Still waiting for the agent: show the authorization page again. */
  | { kind: 'waiting'; request: AuthorizationRequestRecord; client: ClientRecord }
  /** approval=manual: show who authenticated and ask the person to confirm. */
  | { kind: 'confirm'; request: AuthorizationRequestRecord; client: ClientRecord; agent: AgentRecord | undefined };

/**
 * The request and its client, if this browser started the request (the binding cookie proves
 * it); throws for the 400/403 page otherwise. A browser that cannot prove it is still told a
 * request's end (expired, cancelled, completed): that is public through check-status, and is
 * what happened, whichever browser asks.
 */
async function boundRequest(
  ctx: Pick<Context, 'store' | 'clock'>,
  requestId: string,
  browserBinding: string | undefined,
): Promise<RequestWithClient> {
  const found = await ctx.store.requests.findWithClient(requestId);
  if (!found) throw new InvalidRequest('The authorization request does not exist.');
  const bindingDigest = browserBinding ? digest(browserBinding) : '';
  if (!safeEqual(bindingDigest, found.request.browser_digest)) {
    const view = statusView(found.request, ctx.clock());
    if (view.status === 'error') throw errorOf(view.error, view.error_description);
    if (view.status === 'completed')
      throw new RequestAlreadyUsed('This authorization request has already been completed.');
    throw new AccessDenied(
      'This authorization request was started in another browser; start again from the application.',
    );
  }
  return found;
}

/** Who authenticated a request, as the browser that started it is shown before it goes on. */
export interface AuthenticatedAgentView {
  status: RequestStatus;
  agent?: { agent_id: string; name: string; owner_name: string | null; owner_email: string; model: string };
  /**
   * While the agent's owner is asked to approve (docs/design.md §16): whose approval the page
   * waits for. The owner's name only, never an email: the person at the browser is the owner or
   * works with them, and an agent's owner is not a stranger's to mail.
   */
  approval?: { agent_name: string; owner_name: string | null };
}

/**
 * For the page's script: the request's status and, once an agent has authenticated, which
 * one, so the person sees who signs them in (identity swap, docs/design.md §5); while the
 * agent's owner is asked, whose approval it waits for (§16). Only the browser holding the
 * binding cookie may ask; the public status endpoint never says.
 */
export async function authenticatedAgentFor(
  ctx: Pick<Context, 'store' | 'clock'>,
  requestId: string,
  browserBinding: string | undefined,
): Promise<AuthenticatedAgentView> {
  const { request } = await boundRequest(ctx, requestId, browserBinding);
  const { status } = statusView(request, ctx.clock());
  if (status === 'pending' && request.approval_id !== null) {
    const approval = await ctx.store.approvals.find(request.approval_id);
    if (approval) return { status, approval: { agent_name: approval.agent_name, owner_name: approval.owner_name } };
  }
  if (status !== 'authenticated' || !request.agent_id) return { status };
  const agent = await ctx.store.agents.find(request.agent_id);
  return {
    status,
    agent: {
      agent_id: request.agent_id,
      name: agent?.name ?? request.agent_id,
      owner_name: agent?.owner_name ?? null,
      owner_email: agent?.owner_email ?? '',
      model: request.model ?? '',
    },
  };
}

/**
 * Approve or cancel from the browser that started the request (the binding cookie proves it).
 * Throws the OAuthError for the 400/403 page.
 */
export async function continueAuthorization(
  ctx: Context,
  input: { requestId: string; action: ContinueAction; confirmed: boolean },
  browserBinding: string | undefined,
): Promise<ContinueOutcome> {
  const { request, client } = await boundRequest(ctx, input.requestId, browserBinding);
  if (client?.status !== 'active')
    throw new InvalidClient('The website of this authorization request is no longer active.', 400);
  // Its owner may have taken the redirect URI away since the request began: the browser is not
  // sent there, not even with an error (RFC 6749 §4.1.2.1).
  if (!redirectUriMatches(client, request.redirect_uri)) throw new InvalidRequest(NO_LONGER_REGISTERED);

  const now = ctx.clock();
  const view = statusView(request, now);
  if (view.status === 'completed')
    throw new RequestAlreadyUsed('This authorization request has already been completed.');

  const iss = ctx.config.baseUrl;
  // This browser started the request and the redirect URI was checked when it was made: the way
  // back to the website carries the error and state (RFC 6749 §4.1.2.1).
  const back = (error: string, description: string): ReturnTarget =>
    returnTarget(ctx, client, request.redirect_uri, error, description, request.state);
  const redirectBack = (error: string, description: string) =>
    errorResponseUri(request.redirect_uri, error, description, request.state, iss);
  if (input.action === 'cancel') {
    // Cancel always takes the person back to the website, even once the request has ended
    // (expired, contested, cancelled in another tab): leaving is what they asked for.
    // Once the request has ended, the website is told how it ended (the owner's denial, a
    // cancel in another tab, a contest), not that this person cancelled it.
    if (view.status === 'error') {
      const description =
        view.error === 'request_expired'
          ? 'The authorization request expired before the user signed in; the user went back.'
          : view.error_description || CANCELLED_DESCRIPTION;
      return { kind: 'redirect', location: redirectBack('access_denied', description) };
    }
    const description = CANCELLED_DESCRIPTION;
    const cancelled = [requestCancelled(request, client)];
    if (
      !(await ctx.store.requests.fail(request.id, request.browser_digest, now, 'access_denied', description, cancelled))
    ) {
      return continueAuthorization(ctx, input, browserBinding); // the state changed under us: answer from the new one
    }
    return { kind: 'redirect', location: redirectBack('access_denied', description) };
  }
  if (view.status === 'error') {
    // Continue after the end: the page says what happened, and offers the way back.
    throw withReturnTarget(errorOf(view.error, view.error_description), back('access_denied', view.error_description));
  }

  if (view.status === 'pending') return { kind: 'waiting', request, client };
  if (client.approval === 'manual' && !input.confirmed) {
    return {
      kind: 'confirm',
      request,
      client,
      agent: request.agent_id ? await ctx.store.agents.find(request.agent_id) : undefined,
    };
  }

  const code = newCode();
  const won = await ctx.store.requests.complete(request.id, request.browser_digest, now, {
    digest: digest(code),
    request_id: request.id,
    client_id: request.client_id,
    redirect_uri: request.redirect_uri,
    scope: request.scope,
    code_challenge: request.code_challenge,
    nonce: request.nonce,
    resource: request.resource,
    agent_id: request.agent_id!,
    model: request.model!,
    auth_time: request.authenticated_at!,
    expires_at: now + ctx.config.codeTtl,
    redeemed_at: null,
    grant_id: null,
  });
  if (!won) return continueAuthorization(ctx, input, browserBinding);
  return { kind: 'redirect', location: withQuery(request.redirect_uri, { code, state: request.state, iss }) };
}

function errorOf(error: string, description: string): OAuthError {
  if (error === 'request_expired') return new RequestExpired(description);
  if (error === 'request_contested') return new RequestContested(description);
  if (error === 'access_denied') return new AccessDenied(description, 400);
  return new InvalidRequest(description);
}
