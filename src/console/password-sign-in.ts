/**
 * Signing in to the console with a password (docs/design.md §11): throttled, one argon2
 * verification whatever the cause, a failure recorded in the account's activity.
 */
import type { Context } from '../context.ts';
import { emailOf, passwordMatches } from '../domain/accounts.ts';
import { InvalidCredentials } from '../errors.ts';
import type { AccountRecord } from '../store/accounts.ts';
import { recordConsoleEvent } from './events.ts';

/** The answer to every failed password sign-in, whatever the cause: it tells nothing about accounts. */
export const WRONG_PASSWORD = 'The email or the password is wrong.';

/**
 * Signs in with an email and a password, throttled (docs/design.md §11): the account, or
 * InvalidCredentials (401, the same for every cause) or TooManyRequests (429). Always one argon2
 * verification, against a decoy where there is no account, so timing tells nothing either; a
 * failure against a known account is recorded in its activity.
 *
 * @example
 * const account = await signInWithPassword(ctx, { email: form.email, password: form.password, ip: request.ip });
 */
export async function signInWithPassword(
  ctx: Context,
  input: { email: string; password: string; ip: string },
): Promise<AccountRecord> {
  let key: string;
  try {
    key = emailOf(input.email).key;
  } catch {
    throw new InvalidCredentials(WRONG_PASSWORD);
  }
  const account = await ctx.console.throttle.attempt(key, input.ip, async () => {
    const found = await ctx.store.accounts.findByEmail(key);
    const matches = await passwordMatches(found?.password_hash ?? null, input.password);
    if (found && matches && found.status === 'active') return found;
    if (found) await recordConsoleEvent(ctx, null, 'account.sign_in_failed', found.id, input.ip, 'password');
    return null;
  });
  if (!account) throw new InvalidCredentials(WRONG_PASSWORD);
  return account;
}
