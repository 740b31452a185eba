/**
 * The authorization request and its state machine (SPEC.md "States and transitions"):
 *
 *   pending --agent authenticates--> authenticated --browser approves--> completed
 *   pending|authenticated --10 minutes--> error (request_expired)
 *   pending|authenticated --browser cancels--> error (access_denied)
 *
 * Expiry is derived on read from expires_at rather than written by a timer, so every node
 * sees the same state at the same moment; the conditional updates of the store refuse
 * expired rows.
 */
import { digest, newBrowserBinding, newCode, newRequestId, safeEqual } from '../crypto.ts';
import type { Context } from '../context.ts';
import {
  AccessDenied,
  InvalidClient,
  InvalidCredentials,
  InvalidRequest,
  InvalidScope,
  type OAuthError,
  RequestAlreadyUsed,
  RequestExpired,
  RequestNotFound,
  UnsupportedResponseType,
} from '../protocol/errors.ts';
import type { AgentRecord, AuthorizationRequestRecord, ClientRecord, RequestStatus, RequestStatusFields } from '../store/types.ts';
import { verifyAgentCredentials } from './agents.ts';
import { MAX_REDIRECT_URI_LENGTH, VISIBLE_ASCII } from './clients.ts';
import { DEFAULT_SCOPE, normalizeScope, SUPPORTED_SCOPES, unknownScopes } from './scopes.ts';

export const EXPIRED_DESCRIPTION = 'The authorization request has expired; start a new one.';
export const LIMITS = { clientId: 128, state: 2048, nonce: 512, scope: 200 } as const;

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
}

/** RFC 6749 Appendix A: state (and, here, nonce) are VSCHAR, printable ASCII. */
const VSCHAR = /^[\x20-\x7e]+$/;
/** A SHA-256 digest in base64url without padding is exactly 43 characters. */
const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

function single(query: AuthorizeQuery, name: string, maxLength: number): string | undefined {
  const value = query[name];
  if (Array.isArray(value)) throw new InvalidRequest(`${name} was given more than once`);
  if (value !== undefined && value.length > maxLength) throw new InvalidRequest(`${name} is longer than ${maxLength} characters`);
  return value;
}

function required(query: AuthorizeQuery, name: string, maxLength: number): string {
  const value = single(query, name, maxLength);
  if (value === undefined || value === '') throw new InvalidRequest(`${name} is required`);
  return value;
}

/**
 * Validates an authorization request in the order of DESIGN.md §4: the client and its
 * redirect_uri first, then everything else. Throws the OAuthError to show on the 400 page;
 * nothing here ever leads to a redirect.
 */
export async function validateAuthorization(ctx: Pick<Context, 'store'>, query: AuthorizeQuery): Promise<ValidAuthorization> {
  const clientId = required(query, 'client_id', LIMITS.clientId);
  // Every identifier the server issues is visible ASCII; anything else names nothing.
  const client = VISIBLE_ASCII.test(clientId) ? await ctx.store.findClient(clientId) : undefined;
  if (!client || client.status !== 'active') throw new InvalidClient('The client is unknown or inactive.', 400);

  const redirectUri = required(query, 'redirect_uri', MAX_REDIRECT_URI_LENGTH);
  if (!client.redirect_uris.includes(redirectUri)) {
    throw new InvalidRequest('redirect_uri does not match any redirect URI registered for this client.');
  }

  const responseType = required(query, 'response_type', 100);
  if (responseType !== 'code') throw new UnsupportedResponseType('response_type must be code.');

  const state = required(query, 'state', LIMITS.state);
  if (!VSCHAR.test(state)) throw new InvalidRequest('state must consist of printable ASCII characters.');

  const codeChallenge = required(query, 'code_challenge', 128);
  const method = required(query, 'code_challenge_method', 100);
  if (method !== 'S256') throw new InvalidRequest('code_challenge_method must be S256; plain is not supported.');
  if (!S256_CHALLENGE.test(codeChallenge)) {
    throw new InvalidRequest('code_challenge must be the base64url-encoded SHA-256 of the code verifier (43 characters).');
  }

  const requestedScope = single(query, 'scope', LIMITS.scope);
  let scope = DEFAULT_SCOPE;
  if (requestedScope !== undefined) {
    const unknown = unknownScopes(requestedScope);
    if (unknown.length > 0) throw new InvalidScope(`Unknown scope ${unknown.join(', ')}; allowed values are ${SUPPORTED_SCOPES.join(', ')}.`);
    scope = normalizeScope(requestedScope);
    if (!scope) throw new InvalidScope(`scope must name at least one of ${SUPPORTED_SCOPES.join(', ')}.`);
  }

  const nonce = single(query, 'nonce', LIMITS.nonce) ?? null;
  if (nonce !== null && !VSCHAR.test(nonce)) throw new InvalidRequest('nonce must consist of printable ASCII characters.');

  return { client, redirectUri, state, codeChallenge, scope, nonce };
}

/**
 * Creates the request for a validated authorization. The browser binding is the value of the
 * browser's binding cookie (a new one when it has none); only its digest is stored.
 */
export async function startAuthorization(
  ctx: Pick<Context, 'store' | 'clock' | 'config'>,
  valid: ValidAuthorization,
  browserBinding: string | undefined,
): Promise<{ request: AuthorizationRequestRecord; browserBinding: string }> {
  const binding = browserBinding && /^[A-Za-z0-9_-]{43}$/.test(browserBinding) ? browserBinding : newBrowserBinding();
  const now = ctx.clock();
  const request: AuthorizationRequestRecord = {
    id: newRequestId(),
    client_id: valid.client.id,
    redirect_uri: valid.redirectUri,
    scope: valid.scope,
    state: valid.state,
    code_challenge: valid.codeChallenge,
    nonce: valid.nonce,
    browser_digest: digest(binding),
    status: 'pending',
    error: null,
    error_description: null,
    agent_id: null,
    model: null,
    authenticated_at: null,
    created_at: now,
    expires_at: now + ctx.config.requestTtl,
  };
  await ctx.store.insertRequest(request);
  return { request, browserBinding: binding };
}

// ---------------------------------------------------------------------------------------------
// Status, as every reader sees it

export type StatusView =
  | { status: Exclude<RequestStatus, 'error'> }
  | { status: 'error'; error: string; error_description: string };

export function isExpired(request: Pick<RequestStatusFields, 'status' | 'expires_at'>, now: number): boolean {
  return (request.status === 'pending' || request.status === 'authenticated') && now >= request.expires_at;
}

/** The state of a request at `now` (SPEC.md GET /api/check-status); never the code, state or redirect_uri. */
export function statusView(request: RequestStatusFields, now: number): StatusView {
  if (isExpired(request, now)) return { status: 'error', error: 'request_expired', error_description: EXPIRED_DESCRIPTION };
  if (request.status === 'error') {
    return { status: 'error', error: request.error ?? 'server_error', error_description: request.error_description ?? '' };
  }
  return { status: request.status };
}

// ---------------------------------------------------------------------------------------------
// POST /api/agent/authenticate

export interface AgentAuthentication {
  request_id: string;
  agent_id: string;
  agent_secret: string;
  model: string;
}

export interface CallerInfo {
  ip: string;
  userAgent: string | null;
}

/**
 * pending → authenticated (DESIGN.md §5). Checks, in order: throttle, credentials (401, the same
 * for unknown agent, wrong secret and disabled agent), request exists (404), request state
 * (400 request_expired, 409 request_already_used). Every attempt is an audit event.
 */
export async function authenticateAgent(ctx: Context, input: AgentAuthentication, caller: CallerInfo): Promise<{ agent: AgentRecord; client: ClientRecord }> {
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
  const audit = (outcome: string, clientId: string | null = null) => ctx.store.recordAuditEvent(auditEvent(outcome, clientId));
  const fail = async (error: OAuthError, clientId: string | null = null): Promise<never> => {
    await ctx.throttle.recordFailure(input.agent_id, caller.ip, error instanceof InvalidCredentials);
    await audit(error.error, clientId);
    throw error;
  };

  try {
    await ctx.throttle.check(input.agent_id, caller.ip);
  } catch (error) {
    await audit('throttled');
    throw error;
  }

  const agent = await verifyAgentCredentials(ctx, input.agent_id, input.agent_secret);
  if (!agent) return fail(new InvalidCredentials('The agent credentials are invalid.'));

  const request = await ctx.store.findRequest(input.request_id);
  if (!request) return fail(new RequestNotFound('The authorization request does not exist.'));
  const client = await ctx.store.findClient(request.client_id);
  if (!client || client.status !== 'active') return fail(new InvalidClient('The client of this authorization request is no longer active.', 400), request.client_id);

  const now = ctx.clock();
  if (!(await ctx.store.markRequestAuthenticated(request.id, { agent_id: agent.id, model: input.model }, now, auditEvent('authenticated', request.client_id)))) {
    // Lost the conditional update: tell the caller why from the row as it is now.
    const current = (await ctx.store.findRequest(request.id)) ?? request;
    if (isExpired(current, ctx.clock())) return fail(new RequestExpired(EXPIRED_DESCRIPTION), request.client_id);
    return fail(new RequestAlreadyUsed('The authorization request has already been used; an authorization request can be authenticated only once.'), request.client_id);
  }
  return { agent, client };
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

/** Adds parameters to a redirect URI, keeping its own query exactly as registered. */
export function withQuery(uri: string, params: Record<string, string>): string {
  return uri + (uri.includes('?') ? '&' : '?') + new URLSearchParams(params).toString();
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
  const request = await ctx.store.findRequest(input.requestId);
  if (!request) throw new InvalidRequest('The authorization request does not exist.');
  const bindingDigest = browserBinding ? digest(browserBinding) : '';
  if (!safeEqual(bindingDigest, request.browser_digest)) {
    throw new AccessDenied('This authorization request was started in another browser; start again from the application.');
  }
  const client = await ctx.store.findClient(request.client_id);
  if (!client || client.status !== 'active') throw new InvalidClient('The client is unknown or inactive.', 400);

  const now = ctx.clock();
  const view = statusView(request, now);
  if (view.status === 'error') throw errorOf(view.error, view.error_description);
  if (view.status === 'completed') throw new RequestAlreadyUsed('This authorization request has already been completed.');

  const iss = ctx.config.baseUrl;
  if (input.action === 'cancel') {
    const description = 'The user cancelled the authorization request.';
    if (!(await ctx.store.failRequest(request.id, request.browser_digest, now, 'access_denied', description))) {
      return continueAuthorization(ctx, input, browserBinding); // the state changed under us: answer from the new one
    }
    return { kind: 'redirect', location: withQuery(request.redirect_uri, { error: 'access_denied', error_description: description, state: request.state, iss }) };
  }

  if (view.status === 'pending') return { kind: 'waiting', request, client };
  if (client.approval === 'manual' && !input.confirmed) {
    return { kind: 'confirm', request, client, agent: request.agent_id ? await ctx.store.findAgent(request.agent_id) : undefined };
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
  if (error === 'access_denied') return new AccessDenied(description, 400);
  return new InvalidRequest(description);
}
