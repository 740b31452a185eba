/**
 * The management API's keys at work (docs/design.md §15): the caller behind a key and what its
 * scopes allow. Making, listing and revoking keys are src/console/api-keys.ts's rules. A key acts
 * as its account, never as more: the account's role and status are read on every call.
 */
import type { Context } from '../context.ts';
import { keyIsLive } from '../console/api-keys.ts';
import { digest } from '../crypto.ts';
import { AccessDenied, InsufficientScope, InvalidToken } from '../errors.ts';
import type { ApiKeyRecord } from '../store/api-types.ts';
import type { AccountRecord } from '../store/console-types.ts';

// Making, listing and revoking keys are the console's rules, shared with the CLI and the API.
export {
  createApiKey,
  KEY_LIFETIME_DAYS,
  keyIsLive,
  listApiKeys,
  MAX_KEY_NAME_LENGTH,
  type NewApiKey,
  reachableApiKey,
  revokeApiKey,
} from '../console/api-keys.ts';

type Deps = Pick<Context, 'store' | 'clock'>;

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
