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
import { keySetUriProblem, readKeySet } from '../client-keys/key-set.ts';

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
  /** How it authenticates at /token: none (a public client), or with an assertion signed by its keys. */
  token_endpoint_auth_method: 'none' | 'private_key_jwt';
  /** A private_key_jwt client's key set as JSON text (its usable public keys), when the document holds one. */
  jwks?: string;
  /** Where a private_key_jwt client publishes its key set, when the document names it. */
  jwks_uri?: string;
}

/**
 * What the server accepts of a document beyond public clients.
 *
 * @example
 * validateClientMetadataDocument(url, body, { privateKeyJwt: true });
 */
export interface DocumentOptions {
  /** PRIVATE_KEY_JWT: a document declaring private_key_jwt is served with it. */
  privateKeyJwt?: boolean;
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
 * Clients with the authorization code flow and no shared secret: a public client ("none", or no
 * method), or, with PRIVATE_KEY_JWT, one that signs with its keys ("private_key_jwt" with jwks or
 * jwks_uri). How the method is chosen is {@link authenticationOf}'s.
 *
 * @example
 * const client = validateClientMetadataDocument(url, (await fetchJsonDocument(url)).body);
 * client.redirect_uris; // ['https://app.example/callback']
 */
export function validateClientMetadataDocument(
  url: string,
  body: unknown,
  options: DocumentOptions = {},
): ClientMetadataDocument {
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
  if (hasPrivateKeys(doc.jwks)) throw problem('jwks must not contain private or symmetric key material');
  const authentication = authenticationOf(doc, options, problem);

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
    ...authentication,
  };
  // Display links are optional: a bad one is dropped rather than failing the whole client.
  if (isDisplayLink(doc.client_uri)) client.client_uri = doc.client_uri;
  if (isDisplayLink(doc.logo_uri)) client.logo_uri = doc.logo_uri;
  return client;
}

/**
 * How a document's client authenticates at /token (docs/design.md §13, §18). The method it
 * declares (token_endpoint_auth_method) is the one it will use, as RFC 7591 §2 says of a
 * registration: "none" or none declared is a public client; "private_key_jwt" is served with it
 * while PRIVATE_KEY_JWT is on, its keys in jwks or at jwks_uri (one of them, RFC 7591 §2), and the
 * code is then exchanged only with a valid assertion. While PRIVATE_KEY_JWT is off, a document
 * declaring private_key_jwt is served as a public client only when it offers "none" too
 * (token_endpoint_auth_methods_supported, which ChatGPT's newer documents carry): PKCE, which
 * every client here must use, then protects its code; otherwise it is refused, saying why.
 */
function authenticationOf(
  doc: Record<string, unknown>,
  options: DocumentOptions,
  problem: (reason: string) => InvalidMetadataDocument,
): Pick<ClientMetadataDocument, 'token_endpoint_auth_method' | 'jwks' | 'jwks_uri'> {
  const method = doc.token_endpoint_auth_method;
  const offered = doc.token_endpoint_auth_methods_supported;
  if (offered !== undefined && !isStringArray(offered))
    throw problem('token_endpoint_auth_methods_supported must be an array of strings');
  if (method === undefined || method === 'none') return { token_endpoint_auth_method: 'none' };
  if (method !== 'private_key_jwt')
    throw problem('token_endpoint_auth_method must be none or private_key_jwt (or absent)');
  if (!options.privateKeyJwt) {
    if (offered?.includes('none')) return { token_endpoint_auth_method: 'none' };
    throw problem(
      'token_endpoint_auth_method private_key_jwt is not enabled on this server (PRIVATE_KEY_JWT), and the document does not offer none',
    );
  }
  const { jwks, jwks_uri: uri } = doc;
  if ((jwks === undefined) === (uri === undefined))
    throw problem('a private_key_jwt client needs its keys in exactly one of jwks and jwks_uri');
  if (uri !== undefined) {
    const uriProblem = keySetUriProblem(uri);
    if (uriProblem) throw problem(`jwks_uri ${uriProblem}`);
    return { token_endpoint_auth_method: 'private_key_jwt', jwks_uri: uri as string };
  }
  const read = readKeySet(jwks, { lenient: true });
  if ('problem' in read) throw problem(`jwks: ${read.problem}`);
  return { token_endpoint_auth_method: 'private_key_jwt', jwks: read.json };
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
