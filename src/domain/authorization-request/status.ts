/**
 * A request's status as every reader sees it: check-status and push (statusView), and the agent
 * handed only a request_id (describeRequestForAgent). All public by request_id, so nothing secret.
 */
import type { Context } from '../../context.ts';
import type { AuthorizationRequestRecord, RequestStatus, RequestStatusFields } from '../../store/requests.ts';
import { EXPIRED_DESCRIPTION, isExpired } from './state.ts';

export type StatusView =
  | { status: 'pending' /** The agent's owner has been asked (docs/design.md §16). */; approval_pending?: true }
  | { status: Exclude<RequestStatus, 'error' | 'pending'> }
  | { status: 'error'; error: string; error_description: string };

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

/** The host (and port, when not the default) the code will be sent to. */
export function redirectHost(request: Pick<AuthorizationRequestRecord, 'redirect_uri'>): string {
  return new URL(request.redirect_uri).host;
}

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

/** GET /api/agent/request: what an agent may know of a request before it authenticates; undefined if none. */
export async function describeRequestForAgent(
  ctx: Pick<Context, 'store' | 'clock'>,
  requestId: string,
): Promise<AgentRequestView | undefined> {
  const found = await ctx.store.requests.findWithClient(requestId);
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
