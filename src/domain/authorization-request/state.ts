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
 * expired rows. This file starts a request; the transitions are the agent's authentication
 * (agent-authentication.ts) and the browser's continuation (continuation.ts).
 */
import type { Context } from '../../context.ts';
import { digest, newRequestId } from '../../crypto.ts';
import type { AuthorizationRequestRecord, RequestStatusFields } from '../../store/requests.ts';
import type { ValidAuthorization } from './validation.ts';

export const EXPIRED_DESCRIPTION = 'The authorization request has expired; start a new one.';
export const CONTESTED_DESCRIPTION =
  'Two different agents authenticated this authorization request, so it was stopped; start a new one.';
/** A request whose redirect URI its client has since taken away (docs/design.md §11, editing a website). */
export const NO_LONGER_REGISTERED =
  'The website no longer registers the redirect URI of this authorization request; start the sign-in again from the website.';

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
  await ctx.store.requests.insert(request);
  return { request, browserBinding: binding };
}

/** Whether a request that has not ended has run out of time at `now` (expiry is read, never written). */
export function isExpired(request: Pick<RequestStatusFields, 'status' | 'expires_at'>, now: number): boolean {
  return (request.status === 'pending' || request.status === 'authenticated') && now >= request.expires_at;
}
