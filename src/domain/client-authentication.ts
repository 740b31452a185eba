/**
 * Client authentication at the token, introspection and revocation endpoints (docs/contract.md
 * "Client", docs/design.md §7, §13, §18): the credentials a request presents (client_secret_post,
 * client_secret_basic, an RFC 7523 assertion for private_key_jwt, or none for a public client)
 * and their check against the client's secret, with the rotation's grace, or its keys.
 */
import type { Context } from '../context.ts';
import { safeEqual } from '../crypto.ts';
import { InvalidClient, InvalidRequest } from '../errors.ts';
import type { ClientRecord } from '../store/clients.ts';
import { assertionClientId, CLIENT_ASSERTION_TYPE, KeySetUnavailable } from './client-keys/index.ts';
import { isPublicClient, openSealed } from './clients.ts';
import { MAX_CLIENT_ID_LENGTH } from './rules/client.ts';

type Deps = Pick<Context, 'store' | 'secrets' | 'clock' | 'config' | 'clientKeySets'>;

/** What a client presents to authenticate at the token, introspection and revocation endpoints. */
export interface ClientCredentials {
  client_id?: string;
  client_secret?: string;
  /** RFC 7523 §2.2: a JWT signed by one of the client's keys (private_key_jwt). */
  client_assertion?: string;
  client_assertion_type?: string;
  /**
   * They came in the Authorization header (client_secret_basic): a refusal then answers with
   * WWW-Authenticate: Basic (RFC 6749 §5.2).
   */
  basic?: boolean;
}

/** The challenge of a refused client_secret_basic (RFC 6749 §5.2, RFC 7617 §2). */
export const BASIC_CHALLENGE = 'Basic realm="agentauth", charset="UTF-8"';

/** invalid_client (401), with the Basic challenge when the client tried the Authorization header. */
export function clientRefused(credentials: Pick<ClientCredentials, 'basic'>, description: string): InvalidClient {
  const error = new InvalidClient(description);
  if (credentials.basic) error.headers['www-authenticate'] = BASIC_CHALLENGE;
  return error;
}

/** What the body's schema refuses in a client_id or client_secret (src/http/schemas.ts Token), so the header does too. */
const MAX_CLIENT_SECRET_LENGTH = 512;
const hasControlCharacter = (text: string) => [...text].some((character) => character < ' ' || character === '\u007f');

/** One half of Basic credentials: application/x-www-form-urlencoded (RFC 6749 §2.3.1), so '+' is a space. */
function formDecoded(part: string): string | null {
  try {
    return decodeURIComponent(part.replace(/\+/g, ' '));
  } catch {
    return null;
  }
}

/**
 * The client credentials of a request to /token, /introspect or /revoke: client_secret_basic
 * (RFC 6749 §2.3.1: `Authorization: Basic base64(form-encoded id ":" form-encoded secret)`),
 * client_secret_post, or a public client's client_id alone. An Authorization header of another
 * scheme is not client authentication and is left alone, as before Basic was accepted. A Basic
 * header that cannot be read is invalid_client (401, with the Basic challenge); one beside a
 * client_secret in the body, or beside a body client_id that names another client, is two
 * methods at once (RFC 6749 §2.3): invalid_request. A body client_id equal to the header's is
 * allowed (RFC 6749 §3.2.1). No refusal repeats the header.
 *
 * @example
 * clientCredentials('Basic Y2xpXzE6c2VjcmV0', {}); // { client_id: 'cli_1', client_secret: 'secret', basic: true }
 * clientCredentials(undefined, { client_id: 'cli_1' }); // { client_id: 'cli_1', client_secret: undefined, basic: false }
 */
export function clientCredentials(
  authorization: string | undefined,
  body: Pick<ClientCredentials, 'client_id' | 'client_secret' | 'client_assertion' | 'client_assertion_type'>,
): ClientCredentials {
  const scheme = authorization?.match(/^basic(?: +(.*))?$/is);
  const asserted = body.client_assertion !== undefined || body.client_assertion_type !== undefined;
  if (asserted) return assertionCredentials(body, scheme !== null && scheme !== undefined);
  if (!scheme) return { client_id: body.client_id, client_secret: body.client_secret, basic: false };
  const basic = { basic: true };
  const malformed = (why: string) => clientRefused(basic, `client authentication failed: ${why}`);
  const encoded = (scheme[1] ?? '').trim();
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded) || encoded.length % 4 === 1)
    throw malformed('the Authorization header is not Basic base64 credentials');
  let decoded: string;
  try {
    decoded = new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(encoded, 'base64'));
  } catch {
    throw malformed('the Basic credentials are not UTF-8');
  }
  const colon = decoded.indexOf(':');
  if (colon < 0) throw malformed('the Basic credentials must be client_id:client_secret');
  const id = formDecoded(decoded.slice(0, colon));
  const secret = formDecoded(decoded.slice(colon + 1));
  if (id === null || secret === null) throw malformed('the Basic credentials are not form-encoded');
  if (id === '') throw malformed('the Basic credentials carry no client_id');
  if (
    id.length > MAX_CLIENT_ID_LENGTH ||
    secret.length > MAX_CLIENT_SECRET_LENGTH ||
    hasControlCharacter(id) ||
    hasControlCharacter(secret)
  )
    throw malformed('the Basic credentials are too long or contain control characters');
  if (body.client_secret !== undefined)
    throw new InvalidRequest(
      'Use one client authentication method: the Authorization header (client_secret_basic) or client_secret in the body (client_secret_post), not both.',
    );
  if (body.client_id !== undefined && body.client_id !== id)
    throw new InvalidRequest(
      'client_id in the body differs from the client of the Authorization header; use one client authentication method.',
    );
  return { client_id: id, client_secret: secret, basic: true };
}

/**
 * The credentials of a request carrying an RFC 7523 assertion: alone (with a secret, in the body or
 * the Basic header, it is two methods: invalid_request), of the one type, and naming its client
 * by client_id or, when that is left out (RFC 7523 §3), by the assertion's own sub.
 */
function assertionCredentials(
  body: Pick<ClientCredentials, 'client_id' | 'client_secret' | 'client_assertion' | 'client_assertion_type'>,
  basic: boolean,
): ClientCredentials {
  if (basic || body.client_secret !== undefined)
    throw new InvalidRequest(
      'Use one client authentication method: a client assertion (private_key_jwt) or a client secret, not both.',
    );
  if (body.client_assertion === undefined)
    throw new InvalidRequest('client_assertion is required with client_assertion_type (RFC 7523).');
  if (body.client_assertion_type === undefined)
    throw new InvalidRequest(`client_assertion_type is required with client_assertion: ${CLIENT_ASSERTION_TYPE}.`);
  if (body.client_assertion_type !== CLIENT_ASSERTION_TYPE)
    throw new InvalidClient(`client authentication failed: client_assertion_type must be ${CLIENT_ASSERTION_TYPE}`);
  const named = body.client_id ?? assertionClientId(body.client_assertion);
  const clientId =
    named !== undefined && named.length <= MAX_CLIENT_ID_LENGTH && !hasControlCharacter(named) ? named : undefined;
  return { client_id: clientId, client_assertion: body.client_assertion, basic: false };
}

/**
 * Client authentication at the token, introspection and revocation endpoints:
 * client_secret_basic or client_secret_post (RFC 6749 §2.3.1; clientCredentials reads which),
 * an assertion signed by one of its keys for a private_key_jwt client while PRIVATE_KEY_JWT is
 * on (RFC 7523, authenticateWithAssertion), or, for a public client while PUBLIC_CLIENTS is on,
 * its client_id alone (RFC 6749 §2.1; it must then send no secret, and Basic always carries one,
 * if empty). The same answer for an unknown client, a wrong secret, an inactive client and a
 * method the client does not use, so the endpoint does not tell which client ids exist.
 */
export async function authenticateClient(
  deps: Deps & Pick<Context, 'config'>,
  credentials: ClientCredentials,
  log: (message: string) => void = () => {},
  /** The client's row when the caller has read it already (with the token it presents). */
  known?: { client: ClientRecord | undefined },
): Promise<ClientRecord> {
  const { client_id: clientId, client_secret: clientSecret } = credentials;
  const refused = (description = 'client authentication failed') => clientRefused(credentials, description);
  if (!clientId) throw refused('client authentication failed: client_id is required');
  const client = known ? known.client : await deps.store.clients.find(clientId);
  const asserted = credentials.client_assertion !== undefined;
  if (client?.token_endpoint_auth_method === 'private_key_jwt') {
    if (!deps.config.privateKeyJwt || client.status !== 'active' || !asserted) {
      throw refused(
        client.status === 'active' && deps.config.privateKeyJwt
          ? `client authentication failed: this client signs its requests: send client_assertion_type=${CLIENT_ASSERTION_TYPE} and client_assertion (private_key_jwt)`
          : undefined,
      );
    }
    return authenticateWithAssertion(deps, client, credentials.client_assertion!);
  }
  if (asserted) throw refused();
  if (client && isPublicClient(client)) {
    if (!deps.config.publicClients || client.status !== 'active' || clientSecret !== undefined) throw refused();
    return client;
  }
  if (!clientSecret) {
    throw refused(
      credentials.basic
        ? 'client authentication failed: the Basic credentials carry no client_secret'
        : 'client authentication failed: client_id and client_secret are required (client_secret_post or client_secret_basic)',
    );
  }
  const expected = client ? openSealed(deps, client.secret_sealed) : null;
  if (client && expected === null) {
    log(
      `client ${client.id}: its secret was encrypted under a JWT_SECRET this server does not have; list that secret in JWT_PREVIOUS_SECRETS, or rotate the client's secret`,
    );
  }
  const previousValid =
    client?.previous_secret_sealed != null &&
    client.previous_secret_expires_at != null &&
    deps.clock() < client.previous_secret_expires_at;
  const previous = previousValid ? openSealed(deps, client!.previous_secret_sealed!) : null;
  // Both comparisons always run, so timing does not tell which secret (if any) matched.
  const matchesCurrent = safeEqual(clientSecret, expected ?? `${clientSecret}\0`);
  const matchesPrevious = safeEqual(clientSecret, previous ?? `${clientSecret}\0`);
  if (!client || !(matchesCurrent || matchesPrevious) || client.status !== 'active') throw refused();
  return client;
}

/**
 * RFC 7523 §3: the assertion is checked against the client's keys (ClientKeySets.verify: the
 * algorithm, the key, the signature, iss, sub, aud, exp, jti), and its jti is then recorded as
 * used on every node until it expires, so a replay is refused anywhere. The assertion itself is a
 * credential: it is never logged or repeated.
 */
async function authenticateWithAssertion(deps: Deps, client: ClientRecord, assertion: string): Promise<ClientRecord> {
  const refused = (problem: string) => new InvalidClient(`client authentication failed: ${problem}`);
  const keySets = deps.clientKeySets;
  if (!keySets) throw refused('signed assertions (private_key_jwt) are not enabled on this server');
  const issuer = deps.config.baseUrl;
  let checked: Awaited<ReturnType<typeof keySets.verify>>;
  try {
    checked = await keySets.verify(client, assertion, {
      clientId: client.id,
      audiences: [issuer, `${issuer}/token`],
      now: deps.clock(),
    });
  } catch (error) {
    if (error instanceof KeySetUnavailable) throw refused(error.message);
    throw error;
  }
  if ('problem' in checked) throw refused(checked.problem);
  if (!(await deps.store.assertions.use(client.id, checked.jti, checked.rememberUntil)))
    throw refused('this assertion was used already (its jti): make a new one for each request');
  return client;
}
