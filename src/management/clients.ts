/**
 * What people do with clients (the console's websites), through any door (docs/design.md §11,
 * §17): each operation takes who acts and what they ask, checks reach, calls the domain's rule
 * (registration, changes, rotation, revocation), and records the act.
 */
import type { Context } from '../context.ts';
import { digest, randomId } from '../crypto.ts';
import type { ClientActionsInput } from '../domain/client-actions.ts';
import {
  type ClientChanges,
  type ClientKeysInput,
  deleteClient as deleteClientRecord,
  isPublicClient,
  registerClient,
  rotateClientSecret as rotateClientSecretRecord,
  setClientStatus as setClientStatusRecord,
  updateClient as updateClientRecord,
} from '../domain/clients.ts';
import { revokeGrants } from '../domain/revocation.ts';
import { AccessDenied, InsufficientScope, InvalidField, NotFound } from '../errors.ts';
import type { RevokedGrants } from '../store/rows.ts';
import type { Approval, ClientRecord, ClientStatus, ResourceScope } from '../store/clients.ts';
import { type Actor, requireWrite } from './actor.ts';
import { asActor, recordAct } from './audit.ts';
import { reachableClient } from './reach.ts';
import { checkedVersion, type ListQuery, ownerAccount, type Precondition, revokedDetail } from './shared.ts';

type Deps = Pick<Context, 'store' | 'secrets' | 'clock' | 'config' | 'webhooks'>;

/**
 * The clients `actor` reaches, oldest first: an admin's of every account or of `accountId`,
 * anyone else's of their own account; a page of them when `limit` is given.
 *
 * @example
 * const clients = await listClients(ctx, actor);
 */
export function listClients(deps: Deps, actor: Actor, query: ListQuery = {}): Promise<ClientRecord[]> {
  const accountId = actor.admin ? query.accountId : actor.account?.id;
  return deps.store.clients.list({ ...query, accountId });
}

/** The client, if `actor` reaches it; NotFound otherwise, the same for a missing and a foreign one. */
export const getClient = (deps: Deps, actor: Actor, id: string): Promise<ClientRecord> =>
  reachableClient(deps, actor, id);

export interface NewClientInput {
  name: string;
  redirectUris: string[];
  resources?: string[];
  /** The scopes a resource server serves at its resources, each with a description. */
  scopes?: ResourceScope[];
  approval?: Approval;
  /** A public client has no secret; chosen only while the server lets public clients sign in. */
  type?: 'confidential' | 'public';
  /** The owning account: the actor's own unless an admin names another; the operator's have none. */
  accountId?: string;
  /**
   * A client that signs with keys (private_key_jwt, RFC 7523): its key set or jwks_uri instead of
   * a secret; chosen only while the server accepts such clients (PRIVATE_KEY_JWT), as `public`.
   */
  keys?: ClientKeysInput;
  /** The actions it may ask owners to approve, and how it learns the answer (ACTION_APPROVALS; docs/design.md §21). */
  actions?: ClientActionsInput;
}

/** A client's actions as the API and the CLI name them (RFC 7591 / CIBA metadata), each left out when not given. */
export interface ClientActionFields {
  action_types?: unknown;
  backchannel_token_delivery_mode?: string | null;
  backchannel_client_notification_endpoint?: string | null;
}

/**
 * The actions a body of the API or the CLI gives, as the operations take them; {} when it gives
 * none of the three fields.
 *
 * @example
 * actionsOf({ backchannel_token_delivery_mode: 'poll' }); // { actions: { actionTypes: undefined, tokenDelivery: 'poll', notificationEndpoint: undefined } }
 */
export function actionsOf(body: ClientActionFields): { actions?: ClientActionsInput } {
  const {
    action_types: actionTypes,
    backchannel_token_delivery_mode: tokenDelivery,
    backchannel_client_notification_endpoint: notificationEndpoint,
  } = body;
  if (actionTypes === undefined && tokenDelivery === undefined && notificationEndpoint === undefined) return {};
  return { actions: { actionTypes, tokenDelivery, notificationEndpoint } };
}

/**
 * Registers a client; its secret (null for a public client) is returned to be shown once. The
 * operator may register a public client before the server lets public clients sign in (the
 * command warns); the console and the API may not.
 *
 * @example
 * const { client, secret } = await createClient(ctx, actor, { name: 'Shop', redirectUris: ['https://shop.example/cb'] });
 */
export async function createClient(
  deps: Deps,
  actor: Actor,
  input: NewClientInput,
): Promise<{ client: ClientRecord; secret: string | null }> {
  requireWrite(actor);
  if ((input.resources ?? []).length > 0 || (input.scopes ?? []).length > 0) requireResourceServerRight(actor);
  const isPublic = input.type === 'public';
  if (isPublic && !deps.config.publicClients && actor.door !== 'cli')
    throw new InvalidField('client_type', 'This server does not let public clients sign in.');
  if (input.keys && isPublic)
    throw new InvalidField('client_type', 'A public client has no keys: it does not authenticate.');
  if (input.keys && !deps.config.privateKeyJwt && actor.door !== 'cli')
    throw new InvalidField('jwks', 'This server does not let clients that sign with keys (private_key_jwt) sign in.');
  const owner =
    actor.account === null && input.accountId === undefined ? null : await ownerAccount(deps, actor, input.accountId);
  const made = await asActor(actor, () =>
    registerClient(deps, {
      name: input.name,
      redirectUris: input.redirectUris,
      resources: input.resources,
      scopes: input.scopes,
      approval: input.approval,
      public: isPublic,
      ...(input.keys ? { keys: input.keys } : {}),
      ...(input.actions ? { actions: input.actions } : {}),
      accountId: owner?.id,
    }),
  );
  await recordAct(deps, actor, 'website.create', made.client.id, made.client.name);
  return made;
}

/**
 * Which resources a client serves, and which scopes there, is an administrator's decision
 * (docs/design.md §13): a resource server may introspect every token issued for its resources,
 * whoever they were issued to, and its resources and scopes are the ones tokens may be issued
 * for. So only an admin (the console's,
 * an admin's key that reaches all accounts, the operator) registers or changes them, through
 * every door; a member's key, or an admin's own-reach key, is refused (403).
 */
function requireResourceServerRight(actor: Actor): void {
  if (actor.admin) return;
  const why = 'Only an administrator registers a resource server or changes its resources';
  if (actor.key) throw new InsufficientScope(`${why}, with a key that reaches all accounts.`, 'all');
  throw new AccessDenied(`${why}.`);
}

/** Whether two lists name the same resources, whatever their order or repeats. */
function sameResources(a: readonly string[], b: readonly string[]): boolean {
  const named = new Set(a);
  return named.size === new Set(b).size && b.every((resource) => named.has(resource));
}

/** Whether two lists name the same scopes with the same descriptions, in the same order. */
const sameScopes = (a: readonly ResourceScope[], b: readonly ResourceScope[]) =>
  JSON.stringify(a) === JSON.stringify(b);

/** The client after a change, as stored now. */
async function current(deps: Deps, id: string): Promise<ClientRecord> {
  const client = await deps.store.clients.find(id);
  if (!client) throw new NotFound('No such website.');
  return client;
}

/**
 * The client `actor` may change: reached, writable, and as `precondition` expects it; with the
 * version the change must still find (checkedVersion), none without a precondition.
 */
async function changeable(deps: Deps, actor: Actor, id: string, precondition?: Precondition<ClientRecord>) {
  requireWrite(actor);
  const client = await reachableClient(deps, actor, id);
  return { client, version: checkedVersion(client, client.version, precondition) };
}

/**
 * Changes a client's name, redirect URIs, approval, resources, keys (a client that signs with
 * keys: a new key set or jwks_uri) or actions (its action types, token delivery mode and
 * notification endpoint) under the rules of registration; a client a metadata document
 * describes is changed by changing the document, a dynamically registered one's keys at its
 * registration endpoint. One write, with the version it checked, announced as client.updated.
 *
 * @example
 * const client = await updateClient(ctx, actor, 'cli_…', { name: 'Shop' });
 * await updateClient(ctx, actor, 'cli_…', { keys: { jwksUri: 'https://shop.example/jwks.json' } });
 */
export async function updateClient(
  deps: Deps,
  actor: Actor,
  id: string,
  changes: ClientChanges,
  precondition?: Precondition<ClientRecord>,
): Promise<ClientRecord> {
  const { client, version } = await changeable(deps, actor, id, precondition);
  if (
    (changes.resources !== undefined && !sameResources(changes.resources, client.resources)) ||
    (changes.scopes !== undefined && !sameScopes(changes.scopes, client.scopes))
  )
    requireResourceServerRight(actor);
  const changed = await asActor(actor, () => updateClientRecord(deps, client.id, changes, version));
  await recordAct(deps, actor, 'website.update', client.id, changesDetail(client, changed));
  return changed;
}

/**
 * Disables a client (its sign-ins and tokens are refused) or enables it again; no change, no act.
 *
 * @example
 * await setClientStatus(ctx, actor, 'cli_…', 'inactive');
 */
export async function setClientStatus(
  deps: Deps,
  actor: Actor,
  id: string,
  status: ClientStatus,
  precondition?: Precondition<ClientRecord>,
): Promise<ClientRecord> {
  const { client, version } = await changeable(deps, actor, id, precondition);
  if (client.status === status) return client;
  await asActor(actor, () => setClientStatusRecord(deps, client.id, status, version));
  await recordAct(deps, actor, status === 'active' ? 'website.enable' : 'website.disable', client.id);
  return current(deps, client.id);
}

/**
 * A new secret, returned to be shown once; the old one works `graceSeconds` longer.
 *
 * @example
 * const { secret } = await rotateClientSecret(ctx, actor, 'cli_…', 0);
 */
export async function rotateClientSecret(
  deps: Deps,
  actor: Actor,
  id: string,
  graceSeconds: number,
  precondition?: Precondition<ClientRecord>,
): Promise<{ client: ClientRecord; secret: string }> {
  const { client, version } = await changeable(deps, actor, id, precondition);
  const secret = await asActor(actor, () => rotateClientSecretRecord(deps, client.id, graceSeconds, version));
  await recordAct(deps, actor, 'website.rotate_secret', client.id, `grace ${graceSeconds} s`);
  return { client: await current(deps, client.id), secret };
}

/**
 * @example
 * const revoked = await revokeClientGrants(ctx, actor, 'cli_…'); // { grants: 3, codes: 1, requests: 0 }
 */
export async function revokeClientGrants(deps: Deps, actor: Actor, id: string): Promise<RevokedGrants> {
  const { client } = await changeable(deps, actor, id);
  const revoked = await asActor(actor, () => revokeGrants(deps, { client_id: client.id }));
  await recordAct(deps, actor, 'website.revoke_grants', client.id, revokedDetail(revoked));
  return revoked;
}

/**
 * Deletes a client, revoking its grants in the same transaction; answers what was revoked.
 *
 * @example
 * const revoked = await deleteClient(ctx, actor, 'cli_…');
 */
export async function deleteClient(
  deps: Deps,
  actor: Actor,
  id: string,
  precondition?: Precondition<ClientRecord>,
): Promise<RevokedGrants> {
  const { client, version } = await changeable(deps, actor, id, precondition);
  const revoked = await asActor(actor, () => deleteClientRecord(deps, client.id, version));
  await recordAct(deps, actor, 'website.delete', client.id, `${client.name}: ${revokedDetail(revoked)}`);
  return revoked;
}

/**
 * The /authorize URL of a test sign-in (docs/design.md §11): a real authorization request for
 * the website, to one of its own registered redirect URIs, with a state, a nonce and a PKCE
 * challenge made here. Nothing is kept: the code verifier is thrown away, so the code the
 * website's redirect URI receives can never be redeemed (by the website, the console or anyone
 * who sees the URL); the sign-in shows in the website's history. InvalidField when the website
 * cannot start one.
 *
 * @example
 * await testSignIn(ctx, actor, 'cli_…', 'https://shop.example/callback');
 * // '/authorize?response_type=code&client_id=cli_…&redirect_uri=…&scope=openid+email+profile&state=…'
 */
export async function testSignIn(
  deps: Deps,
  actor: Actor,
  id: string,
  redirectUri: string | undefined,
): Promise<string> {
  const { client } = await changeable(deps, actor, id);
  if (client.status !== 'active')
    throw new InvalidField('redirect_uri', 'Enable the website first: a disabled website cannot start sign-ins.');
  if (client.redirect_uris.length === 0)
    throw new InvalidField('redirect_uri', 'Add a redirect URI first: a sign-in ends at one.');
  if (isPublicClient(client) && !deps.config.publicClients)
    throw new InvalidField('redirect_uri', 'This server does not let public clients sign in.');
  const target = redirectUri ?? client.redirect_uris[0]!;
  if (!client.redirect_uris.includes(target))
    throw new InvalidField('redirect_uri', 'Choose one of the website’s redirect URIs.');
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: client.id,
    redirect_uri: target,
    // A public client gets no ID token; /authorize drops openid for it.
    scope: 'openid email profile',
    state: randomId('test_', 16),
    nonce: randomId('', 16),
    code_challenge: digest(randomId('', 32)),
    code_challenge_method: 'S256',
  });
  await recordAct(deps, actor, 'website.test_sign_in', client.id, target);
  return `/authorize?${query}`;
}

/** What an edit changed, for the audit: the fields, with their new values ('name Shop; approval manual'). */
function changesDetail(before: ClientRecord, after: ClientRecord): string {
  const changed = [
    before.name === after.name ? '' : `name ${after.name}`,
    before.redirect_uris.join(' ') === after.redirect_uris.join(' ')
      ? ''
      : `redirect URIs ${after.redirect_uris.join(' ')}`,
    before.approval === after.approval ? '' : `approval ${after.approval}`,
    sameScopes(before.scopes, after.scopes) ? '' : `scopes ${after.scopes.map((scope) => scope.name).join(' ')}`,
    before.jwks === after.jwks && before.jwks_uri === after.jwks_uri ? '' : `keys ${keysDetail(after)}`,
    JSON.stringify(before.action_types) === JSON.stringify(after.action_types)
      ? ''
      : `action types ${after.action_types.map((type) => type.type).join(' ') || 'none'}`,
    before.backchannel_token_delivery_mode === after.backchannel_token_delivery_mode &&
    before.backchannel_client_notification_endpoint === after.backchannel_client_notification_endpoint
      ? ''
      : `token delivery ${tokenDeliveryDetail(after)}`,
  ].filter(Boolean);
  return changed.join('; ') || 'no change';
}

/** A client's token delivery for the audit: ping with its endpoint, poll, or none. */
const tokenDeliveryDetail = (client: ClientRecord) =>
  client.backchannel_token_delivery_mode === 'ping'
    ? `ping to ${client.backchannel_client_notification_endpoint}`
    : (client.backchannel_token_delivery_mode ?? 'none');

/** A client's keys for the audit: its jwks_uri, or its keys by kid (public names, never key material). */
function keysDetail(client: ClientRecord): string {
  if (client.jwks_uri !== null) return `at ${client.jwks_uri}`;
  const { keys } = JSON.parse(client.jwks ?? '{"keys":[]}') as { keys: Array<{ kid?: string }> };
  return keys.map((key, index) => key.kid ?? `#${index + 1}`).join(' ');
}
