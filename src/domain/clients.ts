/** Client (relying party) registration and authentication (docs/contract.md "Client", docs/design.md §7). */
import { newClientId, newClientSecret, safeEqual } from '../crypto.ts';
import type { Context } from '../context.ts';
import { InvalidClient } from '../protocol/errors.ts';
import type { Approval, ClientRecord, ClientStatus } from '../store/types.ts';

type Deps = Pick<Context, 'store' | 'secrets' | 'clock'>;

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);
export const MAX_REDIRECT_URI_LENGTH = 2000;
/** What the authorization response appends to a redirect URI; a registered query must leave them free. */
const RESPONSE_PARAMETERS = ['code', 'state', 'iss', 'error', 'error_description'];
/** Visible ASCII, no space: what every issued identifier and every registered redirect URI consists of. */
export const VISIBLE_ASCII = /^[\x21-\x7e]+$/;

/**
 * Why a redirect URI cannot be registered, or null when it can: absolute, no fragment,
 * no userinfo, https — or http for localhost, 127.0.0.1 and [::1] only (docs/contract.md, RFC 8252 §8.3).
 */
export function redirectUriProblem(uri: string): string | null {
  if (uri.length > MAX_REDIRECT_URI_LENGTH) return `is longer than ${MAX_REDIRECT_URI_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return 'is not an absolute URL';
  }
  // URL parsers silently drop tabs and newlines and read a backslash as a slash; a Location
  // header carries only ASCII. A URI must be registered exactly as it will travel
  // (percent-encoded, punycode host), so that what matches is what the browser is sent to.
  if (!VISIBLE_ASCII.test(uri)) return 'must consist of visible ASCII characters (percent-encode the rest)';
  if (uri.includes('\\')) return 'must not contain a backslash';
  if (uri.includes('#')) return 'must not contain a fragment';
  if (url.username || url.password) return 'must not contain user information';
  const taken = RESPONSE_PARAMETERS.filter((name) => url.searchParams.has(name));
  if (taken.length > 0) return `must not already carry ${taken.join(', ')} in its query (the server adds them to the redirect)`;
  if (url.protocol === 'https:') return null;
  if (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname)) return null;
  return 'must use https (http is allowed only for localhost, 127.0.0.1 and [::1])';
}

export interface NewClient {
  name: string;
  redirectUris: string[];
  approval?: Approval;
  /** The console account that owns the client. */
  accountId?: string;
}

export async function registerClient(deps: Deps, input: NewClient): Promise<{ client: ClientRecord; secret: string }> {
  const name = input.name.trim();
  if (!name || name.length > 200) throw new Error('client name must be 1 to 200 characters');
  if (input.redirectUris.length === 0) throw new Error('at least one redirect URI is required');
  for (const uri of input.redirectUris) {
    const problem = redirectUriProblem(uri);
    if (problem) throw new Error(`redirect URI ${uri} ${problem}`);
  }
  const secret = newClientSecret();
  const client: ClientRecord = {
    id: newClientId(),
    name,
    secret_sealed: deps.secrets.box.seal(secret),
    previous_secret_sealed: null,
    previous_secret_expires_at: null,
    redirect_uris: [...new Set(input.redirectUris)],
    status: 'active',
    approval: input.approval ?? 'auto',
    created_at: deps.clock(),
    account_id: input.accountId ?? null,
  };
  await deps.store.insertClient(client);
  return { client, secret };
}

/**
 * Issues a new secret. With `graceSeconds` > 0 the old secret keeps working that long (and ID
 * tokens are keyed with whichever secret the client authenticated with), so the client can
 * be switched over without downtime; with 0 (a compromised secret) it stops at once.
 */
export async function rotateClientSecret(deps: Deps, clientId: string, graceSeconds = 0): Promise<string> {
  const client = await deps.store.findClient(clientId);
  if (!client) throw new Error(`no client ${clientId}`);
  const secret = newClientSecret();
  const keepOld = graceSeconds > 0;
  await deps.store.updateClient(clientId, {
    secret_sealed: deps.secrets.box.seal(secret),
    previous_secret_sealed: keepOld ? client.secret_sealed : null,
    previous_secret_expires_at: keepOld ? deps.clock() + graceSeconds : null,
  });
  return secret;
}

export async function setClientStatus(deps: Deps, clientId: string, status: ClientStatus): Promise<void> {
  if (!(await deps.store.updateClient(clientId, { status }))) throw new Error(`no client ${clientId}`);
}

/** A sealed secret in clear, or null when it was sealed under a server secret this process does not have. */
function openSealed(deps: Pick<Context, 'secrets'>, sealed: string): string | null {
  try {
    return deps.secrets.box.open(sealed);
  } catch {
    return null;
  }
}

/**
 * Re-encrypts every client secret under the current JWT_SECRET, so that a previous secret can
 * be dropped from JWT_PREVIOUS_SECRETS. Returns the ids it resealed and those it could not open.
 */
export async function resealClientSecrets(deps: Deps): Promise<{ resealed: string[]; unreadable: string[] }> {
  const resealed: string[] = [];
  const unreadable: string[] = [];
  for (const client of await deps.store.listClients()) {
    const secret = openSealed(deps, client.secret_sealed);
    const previous = client.previous_secret_sealed === null ? null : openSealed(deps, client.previous_secret_sealed);
    if (secret === null || (client.previous_secret_sealed !== null && previous === null)) {
      unreadable.push(client.id);
      continue;
    }
    const patch = { secret_sealed: deps.secrets.box.seal(secret), ...(previous === null ? {} : { previous_secret_sealed: deps.secrets.box.seal(previous) }) };
    if (await deps.store.updateClient(client.id, patch)) resealed.push(client.id);
  }
  return { resealed, unreadable };
}

/**
 * client_secret_post (RFC 6749 §2.3.1): the same answer for an unknown client, a wrong secret
 * and an inactive client, so the endpoint does not tell which client ids exist.
 */
export async function authenticateClient(
  deps: Deps,
  clientId: string | undefined,
  clientSecret: string | undefined,
  log: (message: string) => void = () => {},
): Promise<ClientRecord> {
  if (!clientId || !clientSecret) {
    throw new InvalidClient('client authentication failed: client_id and client_secret are required (client_secret_post)');
  }
  const client = await deps.store.findClient(clientId);
  const expected = client ? openSealed(deps, client.secret_sealed) : null;
  if (client && expected === null) {
    log(`client ${client.id}: its secret was encrypted under a JWT_SECRET this server does not have; list that secret in JWT_PREVIOUS_SECRETS, or rotate the client's secret`);
  }
  const previousValid = client?.previous_secret_sealed != null && client.previous_secret_expires_at != null && deps.clock() < client.previous_secret_expires_at;
  const previous = previousValid ? openSealed(deps, client!.previous_secret_sealed!) : null;
  // Both comparisons always run, so timing does not tell which secret (if any) matched.
  const matchesCurrent = safeEqual(clientSecret, expected ?? clientSecret + '\0');
  const matchesPrevious = safeEqual(clientSecret, previous ?? clientSecret + '\0');
  if (!client || !(matchesCurrent || matchesPrevious) || client.status !== 'active') {
    throw new InvalidClient('client authentication failed');
  }
  return client;
}
