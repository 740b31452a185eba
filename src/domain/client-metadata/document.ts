/**
 * Client Identifier URLs and Client ID Metadata Documents
 * (draft-ietf-oauth-client-id-metadata-document-02 §3, §4, §4.1): what this server accepts.
 */
import {
  type ClientProblem,
  clientNameProblems,
  grantTypesProblems,
  MAX_CLIENT_ID_LENGTH,
  MAX_REDIRECT_URIS,
  redirectUrisProblems,
  responseTypesProblems,
} from '../rules/client.ts';
import { GRANT_TYPES } from '../rules/grant-type-names.ts';

/**
 * The client as its metadata document describes it, reduced to what this server uses.
 *
 * @example
 * const client: ClientMetadataDocument = { client_id: url, client_name: 'Example App', redirect_uris: ['https://app.example/cb'] };
 */
export interface ClientMetadataDocument {
  /** The Client Identifier URL, exactly as the client sent it. */
  client_id: string;
  client_name: string;
  redirect_uris: string[];
  client_uri?: string;
  logo_uri?: string;
}

/**
 * Why a fetched document cannot be used; the message is fit to show to whoever sent the client_id.
 *
 * @example
 * // "the client's metadata document is invalid: client_name is missing or empty"
 * if (error instanceof InvalidMetadataDocument) reply(400, error.message);
 */
export class InvalidMetadataDocument extends Error {}

const MAX_LINK_LENGTH = 2000;
/** RFC 3986 characters only: anything else the URL parser would re-encode, and what is fetched would no longer be the client_id. */
const URL_CHARACTERS = /^[A-Za-z0-9\-._~!$&'()*+,;=:@/?#[\]%]+$/;
const SHARED_SECRET_METHODS = new Set(['client_secret_post', 'client_secret_basic', 'client_secret_jwt']);
/** JWK members that exist only in private or symmetric keys (RFC 7518 §6.2.2, §6.3.2, §6.4.1). */
const PRIVATE_JWK_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];

/**
 * Whether a client_id names a metadata document rather than a registered client. Issued
 * client ids never start with https:// (draft §7.1), so the prefix alone decides.
 *
 * @example
 * isClientIdUrl('https://app.example/oauth/client.json'); // true
 */
export function isClientIdUrl(clientId: string): boolean {
  return clientId.startsWith('https://');
}

/**
 * Why `clientId` is not an acceptable Client Identifier URL, or null when it is (draft §3).
 * The MUSTs: https, no userinfo, a path, no dot segments, no fragment. Of the SHOULD NOTs we
 * are strict: a query is refused (it would let one host mint endless client ids and defeat
 * the cache), and so is a bare "/" path. Beyond the draft: at most 512 characters of RFC 3986
 * (so the string is fetched exactly as sent), since the id is shown to users and stored.
 * Ports and IP-literal hosts are allowed, as in the draft: which addresses are never fetched
 * from is the fetcher's rule (§8.6), applied to a literal before any socket is opened and to a
 * name's DNS answer alike, in one place that tests can open to loopback.
 *
 * @example
 * clientIdUrlProblem('https://app.example/oauth/client.json'); // null
 * clientIdUrlProblem('https://app.example/'); // 'must have a path ...'
 */
export function clientIdUrlProblem(clientId: string): string | null {
  if (clientId.length > MAX_CLIENT_ID_LENGTH) return `is longer than ${MAX_CLIENT_ID_LENGTH} characters`;
  if (!clientId.startsWith('https://')) return 'must start with https://';
  if (!URL_CHARACTERS.test(clientId)) return 'must consist of URL characters (RFC 3986; percent-encode the rest)';
  if (/%(?![0-9A-Fa-f]{2})/.test(clientId)) return 'has a % that does not start a percent-encoding';
  if (clientId.includes('#')) return 'must not contain a fragment';
  if (clientId.includes('?')) return 'must not contain a query';
  const rest = clientId.slice('https://'.length);
  const slash = rest.indexOf('/');
  const authority = slash === -1 ? rest : rest.slice(0, slash);
  const path = slash === -1 ? '' : rest.slice(slash);
  if (authority.includes('@')) return 'must not contain user information';
  if (!URL.canParse(clientId) || !authority) return 'is not a valid URL';
  if (path === '' || path === '/') return 'must have a path (not just /)';
  const segments = path.split('/').map((segment) => segment.replace(/%2e/gi, '.'));
  if (segments.some((segment) => segment === '.' || segment === '..')) return 'must not contain . or .. path segments';
  return null;
}

/**
 * Checks a fetched document against `url` (the Client Identifier URL it was fetched from) and
 * returns what this server uses of it, or throws {@link InvalidMetadataDocument} with the reason.
 * Only public clients with the authorization code flow are supported, so the only token
 * endpoint authentication method is "none".
 *
 * @example
 * const client = validateClientMetadataDocument(url, (await fetchJsonDocument(url)).body);
 * client.redirect_uris; // ['https://app.example/callback']
 */
export function validateClientMetadataDocument(url: string, body: unknown): ClientMetadataDocument {
  const problem = (reason: string) =>
    new InvalidMetadataDocument(`the client's metadata document is invalid: ${reason}`);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw problem('it is not a JSON object');
  const doc = body as Record<string, unknown>;
  const has = (name: string) => Object.hasOwn(doc, name);

  if (!has('client_id')) throw problem('client_id is missing');
  if (doc.client_id !== url) throw problem('client_id is not exactly the URL the document was fetched from');

  if (has('client_secret') || has('client_secret_expires_at')) {
    throw problem(
      'it must not contain client_secret or client_secret_expires_at (a published document cannot keep a secret)',
    );
  }
  const method = doc.token_endpoint_auth_method;
  if (typeof method === 'string' && SHARED_SECRET_METHODS.has(method)) {
    throw problem(`token_endpoint_auth_method ${method} needs a shared secret, which a published document cannot have`);
  }
  if (method !== undefined && method !== 'none') throw problem('token_endpoint_auth_method must be none (or absent)');
  if (hasPrivateKeys(doc.jwks)) throw problem('jwks must not contain private or symmetric key material');

  const grantTypes = doc.grant_types;
  if (grantTypes !== undefined) {
    const [grantProblem] = isStringArray(grantTypes) ? grantTypesProblems(grantTypes) : [];
    if (!isStringArray(grantTypes) || grantProblem?.rule === 'not_served')
      throw problem(`grant_types may contain only ${GRANT_TYPES.join(' and ')}`);
    if (grantProblem) throw problem('grant_types must include authorization_code');
  }
  const responseTypes = doc.response_types;
  // Stricter than dynamic registration: exactly one response type, code (the draft's example).
  if (
    responseTypes !== undefined &&
    !(isStringArray(responseTypes) && responseTypes.length === 1 && responseTypesProblems(responseTypes).length === 0)
  ) {
    throw problem('response_types must be ["code"]');
  }

  const name = typeof doc.client_name === 'string' ? doc.client_name.trim() : '';
  // The document's length is counted in code points, and its wording is its own (see clientNameWording).
  const [nameProblem] = clientNameProblems(name, { chosenByClient: true, measure: 'code points' });
  if (nameProblem) throw problem(clientNameWording[nameProblem.rule] ?? `client_name ${nameProblem.message}`);

  const redirectUris = doc.redirect_uris;
  if (!isStringArray(redirectUris)) throw problem('redirect_uris must be a non-empty array of strings');
  const [uriProblem] = redirectUrisProblems(redirectUris);
  if (uriProblem?.rule === 'none') throw problem('redirect_uris must be a non-empty array of strings');
  if (uriProblem?.rule === 'too_many') throw problem(`redirect_uris has more than ${MAX_REDIRECT_URIS} entries`);
  if (uriProblem) throw problem(`redirect_uris[${uriProblem.index}] ${uriProblem.message}`);

  const client: ClientMetadataDocument = {
    client_id: url,
    client_name: name,
    redirect_uris: [...new Set(redirectUris)],
  };
  // Display links are optional: a bad one is dropped rather than failing the whole client.
  if (isDisplayLink(doc.client_uri)) client.client_uri = doc.client_uri;
  if (isDisplayLink(doc.logo_uri)) client.logo_uri = doc.logo_uri;
  return client;
}

/** How a document's client_name problems have always been worded. */
const clientNameWording: Partial<Record<ClientProblem['rule'], string>> = {
  empty: 'client_name is missing or empty',
  undisplayable: 'client_name contains control or text-direction characters',
};

function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === 'string');
}

function isDisplayLink(value: unknown): value is string {
  if (typeof value !== 'string' || value.length > MAX_LINK_LENGTH || !/^https:\/\/[\x21-\x7e]+$/.test(value))
    return false;
  const url = URL.parse(value);
  return url !== null && url.protocol === 'https:' && !url.username && !url.password;
}

function hasPrivateKeys(jwks: unknown): boolean {
  if (typeof jwks !== 'object' || jwks === null) return false;
  const keys = (jwks as { keys?: unknown }).keys;
  if (!Array.isArray(keys)) return false;
  return keys.some(
    (key) =>
      typeof key === 'object' && key !== null && PRIVATE_JWK_MEMBERS.some((member) => Object.hasOwn(key, member)),
  );
}
