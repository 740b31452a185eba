/**
 * The management API's keys at work (docs/design.md §15): the actor behind a key. Making,
 * listing and revoking keys are operations of src/management/api-keys.ts. A key acts as its
 * account, never as more: the account's role and status are read on every call.
 */
import type { Context } from '../context.ts';
import { InvalidToken } from '../errors.ts';
import { type Actor, apiActor } from '../management/actor.ts';
import { usableKey } from '../management/api-keys.ts';
import type { AccountRecord } from '../store/accounts.ts';

type Deps = Pick<Context, 'store' | 'clock'>;

/** An actor of the API: always an account, with the key it presented. */
export type ApiCaller = Actor & { key: NonNullable<Actor['key']>; account: AccountRecord };

const UNUSABLE = 'The API key is unknown, revoked or expired, or its account is disabled.';

/**
 * The actor behind `Authorization: Bearer aak_…`, or InvalidToken (401) for a missing, unknown,
 * revoked or expired key and for a disabled account: all alike, so a key cannot be probed.
 *
 * @example
 * const caller = await authenticateApiKey(ctx, request.headers.authorization, request.ip);
 */
export async function authenticateApiKey(
  deps: Deps,
  authorization: string | undefined,
  ip: string,
): Promise<ApiCaller> {
  const match = /^Bearer ([!-~]+)$/i.exec(authorization ?? '');
  if (!match) throw new InvalidToken('An API key is required: Authorization: Bearer aak_...');
  const found = await usableKey(deps, match[1]!);
  if (!found) throw new InvalidToken(UNUSABLE);
  return apiActor(found.key, found.account, ip) as ApiCaller;
}
