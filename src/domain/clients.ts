/**
 * Client (relying party) registration, changes, status and secrets (docs/contract.md "Client",
 * docs/design.md §7); their authentication is ./client-authentication.ts.
 */
import { newClientId, newClientSecret } from '../crypto.ts';
import type { Context } from '../context.ts';
import {
  InvalidClientMetadata,
  InvalidField,
  InvalidRedirectUri,
  InvalidRequest,
  NotFound,
  PreconditionFailed,
} from '../errors.ts';
import type { Approval, ClientRecord, ClientStatus, ResourceScope } from '../store/clients.ts';
import type { RevokedGrants } from '../store/rows.ts';
import type { ClientMetadataDocument } from './client-metadata/document.ts';
import { isClientIdUrl } from './client-metadata/document.ts';
import { type ClientActionsInput, clientActionColumns, NO_ACTIONS } from './client-actions.ts';
import { forgetActionTypeNames } from './authorization-details.ts';
import { keySetUriProblem, readKeySet } from './client-keys/key-set.ts';
import { clientEvent } from './webhooks/events.ts';
import {
  type ClientProblem,
  clientNameProblems,
  couldBeClientId,
  LOOPBACK_HOSTS,
  MAX_CLIENT_NAME_LENGTH,
  MAX_REDIRECT_URIS,
  redirectUriProblem,
  redirectUrisProblems,
  resourcesProblems,
} from './rules/client.ts';
import { type ResourceScopeProblem, resourceScopesProblems } from './rules/resource-scope.ts';

type Deps = Pick<Context, 'store' | 'secrets' | 'clock'>;
/** What registering or changing a client needs: its actions are checked with the settings and the outbound guard. */
type ChangeDeps = Deps & Pick<Context, 'config' | 'webhooks'>;

/** A client without a secret (token_endpoint_auth_method none): an app on a device, an MCP client. */
export const isPublicClient = (client: Pick<ClientRecord, 'token_endpoint_auth_method'>) =>
  client.token_endpoint_auth_method === 'none';

/**
 * A client with a secret (client_secret_post or Basic). Only such a client is issued an ID token,
 * which is keyed with that secret (OIDC Core §10.1; the key set is empty by contract): a public
 * client and one that signs with its keys (private_key_jwt) have none.
 *
 * @example
 * hasClientSecret({ token_endpoint_auth_method: 'private_key_jwt' }); // false
 */
export const hasClientSecret = (client: Pick<ClientRecord, 'token_endpoint_auth_method'>) =>
  client.token_endpoint_auth_method === 'client_secret_post';

/**
 * The keys a client signs its assertions with (RFC 7523 private_key_jwt): a key set (JWKS, an
 * object or JSON text) or the https URL where it publishes one, not both.
 */
export interface ClientKeysInput {
  jwks?: unknown;
  jwksUri?: string;
}

/**
 * A client's keys checked by the rule (./client-keys/key-set.ts): the columns they are stored in,
 * or an InvalidClientMetadata saying why not, worded for every door (`jwks`, `jwks_uri`).
 *
 * @example
 * clientKeyColumns({ jwksUri: 'https://app.example/jwks.json' }); // { jwks: null, jwks_uri: 'https://app.example/jwks.json' }
 */
export function clientKeyColumns(keys: ClientKeysInput): Pick<ClientRecord, 'jwks' | 'jwks_uri'> {
  if ((keys.jwks === undefined) === (keys.jwksUri === undefined))
    throw new InvalidClientMetadata('a client that signs with keys gives exactly one of jwks and jwks_uri');
  if (keys.jwksUri !== undefined) {
    const problem = keySetUriProblem(keys.jwksUri);
    if (problem) throw new InvalidClientMetadata(`jwks_uri ${problem}`);
    return { jwks: null, jwks_uri: keys.jwksUri };
  }
  const read = readKeySet(keys.jwks);
  if ('problem' in read) throw new InvalidClientMetadata(`jwks: ${read.problem}`);
  return { jwks: read.json, jwks_uri: null };
}

/** http://localhost, 127.0.0.1 or [::1]: a redirect to the person's own machine. */
export function isLoopbackRedirect(uri: string): boolean {
  const url = URL.parse(uri);
  return url !== null && url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname);
}

/**
 * Whether a requested redirect_uri is one the client registered: exactly (docs/contract.md),
 * or, for a public client only, a loopback URI that differs from a registered one in its port
 * alone (RFC 8252 §7.3: a native app listens on whatever port the system gives it).
 *
 * @example
 * redirectUriMatches(publicClient, 'http://127.0.0.1:53122/callback'); // registered http://127.0.0.1/callback: true
 */
export function redirectUriMatches(
  client: Pick<ClientRecord, 'redirect_uris' | 'token_endpoint_auth_method'>,
  requested: string,
): boolean {
  if (client.redirect_uris.includes(requested)) return true;
  if (!isPublicClient(client) || !isLoopbackRedirect(requested) || redirectUriProblem(requested) !== null) return false;
  const withoutPort = (uri: string) => {
    const url = new URL(uri);
    url.port = '';
    return url.href;
  };
  const wanted = withoutPort(requested);
  return client.redirect_uris.some((uri) => isLoopbackRedirect(uri) && withoutPort(uri) === wanted);
}

export interface NewClient {
  name: string;
  /** Where the browser may be sent back to; none for a client that is only a resource server. */
  redirectUris: string[];
  approval?: Approval;
  /** The console account that owns the client. */
  accountId?: string;
  /** A public client: no secret, token_endpoint_auth_method none (needs PUBLIC_CLIENTS to sign in). */
  public?: boolean;
  /**
   * A client that signs with its keys: no secret, token_endpoint_auth_method private_key_jwt
   * (needs PRIVATE_KEY_JWT to sign in). Not with `public`.
   */
  keys?: ClientKeysInput;
  /** The resources (RFC 8707) it serves: it may introspect the tokens issued for them. */
  resources?: string[];
  /** The scopes it serves at its resources, each with a description (docs/design.md §13). */
  scopes?: ResourceScope[];
  /**
   * Dynamic registration (RFC 7591): the digest of the registration access token that manages
   * the client (RFC 7592). Its presence makes the client's source 'dynamic'.
   */
  registrationTokenDigest?: string;
  /** The actions it may ask owners to approve, and how it learns the answer (docs/design.md §21; ACTION_APPROVALS). */
  actions?: ClientActionsInput;
}

/**
 * Checks a new client's fields (the rules in ./rules/client.ts); throws InvalidRedirectUri for a
 * redirect URI and InvalidClientMetadata for anything else, with the message the CLI prints.
 */
export function validateNewClient(input: NewClient): {
  name: string;
  redirectUris: string[];
  resources: string[];
  scopes: ResourceScope[];
} {
  const name = input.name.trim();
  const resources = [...new Set(input.resources ?? [])];
  const scopes = (input.scopes ?? []).map((scope) => ({ name: scope.name, description: scope.description.trim() }));
  const [problem] = [
    ...clientNameProblems(name),
    // A client that is only a resource server needs no redirect URI.
    ...redirectUrisProblems(input.redirectUris, { required: resources.length === 0 }),
    ...resourcesProblems(resources, { public: input.public }),
    ...resourceScopesProblems(scopes, resources.length),
  ];
  if (problem) throw newClientError(problem, input.redirectUris, resources);
  return { name, redirectUris: [...new Set(input.redirectUris)], resources, scopes };
}

/** The error for a problem of a new client, worded as the CLI has always printed it. */
function newClientError(
  problem: ClientProblem | ResourceScopeProblem,
  redirectUris: string[],
  resources: string[],
): Error {
  switch (problem.field) {
    case 'client_name':
      return new InvalidClientMetadata(`client name must be 1 to ${MAX_CLIENT_NAME_LENGTH} characters`);
    case 'redirect_uris':
      if (problem.rule === 'none') return new InvalidClientMetadata('at least one redirect URI is required');
      if (problem.rule === 'too_many')
        return new InvalidClientMetadata(`at most ${MAX_REDIRECT_URIS} redirect URIs may be registered`);
      return new InvalidRedirectUri(`redirect URI ${redirectUris[problem.index!]} ${problem.message}`);
    case 'resource':
      return new InvalidClientMetadata(`resource ${resources[problem.index!]} ${problem.message}`);
    case 'scopes':
      return new InvalidField('scopes', `scopes ${problem.message}`);
  }
  if (problem.rule === 'public_resource_server')
    return new InvalidClientMetadata(
      'a resource server authenticates to introspect tokens, so it cannot be a public client',
    );
  return new InvalidClientMetadata(`${problem.field} ${problem.message}`);
}

/** Registers a client; `secret` is null for a public client and one that signs with keys, which have none. */
export async function registerClient(
  deps: ChangeDeps,
  input: NewClient & { public?: false; keys?: undefined },
): Promise<{ client: ClientRecord; secret: string }>;
export async function registerClient(
  deps: ChangeDeps,
  input: NewClient,
): Promise<{ client: ClientRecord; secret: string | null }>;
export async function registerClient(
  deps: ChangeDeps,
  input: NewClient,
): Promise<{ client: ClientRecord; secret: string | null }> {
  const { name, redirectUris, resources, scopes } = validateNewClient(input);
  if (input.public && input.keys)
    throw new InvalidClientMetadata('a public client has no keys: it does not authenticate');
  const keys = input.keys ? clientKeyColumns(input.keys) : { jwks: null, jwks_uri: null };
  const method = input.public ? 'none' : input.keys ? 'private_key_jwt' : 'client_secret_post';
  const actions = input.actions
    ? await clientActionColumns(deps, input.actions, { ...NO_ACTIONS, token_endpoint_auth_method: method })
    : NO_ACTIONS;
  const secret = input.public || input.keys ? null : newClientSecret();
  const now = deps.clock();
  const client: ClientRecord = {
    id: newClientId(),
    name,
    secret_sealed: secret === null ? '' : deps.secrets.box.seal(secret),
    previous_secret_sealed: null,
    previous_secret_expires_at: null,
    redirect_uris: redirectUris,
    status: 'active',
    approval: input.approval ?? 'auto',
    created_at: now,
    account_id: input.accountId ?? null,
    token_endpoint_auth_method: method,
    source: input.registrationTokenDigest ? 'dynamic' : 'manual',
    registration_token_digest: input.registrationTokenDigest ?? null,
    resources,
    scopes,
    last_used_at: input.registrationTokenDigest ? now : null,
    version: 1,
    ...keys,
    ...actions,
  };
  await deps.store.clients.insert(client, [clientEvent('client.created', client)]);
  if (actions.action_types.length > 0) forgetActionTypeNames(deps.store);
  return { client, secret };
}

/**
 * Issues a new secret. With `graceSeconds` > 0 the old secret keeps working that long (and ID
 * tokens are keyed with whichever secret the client authenticated with), so the client can
 * be switched over without downtime; with 0 (a compromised secret) it stops at once. With
 * `version`, only while the client still has it (If-Match; PreconditionFailed otherwise), as
 * every change of a client here.
 */
export async function rotateClientSecret(
  deps: Deps,
  clientId: string,
  graceSeconds = 0,
  version?: number,
): Promise<string> {
  const client = await deps.store.clients.find(clientId);
  if (!client) throw new NotFound(`no client ${clientId}`);
  if (isPublicClient(client))
    throw new InvalidRequest(`client ${clientId} is a public client; it has no secret to rotate`);
  if (!hasClientSecret(client))
    throw new InvalidRequest(`client ${clientId} signs with its keys (private_key_jwt); it has no secret to rotate`);
  const secret = newClientSecret();
  const keepOld = graceSeconds > 0;
  const done = await deps.store.clients.update(
    clientId,
    {
      secret_sealed: deps.secrets.box.seal(secret),
      previous_secret_sealed: keepOld ? client.secret_sealed : null,
      previous_secret_expires_at: keepOld ? deps.clock() + graceSeconds : null,
    },
    [clientEvent('client.secret_rotated', client, { grace_seconds: keepOld ? graceSeconds : 0 })],
    version,
  );
  if (!done) throw lost(version, `no client ${clientId}`);
  return secret;
}

/** What an owner or operator may change of a registered client; what is left out stays. */
export interface ClientChanges {
  name?: string;
  redirectUris?: string[];
  approval?: Approval;
  /** The resources (RFC 8707) it serves; the list given replaces the old one. */
  resources?: string[];
  /** The scopes it serves at its resources; the list given replaces the old one. */
  scopes?: ResourceScope[];
  /**
   * A client that signs with keys: its new key set or jwks_uri, replacing the old one (the old
   * keys' assertions are refused from then on). Only for a client registered with keys.
   */
  keys?: ClientKeysInput;
  /** Its actions: what is given replaces what it had (docs/design.md §21; ACTION_APPROVALS). */
  actions?: ClientActionsInput;
}

/**
 * Changes a client's name, redirect URIs, approval, resources or keys under the rules of
 * registration (validateNewClient, clientKeyColumns: the same errors and wording). A client a
 * metadata document describes is changed by changing the document. A redirect URI taken away is
 * refused from then on: at /authorize, and for a request started before (authenticateAgent,
 * continueAuthorization). New keys apply to the next assertion: the old keys' are refused.
 *
 * @example
 * const client = await updateClient(ctx, 'cli_abc', { redirectUris: ['https://shop.example/callback'] });
 */
export async function updateClient(
  deps: ChangeDeps,
  clientId: string,
  changes: ClientChanges,
  version?: number,
): Promise<ClientRecord> {
  const client = await deps.store.clients.find(clientId);
  if (!client) throw new NotFound(`no client ${clientId}`);
  if (client.source === 'metadata_document')
    throw new InvalidField('name', 'This client is described by its metadata document: change the document instead.');
  const keys = changes.keys === undefined ? {} : replacedKeyColumns(client, changes.keys);
  const { name, redirectUris, resources, scopes } = validateNewClient({
    name: changes.name ?? client.name,
    redirectUris: changes.redirectUris ?? client.redirect_uris,
    resources: changes.resources ?? client.resources,
    scopes: changes.scopes ?? client.scopes,
    public: isPublicClient(client),
  });
  const actions = changes.actions ? await clientActionColumns(deps, changes.actions, client) : {};
  const patch = {
    name,
    redirect_uris: redirectUris,
    approval: changes.approval ?? client.approval,
    resources,
    scopes,
    ...keys,
    ...actions,
  };
  const updated = { ...client, ...patch };
  if (!(await deps.store.clients.update(client.id, patch, [clientEvent('client.updated', updated)], version)))
    throw lost(version, `no client ${clientId}`);
  forgetActionTypeNames(deps.store);
  return { ...updated, version: client.version + 1 };
}

/**
 * The columns of a client's new keys, checked by the rule of registration (clientKeyColumns), or
 * why they cannot replace its keys: only a client that signs with keys has keys to replace, and a
 * dynamically registered one replaces them itself, at its registration endpoint (RFC 7592), as it
 * changes everything else it registered.
 */
function replacedKeyColumns(client: ClientRecord, keys: ClientKeysInput): Pick<ClientRecord, 'jwks' | 'jwks_uri'> {
  if (client.token_endpoint_auth_method !== 'private_key_jwt')
    throw new InvalidField(
      'jwks',
      'Only a client that signs with keys (private_key_jwt) has keys to replace; this one has a secret or is public.',
    );
  if (client.source === 'dynamic')
    throw new InvalidField(
      'jwks',
      'This client registered itself (dynamic registration): it replaces its keys at its registration endpoint (RFC 7592).',
    );
  return clientKeyColumns(keys);
}

const DELETED_DESCRIPTION = 'The website of this sign-in was deleted; start again.';

/**
 * Deletes a client, and in the same transaction revokes its grants (their refresh and access
 * tokens stop working), expires its unredeemed codes and ends its authenticated requests, as
 * revokeGrants does; a request still pending fails at once, its client being gone. Returns
 * those counts.
 *
 * @example
 * await deleteClient(ctx, 'cli_abc'); // { grants: 2, codes: 0, requests: 0 }
 */
export async function deleteClient(deps: Deps, clientId: string, version?: number): Promise<RevokedGrants> {
  const client = await deps.store.clients.find(clientId);
  const announce = client && [clientEvent('client.deleted', client)];
  const revoked =
    announce && (await deps.store.clients.delete(clientId, deps.clock(), DELETED_DESCRIPTION, announce, version));
  if (!revoked) throw lost(version, `no client ${clientId}`);
  forgetActionTypeNames(deps.store);
  return revoked;
}

/** Enables or disables a client; a change of status is announced (client.enabled, client.disabled). */
export async function setClientStatus(
  deps: Deps,
  clientId: string,
  status: ClientStatus,
  version?: number,
): Promise<void> {
  const client = await deps.store.clients.find(clientId);
  const announce =
    client && client.status !== status
      ? [clientEvent(status === 'active' ? 'client.enabled' : 'client.disabled', { ...client, status })]
      : [];
  if (!client || !(await deps.store.clients.update(clientId, { status }, announce, version)))
    throw lost(version, `no client ${clientId}`);
  forgetActionTypeNames(deps.store);
}

/**
 * Why a change of a client wrote nothing: with `version` (If-Match), the client changed or went
 * since the tag was checked; without, there is no such client.
 */
const lost = (version: number | undefined, missing: string) =>
  version === undefined ? new NotFound(missing) : new PreconditionFailed();

/**
 * The client a client_id names at /authorize: a registered one, or, with
 * CLIENT_ID_METADATA_DOCUMENTS on, the one its https URL's metadata document describes. That
 * document (fetched or cached, docs/design.md §13) is kept as a client row, so codes, grants and
 * tokens refer to it like any other client and an operator can disable it; the row is written
 * only when it is new or the document changed, or once a day to record the use of a
 * self-registered client (see recordClientUse).
 */
export async function findAuthorizingClient(
  ctx: Pick<Context, 'store' | 'clock' | 'clientMetadata'>,
  clientId: string,
): Promise<ClientRecord | undefined> {
  if (!couldBeClientId(clientId)) return undefined;
  const known = await ctx.store.clients.find(clientId);
  const documents = ctx.clientMetadata;
  // A registered client is what its row says; so is a disabled document client, refused
  // without asking its server again. Only an active (or new) document client is resolved.
  const described =
    documents !== null &&
    isClientIdUrl(clientId) &&
    (!known || (known.status === 'active' && known.source === 'metadata_document'));
  if (!described) {
    if (known?.status !== 'active') return known;
    return (await recordClientUse(ctx, known)) ? known : undefined;
  }
  const document = await documents.resolve(clientId);
  const now = ctx.clock();
  const fresh = metadataDocumentClient(document, now);
  const unchanged =
    known &&
    known.name === fresh.name &&
    sameList(known.redirect_uris, fresh.redirect_uris) &&
    known.token_endpoint_auth_method === fresh.token_endpoint_auth_method &&
    known.jwks === fresh.jwks &&
    known.jwks_uri === fresh.jwks_uri;
  if (unchanged && !clientUseIsStale(known, now)) return known;
  // Written as an upsert: should the purge have deleted the row since it was read, it is back.
  return ctx.store.clients.saveMetadataDocument(fresh);
}

/** How stale a self-registered client's last_used_at may be: use costs at most one write per client and day. */
const CLIENT_USE_RESOLUTION = 86_400;

/**
 * Whether `client`'s use at `now` is to be written down: for a self-registered client (the purge
 * deletes one unused for long, docs/design.md §9) whose last use is a day old; never for a
 * manual client, so the paths of operator-registered clients gain no write.
 *
 * @example
 * clientUseIsStale({ source: 'dynamic', last_used_at: now - 86_400 }, now); // true
 * clientUseIsStale({ source: 'manual', last_used_at: null }, now); // false
 */
export function clientUseIsStale(client: Pick<ClientRecord, 'source' | 'last_used_at'>, now: number): boolean {
  return (
    client.source !== 'manual' && (client.last_used_at === null || client.last_used_at <= now - CLIENT_USE_RESOLUTION)
  );
}

/**
 * Writes down that a self-registered client is being used (at /authorize, at the token endpoint,
 * by its registration management), at most once a day. False when the client is gone, deleted
 * since it was read (by the purge or RFC 7592): the caller then treats it as unknown.
 *
 * @example
 * if (!(await recordClientUse(ctx, client))) throw new InvalidClient('The client is unknown or inactive.', 400);
 */
export async function recordClientUse(deps: Pick<Context, 'store' | 'clock'>, client: ClientRecord): Promise<boolean> {
  const now = deps.clock();
  if (!clientUseIsStale(client, now)) return true;
  return deps.store.clients.update(client.id, { last_used_at: now });
}

const sameList = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && a.every((value, i) => value === b[i]);

function metadataDocumentClient(document: ClientMetadataDocument, now: number): ClientRecord {
  return {
    id: document.client_id,
    name: document.client_name,
    secret_sealed: '',
    previous_secret_sealed: null,
    previous_secret_expires_at: null,
    redirect_uris: document.redirect_uris,
    status: 'active',
    approval: 'auto',
    created_at: now,
    account_id: null,
    token_endpoint_auth_method: document.token_endpoint_auth_method,
    source: 'metadata_document',
    registration_token_digest: null,
    resources: [],
    scopes: [],
    last_used_at: now,
    version: 1,
    jwks: document.jwks ?? null,
    jwks_uri: document.jwks_uri ?? null,
    ...NO_ACTIONS,
  };
}

/** A sealed secret in clear, or null when it was sealed under a server secret this process does not have. */
export function openSealed(deps: Pick<Context, 'secrets'>, sealed: string): string | null {
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
  for (const client of await deps.store.clients.list()) {
    if (!hasClientSecret(client)) continue;
    const secret = openSealed(deps, client.secret_sealed);
    const previous = client.previous_secret_sealed === null ? null : openSealed(deps, client.previous_secret_sealed);
    if (secret === null || (client.previous_secret_sealed !== null && previous === null)) {
      unreadable.push(client.id);
      continue;
    }
    const patch = {
      secret_sealed: deps.secrets.box.seal(secret),
      ...(previous === null ? {} : { previous_secret_sealed: deps.secrets.box.seal(previous) }),
    };
    if (await deps.store.clients.update(client.id, patch)) resealed.push(client.id);
  }
  return { resealed, unreadable };
}
