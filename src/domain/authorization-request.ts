/**
 * The authorization request and its state machine (docs/contract.md "States and transitions"):
 *
 *   pending --agent authenticates--> authenticated --browser approves--> completed
 *   pending|authenticated --10 minutes--> error (request_expired)
 *   pending|authenticated --browser cancels--> error (access_denied)
 *   pending --agent's policy asks its owner--> pending, holding an approval (docs/design.md §16)
 *   pending, held --owner approves--> authenticated; --owner denies--> error (access_denied)
 *
 * Expiry is derived on read from expires_at rather than written by a timer, so every node
 * sees the same state at the same moment; the conditional updates of the store refuse
 * expired rows.
 */
import { digest, newCode, newRequestId, safeEqual } from '../crypto.ts';
import type { Context } from '../context.ts';
import {
  AccessDenied,
  AgentMismatch,
  InvalidClient,
  InvalidCredentials,
  InvalidRequest,
  InvalidScope,
  OAuthError,
  RequestAlreadyUsed,
  RequestContested,
  RequestExpired,
  RequestMismatch,
  UnsupportedResponseType,
} from '../errors.ts';
import type {
  AgentRecord,
  AuthorizationRequestRecord,
  ClientRecord,
  RequestStatus,
  ApprovalRecord,
  RequestStatusFields,
  RequestWithClient,
} from '../store/types.ts';
import { decideSignIn } from './agent-policy.ts';
import { verifyAgentCredentials } from './agents.ts';
import { askOwner } from './approvals.ts';
import { findAuthorizingClient, isPublicClient, redirectUriMatches } from './clients.ts';
import { permittedResource } from './resources.ts';
import { MAX_CLIENT_ID_LENGTH, MAX_REDIRECT_URI_LENGTH } from './rules/client.ts';
import { DEFAULT_SCOPE, normalizeScope, SUPPORTED_SCOPES, unknownScopes, withoutScope } from './scopes.ts';
import { Throttled } from '../throttle/agent-authentication.ts';
import { requestCancelled, signInFailed, signInSucceeded } from './webhooks/events.ts';

export const EXPIRED_DESCRIPTION = 'The authorization request has expired; start a new one.';
export const CONTESTED_DESCRIPTION =
  'Two different agents authenticated this authorization request, so it was stopped; start a new one.';
/** A request whose redirect URI its client has since taken away (docs/design.md §11, editing a website). */
const NO_LONGER_REGISTERED =
  'The website no longer registers the redirect URI of this authorization request; start the sign-in again from the website.';
export const LIMITS = { clientId: MAX_CLIENT_ID_LENGTH, state: 2048, nonce: 512, scope: 200, loginHint: 128 } as const;

// ---------------------------------------------------------------------------------------------
// GET /authorize: validation

export type AuthorizeQuery = Record<string, string | string[] | undefined>;

export interface ValidAuthorization {
  client: ClientRecord;
  redirectUri: string;
  state: string;
  codeChallenge: string;
  scope: string;
  nonce: string | null;
  /** The only agent that may authenticate (OIDC login_hint), or null. */
  loginHint: string | null;
  /** The resource (RFC 8707) the tokens are to be for, or null. */
  resource: string | null;
}

/** RFC 6749 Appendix A: the nonce is VSCHAR, printable ASCII. */
const VSCHAR = /^[\x20-\x7e]+$/;
/**
 * state is opaque and returned unchanged (docs/contract.md): any Unicode text without control
 * characters (and without lone surrogates, which no UTF-8 query can carry).
 */
const OPAQUE_TEXT = /^[^\p{Cc}\p{Cs}]+$/u;
/** What the server issues as an agent_id (crypto.ts): the only thing login_hint may name. */
const AGENT_ID = /^agt_[A-Za-z0-9_-]{1,124}$/;
/** A SHA-256 digest in base64url without padding is exactly 43 characters. */
const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

function single(query: AuthorizeQuery, name: string, maxLength: number): string | undefined {
  const value = query[name];
  if (Array.isArray(value)) throw new InvalidRequest(`${name} was given more than once`);
  if (value !== undefined && value.length > maxLength)
    throw new InvalidRequest(`${name} is longer than ${maxLength} characters`);
  return value;
}

function required(query: AuthorizeQuery, name: string, maxLength: number): string {
  const value = single(query, name, maxLength);
  if (value === undefined || value === '') throw new InvalidRequest(`${name} is required`);
  return value;
}

/**
 * Whether every raw (still percent-encoded) value of the parameter decodes as UTF-8. The query
 * parser keeps a value it cannot decode as it came, which would change it without a word.
 */
export function decodesAsUtf8(rawQuery: string, name: string): boolean {
  // Only a value with a percent sign can fail to decode; most queries need no decoding at all.
  if (!rawQuery.includes('%')) return true;
  for (const pair of rawQuery.split('&')) {
    const eq = pair.indexOf('=');
    if (eq < 0 || !pair.includes('%', eq)) continue;
    const key = pair.slice(0, eq);
    // A key spelled plainly is compared as it is; only an encoded one needs decoding.
    if ((key === name || (/[%+]/.test(key) && formDecoded(key) === name)) && formDecoded(pair.slice(eq + 1)) === null)
      return false;
  }
  return true;
}

function formDecoded(text: string): string | null {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return null;
  }
}

/**
 * Where a person on an error page may go back to: the website, told the outcome as RFC 6749
 * §4.1.2.1 says (error, error_description, state, iss on the registered redirect URI). Only
 * ever made once the client and its redirect URI are known good (no open redirect). The page
 * links to `/authorize/return` with a sealed ticket rather than to the website itself, because
 * the state must never appear in a page (agents and anyone shown the page read it).
 */
export interface ReturnTarget {
  siteName: string;
  href: string;
}

interface ReturnTicket {
  /** client_id */
  c: string;
  /** redirect_uri */
  r: string;
  e: string;
  d: string;
  s?: string;
  /** Expiry, epoch seconds. */
  x: number;
}

/** How long the way back stays open: an error page left open for a while still leads home. */
const RETURN_TICKET_TTL = 3600;

const returnTargets = new WeakMap<object, ReturnTarget>();

/** The way back to the website for an error, if the redirect URI was known good when it was thrown. */
export function returnTargetOf(error: unknown): ReturnTarget | undefined {
  return typeof error === 'object' && error !== null ? returnTargets.get(error) : undefined;
}

function withReturnTarget<E extends OAuthError>(error: E, target: ReturnTarget): E {
  returnTargets.set(error, target);
  return error;
}

function returnTarget(
  ctx: Pick<Context, 'clock' | 'secrets'>,
  client: ClientRecord,
  redirectUri: string,
  error: string,
  description: string,
  state: string | undefined,
): ReturnTarget {
  const ticket: ReturnTicket = {
    c: client.id,
    r: redirectUri,
    e: error,
    d: description,
    ...(state === undefined ? {} : { s: state }),
    x: ctx.clock() + RETURN_TICKET_TTL,
  };
  return {
    siteName: client.name,
    href: `/authorize/return?ticket=${ctx.secrets.returns.seal(JSON.stringify(ticket))}`,
  };
}

/**
 * GET /authorize/return: opens a ticket of returnTarget and answers where to send the browser:
 * the registered redirect URI with the error response. The client and URI are checked again, so
 * a ticket outliving a client's deactivation or a changed redirect URI leads nowhere.
 */
export async function redeemReturnTicket(
  ctx: Pick<Context, 'store' | 'clock' | 'config' | 'clientMetadata' | 'secrets'>,
  sealed: string,
): Promise<string> {
  let ticket: ReturnTicket;
  try {
    ticket = JSON.parse(ctx.secrets.returns.open(sealed)) as ReturnTicket;
  } catch {
    throw new InvalidRequest('This link back to the website is not valid.');
  }
  if (!(ticket.x > ctx.clock())) throw new InvalidRequest('This link back to the website has expired.');
  const client = await findAuthorizingClient(ctx, ticket.c);
  if (client?.status !== 'active' || !redirectUriMatches(client, ticket.r))
    throw new InvalidClient('The website of this link is no longer active here.', 400);
  return errorResponseUri(ticket.r, ticket.e, ticket.d, ticket.s, ctx.config.baseUrl);
}

/** The error response of RFC 6749 §4.1.2.1 on a redirect URI known to be good. */
export function errorResponseUri(
  redirectUri: string,
  error: string,
  description: string,
  state: string | undefined,
  iss: string,
): string {
  return withQuery(redirectUri, {
    error,
    error_description: description,
    ...(state === undefined ? {} : { state }),
    iss,
  });
}

/**
 * The browser's binding cookie lives well beyond the request: a person who leaves the page open
 * past expiry and then presses Cancel is still recognised as the browser that started it, and
 * told that the request expired rather than that it came from another browser. A day bounds it;
 * the value alone grants nothing (docs/design.md §4).
 */
export function bindingCookieLifetime(requestTtl: number): number {
  return requestTtl + 86400;
}

/**
 * Validates an authorization request in the order of docs/design.md §4: the client and its
 * redirect_uri first, then everything else. Throws the OAuthError to show on the 400 page;
 * nothing here ever leads to a redirect. An error found after the redirect URI is known good
 * carries a return target (returnTargetOf) for the page's "Back to <site>" link.
 */
export async function validateAuthorization(
  ctx: Pick<Context, 'store' | 'clock' | 'config' | 'clientMetadata' | 'secrets'>,
  query: AuthorizeQuery,
  rawQuery = '',
): Promise<ValidAuthorization> {
  const clientId = required(query, 'client_id', LIMITS.clientId);
  const client = await findAuthorizingClient(ctx, clientId);
  if (client?.status !== 'active') throw new InvalidClient('The client is unknown or inactive.', 400);
  if (isPublicClient(client) && !ctx.config.publicClients)
    throw new InvalidClient('Public clients are not enabled on this server.', 400);

  const redirectUri = required(query, 'redirect_uri', MAX_REDIRECT_URI_LENGTH);
  if (!redirectUriMatches(client, redirectUri)) {
    throw new InvalidRequest('redirect_uri does not match any redirect URI registered for this client.');
  }

  try {
    return await validateParameters(ctx, query, rawQuery, client, redirectUri);
  } catch (error) {
    if (!(error instanceof OAuthError)) throw error;
    // The state goes back only as the browser sent it, and only if it is one we could return.
    let state: string | undefined;
    try {
      state = validState(query, rawQuery);
    } catch {
      state = undefined;
    }
    throw withReturnTarget(error, returnTarget(ctx, client, redirectUri, error.error, error.description, state));
  }
}

function validState(query: AuthorizeQuery, rawQuery: string): string {
  const state = required(query, 'state', LIMITS.state);
  if (!OPAQUE_TEXT.test(state)) throw new InvalidRequest('state must not contain control characters.');
  if (!decodesAsUtf8(rawQuery, 'state')) throw new InvalidRequest('state must be percent-encoded UTF-8.');
  return state;
}

/** Everything after the client and its redirect URI, in order. */
async function validateParameters(
  ctx: Pick<Context, 'store' | 'clock' | 'config' | 'clientMetadata'>,
  query: AuthorizeQuery,
  rawQuery: string,
  client: ClientRecord,
  redirectUri: string,
): Promise<ValidAuthorization> {
  const responseType = required(query, 'response_type', 100);
  if (responseType !== 'code') throw new UnsupportedResponseType('response_type must be code.');

  const state = validState(query, rawQuery);

  const codeChallenge = required(query, 'code_challenge', 128);
  const method = required(query, 'code_challenge_method', 100);
  if (method !== 'S256') throw new InvalidRequest('code_challenge_method must be S256; plain is not supported.');
  if (!S256_CHALLENGE.test(codeChallenge)) {
    throw new InvalidRequest(
      'code_challenge must be the base64url-encoded SHA-256 of the code verifier (43 characters).',
    );
  }

  const requestedScope = single(query, 'scope', LIMITS.scope);
  let scope = DEFAULT_SCOPE;
  if (requestedScope !== undefined) {
    const unknown = unknownScopes(requestedScope);
    if (unknown.length > 0)
      throw new InvalidScope(`Unknown scope ${unknown.join(', ')}; allowed values are ${SUPPORTED_SCOPES.join(', ')}.`);
    scope = normalizeScope(requestedScope);
    if (!scope) throw new InvalidScope(`scope must name at least one of ${SUPPORTED_SCOPES.join(', ')}.`);
  }
  if (isPublicClient(client)) {
    // An ID token is keyed with the client's secret (OIDC Core §10.1) and the key set is empty by
    // contract, so a public client could verify none: it is granted the rest of what it asked
    // for, without openid, as RFC 6749 §3.3 allows (docs/design.md §13).
    scope = withoutScope(scope, 'openid');
    if (!scope)
      throw new InvalidScope(
        'A public client cannot be issued an ID token (it has no secret to key it with); ask for email or profile.',
      );
  }

  const nonce = single(query, 'nonce', LIMITS.nonce) ?? null;
  if (nonce !== null && !VSCHAR.test(nonce))
    throw new InvalidRequest('nonce must consist of printable ASCII characters.');

  const loginHint = single(query, 'login_hint', LIMITS.loginHint) || null;
  if (loginHint !== null && !AGENT_ID.test(loginHint))
    throw new InvalidRequest('login_hint must be the agent_id of the agent that is to sign in.');

  const resource = await permittedResource(ctx, query.resource);

  return { client, redirectUri, state, codeChallenge, scope, nonce, loginHint, resource };
}

/**
 * Creates the request for a validated authorization. The browser binding is the value of the
 * browser's binding cookie if this server issued it (several tabs of one browser share it), a
 * new one otherwise, so a planted value is never adopted; only its digest is stored.
 */
export async function startAuthorization(
  ctx: Pick<Context, 'store' | 'clock' | 'config' | 'secrets'>,
  valid: ValidAuthorization,
  browserBinding: string | undefined,
): Promise<{ request: AuthorizationRequestRecord; browserBinding: string }> {
  const bindings = ctx.secrets.bindings;
  const binding = browserBinding && bindings.issuedByUs(browserBinding) ? browserBinding : bindings.issue();
  const now = ctx.clock();
  const request: AuthorizationRequestRecord = {
    id: newRequestId(),
    client_id: valid.client.id,
    redirect_uri: valid.redirectUri,
    scope: valid.scope,
    state: valid.state,
    code_challenge: valid.codeChallenge,
    nonce: valid.nonce,
    login_hint: valid.loginHint,
    resource: valid.resource,
    browser_digest: digest(binding),
    status: 'pending',
    error: null,
    error_description: null,
    agent_id: null,
    model: null,
    authenticated_at: null,
    created_at: now,
    expires_at: now + ctx.config.requestTtl,
    approval_id: null,
  };
  await ctx.store.insertRequest(request);
  return { request, browserBinding: binding };
}

// ---------------------------------------------------------------------------------------------
// Status, as every reader sees it

export type StatusView =
  | { status: 'pending' /** The agent's owner has been asked (docs/design.md §16). */; approval_pending?: true }
  | { status: Exclude<RequestStatus, 'error' | 'pending'> }
  | { status: 'error'; error: string; error_description: string };

export function isExpired(request: Pick<RequestStatusFields, 'status' | 'expires_at'>, now: number): boolean {
  return (request.status === 'pending' || request.status === 'authenticated') && now >= request.expires_at;
}

/** The state of a request at `now` (docs/contract.md GET /api/check-status); never the code, state or redirect_uri. */
export function statusView(request: RequestStatusFields, now: number): StatusView {
  if (isExpired(request, now))
    return { status: 'error', error: 'request_expired', error_description: EXPIRED_DESCRIPTION };
  if (request.status === 'error') {
    return {
      status: 'error',
      error: request.error ?? 'server_error',
      error_description: request.error_description ?? '',
    };
  }
  if (request.status === 'pending' && request.approval_id !== null)
    return { status: 'pending', approval_pending: true };
  return { status: request.status };
}

// ---------------------------------------------------------------------------------------------
// POST /api/agent/authenticate

export interface AgentAuthentication {
  request_id: string;
  agent_id: string;
  /** An agent with a secret presents it; a key-bound agent presents agent_assertion instead (exactly one). */
  agent_secret?: string;
  /** A key-bound agent's signed assertion (docs/design.md §16), instead of agent_secret. */
  agent_assertion?: string;
  model: string;
  /** The client the agent expects to sign in to; a different one is refused (412). */
  expected_client_id?: string;
  /** The host (and port) the agent expects the browser to be sent to; a different one is refused (412). */
  expected_redirect_host?: string;
  /** The resource (RFC 8707) the agent expects the tokens to be for; a request for another, or for none, is refused (412). */
  expected_resource?: string;
}

export interface CallerInfo {
  ip: string;
  userAgent: string | null;
}

/** The host (and port, when not the default) the code will be sent to. */
export function redirectHost(request: Pick<AuthorizationRequestRecord, 'redirect_uri'>): string {
  return new URL(request.redirect_uri).host;
}

/** What an agent's authentication came to: signed in, or held for its owner's approval. */
export type AuthenticationOutcome =
  | { kind: 'authenticated'; agent: AgentRecord; client: ClientRecord }
  | {
      kind: 'approval_pending';
      agent: AgentRecord;
      client: ClientRecord;
      request: AuthorizationRequestRecord;
      approval: ApprovalRecord;
    };

/**
 * pending → authenticated (docs/design.md §5). Checks, in order: the client address's throttle
 * (429), credentials (401, the same for unknown agent, wrong secret and disabled agent; 429
 * instead once the agent_id has had too many wrong secrets), request exists (404), request's
 * client still active (400), the agent's expectations (412), login_hint (403), the agent's
 * policy (403 access_denied, or held for the owner: approval_pending; docs/design.md §16),
 * request state (400 request_expired, 409 request_already_used or request_contested). Every
 * attempt is an audit event, except that a throttled key writes one per window.
 */
export async function authenticateAgent(
  ctx: Context,
  input: AgentAuthentication,
  caller: CallerInfo,
): Promise<AuthenticationOutcome> {
  const auditEvent = (outcome: string, clientId: string | null = null) => ({
    at: ctx.clock(),
    agent_id: input.agent_id,
    request_id: input.request_id,
    client_id: clientId,
    model: input.model,
    ip: caller.ip,
    user_agent: caller.userAgent?.slice(0, 512) ?? null,
    outcome,
  });
  // Each failure's audit event and its webhook (agent.sign_in.failed) commit together.
  const audit = (outcome: string, clientId: string | null = null) => {
    const event = auditEvent(outcome, clientId);
    return ctx.store.recordAuditEvent(event, [signInFailed(input, event.client_id, outcome)]);
  };
  const refuse = async (error: Throttled): Promise<never> => {
    if (error.firstInWindow) await audit('throttled');
    throw error;
  };
  const fail = async (error: OAuthError, clientId: string | null = null): Promise<never> => {
    await ctx.throttle.recordFailure(caller.ip);
    await audit(error.error, clientId);
    throw error;
  };

  // The agent and the request (with its client) in one read, with the client address's failures
  // where the store keeps them (PostgreSQL); the rules below still run in order, the throttle first.
  const read = await ctx.store.findAgentAndRequest(
    input.agent_id,
    input.request_id,
    ctx.throttle.storedKeyOf(caller.ip),
  );
  try {
    await ctx.throttle.checkClient(caller.ip, read.failures);
  } catch (error) {
    if (error instanceof Throttled) return refuse(error);
    throw error;
  }
  const agent = await verifyAgentCredentials(ctx, read.agent, input);
  if (!agent) {
    const throttled = await ctx.throttle.recordWrongCredentials(input.agent_id, caller.ip);
    if (throttled) return refuse(throttled);
    await audit('invalid_credentials');
    throw new InvalidCredentials('The agent credentials are invalid.');
  }

  const { found } = read;
  if (!found) return fail(new InvalidRequest('The authorization request does not exist.', 404));
  const { request, client } = found;
  if (client?.status !== 'active')
    return fail(
      new InvalidClient('The client of this authorization request is no longer active.', 400),
      request.client_id,
    );
  if (!redirectUriMatches(client, request.redirect_uri))
    return fail(new InvalidRequest(NO_LONGER_REGISTERED), request.client_id);

  // Refused before any state change: the agent was handed a request for a site it did not expect.
  if (input.expected_client_id !== undefined && input.expected_client_id !== request.client_id) {
    return fail(
      new RequestMismatch(
        `This authorization request is for client ${request.client_id}, not ${input.expected_client_id}.`,
      ),
      request.client_id,
    );
  }
  const host = redirectHost(request);
  if (input.expected_redirect_host !== undefined && input.expected_redirect_host.toLowerCase() !== host.toLowerCase()) {
    return fail(
      new RequestMismatch(
        `This authorization request sends the browser to ${host}, not ${input.expected_redirect_host}.`,
      ),
      request.client_id,
    );
  }
  if (input.expected_resource !== undefined && input.expected_resource !== request.resource) {
    const named = request.resource === null ? 'names no resource' : `is for the resource ${request.resource}`;
    return fail(
      new RequestMismatch(`This authorization request ${named}, not ${input.expected_resource}.`),
      request.client_id,
    );
  }
  if (request.login_hint !== null && request.login_hint !== agent.id) {
    return fail(
      new AgentMismatch('This authorization request was started for another agent (login_hint).'),
      request.client_id,
    );
  }

  /** Lost the conditional update (or the hold): tell the caller why from the row as it is now. */
  const whyNotAuthenticated = async (now: number): Promise<never> => {
    const current = (await ctx.store.findRequest(request.id)) ?? request;
    if (isExpired(current, ctx.clock())) return fail(new RequestExpired(EXPIRED_DESCRIPTION), request.client_id);
    if (current.status === 'pending' && current.approval_id !== null)
      return fail(
        new RequestAlreadyUsed('The authorization request is waiting for an owner to approve another sign-in.'),
        request.client_id,
      );
    if (current.status === 'authenticated' && current.agent_id !== agent.id) {
      // Someone else's agent got there first (a leaked request_id) or this one did: either way the
      // browser must not be signed in as whichever came first. No code is released.
      if (
        await ctx.store.contestRequest(
          request.id,
          agent.id,
          now,
          CONTESTED_DESCRIPTION,
          auditEvent('request_contested', request.client_id),
        )
      ) {
        await ctx.throttle.recordFailure(caller.ip);
        throw new RequestContested(CONTESTED_DESCRIPTION);
      }
    }
    return fail(
      new RequestAlreadyUsed(
        'The authorization request has already been used; an authorization request can be authenticated only once.',
      ),
      request.client_id,
    );
  };

  // The owner's policy, before any state change; an agent without one pays nothing here.
  if (agent.policy !== null) {
    const decision = await decideSignIn(agent.policy, {
      request,
      client,
      now: ctx.clock(),
      signInsLastHour: () => ctx.store.countSignIns(agent.id, ctx.clock() - 3600),
    });
    if (decision.kind === 'refuse') return fail(new AccessDenied(decision.description), request.client_id);
    if (decision.kind === 'ask') {
      const approval = await askOwner(ctx, {
        agent,
        request,
        client,
        model: input.model,
        ip: caller.ip,
        userAgent: caller.userAgent,
      });
      if (approval) return { kind: 'approval_pending', agent, client, request, approval };
      return whyNotAuthenticated(ctx.clock());
    }
  }

  const now = ctx.clock();
  if (
    await ctx.store.markRequestAuthenticated(
      request.id,
      { agent_id: agent.id, model: input.model },
      now,
      auditEvent('authenticated', request.client_id),
      [signInSucceeded(request, agent, client, input.model)],
    )
  ) {
    return { kind: 'authenticated', agent, client };
  }
  return whyNotAuthenticated(now);
}

// ---------------------------------------------------------------------------------------------
// GET /api/agent/request: what an agent may know before it authenticates

/**
 * What an agent handed only a request_id may learn of it, to refuse a site it did not expect
 * (consent phishing, RFC 10027). Public by request_id like the status, so nothing secret:
 * never the state, the code, the PKCE challenge, the nonce or the redirect URI's path.
 */
export interface AgentRequestView {
  request_id: string;
  client_id: string;
  client_name: string;
  redirect_host: string;
  scope: string;
  /**
   * The resource (RFC 8707) the website's tokens would be for, or null: tokens with an audience
   * of another server, which the agent must expect as much as the website itself.
   */
  resource: string | null;
  /** Epoch seconds. */
  expires_at: number;
  expires_in: number;
  status: RequestStatus;
  error?: string;
  error_description?: string;
}

export async function describeRequestForAgent(
  ctx: Pick<Context, 'store' | 'clock'>,
  requestId: string,
): Promise<AgentRequestView | undefined> {
  const found = await ctx.store.findRequestWithClient(requestId);
  if (!found) return undefined;
  const { request, client } = found;
  const now = ctx.clock();
  return {
    request_id: request.id,
    client_id: request.client_id,
    client_name: client?.name ?? request.client_id,
    redirect_host: redirectHost(request),
    scope: request.scope,
    resource: request.resource,
    expires_at: request.expires_at,
    expires_in: Math.max(0, request.expires_at - now),
    ...statusView(request, now),
  };
}

// ---------------------------------------------------------------------------------------------
// The browser's decision: POST /authorize/continue

export type ContinueAction = 'approve' | 'cancel';

export type ContinueOutcome =
  | { kind: 'redirect'; location: string }
  /** Still waiting for the agent: show the authorization page again. */
  | { kind: 'waiting'; request: AuthorizationRequestRecord; client: ClientRecord }
  /** approval=manual: show who authenticated and ask the person to confirm. */
  | { kind: 'confirm'; request: AuthorizationRequestRecord; client: ClientRecord; agent: AgentRecord | undefined };

/**
 * Adds parameters to a redirect URI, keeping its own query exactly as registered. Values are
 * percent-encoded as RFC 3986 says (a space is %20, not +), so that every query decoder, form
 * style or not, gives back the exact value, the opaque state above all.
 */
export function withQuery(uri: string, params: Record<string, string>): string {
  const query = Object.entries(params)
    .map(([name, value]) => `${name}=${encodeURIComponent(value)}`)
    .join('&');
  return uri + (uri.includes('?') ? '&' : '?') + query;
}

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
  const found = await ctx.store.findRequestWithClient(requestId);
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
  const agent = await ctx.store.findAgent(request.agent_id);
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
    if (view.status === 'error') {
      const description =
        view.error === 'request_expired'
          ? 'The authorization request expired before the user signed in; the user went back.'
          : 'The user cancelled the authorization request.';
      return { kind: 'redirect', location: redirectBack('access_denied', description) };
    }
    const description = 'The user cancelled the authorization request.';
    const cancelled = [requestCancelled(request, client)];
    if (
      !(await ctx.store.failRequest(request.id, request.browser_digest, now, 'access_denied', description, cancelled))
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
      agent: request.agent_id ? await ctx.store.findAgent(request.agent_id) : undefined,
    };
  }

  const code = newCode();
  const won = await ctx.store.completeRequestWithCode(request.id, request.browser_digest, now, {
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
