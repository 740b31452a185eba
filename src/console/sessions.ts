/**
 * Console sessions (docs/design.md §11): rows in the database keyed by the digest of a random
 * cookie value, so that any node serves them and a person can list and end them. A session
 * ends after CONSOLE_SESSION_IDLE seconds without a request, and CONSOLE_SESSION_LIFETIME
 * seconds after sign-in whatever the activity.
 */
import { digest, PREFIX, randomId } from '../crypto.ts';
import type { Context } from '../context.ts';
import type { AccountRecord } from '../store/accounts.ts';
import type { ConsoleSessionRecord, SignInMethod } from '../store/sessions.ts';

type Deps = Pick<Context, 'store' | 'clock' | 'config'>;

/** A session's last_seen_at is written at most this often: a page view is not a write each time. */
const TOUCH_EVERY = 60;

export interface Caller {
  ip: string;
  userAgent: string | undefined;
}

export interface SignedIn {
  session: ConsoleSessionRecord;
  account: AccountRecord;
}

/**
 * Starts a session and returns the cookie's value (shown to nobody else, stored only as a digest).
 *
 * @example
 * const value = await startSession(ctx, account, 'passkey', { ip, userAgent });
 * sessionCookie.set(reply, value, ctx.config.consoleSessionLifetime);
 */
export async function startSession(
  deps: Deps,
  account: AccountRecord,
  method: SignInMethod,
  caller: Caller,
): Promise<string> {
  const value = randomId('', 32);
  const now = deps.clock();
  await deps.store.sessions.insert({
    id: randomId(PREFIX.consoleSession, 12),
    digest: digest(value),
    account_id: account.id,
    created_at: now,
    last_seen_at: now,
    // A recovery link signs in without proving who is at the keyboard: never authenticated (0).
    authenticated_at: method === 'recovery' ? 0 : now,
    expires_at: now + deps.config.consoleSessionLifetime,
    ip: caller.ip,
    user_agent: caller.userAgent?.slice(0, 512) ?? null,
    method,
  });
  await deps.store.accounts.update(account.id, { last_sign_in_at: now });
  return value;
}

/** The live session of this cookie value with its active account, or null (and an idle session is ended). */
export async function currentSession(deps: Deps, cookieValue: string | undefined): Promise<SignedIn | null> {
  if (!cookieValue) return null;
  const now = deps.clock();
  const found = await deps.store.sessions.find(digest(cookieValue), now);
  if (!found) return null;
  if (found.session.last_seen_at + deps.config.consoleSessionIdle <= now) {
    await deps.store.sessions.delete(found.session.id, found.account.id);
    return null;
  }
  if (found.account.status !== 'active') return null;
  if (now - found.session.last_seen_at >= TOUCH_EVERY) await deps.store.sessions.touch(found.session.id, now);
  return found;
}

/** The account's sessions, most recently used first. */
export function listSessions(deps: Deps, account: AccountRecord): Promise<ConsoleSessionRecord[]> {
  return deps.store.sessions.list(account.id, deps.clock());
}

/**
 * Ends one of the account's sessions (another account's id ends nothing).
 *
 * @example
 * await endSession(ctx, account, 'ses_…');
 */
export async function endSession(deps: Deps, account: AccountRecord, id: string): Promise<void> {
  await deps.store.sessions.delete(id, account.id);
}

/**
 * Ends every session of the account, or every one but `keep` (the one in use).
 *
 * @example
 * await endSessions(ctx, account, signedIn.session.id); // sign out everywhere else
 */
export async function endSessions(deps: Deps, account: AccountRecord, keep?: string): Promise<void> {
  await deps.store.sessions.deleteAll(account.id, keep);
}
