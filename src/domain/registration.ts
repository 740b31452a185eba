/**
 * Dynamic Client Registration (RFC 7591) and its management protocol (RFC 7592), served only
 * while DYNAMIC_REGISTRATION (or MCP_AUTHORIZATION) is on. The decisions and their RFC sections
 * are in docs/reference/dynamic-registration.md.
 *
 * What is registered is what a client record holds: name, redirect URIs and token endpoint
 * authentication method. Every other answer field is either fixed for every client of this
 * server (grant_types, response_types, scope) or derived from the record, so that a read or an
 * update answers exactly what registration answered. Display links (client_uri, logo_uri,
 * tos_uri, policy_uri), contacts, software statements and the like are accepted and ignored: the
 * record has no place for them, and RFC 7591 §3.2.1 returns only what the server registered.
 */
import { digest, newRegistrationAccessToken, safeEqual } from '../crypto.ts';
import type { Context } from '../context.ts';
import { InvalidClientMetadata, InvalidField, InvalidRedirectUri, InvalidRequest, InvalidToken } from '../errors.ts';
import type { ClientAuthMethod, ClientRecord } from '../store/clients.ts';
import { type ClientActionsInput, clientActionColumns } from './client-actions.ts';
import {
  type ClientKeysInput,
  clientKeyColumns,
  hasClientSecret,
  isPublicClient,
  recordClientUse,
  registerClient,
} from './clients.ts';
import {
  clientNameProblems,
  couldBeClientId,
  grantTypesProblems,
  redirectUrisProblems,
  responseTypesProblems,
} from './rules/client.ts';
import { GRANT_TYPES } from './rules/grant-type-names.ts';
import { SUPPORTED_SCOPES, withoutScope } from './scopes.ts';

type Deps = Pick<Context, 'config' | 'store' | 'secrets' | 'clock' | 'webhooks'>;

/** Every client of this server may use both grants and the code response type (RFC 7591 §2.1). */
const RESPONSE_TYPES = ['code'] as const;
/**
 * The scope every client is registered with: this server does not limit a client to fewer
 * scopes than it supports; each authorization request asks for what it needs (RFC 7591 §2 lets
 * the server register a default set).
 */
const REGISTERED_SCOPE = SUPPORTED_SCOPES.join(' ');
/**
 * A public client is not granted openid with HS256 (docs/design.md §13: no secret to key an ID
 * token with); with a key pair it is (§19).
 */
const PUBLIC_CLIENT_SCOPE = withoutScope(REGISTERED_SCOPE, 'openid');
/** Fields of the client information response that an update must not send (RFC 7592 §2.2). */
const SERVER_MANAGED_FIELDS = [
  'registration_access_token',
  'registration_client_uri',
  'client_secret_expires_at',
  'client_id_issued_at',
];
/** The one answer for every management request that is not authorized, so it tells nothing about which client ids exist. */
const NOT_AUTHORIZED = 'The registration access token is invalid, or the client it was issued for does not exist.';
/** What an agent waiting on one of the deleted client's sign-ins is told. */
const DELETED_DESCRIPTION = 'The website was deleted by its owner; start again.';

/**
 * The client information response (RFC 7591 §3.2.1, RFC 7592 §3). `client_secret` appears only
 * in the answer to registration: a secret is shown once (docs/design.md §3).
 */
export interface RegistrationResponse {
  client_id: string;
  client_secret?: string;
  client_id_issued_at: number;
  /** 0: the secret does not expire. Present for clients that have a secret. */
  client_secret_expires_at?: 0;
  registration_access_token: string;
  registration_client_uri: string;
  client_name: string;
  redirect_uris: string[];
  grant_types: string[];
  response_types: string[];
  token_endpoint_auth_method: ClientAuthMethod;
  scope: string;
  /** A private_key_jwt client's key set (RFC 7591 §2), as registered. */
  jwks?: unknown;
  /** Where a private_key_jwt client publishes its key set (RFC 7591 §2). */
  jwks_uri?: string;
  /** The names of the action types its owner registered for it (RFC 9396 §10), when it has any. */
  authorization_details_types?: string[];
  /** How it learns an owner's answer (CIBA Core 1.0 §4), when it registered one. */
  backchannel_token_delivery_mode?: 'poll' | 'ping';
  /** A ping client's endpoint (CIBA Core 1.0 §4), when it registered one. */
  backchannel_client_notification_endpoint?: string;
}

/** What a registration or an update asks for, checked and reduced to what a client record holds. */
interface RequestedMetadata {
  name: string;
  redirectUris: string[];
  /** Undefined when the request did not say (registration then uses client_secret_post; an update keeps the current method). */
  authMethod: ClientAuthMethod | undefined;
  /** The keys of a private_key_jwt client (jwks or jwks_uri), as sent; undefined when neither was. */
  keys: ClientKeysInput | undefined;
  /** Its CIBA token delivery (ACTION_APPROVALS on; undefined off, where the fields are ignored). */
  actions: ClientActionsInput | undefined;
}

/**
 * Registers a client from RFC 7591 metadata (the parsed JSON body, unchecked) and returns the
 * client information response, with the client's secret (unless it is public) and its
 * registration access token, both shown this once. The token is stored only as its digest.
 * Throws InvalidRedirectUri or InvalidClientMetadata (400, RFC 7591 §3.2.2).
 *
 * @example
 * const registered = await registerDynamicClient(ctx, { redirect_uris: ['https://app.example/cb'], client_name: 'App' });
 * registered.token_endpoint_auth_method; // 'client_secret_post'
 * registered.registration_client_uri;    // 'https://auth.example/register/cli_…'
 */
export async function registerDynamicClient(ctx: Deps, metadata: unknown): Promise<RegistrationResponse> {
  const requested = checkMetadata(ctx.config, metadata);
  const authMethod = requested.authMethod ?? 'client_secret_post';
  const registrationAccessToken = newRegistrationAccessToken();
  if (authMethod === 'private_key_jwt' && !requested.keys)
    throw new InvalidClientMetadata(
      "token_endpoint_auth_method private_key_jwt needs the client's keys: jwks or jwks_uri.",
    );
  const { client, secret } = await asClientMetadata(() =>
    registerClient(ctx, {
      name: requested.name,
      redirectUris: requested.redirectUris,
      public: authMethod === 'none',
      ...(authMethod === 'private_key_jwt' ? { keys: requested.keys } : {}),
      ...(requested.actions ? { actions: requested.actions } : {}),
      registrationTokenDigest: digest(registrationAccessToken),
    }),
  );
  return clientInformation(ctx.config, client, registrationAccessToken, secret);
}

/**
 * The dynamically registered client that `clientId` names, when `token` is its registration
 * access token (RFC 7592 §2). Throws InvalidToken (401, RFC 6750 §3.1) otherwise, with one
 * answer for a wrong token, an unknown or deleted client and a client that was not registered
 * dynamically (which has no token): RFC 7592 §2.1–2.3 answer 401 when the client does not
 * exist, and the token of a deleted client is gone with its record.
 *
 * @example
 * const client = await authorizeRegistrationAccess(ctx, 'cli_abc', 'rat_…');
 */
export async function authorizeRegistrationAccess(
  deps: Pick<Context, 'store'>,
  clientId: string,
  token: string | undefined,
): Promise<ClientRecord> {
  return (await managedClient(deps, clientId, token)).client;
}

/** authorizeRegistrationAccess, also returning the token, which is then known to be present. */
async function managedClient(
  deps: Pick<Context, 'store'>,
  clientId: string,
  token: string | undefined,
): Promise<{ client: ClientRecord; token: string }> {
  if (!token) {
    const error = new InvalidToken('A registration access token is required (Authorization: Bearer).');
    // RFC 6750 §3.1: a request without credentials gets the challenge without an error code.
    error.headers['www-authenticate'] = 'Bearer';
    throw error;
  }
  // An id no client can have never reaches the database.
  const client = couldBeClientId(clientId) ? await deps.store.clients.find(clientId) : undefined;
  const expected = client?.source === 'dynamic' ? client.registration_token_digest : null;
  if (!client || !expected || !safeEqual(digest(token), expected)) throw new InvalidToken(NOT_AUTHORIZED);
  return { client, token };
}

/**
 * RFC 7592 §2.1: the client information of a dynamically registered client, for the holder of
 * its registration access token. The token is the one presented (it is not rotated); the
 * client secret is not shown again.
 *
 * @example
 * const info = await readDynamicClient(ctx, 'cli_abc', 'rat_…'); // as registered, without client_secret
 */
export async function readDynamicClient(
  ctx: Deps,
  clientId: string,
  token: string | undefined,
): Promise<RegistrationResponse> {
  const { client, token: presented } = await managedClient(ctx, clientId, token);
  if (!(await recordClientUse(ctx, client))) throw new InvalidToken(NOT_AUTHORIZED);
  return clientInformation(ctx.config, client, presented, null);
}

/**
 * RFC 7592 §2.2: replaces a dynamically registered client's metadata with `metadata` (the
 * parsed JSON body, unchecked). The body must name the client's client_id; a client_secret, if
 * sent, must be the current one (a client cannot choose its secret); the server-managed fields
 * must not be sent (400 invalid_request for each). The metadata is checked as at registration;
 * omitted fields take their defaults, except token_endpoint_auth_method, which when omitted
 * keeps its value and otherwise cannot change (that would issue or drop a secret). Neither the
 * secret nor the registration access token is reissued.
 *
 * @example
 * const info = await updateDynamicClient(ctx, 'cli_abc', 'rat_…', { client_id: 'cli_abc', redirect_uris: ['https://app.example/new'], client_name: 'App 2' });
 */
export async function updateDynamicClient(
  ctx: Deps,
  clientId: string,
  token: string | undefined,
  metadata: unknown,
): Promise<RegistrationResponse> {
  const { client, token: presented } = await managedClient(ctx, clientId, token);
  const body = asObject(metadata);
  const sent = (name: string) => given(body, name) !== undefined;
  const managed = SERVER_MANAGED_FIELDS.find(sent);
  if (managed) throw new InvalidRequest(`${managed} must not be sent in an update (RFC 7592 §2.2).`);
  if (given(body, 'client_id') !== client.id)
    throw new InvalidRequest('client_id must be sent and must be the client_id of this registration.');
  if (sent('client_secret') && !isCurrentSecret(ctx, client, given(body, 'client_secret'))) {
    throw new InvalidRequest(
      'client_secret is not the current client secret; a client cannot choose its secret (leave it out).',
    );
  }
  const requested = checkMetadata(ctx.config, body);
  if (requested.authMethod !== undefined && requested.authMethod !== client.token_endpoint_auth_method) {
    throw new InvalidClientMetadata(
      `token_endpoint_auth_method cannot be changed from ${client.token_endpoint_auth_method}; register a new client instead.`,
    );
  }
  // A client that signs with keys may replace them (key rotation); others have none to send.
  const keys =
    requested.keys && client.token_endpoint_auth_method === 'private_key_jwt' ? clientKeyColumns(requested.keys) : {};
  // Omitted, the token delivery takes its default (none), as every omitted field (RFC 7592 §2.2).
  const actions = requested.actions
    ? await asClientMetadata(() => clientActionColumns(ctx, requested.actions!, client))
    : {};
  const patch = {
    name: requested.name,
    redirect_uris: requested.redirectUris,
    last_used_at: ctx.clock(),
    ...keys,
    ...actions,
  };
  // Deleted since it was read: as if it had not been found.
  if (!(await ctx.store.clients.update(client.id, patch))) throw new InvalidToken(NOT_AUTHORIZED);
  return clientInformation(ctx.config, { ...client, ...patch }, presented, null);
}

/**
 * RFC 7592 §2.3: deletes a dynamically registered client. Its grants are revoked in the same
 * transaction (their refresh and access tokens stop working), its unredeemed codes expire, and
 * its client_id, secret and registration access token name nothing any more.
 *
 * @example
 * await deleteDynamicClient(ctx, 'cli_abc', 'rat_…'); // then 204
 */
export async function deleteDynamicClient(ctx: Deps, clientId: string, token: string | undefined): Promise<void> {
  const client = await authorizeRegistrationAccess(ctx, clientId, token);
  if (!(await ctx.store.clients.delete(client.id, ctx.clock(), DELETED_DESCRIPTION)))
    throw new InvalidToken(NOT_AUTHORIZED);
}

/** The answer to registration, read and update, built from the record alone. */
function clientInformation(
  config: Pick<Deps['config'], 'baseUrl' | 'tokenSigningAlg'>,
  client: ClientRecord,
  registrationAccessToken: string,
  secret: string | null,
): RegistrationResponse {
  return {
    client_id: client.id,
    ...(secret ? { client_secret: secret } : {}),
    client_id_issued_at: client.created_at,
    ...(hasClientSecret(client) ? { client_secret_expires_at: 0 as const } : {}),
    registration_access_token: registrationAccessToken,
    registration_client_uri: `${config.baseUrl}/register/${encodeURIComponent(client.id)}`,
    client_name: client.name,
    redirect_uris: [...client.redirect_uris],
    grant_types: [...GRANT_TYPES],
    response_types: [...RESPONSE_TYPES],
    token_endpoint_auth_method: client.token_endpoint_auth_method,
    scope: !hasClientSecret(client) && config.tokenSigningAlg === 'HS256' ? PUBLIC_CLIENT_SCOPE : REGISTERED_SCOPE,
    ...(client.jwks === null ? {} : { jwks: JSON.parse(client.jwks) as unknown }),
    ...(client.jwks_uri === null ? {} : { jwks_uri: client.jwks_uri }),
    ...(client.action_types.length === 0
      ? {}
      : { authorization_details_types: client.action_types.map((type) => type.type) }),
    ...(client.backchannel_token_delivery_mode === null
      ? {}
      : { backchannel_token_delivery_mode: client.backchannel_token_delivery_mode }),
    ...(client.backchannel_client_notification_endpoint === null
      ? {}
      : { backchannel_client_notification_endpoint: client.backchannel_client_notification_endpoint }),
  };
}

/** `act`, its refusal of a field (the rules every door shares) answered as RFC 7591 §3.2.2's invalid_client_metadata. */
async function asClientMetadata<T>(act: () => Promise<T>): Promise<T> {
  try {
    return await act();
  } catch (error) {
    if (error instanceof InvalidField) throw new InvalidClientMetadata(error.description);
    throw error;
  }
}

function asObject(value: unknown): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new InvalidClientMetadata('The client metadata must be a JSON object.');
  return value as Record<string, unknown>;
}

/** A field of the request; null counts as absent (RFC 7592 §2.2 lets the server ignore null and empty values). */
function given(body: Record<string, unknown>, name: string): unknown {
  return Object.hasOwn(body, name) ? (body[name] ?? undefined) : undefined;
}

const isStringArray = (value: unknown): value is string[] =>
  Array.isArray(value) && value.every((item) => typeof item === 'string');

/**
 * RFC 7591 §2 metadata, checked and reduced to what this server registers. Unknown fields are
 * ignored (§2); so are the known ones the record has no place for (see the file comment).
 */
function checkMetadata(
  config: Pick<Context['config'], 'publicClients' | 'privateKeyJwt' | 'actionApprovals'>,
  metadata: unknown,
): RequestedMetadata {
  const body = asObject(metadata);
  const redirectUris = checkRedirectUris(given(body, 'redirect_uris'));
  checkGrantAndResponseTypes(config, given(body, 'grant_types'), given(body, 'response_types'));
  checkScope(given(body, 'scope'));
  const authMethod = checkAuthMethod(config, given(body, 'token_endpoint_auth_method'));
  const jwks = given(body, 'jwks');
  const jwksUri = given(body, 'jwks_uri');
  const sentKeys = jwks !== undefined || jwksUri !== undefined;
  if (sentKeys && jwksUri !== undefined && typeof jwksUri !== 'string')
    throw new InvalidClientMetadata('jwks_uri must be a string.');
  // Keys are checked now, so a registration never stores a set it could not use.
  const keys = sentKeys ? { jwks, jwksUri: jwksUri as string | undefined } : undefined;
  if (keys && authMethod === 'private_key_jwt') clientKeyColumns(keys);
  return {
    name: checkName(given(body, 'client_name'), redirectUris[0]!),
    redirectUris,
    authMethod,
    // Keys sent by a client of another method are ignored, as other metadata it has no use for.
    keys: authMethod === 'private_key_jwt' || authMethod === undefined ? keys : undefined,
    actions: config.actionApprovals ? checkActionMetadata(body) : undefined,
  };
}

/**
 * The CIBA metadata of a registration (CIBA Core 1.0 §4), ACTION_APPROVALS on: a token delivery
 * mode (poll or ping) and a ping client's notification endpoint, checked by the rules every door
 * shares. `authorization_details_types` (RFC 9396 §10) is refused: a website's action types
 * carry the words its owners read, so they are registered by an owner (console, management API,
 * CLI), never by a client that registers itself (docs/design.md §21).
 */
function checkActionMetadata(body: Record<string, unknown>): ClientActionsInput {
  const types = given(body, 'authorization_details_types');
  if (types !== undefined && !(Array.isArray(types) && types.length === 0))
    throw new InvalidClientMetadata(
      'authorization_details_types cannot be registered here: a website’s action types, and the words its owners read, are registered by its owner in the console, the management API or the CLI.',
    );
  const mode = given(body, 'backchannel_token_delivery_mode');
  if (mode !== undefined && mode !== 'poll' && mode !== 'ping')
    throw new InvalidClientMetadata('backchannel_token_delivery_mode must be poll or ping (push is not supported).');
  const endpoint = given(body, 'backchannel_client_notification_endpoint');
  if (endpoint !== undefined && typeof endpoint !== 'string')
    throw new InvalidClientMetadata('backchannel_client_notification_endpoint must be a string.');
  return { tokenDelivery: mode ?? null, notificationEndpoint: (endpoint as string | undefined) ?? null };
}

function checkRedirectUris(value: unknown): string[] {
  if (value === undefined) throw new InvalidClientMetadata('redirect_uris is required.');
  if (!isStringArray(value)) throw new InvalidClientMetadata('redirect_uris must be an array of strings.');
  const problems = redirectUrisProblems(value);
  // Desktop hosts register an app-scheme URI beside their loopback or https ones (Cursor sends
  // cursor://anysphere.cursor-mcp/oauth/callback with http://localhost:8787/callback). This server
  // redirects only to https and loopback, so such a URI is left out and the answer lists what was
  // registered (RFC 7591 §2 lets the server replace requested values), instead of refusing the set.
  const dropped = new Set(
    problems.flatMap((problem) =>
      problem.index !== undefined && isAppSchemeUri(value[problem.index]!) ? [problem.index] : [],
    ),
  );
  const kept = value.filter((_, index) => !dropped.has(index));
  const [problem] = kept.length > 0 ? problems.filter((each) => !dropped.has(each.index ?? -1)) : problems;
  // The index, not the URI: the description stays plain ASCII whatever was sent.
  if (problem?.rule === 'invalid') throw new InvalidRedirectUri(`redirect_uris[${problem.index}] ${problem.message}.`);
  if (problem) throw new InvalidClientMetadata(`redirect_uris ${problem.message}.`);
  return [...new Set(kept)];
}

/** An absolute URI of a scheme other than http and https: a native app's own (RFC 8252 §7.1), or worse. */
function isAppSchemeUri(uri: string): boolean {
  const url = URL.parse(uri);
  return url !== null && url.protocol !== 'http:' && url.protocol !== 'https:';
}

/** The name shown to the person signing in; by default the host of the first redirect URI, which is what they would check anyway. */
function checkName(value: unknown, firstRedirectUri: string): string {
  if (value !== undefined && typeof value !== 'string')
    throw new InvalidClientMetadata('client_name must be a string.');
  const name = (value ?? '').trim();
  if (!name) return new URL(firstRedirectUri).hostname;
  const [problem] = clientNameProblems(name, { chosenByClient: true });
  if (problem) throw new InvalidClientMetadata(`client_name ${problem.message}.`);
  return name;
}

function checkAuthMethod(
  config: Pick<Context['config'], 'publicClients' | 'privateKeyJwt'>,
  value: unknown,
): ClientAuthMethod | undefined {
  const supported = [
    'client_secret_post',
    ...(config.privateKeyJwt ? ['private_key_jwt'] : []),
    ...(config.publicClients ? ['none'] : []),
  ]
    .join(', ')
    .replace(/, ([^,]*)$/, ' or $1');
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw new InvalidClientMetadata('token_endpoint_auth_method must be a string.');
  // RFC 7591 §3.2.1 lets the server replace a requested value as long as it returns the one it
  // registered. client_secret_basic is RFC 7591's default and what many libraries ask for out of
  // habit; the same secret sent in the body instead is what this server's metadata advertises
  // (token_endpoint_auth_methods_supported), and a client that reads the answer switches.
  if (value === 'client_secret_post' || value === 'client_secret_basic') return 'client_secret_post';
  if (value === 'none') {
    if (config.publicClients) return 'none';
    throw new InvalidClientMetadata(
      'token_endpoint_auth_method none (a public client) is not enabled on this server (PUBLIC_CLIENTS); use client_secret_post.',
    );
  }
  if (value === 'private_key_jwt') {
    if (config.privateKeyJwt) return 'private_key_jwt';
    throw new InvalidClientMetadata(
      'token_endpoint_auth_method private_key_jwt (a client that signs with its keys) is not enabled on this server (PRIVATE_KEY_JWT); use client_secret_post.',
    );
  }
  throw new InvalidClientMetadata(`token_endpoint_auth_method must be ${supported}.`);
}

/**
 * grant_types and response_types may only name what every client of this server gets, and must
 * agree with each other (RFC 7591 §2.1): the authorization_code grant goes with the code
 * response type, so neither can be left out.
 */
function checkGrantAndResponseTypes(
  config: Pick<Context['config'], 'actionApprovals'>,
  grantTypes: unknown,
  responseTypes: unknown,
): void {
  if (grantTypes !== undefined) {
    if (!isStringArray(grantTypes)) throw new InvalidClientMetadata('grant_types must be an array of strings.');
    const [problem] = grantTypesProblems(grantTypes, config);
    if (problem) throw new InvalidClientMetadata(`grant_types ${problem.message}.`);
  }
  if (responseTypes !== undefined) {
    if (!isStringArray(responseTypes)) throw new InvalidClientMetadata('response_types must be an array of strings.');
    const [problem] = responseTypesProblems(responseTypes);
    if (problem?.rule === 'none')
      throw new InvalidClientMetadata(
        'response_types must include code, which the authorization_code grant uses (RFC 7591 §2.1).',
      );
    if (problem) throw new InvalidClientMetadata(`response_types ${problem.message}.`);
  }
}

/**
 * A requested scope is checked for its type only: the server registers what it issues (RFC 7591
 * §2 lets it set the scope), and the answer says so. MCP clients commonly ask for more
 * (offline_access, the resource's own scopes) and should get a registration, not a refusal;
 * each authorization request then asks for what it needs, and /authorize refuses unknown values.
 */
function checkScope(value: unknown): void {
  if (value === undefined) return;
  if (typeof value !== 'string') throw new InvalidClientMetadata('scope must be a string.');
  if (value === '') return; // no scope asked for: RFC 7592 §2.2 lets the server ignore empty values
  // RFC 6749 §3.3: scope tokens separated by spaces, each of NQCHAR (printable ASCII but " and \).
  if (!SCOPE_SYNTAX.test(value))
    throw new InvalidClientMetadata('scope must be space-separated scope tokens of printable ASCII (RFC 6749 §3.3).');
}

const SCOPE_SYNTAX = /^[\x21\x23-\x5b\x5d-\x7e]+( [\x21\x23-\x5b\x5d-\x7e]+)*$/;

/** Whether `value` is the client's current secret (RFC 7592 §2.2); a public client has none to match. */
function isCurrentSecret(deps: Pick<Context, 'secrets'>, client: ClientRecord, value: unknown): boolean {
  if (typeof value !== 'string' || isPublicClient(client)) return false;
  let current: string;
  try {
    current = deps.secrets.box.open(client.secret_sealed);
  } catch {
    // Sealed under a server secret this process does not have: nothing can match it.
    return false;
  }
  return safeEqual(value, current);
}
