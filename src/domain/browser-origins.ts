/**
 * Browser apps at the token and revocation endpoints (docs/design.md §13, "CORS"): which origins
 * a client's browser app runs on, and the check that refuses a call from any other origin before
 * it redeems a code, rotates a refresh token or revokes anything.
 */
import type { Context } from '../context.ts';
import type { ClientRecord } from '../store/clients.ts';
import { type ClientCredentials, clientRefused } from './client-authentication.ts';
import { isLoopbackRedirect, isPublicClient } from './clients.ts';
import { couldBeClientId } from './rules/client.ts';

/**
 * The one answer to a browser call that is not admitted, whatever the reason (an unknown or
 * inactive client, a confidential client, another origin), so it tells nobody which it was.
 */
export const BROWSER_CALL_REFUSED =
  'client authentication failed: a browser may call this endpoint only for a public client, from the origin of one of its redirect URIs';

/**
 * Whether `origin` (an Origin header) is where `client`'s browser app runs: the origin of one of
 * its redirect URIs (for a metadata-document client, its document's), or, as a loopback redirect
 * URI matches on any port (RFC 8252 §7.3), a loopback origin of the same scheme and host on any
 * port. A redirect URI of another scheme (a native app's) has no origin; `null` is never one.
 *
 * @example
 * isClientOrigin({ redirect_uris: ['https://app.example/callback'] }, 'https://app.example'); // true
 * isClientOrigin({ redirect_uris: ['http://127.0.0.1/callback'] }, 'http://127.0.0.1:5173'); // true
 * isClientOrigin({ redirect_uris: ['https://app.example/callback'] }, 'https://evil.example'); // false
 */
export function isClientOrigin(client: Pick<ClientRecord, 'redirect_uris'>, origin: string): boolean {
  const asked = URL.parse(origin);
  // Only a serialized origin (scheme, host, port; lower case; no path) is one.
  if (!asked || asked.origin === 'null' || asked.origin !== origin) return false;
  return client.redirect_uris.some((uri) => {
    const registered = URL.parse(uri);
    if (!registered || (registered.protocol !== 'https:' && registered.protocol !== 'http:')) return false;
    if (registered.origin === origin) return true;
    return isLoopbackRedirect(uri) && isLoopbackRedirect(origin) && registered.hostname === asked.hostname;
  });
}

/**
 * Admits a call a browser makes to /token or /revoke while CORS is on (a request with an Origin
 * header): only for an active public client, from one of its origins (isClientOrigin). A
 * confidential client is refused from any browser, since its secret must not live in one. The
 * refusal (401 invalid_client, BROWSER_CALL_REFUSED) comes before anything is read or changed
 * for the code or token the call carries, so a page of another origin, which could not read the
 * answer, cannot burn a code or rotate a refresh token either.
 *
 * @example
 * await admitBrowserCall(ctx, { client_id: 'cli_1' }, 'https://app.example'); // or throws InvalidClient
 */
export async function admitBrowserCall(
  deps: Pick<Context, 'store'>,
  credentials: ClientCredentials,
  origin: string,
): Promise<void> {
  const clientId = credentials.client_id;
  const client = clientId && couldBeClientId(clientId) ? await deps.store.clients.find(clientId) : undefined;
  if (client?.status === 'active' && isPublicClient(client) && isClientOrigin(client, origin)) return;
  throw clientRefused(credentials, BROWSER_CALL_REFUSED);
}
