/**
 * Console sessions (docs/design.md §11): database rows with idle and absolute lifetimes, found by
 * the digest of their cookie, and the flashes bound to them (what a form post showed once, for
 * the page its redirect leads to); their records and SQL, one text for SQLite and PostgreSQL.
 * Two namespaces of the Store: sessions and flashes. Expired ones go with the console's purge
 * (AccountStore.purge).
 */
import { type AccountRecord, findAccount } from './accounts.ts';
import type { Driver } from './driver.ts';
import { insert, won } from './rows.ts';

/** How a session was signed in to. */
/**
 * How a session signed in: `link` is a setup link or sign-up to an account with no way to sign in
 * yet; `recovery` a setup link to one that had a password or a passkey (it proves nothing of who
 * is at the keyboard, docs/design.md §11).
 */
export type SignInMethod = 'password' | 'passkey' | 'link' | 'recovery';

/** A console session; its cookie's value is known only to the browser. */
export interface ConsoleSessionRecord {
  /** A public handle, for listing and ending one session; never the cookie. */
  id: string;
  /** SHA-256 of the cookie's value. */
  digest: string;
  account_id: string;
  created_at: number;
  last_seen_at: number;
  /** When the person last proved who they are in this session: its sign-in, or a re-authentication. */
  authenticated_at: number;
  /** The absolute end, whatever the activity. */
  expires_at: number;
  ip: string | null;
  user_agent: string | null;
  method: SignInMethod;
}

/**
 * What a console form post showed once, waiting for the page its redirect leads to: bound to
 * the session, read once (the read deletes it), gone after a few minutes.
 */
export interface ConsoleFlashRecord {
  id: string;
  session_id: string;
  /** The console path whose GET shows it. */
  path: string;
  /** The value, sealed under the server secret (it may be a secret). */
  sealed: string;
  expires_at: number;
}

/** Console sessions in the store (Store.sessions). */
export interface SessionStore {
  insert(session: ConsoleSessionRecord): Promise<void>;
  /** The unexpired session with this digest and its account. */
  find(digest: string, now: number): Promise<{ session: ConsoleSessionRecord; account: AccountRecord } | undefined>;
  touch(id: string, now: number): Promise<boolean>;
  /** Records a fresh authentication in the session (a password or passkey confirmed again). */
  markAuthenticated(id: string, now: number): Promise<boolean>;
  /** An account's unexpired sessions, the most recently seen first. */
  list(accountId: string, now: number): Promise<ConsoleSessionRecord[]>;
  delete(id: string, accountId: string): Promise<boolean>;
  /** Ends every session of the account but `exceptId`; resolves with how many. */
  deleteAll(accountId: string, exceptId?: string): Promise<number>;
}

/** Flashes in the store (Store.flashes). */
export interface FlashStore {
  insert(flash: ConsoleFlashRecord): Promise<void>;
  /** Deletes and returns the session's unexpired flash for `path` (the newest): each is read once. */
  take(sessionId: string, path: string, now: number): Promise<ConsoleFlashRecord | undefined>;
}

/**
 * The console sessions of the database behind `driver`.
 *
 * @example
 * const found = await sessionStore(driver).find(digest(cookie), now); // { session, account } | undefined
 */
export function sessionStore(driver: Driver): SessionStore {
  return {
    async insert(session) {
      await driver.write([insert('console_sessions', session)]);
    },

    async find(digest, now) {
      const session = await driver.one<ConsoleSessionRecord>(
        'SELECT * FROM console_sessions WHERE digest = ? AND expires_at > ?',
        [digest, now],
      );
      if (!session) return undefined;
      const account = await findAccount(driver, session.account_id);
      return account && { session, account };
    },

    touch(id, now) {
      return won(driver, {
        sql: 'UPDATE console_sessions SET last_seen_at = ? WHERE id = ?',
        params: [now, id],
        guard: true,
      });
    },

    markAuthenticated(id, now) {
      return won(driver, {
        sql: 'UPDATE console_sessions SET authenticated_at = ?, last_seen_at = ? WHERE id = ?',
        params: [now, now, id],
        guard: true,
      });
    },

    list(accountId, now) {
      return driver.all<ConsoleSessionRecord>(
        'SELECT * FROM console_sessions WHERE account_id = ? AND expires_at > ? ORDER BY last_seen_at DESC, id',
        [accountId, now],
      );
    },

    delete(id, accountId) {
      return won(driver, {
        sql: 'DELETE FROM console_sessions WHERE id = ? AND account_id = ?',
        params: [id, accountId],
        guard: true,
      });
    },

    async deleteAll(accountId, exceptId) {
      const [deleted = 0] =
        (await driver.write([
          exceptId === undefined
            ? { sql: 'DELETE FROM console_sessions WHERE account_id = ?', params: [accountId] }
            : { sql: 'DELETE FROM console_sessions WHERE account_id = ? AND id <> ?', params: [accountId, exceptId] },
        ])) ?? [];
      return deleted;
    },
  };
}

/**
 * The flashes of the database behind `driver`.
 *
 * @example
 * const flash = await flashStore(driver).take(session.id, '/console/agents', now);
 */
export function flashStore(driver: Driver): FlashStore {
  return {
    async insert(flash) {
      await driver.write([insert('console_flashes', flash)]);
    },

    async take(sessionId, path, now) {
      const flash = await driver.one<ConsoleFlashRecord>(
        'SELECT * FROM console_flashes WHERE session_id = ? AND path = ? ORDER BY expires_at DESC, id LIMIT 1',
        [sessionId, path],
      );
      if (!flash) return undefined;
      // Deleting it is what makes this read the one that shows it (two tabs, a double reload).
      const taken = await won(driver, {
        sql: 'DELETE FROM console_flashes WHERE id = ?',
        params: [flash.id],
        guard: true,
      });
      return taken && flash.expires_at > now ? flash : undefined;
    },
  };
}
