/**
 * A website asks an agent's owner (OpenID CIBA Core 1.0 §7, docs/design.md §21): POST
 * /bc-authorize's rule. The client authenticates as at /token; the request names the agent (its
 * `sub` as login_hint, or an ID token issued to this client as id_token_hint), the action
 * (RFC 9396 authorization_details of the client's registered action types) and a binding
 * message. Only an agent holding a live grant at this client, active, with an active owner, may
 * be asked about; anything else is one answer, unknown_user_id. The agent's policy for actions
 * may answer at once; otherwise its owner is asked (an approval of kind 'action'), and the
 * website learns the answer at /token (grant.ts) or by a ping (ping.ts).
 */
import { createDecoder, createVerifier } from 'fast-jwt';
import type { Context } from '../../context.ts';
import { digest, newActionRequestId, newApprovalId, newAuthReqId } from '../../crypto.ts';
import {
  InvalidBindingMessage,
  InvalidRequest,
  InvalidScope,
  TooManyRequests,
  UnauthorizedClient,
  UnknownUserId,
} from '../../errors.ts';
import type { ActionRequestRecord } from '../../store/action-requests.ts';
import type { AgentRecord } from '../../store/agents.ts';
import type { ApprovalRecord, ApprovalView } from '../../store/approvals.ts';
import type { ClientRecord } from '../../store/clients.ts';
import type { GrantRecord } from '../../store/tokens.ts';
import { actionAnswer, agentCredentialsExpired, policyOf } from '../agent-policy.ts';
import { mailOwner, type WarningLog } from '../approvals.ts';
import { type AuthorizationDetail, checkAuthorizationDetails } from '../authorization-details.ts';
import { authenticateClient, type ClientCredentials } from '../client-authentication.ts';
import { isPublicClient, openSealed } from '../clients.ts';
import { jwtHeader } from '../jwt.ts';
import { hasScope, isSubset, normalizeScope } from '../scopes.ts';
import { approvalRequested } from '../webhooks/events.ts';
import { ACTION_OUTCOMES, actionAudit } from './decide.ts';
import type { SealedPing } from './ping.ts';

/** Seconds between polls a website is told (CIBA §7.3), and what each slow_down adds. */
export const POLL_INTERVAL = 5;
/** requested_expiry's bounds and default, in seconds. */
export const MIN_EXPIRY = 30;
export const MAX_EXPIRY = 600;
export const DEFAULT_EXPIRY = 300;
/** The longest binding_message (characters), and client_notification_token. */
export const MAX_BINDING_MESSAGE = 100;
export const MAX_NOTIFICATION_TOKEN = 1024;
/** Pending action requests one agent may have at one website, and at all (flooding an owner). */
export const PENDING_LIMITS = { perWebsite: 5, perAgent: 20 } as const;

/** Characters a person cannot see or that reorder text: refused in a binding message (consent phishing). */
const UNDISPLAYABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\u2028\u2029]/u;
/** What a bearer token may hold (RFC 6750 §2.1's b64token, and a little more: visible ASCII). */
const NOTIFICATION_TOKEN = /^[\x21-\x7e]+$/;

/** The same words for every agent a client may not ask about, whatever the reason. */
export const UNKNOWN_USER =
  'The hint does not name an agent this client may ask about: it must be the sub of an agent that signed in to this client.';

/** What POST /bc-authorize carries (a form body), besides the client's credentials. */
export interface ActionAskBody {
  scope?: string;
  login_hint?: string;
  id_token_hint?: string;
  login_hint_token?: string;
  binding_message?: string;
  authorization_details?: string;
  requested_expiry?: string;
  client_notification_token?: string;
  user_code?: string;
  acr_values?: string;
  request?: string;
  request_uri?: string;
}

/** CIBA §7.3's answer. */
export interface ActionAskAnswer {
  auth_req_id: string;
  expires_in: number;
  interval: number;
}

/** Parameters CIBA defines that this server does not serve: refused by name rather than ignored. */
const UNSUPPORTED = ['login_hint_token', 'user_code', 'acr_values', 'request', 'request_uri'] as const;

/**
 * The binding message as checked: at most 100 characters, none a person cannot see or that
 * reorders text (the owner reads it beside the action; a hidden part could mislead them).
 *
 * @example
 * bindingMessage('W4-9 order 1142'); // 'W4-9 order 1142'
 * bindingMessage('pay\u202eevil'); // InvalidBindingMessage
 */
export function bindingMessage(raw: string | undefined): string | null {
  if (raw === undefined) return null;
  const characters = [...raw];
  if (characters.length === 0 || characters.length > MAX_BINDING_MESSAGE || raw.trim() === '')
    throw new InvalidBindingMessage(`binding_message must be 1 to ${MAX_BINDING_MESSAGE} characters.`);
  if (UNDISPLAYABLE.test(raw))
    throw new InvalidBindingMessage(
      'binding_message may not contain control, text-direction or other invisible characters.',
    );
  return raw;
}

/** requested_expiry in seconds (CIBA §7.1: a positive integer), within the server's bounds. */
function requestedExpiry(raw: string | undefined): number {
  if (raw === undefined) return DEFAULT_EXPIRY;
  const seconds = /^\d{1,6}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(seconds >= MIN_EXPIRY && seconds <= MAX_EXPIRY))
    throw new InvalidRequest(`requested_expiry must be a whole number of seconds from ${MIN_EXPIRY} to ${MAX_EXPIRY}.`);
  return seconds;
}

/** The ID token verifiers by key (the client's secrets): HS256, any age (a hint may be an old ID token). */
const hintVerifiers = new Map<string, (token: string) => Record<string, unknown>>();

/**
 * The `sub` of an ID token this server issued to `client` (OIDC Core §3.1.2.1's id_token_hint),
 * expired or not; null when it is not one. Under HS256 it is keyed with the client's secret
 * (current or, within the rotation's grace, previous); with a key pair, by a published key.
 */
async function idTokenSubject(ctx: Context, client: ClientRecord, token: string): Promise<string | null> {
  const header = jwtHeader(token);
  let claims: Record<string, unknown> | null = null;
  if (header?.alg === 'HS256') {
    const secrets = [client.secret_sealed, client.previous_secret_sealed]
      .filter((sealed): sealed is string => typeof sealed === 'string' && sealed !== '')
      .map((sealed) => openSealed(ctx, sealed))
      .filter((secret): secret is string => secret !== null);
    for (const secret of secrets) {
      let verify = hintVerifiers.get(secret);
      if (!verify) {
        if (hintVerifiers.size >= 1000) hintVerifiers.clear();
        verify = createVerifier({
          key: secret,
          algorithms: ['HS256'],
          ignoreExpiration: true,
          ignoreNotBefore: true,
          cache: false,
        });
        hintVerifiers.set(secret, verify);
      }
      try {
        claims = verify(token);
        break;
      } catch {}
    }
  } else if (header) {
    // A key pair's ID token: verified as of just before it expired, so an expired one is a hint too.
    const exp = expiryOf(token);
    claims = exp === null ? null : await ctx.signingKeys.verify(token, 'JWT', Math.min(ctx.clock(), exp - 1));
  }
  if (!claims || claims.iss !== ctx.config.baseUrl) return null;
  const audience = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
  if (!audience.includes(client.id) || typeof claims.sub !== 'string') return null;
  return claims.sub;
}

const decodeUnverified = createDecoder();

/** A JWT's exp, read without verifying (only to pick the time it is verified at). */
function expiryOf(token: string): number | null {
  try {
    const { exp } = decodeUnverified(token) as { exp?: unknown };
    return typeof exp === 'number' ? exp : null;
  } catch {
    return null;
  }
}

/** How the client learns the answer, and where a ping goes, with the token it is sent with. */
function delivery(
  ctx: Context,
  client: ClientRecord,
  token: string | undefined,
  authReqId: string,
): Pick<ActionRequestRecord, 'delivery_mode' | 'notification_token_sealed' | 'notification_endpoint'> {
  if (client.backchannel_token_delivery_mode !== 'ping')
    return { delivery_mode: 'poll', notification_token_sealed: null, notification_endpoint: null };
  const endpoint = client.backchannel_client_notification_endpoint;
  if (!endpoint) throw new UnauthorizedClient('This client is registered for ping without a notification endpoint.');
  if (token === undefined)
    throw new InvalidRequest('client_notification_token is required: this client is registered for ping.');
  if (token.length > MAX_NOTIFICATION_TOKEN || !NOTIFICATION_TOKEN.test(token))
    throw new InvalidRequest(
      `client_notification_token must be 1 to ${MAX_NOTIFICATION_TOKEN} visible ASCII characters (a bearer token).`,
    );
  // The ping must name the auth_req_id, of which only the digest is stored otherwise: it is sealed
  // with the token, under the server secret, so the database alone opens neither (ping.ts).
  const sealed: SealedPing = { client_notification_token: token, auth_req_id: authReqId };
  return {
    delivery_mode: 'ping',
    notification_token_sealed: ctx.secrets.box.seal(JSON.stringify(sealed)),
    notification_endpoint: endpoint,
  };
}

/**
 * The agent the hint names, when this client may ask about it: active, its owner's account
 * active, its credentials not expired, and holding a live grant here. The same reads whatever the
 * answer, so the time taken does not tell an agent that exists from one that does not.
 */
async function askableAgent(
  ctx: Context,
  client: ClientRecord,
  sub: string | null,
): Promise<{ agent: AgentRecord; grants: GrantRecord[] } | null> {
  const id = sub ?? '';
  const [agent, grants] = await Promise.all([
    ctx.store.agents.find(id),
    ctx.store.grants.list({ agentId: id, clientId: client.id, live: true, limit: GRANTS_READ }),
  ]);
  const account = await ctx.store.accounts.find(agent?.account_id ?? '');
  if (!agent || grants.length === 0 || agent.status !== 'active' || agentCredentialsExpired(agent, ctx.clock()))
    return null;
  if (agent.account_id !== null && account?.status !== 'active') return null;
  return { agent, grants };
}

/** Live grants of one agent at one client read at most (each sign-in makes one; they go with their tokens). */
const GRANTS_READ = 100;

/**
 * POST /bc-authorize (CIBA §7): checks the client and the request, finds the agent it may ask
 * about, lets the agent's policy answer or asks the owner, and answers the auth_req_id.
 *
 * @throws InvalidClient, UnauthorizedClient (a public client), InvalidRequest, InvalidScope,
 *   InvalidBindingMessage, InvalidAuthorizationDetails, UnknownUserId, TooManyRequests.
 * @example
 * const answer = await askAction(ctx, credentials, { scope: 'openid', login_hint: 'agt_…', authorization_details: '[…]' }, { ip, log });
 * answer.interval; // 5
 */
export async function askAction(
  ctx: Context,
  credentials: ClientCredentials,
  body: ActionAskBody,
  caller: { ip: string; log: WarningLog & { error(message: string): void } },
): Promise<ActionAskAnswer> {
  const client = await authenticateClient(ctx, credentials, (message) => caller.log.error(message));
  if (isPublicClient(client))
    throw new UnauthorizedClient(
      'A public client cannot ask for approvals: /bc-authorize needs client authentication.',
    );
  for (const name of UNSUPPORTED)
    if (body[name] !== undefined) throw new InvalidRequest(`${name} is not supported by this server.`);
  if (body.scope === undefined || body.scope.trim() === '')
    throw new InvalidRequest('scope is required, and must include openid.');
  if (!hasScope(body.scope, 'openid')) throw new InvalidScope('scope must include openid.');
  if ((body.login_hint === undefined) === (body.id_token_hint === undefined))
    throw new InvalidRequest('Name the agent with exactly one of login_hint (its sub) or id_token_hint.');
  const message = bindingMessage(body.binding_message);
  const expiresIn = requestedExpiry(body.requested_expiry);
  if (body.authorization_details === undefined)
    throw new InvalidRequest('authorization_details is required: name the action the owner is asked to approve.');
  const details = checkAuthorizationDetails(body.authorization_details, client.action_types);
  const authReqId = newAuthReqId();
  const deliveredBy = delivery(ctx, client, body.client_notification_token, authReqId);

  const sub = body.login_hint ?? (await idTokenSubject(ctx, client, body.id_token_hint!));
  const found = await askableAgent(ctx, client, sub);
  if (!found) throw new UnknownUserId(UNKNOWN_USER);
  const { agent } = found;
  // Within what a sign-in of the agent granted this client: the action asks for no more. The
  // tokens will belong to the newest such grant (the list is oldest first).
  const scope = body.scope;
  const grant = [...found.grants].reverse().find((each) => isSubset(scope, each.scope));
  if (!grant) throw new InvalidScope("scope exceeds what the agent's sign-in granted this client.");

  const now = ctx.clock();
  const answer = actionAnswer(policyOf(agent), client.id, details, client.action_types);
  const id = newActionRequestId();
  const approval =
    answer === 'ask'
      ? actionApproval(id, agent, client, normalizeScope(body.scope), caller.ip, now, now + expiresIn)
      : undefined;
  const request: ActionRequestRecord = {
    id,
    auth_req_id_digest: digest(authReqId),
    client_id: client.id,
    agent_id: agent.id,
    grant_id: grant.id,
    scope: normalizeScope(body.scope),
    authorization_details: details,
    binding_message: message,
    ...deliveredBy,
    status: answer === 'ask' ? 'pending' : answer === 'allow' ? 'approved' : 'denied',
    answered_by: answer === 'ask' ? null : 'policy',
    decided_at: answer === 'ask' ? null : now,
    decided_by: null,
    poll_interval: POLL_INTERVAL,
    next_poll_at: now,
    created_at: now,
    expires_at: now + expiresIn,
    approval_id: approval?.id ?? null,
    ip: caller.ip,
    // A policy's answer is a decision too: a ping client is told at once.
    notify_at: answer !== 'ask' && deliveredBy.delivery_mode === 'ping' ? now * 1000 : null,
    notify_attempts: 0,
    notify_lease_until: null,
    notified_at: null,
  };
  const outcome =
    answer === 'ask'
      ? ACTION_OUTCOMES.pending
      : answer === 'allow'
        ? ACTION_OUTCOMES.allowedByPolicy
        : ACTION_OUTCOMES.deniedByPolicy;
  const view = approval && actionApprovalView(approval, agent, client, request);
  const opened = await ctx.store.actionRequests.open(request, PENDING_LIMITS, {
    ...(approval ? { approval } : {}),
    audit: actionAudit(request, outcome, now),
    ...(view ? { announce: [approvalRequested(view)] } : {}),
  });
  if (!opened) throw await flooded(ctx, agent.id, client.id, now);
  // The owner hears of it at once; a mail that fails is logged, never the website's problem.
  if (view)
    mailOwner(ctx, view, agent).catch((error: unknown) =>
      caller.log.warn({ err: error, approval_id: view.id }, 'could not mail the owner about an action'),
    );
  return { auth_req_id: authReqId, expires_in: expiresIn, interval: POLL_INTERVAL };
}

/** 429 with Retry-After: when the soonest of the agent's pending requests here (or anywhere) expires. */
async function flooded(ctx: Context, agentId: string, clientId: string, now: number): Promise<TooManyRequests> {
  const recent = await ctx.store.actionRequests.listOfAgent(agentId, now - MAX_EXPIRY, 100);
  const pending = recent.filter((each) => each.status === 'pending' && each.expires_at > now);
  const here = pending.filter((each) => each.client_id === clientId);
  const blocking = here.length >= PENDING_LIMITS.perWebsite ? here : pending;
  const soonest = Math.min(...blocking.map((each) => each.expires_at), now + POLL_INTERVAL);
  return new TooManyRequests(
    `This agent already has ${PENDING_LIMITS.perWebsite} action requests waiting for its owner here (or ${PENDING_LIMITS.perAgent} in all); wait for them to be decided or to expire.`,
    soonest - now,
  );
}

/** The owner's approval of an action (kind 'action'): bound to the action request, expiring with it. */
function actionApproval(
  requestId: string,
  agent: AgentRecord,
  client: ClientRecord,
  scope: string,
  ip: string,
  now: number,
  expiresAt: number,
): ApprovalRecord {
  return {
    id: newApprovalId(),
    kind: 'action',
    request_id: requestId,
    agent_id: agent.id,
    client_id: client.id,
    model: '',
    scope,
    ip,
    user_agent: null,
    status: 'pending',
    decision: null,
    created_at: now,
    expires_at: expiresAt,
    decided_at: null,
    decided_by: null,
  };
}

/** The approval as its owner is shown it, from the records at hand. */
function actionApprovalView(
  approval: ApprovalRecord,
  agent: AgentRecord,
  client: ClientRecord,
  request: ActionRequestRecord,
): ApprovalView {
  return {
    ...approval,
    agent_name: agent.name,
    agent_account_id: agent.account_id,
    owner_email: agent.owner_email,
    owner_name: agent.owner_name,
    client_name: client.name,
    redirect_uri: client.redirect_uris[0] ?? client.id,
    resource: null,
    request_status: request.status,
    binding_message: request.binding_message,
    authorization_details: request.authorization_details as AuthorizationDetail[],
    client_action_types: client.action_types,
  };
}
