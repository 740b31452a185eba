/**
 * The management API's keys (docs/design.md §15): made for an account by the console or the
 * CLI, shown once, stored as a digest, scoped by what they may do (read, or read and write) and
 * whose records they reach (the account's own, or everyone's for an admin), expiring, revocable.
 * A key acts as its account, never as more: the account's role and status are read on every call.
 */
import type { Context } from '../context.ts';
import { digest, newApiKey, newApiKeyId } from '../crypto.ts';
import { AccessDenied, InsufficientScope, InvalidRequest, InvalidToken, NotFound } from '../errors.ts';
import type { ApiKeyAccess, ApiKeyReach, ApiKeyRecord } from '../store/api-types.ts';
import type { AccountRecord } from '../store/console-types.ts';

type Deps = Pick<Context, 'store' | 'clock'>;

/** Lifetimes a key may be given, in days; keys always expire (a leaked one stops by itself). */
export const KEY_LIFETIME_DAYS = { default: 90, max: 366 } as const;
export const MAX_KEY_NAME_LENGTH = 100;

export interface NewApiKey {
  name: string;
  access: ApiKeyAccess;
  reach: ApiKeyReach;
  /** 1 to KEY_LIFETIME_DAYS.max; default KEY_LIFETIME_DAYS.default. */
  expiresInDays?: number;
}

/** A caller of the API: the key it presented and the account behind it, as the account now is. */
export interface ApiCaller {
  key: ApiKeyRecord;
  account: AccountRecord;
  /**
   * The account as the console's access rules (src/console/access.ts) should see it: an admin
   * only when the account is one and the key reaches all accounts, so an admin's `own` key
   * reaches exactly what a member's would.
   */
  actor: AccountRecord;
}

/**
 * Makes a key for `account`; the key itself is returned once and never stored.
 *
 * @example
 * const { key, secret } = await createApiKey(ctx, account, { name: 'deploy', access: 'write', reach: 'own' });
 * // secret: 'aak_…' (shown once); key.id: 'key_…'
 */
export async function createApiKey(
  deps: Deps,
  account: AccountRecord,
  input: NewApiKey,
  createdBy: AccountRecord | null = account,
): Promise<{ key: ApiKeyRecord; secret: string }> {
  const name = input.name.trim();
  if (name.length === 0 || name.length > MAX_KEY_NAME_LENGTH)
    throw new InvalidRequest(`a key's name must be 1 to ${MAX_KEY_NAME_LENGTH} characters`);
  if (input.access !== 'read' && input.access !== 'write') throw new InvalidRequest('access must be read or write');
  if (input.reach !== 'own' && input.reach !== 'all') throw new InvalidRequest('reach must be own or all');
  if (account.status !== 'active') throw new InvalidRequest(`the account ${account.email} is disabled`);
  if (input.reach === 'all' && account.role !== 'admin')
    throw new InvalidRequest(`only an admin's key may reach every account; ${account.email} is a member`);
  const days = input.expiresInDays ?? KEY_LIFETIME_DAYS.default;
  if (!Number.isInteger(days) || days < 1 || days > KEY_LIFETIME_DAYS.max)
    throw new InvalidRequest(`a key expires in 1 to ${KEY_LIFETIME_DAYS.max} days`);
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
    created_by: createdBy?.id ?? null,
    expires_at: now + days * 86_400,
    last_used_at: null,
    last_used_ip: null,
    revoked_at: null,
  };
  await deps.store.api.insertKey(key);
  return { key, secret };
}

/** Whether a key works now: not revoked, not expired. */
export const keyIsLive = (key: ApiKeyRecord, now: number) => key.revoked_at === null && now < key.expires_at;

const UNUSABLE = 'The API key is unknown, revoked or expired, or its account is disabled.';

/**
 * The caller behind `Authorization: Bearer aak_…`, or InvalidToken (401) for a missing,
 * unknown, revoked or expired key and for a disabled account: all alike, so a key cannot be
 * probed.
 *
 * @example
 * const caller = await authenticateApiKey(ctx, request.headers.authorization);
 */
export async function authenticateApiKey(deps: Deps, authorization: string | undefined): Promise<ApiCaller> {
  const match = /^Bearer ([!-~]+)$/i.exec(authorization ?? '');
  if (!match) throw new InvalidToken('An API key is required: Authorization: Bearer aak_...');
  const found = await deps.store.api.findKeyByDigest(digest(match[1]!));
  if (!found || !keyIsLive(found.key, deps.clock()) || found.account.status !== 'active')
    throw new InvalidToken(UNUSABLE);
  const { key, account } = found;
  const admin = account.role === 'admin' && key.reach === 'all';
  return { key, account, actor: { ...account, role: admin ? 'admin' : 'member' } };
}

/** InsufficientScope (403) unless the key may change records. */
export function requireWrite(caller: ApiCaller): void {
  if (caller.key.access !== 'write') throw new InsufficientScope('This API key may only read.', 'write');
}

/** What only an admin's key that reaches all accounts may do: accounts, the activity, webhooks. */
export function requireAdminReach(caller: ApiCaller): void {
  if (caller.key.reach !== 'all')
    throw new InsufficientScope('This needs an API key that reaches all accounts.', 'all');
  if (caller.actor.role !== 'admin') throw new AccessDenied('This needs an administrator’s API key.');
}

/**
 * The keys `actor` may see: an admin (acting for all) sees every key, a member their own.
 *
 * @example
 * const keys = await listApiKeys(ctx, caller.actor);
 */
export function listApiKeys(deps: Deps, actor: AccountRecord): Promise<ApiKeyRecord[]> {
  return deps.store.api.listKeys(actor.role === 'admin' ? undefined : actor.id);
}

/** A key `actor` may see, or NotFound (another account's key looks like no key). */
export async function reachableApiKey(deps: Deps, actor: AccountRecord, id: string): Promise<ApiKeyRecord> {
  const key = /^[!-~]{1,64}$/.test(id) ? await deps.store.api.findKey(id) : undefined;
  if (!key || (actor.role !== 'admin' && key.account_id !== actor.id)) throw new NotFound('No such API key.');
  return key;
}

/**
 * Revokes a key at once; revoking one already revoked changes nothing.
 *
 * @example
 * await revokeApiKey(ctx, caller.actor, 'key_abc');
 */
export async function revokeApiKey(deps: Deps, actor: AccountRecord, id: string): Promise<ApiKeyRecord> {
  const key = await reachableApiKey(deps, actor, id);
  const now = deps.clock();
  if (await deps.store.api.revokeKey(key.id, now)) return { ...key, revoked_at: now };
  return key;
}
