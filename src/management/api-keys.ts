/**
 * Who makes, sees and revokes the management API's keys (docs/design.md §15): an account makes
 * its own in the console with a fresh authentication, and is told by mail (the operator's CLI may
 * make one for anyone; no API key makes one), shown once and stored as a digest, scoped by what they may do (read, or read and write) and whose records they reach (the
 * account's own, or everyone's for an admin), expiring, revocable. A member sees and revokes their
 * own keys, an admin every key; another account's key answers as one that does not exist. The
 * console, the CLI and the API (src/api/keys.ts, which authenticates calls) share these rules.
 */
import type { Context } from '../context.ts';
import { digest, newApiKey, newApiKeyId } from '../crypto.ts';
import { InvalidField, InvalidRequest, NotFound } from '../errors.ts';
import type { AccountRecord } from '../store/accounts.ts';
import type { ApiKeyAccess, ApiKeyReach, ApiKeyRecord } from '../store/api-keys.ts';
import { accountByEmail } from '../domain/accounts.ts';
import { type Actor, requireWrite } from './actor.ts';
import { recordAct } from './audit.ts';
import { mailCredentialMade, requireFreshAuthentication } from './credentials.ts';
import { possibleId } from './reach.ts';

type Deps = Pick<Context, 'store' | 'clock' | 'config'>;

/** Lifetimes a key may be given, in days; keys always expire (a leaked one stops by itself). */
export const KEY_LIFETIME_DAYS = { default: 90, max: 366 } as const;
/** The console's choices of lifetime, in days (the CLI and the API take any within the limits). */
export const KEY_LIFETIME_CHOICES = [30, 90, 365] as const;
export const MAX_KEY_NAME_LENGTH = 100;

export interface NewApiKey {
  name: string;
  access: ApiKeyAccess;
  reach: ApiKeyReach;
  /** 1 to KEY_LIFETIME_DAYS.max; default KEY_LIFETIME_DAYS.default. */
  expiresInDays?: number;
}

/**
 * Makes a key acting as the actor's account (the operator names the account by `accountEmail`);
 * the key itself is returned once and never stored, and the account is told by mail. It needs a
 * fresh authentication (credentials.ts): a console session past its window is asked to confirm,
 * an API key is refused. A refused field is an InvalidField naming it: `name`, `access`, `reach`
 * or `expires_in_days`.
 *
 * @example
 * const { key, secret } = await createApiKey(ctx, actor, { name: 'deploy', access: 'write', reach: 'own' });
 * // secret: 'aak_…' (shown once); key.id: 'key_…'
 */
export async function createApiKey(
  deps: Deps & Pick<Context, 'mailer'>,
  actor: Actor,
  input: NewApiKey & { accountEmail?: string },
): Promise<{ key: ApiKeyRecord; secret: string }> {
  requireWrite(actor);
  requireFreshAuthentication(deps, actor, 'make an API key');
  const account = actor.account ?? (await accountByEmail(deps, input.accountEmail ?? ''));
  const name = input.name.trim();
  if (name.length === 0 || name.length > MAX_KEY_NAME_LENGTH)
    throw new InvalidField('name', `a key's name must be 1 to ${MAX_KEY_NAME_LENGTH} characters`);
  if (input.access !== 'read' && input.access !== 'write')
    throw new InvalidField('access', 'access must be read or write');
  if (input.reach !== 'own' && input.reach !== 'all') throw new InvalidField('reach', 'reach must be own or all');
  if (account.status !== 'active') throw new InvalidRequest(`the account ${account.email} is disabled`);
  if (input.reach === 'all' && account.role !== 'admin')
    throw new InvalidField('reach', `only an admin's key may reach every account; ${account.email} is a member`);
  const days = input.expiresInDays ?? KEY_LIFETIME_DAYS.default;
  if (!Number.isInteger(days) || days < 1 || days > KEY_LIFETIME_DAYS.max)
    throw new InvalidField('expires_in_days', `a key expires in 1 to ${KEY_LIFETIME_DAYS.max} days`);
  const secret = newApiKey();
  const now = deps.clock();
  const key: ApiKeyRecord = {
    id: newApiKeyId(),
    digest: digest(secret),
    account_id: account.id,
    name,
    access: input.access,
    reach: input.reach,
    hint: secret.slice(-4),
    created_at: now,
    created_by: actor.account?.id ?? null,
    expires_at: now + days * 86_400,
    last_used_at: null,
    last_used_ip: null,
    revoked_at: null,
  };
  if (!(await deps.store.apiKeys.insert(key))) throw new InvalidRequest(`the account ${account.email} is disabled`);
  const whose = actor.account ? '' : `for ${account.email}: `;
  await recordAct(deps, actor, 'api_key.create', key.id, `${whose}${keyDetail(key)}`);
  await mailCredentialMade(
    deps,
    actor,
    account,
    `An API key named ${JSON.stringify(key.name)} (${keyScopes(key)}) was made for your agentauth account`,
  );
  return { key, secret };
}

/** What the audit says of a new key: its name and scopes, never the key. */
const keyDetail = (key: ApiKeyRecord) => `${key.name}: ${keyScopes(key)}`;

/** A key's access, reach and end, in words. */
const keyScopes = (key: ApiKeyRecord) =>
  `${key.access === 'write' ? 'read and write' : 'read only'}, ${key.reach === 'all' ? 'all accounts' : 'own account'}, until ${new Date(key.expires_at * 1000).toISOString().slice(0, 10)}`;

/**
 * The key behind a presented secret and its account, when the key works now (not revoked, not
 * expired) and its account is active; undefined otherwise, alike for every cause. A key of an
 * account disabled since it was made was revoked by the disable (setAccountStatus), so enabling
 * the account again does not bring it back.
 *
 * @example
 * const found = await usableKey(ctx, 'aak_…'); // { key, account } or undefined
 */
export async function usableKey(
  deps: Pick<Context, 'store' | 'clock'>,
  secret: string,
): Promise<{ key: ApiKeyRecord; account: AccountRecord } | undefined> {
  const found = await deps.store.apiKeys.findByDigest(digest(secret));
  if (!found || !keyIsLive(found.key, deps.clock()) || found.account.status !== 'active') return undefined;
  return found;
}

/** Whether a key works now: not revoked, not expired. */
export const keyIsLive = (key: ApiKeyRecord, now: number) => key.revoked_at === null && now < key.expires_at;

/**
 * A key's state as the console lists it.
 *
 * @example
 * keyStatus(key, ctx.clock()); // 'active', 'expired' or 'revoked'
 */
export function keyStatus(key: ApiKeyRecord, now: number): 'active' | 'expired' | 'revoked' {
  if (key.revoked_at !== null) return 'revoked';
  return now < key.expires_at ? 'active' : 'expired';
}

/**
 * The keys `actor` may see, newest first: an admin (acting for all) sees every key, or one
 * account's (`accountId`); anyone else their own.
 *
 * @example
 * const keys = await listApiKeys(ctx, actor);
 * const mine = await listApiKeys(ctx, actor, { accountId: actor.account!.id });
 */
export function listApiKeys(deps: Deps, actor: Actor, query: { accountId?: string } = {}): Promise<ApiKeyRecord[]> {
  return deps.store.apiKeys.list(actor.admin ? query.accountId : actor.account?.id);
}

/**
 * A key `actor` may see, or NotFound (another account's key looks like no key).
 *
 * @example
 * const key = await getApiKey(ctx, actor, request.params.id);
 */
export async function getApiKey(deps: Deps, actor: Actor, id: string): Promise<ApiKeyRecord> {
  const key = id.length <= 64 && possibleId(id) ? await deps.store.apiKeys.find(id) : undefined;
  if (!key || (!actor.admin && key.account_id !== actor.account?.id)) throw new NotFound('No such API key.');
  return key;
}

/**
 * Revokes a key at once; revoking one already revoked changes nothing.
 *
 * @example
 * await revokeApiKey(ctx, actor, 'key_abc');
 */
export async function revokeApiKey(deps: Deps, actor: Actor, id: string): Promise<ApiKeyRecord> {
  requireWrite(actor);
  const key = await getApiKey(deps, actor, id);
  const now = deps.clock();
  if (!(await deps.store.apiKeys.revoke(key.id, now))) return key;
  await recordAct(deps, actor, 'api_key.revoke', key.id, key.name);
  return { ...key, revoked_at: now };
}

/**
 * Revokes every working key of the actor's own account at once ("sign out everywhere" with its
 * keys); returns how many were revoked.
 *
 * @example
 * const revoked = await revokeOwnApiKeys(ctx, actor); // 2
 */
export async function revokeOwnApiKeys(deps: Deps, actor: Actor): Promise<number> {
  requireWrite(actor);
  if (actor.account === null) return 0;
  const revoked = await deps.store.apiKeys.revokeAll(actor.account.id, deps.clock());
  if (revoked > 0) await recordAct(deps, actor, 'api_key.revoke_all', actor.account.id, `${revoked} keys`);
  return revoked;
}
