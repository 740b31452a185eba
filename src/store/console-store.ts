import type {
  AccountLinkRecord,
  AccountPatch,
  AccountRecord,
  ConsoleFlashRecord,
  ConsoleSessionRecord,
  LinkPurpose,
  PasskeyRecord,
  WebauthnChallengeRecord,
} from './console-types.ts';
import type { Driver, Step } from './driver.ts';
import { announceSteps, type WebhookEvent } from './outbox.ts';
import { insert, update } from './rows.ts';
import type { ConsoleStore } from './types.ts';

type AccountRow = Omit<AccountRecord, 'email_verified'> & { email_verified: number };
const toAccount = (row: AccountRow): AccountRecord => ({ ...row, email_verified: row.email_verified === 1 });
const fromAccount = (account: AccountRecord) => ({ ...account, email_verified: account.email_verified ? 1 : 0 });

/** SQLite's and PostgreSQL's report of a duplicate key in a unique index. */
function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === '23505';
}

export class SqlConsoleStore implements ConsoleStore {
  /**
   * An event id in byte order, as JavaScript compares strings: the admin's activity merges two
   * tables' pages by (at, id), so both engines must order ties as the merge does (PostgreSQL's
   * default collation would not).
   */
  private readonly eventId: (column: string) => string;

  constructor(private readonly driver: Driver) {
    this.eventId = driver.engine === 'postgres' ? (column) => `${column} COLLATE "C"` : (column) => column;
  }

  private async won(...steps: Step[]): Promise<boolean> {
    return (await this.driver.write(steps)) !== null;
  }

  // Accounts

  async insertAccount(account: AccountRecord, announce?: WebhookEvent[]): Promise<boolean> {
    try {
      await this.driver.write([insert('accounts', fromAccount(account)), ...announceSteps(announce)]);
      return true;
    } catch (error) {
      if (isUniqueViolation(error)) return false;
      throw error;
    }
  }

  async insertAccountWithLink(
    account: AccountRecord,
    linkDigest: string,
    now: number,
    announce?: WebhookEvent[],
  ): Promise<'created' | 'email_taken' | null> {
    try {
      const used = await this.won(
        useLinkStep(linkDigest, 'invite', now),
        insert('accounts', fromAccount(account)),
        ...announceSteps(announce),
      );
      return used ? 'created' : null;
    } catch (error) {
      if (isUniqueViolation(error)) return 'email_taken';
      throw error;
    }
  }

  async findAccount(id: string): Promise<AccountRecord | undefined> {
    const row = await this.driver.one<AccountRow>('SELECT * FROM accounts WHERE id = ?', [id]);
    return row && toAccount(row);
  }

  async findAccountByEmail(emailKey: string): Promise<AccountRecord | undefined> {
    const row = await this.driver.one<AccountRow>('SELECT * FROM accounts WHERE email_key = ?', [emailKey]);
    return row && toAccount(row);
  }

  async listAccounts(): Promise<AccountRecord[]> {
    return (await this.driver.all<AccountRow>('SELECT * FROM accounts ORDER BY created_at, id')).map(toAccount);
  }

  async countAccounts(): Promise<number> {
    const row = await this.driver.one<{ n: number | string }>('SELECT COUNT(*) AS n FROM accounts');
    return Number(row?.n ?? 0);
  }

  updateAccount(id: string, patch: AccountPatch, announce?: WebhookEvent[]): Promise<boolean> {
    const { email_verified, ...rest } = patch;
    const steps: Step[] = [
      update('accounts', 'id', id, {
        ...rest,
        ...(email_verified === undefined ? {} : { email_verified: email_verified ? 1 : 0 }),
      }),
    ];
    // The claims of the account's agents are read from the agent row on every token: keep the copies in step.
    if (patch.name !== undefined)
      steps.push({ sql: 'UPDATE agents SET owner_name = ? WHERE account_id = ?', params: [patch.name, id] });
    if (email_verified !== undefined)
      steps.push({
        sql: 'UPDATE agents SET owner_email_verified = ? WHERE account_id = ?',
        params: [email_verified ? 1 : 0, id],
      });
    return this.won(...steps, ...announceSteps(announce));
  }

  // Passkeys

  async insertPasskey(passkey: PasskeyRecord, announce?: WebhookEvent[]): Promise<void> {
    await this.driver.write([insert('passkeys', passkey), ...announceSteps(announce)]);
  }

  findPasskey(id: string): Promise<PasskeyRecord | undefined> {
    return this.driver.one<PasskeyRecord>('SELECT * FROM passkeys WHERE id = ?', [id]);
  }

  listPasskeys(accountId: string): Promise<PasskeyRecord[]> {
    return this.driver.all<PasskeyRecord>('SELECT * FROM passkeys WHERE account_id = ? ORDER BY created_at, id', [
      accountId,
    ]);
  }

  recordPasskeyUse(id: string, counter: number, now: number): Promise<boolean> {
    // Authenticators that keep no counter report 0 every time; any other must go forward.
    return this.won({
      sql: 'UPDATE passkeys SET counter = ?, last_used_at = ? WHERE id = ? AND (counter < ? OR (counter = 0 AND ? = 0))',
      params: [counter, now, id, counter, counter],
      guard: true,
    });
  }

  renamePasskey(id: string, accountId: string, name: string): Promise<boolean> {
    return this.won({
      sql: 'UPDATE passkeys SET name = ? WHERE id = ? AND account_id = ?',
      params: [name, id, accountId],
      guard: true,
    });
  }

  deletePasskey(id: string, accountId: string, announce?: WebhookEvent[]): Promise<boolean> {
    return this.won(
      {
        sql: 'DELETE FROM passkeys WHERE id = ? AND account_id = ?',
        params: [id, accountId],
        guard: true,
      },
      ...announceSteps(announce),
    );
  }

  // Sessions

  async insertSession(session: ConsoleSessionRecord): Promise<void> {
    await this.driver.write([insert('console_sessions', session)]);
  }

  async findSession(
    digest: string,
    now: number,
  ): Promise<{ session: ConsoleSessionRecord; account: AccountRecord } | undefined> {
    const session = await this.driver.one<ConsoleSessionRecord>(
      'SELECT * FROM console_sessions WHERE digest = ? AND expires_at > ?',
      [digest, now],
    );
    if (!session) return undefined;
    const account = await this.findAccount(session.account_id);
    return account && { session, account };
  }

  touchSession(id: string, now: number): Promise<boolean> {
    return this.won({
      sql: 'UPDATE console_sessions SET last_seen_at = ? WHERE id = ?',
      params: [now, id],
      guard: true,
    });
  }

  markSessionAuthenticated(id: string, now: number): Promise<boolean> {
    return this.won({
      sql: 'UPDATE console_sessions SET authenticated_at = ?, last_seen_at = ? WHERE id = ?',
      params: [now, now, id],
      guard: true,
    });
  }

  listSessions(accountId: string, now: number): Promise<ConsoleSessionRecord[]> {
    return this.driver.all<ConsoleSessionRecord>(
      'SELECT * FROM console_sessions WHERE account_id = ? AND expires_at > ? ORDER BY last_seen_at DESC, id',
      [accountId, now],
    );
  }

  deleteSession(id: string, accountId: string): Promise<boolean> {
    return this.won({
      sql: 'DELETE FROM console_sessions WHERE id = ? AND account_id = ?',
      params: [id, accountId],
      guard: true,
    });
  }

  async deleteSessionsOf(accountId: string, exceptId?: string): Promise<number> {
    const [deleted = 0] =
      (await this.driver.write([
        exceptId === undefined
          ? { sql: 'DELETE FROM console_sessions WHERE account_id = ?', params: [accountId] }
          : { sql: 'DELETE FROM console_sessions WHERE account_id = ? AND id <> ?', params: [accountId, exceptId] },
      ])) ?? [];
    return deleted;
  }

  // One-time links

  async insertLink(link: AccountLinkRecord): Promise<void> {
    await this.driver.write([insert('account_links', link)]);
  }

  findLink(digest: string): Promise<AccountLinkRecord | undefined> {
    return this.driver.one<AccountLinkRecord>('SELECT * FROM account_links WHERE digest = ?', [digest]);
  }

  useLink(digest: string, purpose: LinkPurpose, now: number): Promise<boolean> {
    return this.won(useLinkStep(digest, purpose, now));
  }

  async useVerificationLink(digest: string, now: number): Promise<AccountRecord | undefined> {
    const link = await this.findLink(digest);
    if (link?.purpose !== 'verify' || link.account_id === null) return undefined;
    // Only while the account still has the address the link was sent to.
    const used = await this.won(
      useLinkStep(digest, 'verify', now),
      {
        sql: 'UPDATE accounts SET email_verified = 1 WHERE id = ? AND email = ?',
        params: [link.account_id, link.email],
        guard: true,
      },
      { sql: 'UPDATE agents SET owner_email_verified = 1 WHERE account_id = ?', params: [link.account_id] },
    );
    return used ? this.findAccount(link.account_id) : undefined;
  }

  listOutstandingLinks(now: number, createdBy?: string): Promise<AccountLinkRecord[]> {
    const outstanding = `SELECT * FROM account_links WHERE purpose IN ('setup', 'invite') AND ${OUTSTANDING}`;
    return createdBy === undefined
      ? this.driver.all<AccountLinkRecord>(`${outstanding} ORDER BY created_at, digest`, [now])
      : this.driver.all<AccountLinkRecord>(`${outstanding} AND created_by = ? ORDER BY created_at, digest`, [
          now,
          createdBy,
        ]);
  }

  revokeLink(digest: string, now: number, createdBy?: string): Promise<boolean> {
    return this.won(
      createdBy === undefined
        ? {
            sql: `UPDATE account_links SET revoked_at = ? WHERE digest = ? AND ${OUTSTANDING}`,
            params: [now, digest, now],
            guard: true,
          }
        : {
            sql: `UPDATE account_links SET revoked_at = ? WHERE digest = ? AND ${OUTSTANDING} AND created_by = ?`,
            params: [now, digest, now, createdBy],
            guard: true,
          },
    );
  }

  async revokeLinksOf(accountId: string, now: number): Promise<number> {
    const [revoked = 0] =
      (await this.driver.write([
        {
          sql: `UPDATE account_links SET revoked_at = ? WHERE (created_by = ? OR (purpose = 'setup' AND account_id = ?)) AND ${OUTSTANDING}`,
          params: [now, accountId, accountId, now],
        },
      ])) ?? [];
    return revoked;
  }

  // WebAuthn challenges

  async insertChallenge(challenge: WebauthnChallengeRecord): Promise<void> {
    await this.driver.write([insert('webauthn_challenges', challenge)]);
  }

  async takeChallenge(id: string, now: number): Promise<WebauthnChallengeRecord | undefined> {
    const challenge = await this.driver.one<WebauthnChallengeRecord>('SELECT * FROM webauthn_challenges WHERE id = ?', [
      id,
    ]);
    if (!challenge) return undefined;
    // Deleting it is what makes this caller the one that answers it.
    const taken = await this.won({ sql: 'DELETE FROM webauthn_challenges WHERE id = ?', params: [id], guard: true });
    return taken && challenge.expires_at > now ? challenge : undefined;
  }

  // What a form post showed once

  async insertFlash(flash: ConsoleFlashRecord): Promise<void> {
    await this.driver.write([insert('console_flashes', flash)]);
  }

  async takeFlash(sessionId: string, path: string, now: number): Promise<ConsoleFlashRecord | undefined> {
    const flash = await this.driver.one<ConsoleFlashRecord>(
      'SELECT * FROM console_flashes WHERE session_id = ? AND path = ? ORDER BY expires_at DESC, id LIMIT 1',
      [sessionId, path],
    );
    if (!flash) return undefined;
    // Deleting it is what makes this read the one that shows it (two tabs, a double reload).
    const taken = await this.won({ sql: 'DELETE FROM console_flashes WHERE id = ?', params: [flash.id], guard: true });
    return taken && flash.expires_at > now ? flash : undefined;
  }

  async purge(now: number, eventsBefore: number): Promise<number> {
    const changes = await this.driver.write([
      { sql: 'DELETE FROM console_sessions WHERE expires_at < ?', params: [now] },
      { sql: 'DELETE FROM webauthn_challenges WHERE expires_at < ?', params: [now] },
      { sql: 'DELETE FROM console_flashes WHERE expires_at < ?', params: [now] },
      // Used or expired links are kept a day, so that a second click says "already used", not "unknown".
      { sql: 'DELETE FROM account_links WHERE expires_at < ?', params: [now - 86400] },
      { sql: 'DELETE FROM console_events WHERE at < ?', params: [eventsBefore] },
    ]);
    return (changes ?? []).reduce((sum, n) => sum + n, 0);
  }
}

/** A link not used, not revoked and not expired at the time of the one parameter it takes. */
const OUTSTANDING = 'used_at IS NULL AND revoked_at IS NULL AND expires_at > ?';

function useLinkStep(digest: string, purpose: LinkPurpose, now: number): Step {
  // The creator's status is read in the same statement, so a link whose creator was disabled
  // (on another node, or by a path that did not revoke its links) is refused all the same.
  return {
    sql: `UPDATE account_links SET used_at = ? WHERE digest = ? AND purpose = ? AND ${OUTSTANDING}
      AND (created_by IS NULL OR EXISTS (SELECT 1 FROM accounts WHERE accounts.id = account_links.created_by AND accounts.status = 'active'))`,
    params: [now, digest, purpose, now],
    guard: true,
  };
}
