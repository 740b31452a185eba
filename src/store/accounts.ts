/**
 * The console's people (docs/design.md §11): accounts, their passkeys and the WebAuthn challenges
 * of a passkey's ceremonies, and the one-time links that make an account (the first admin's
 * setup, an invitation) or verify its email; their records and SQL, one text for SQLite and
 * PostgreSQL. Four namespaces of the Store: accounts, passkeys, challenges, links. An owned
 * agent keeps copies of its account's name and verification (agents.ts ownerSteps), written in
 * the account's unit. The sessions a person signs in with are sessions.ts's.
 */
import { ownerSteps, ownerVerifiedStep } from './agents.ts';
import type { Driver, Step } from './driver.ts';
import { announceSteps, type WebhookEvent } from './outbox.ts';
import { insert, type PageQuery, pageRows, update, won } from './rows.ts';

/** An admin sees and manages everything; a member, their own agents and websites. */
export type AccountRole = 'admin' | 'member';
/** A disabled account cannot sign in; its links and sessions end with it. */
export type AccountStatus = 'active' | 'disabled';

/** A person's console account. */
export interface AccountRecord {
  id: string;
  /** As the person typed it. */
  email: string;
  /** Lower-cased: what makes an email unique. */
  email_key: string;
  name: string | null;
  role: AccountRole;
  status: AccountStatus;
  email_verified: boolean;
  /** argon2id (PHC string), or null for an account that signs in with passkeys only. */
  password_hash: string | null;
  created_at: number;
  last_sign_in_at: number | null;
  /** How many times it was changed (1 when made): what If-Match compares and sets (rows.ts update). */
  version: number;
}

/** What a change of an account may set. */
export type AccountPatch = Partial<
  Pick<AccountRecord, 'name' | 'role' | 'status' | 'email_verified' | 'password_hash' | 'last_sign_in_at'>
>;

/** A passkey (a WebAuthn credential) an account signs in with. */
export interface PasskeyRecord {
  /** The credential ID, base64url. */
  id: string;
  account_id: string;
  /** COSE public key, base64url. */
  public_key: string;
  counter: number;
  /** JSON array of authenticator transports, or null. */
  transports: string | null;
  name: string;
  created_at: number;
  last_used_at: number | null;
}

/** One-time links: the first admin's setup, an invitation, an email verification. */
export type LinkPurpose = 'setup' | 'invite' | 'verify';

/** A one-time link, known by the digest of its token. */
export interface AccountLinkRecord {
  /** SHA-256 of the link's token. */
  digest: string;
  purpose: LinkPurpose;
  /** The account it is for (setup, verify); null for an invitation. */
  account_id: string | null;
  /** The address a verification link confirms; null otherwise. */
  email: string | null;
  /** The role an invitation grants. */
  role: AccountRole | null;
  created_by: string | null;
  created_at: number;
  expires_at: number;
  used_at: number | null;
  /** When its creator or an admin revoked it, or its creator's account was disabled. */
  revoked_at: number | null;
}

/** The challenge of one WebAuthn ceremony (a passkey's registration or a sign-in), answered once. */
export interface WebauthnChallengeRecord {
  id: string;
  challenge: string;
  /** The account registering a passkey; null for a sign-in (discoverable credentials). */
  account_id: string | null;
  expires_at: number;
}

/** An account as its row holds it: the boolean as 0 or 1, one representation on both engines. */
type AccountRow = Omit<AccountRecord, 'email_verified'> & { email_verified: number };
/** An account record from its row. */
const toAccount = (row: AccountRow): AccountRecord => ({ ...row, email_verified: row.email_verified === 1 });
const fromAccount = (account: AccountRecord) => ({ ...account, email_verified: account.email_verified ? 1 : 0 });

/**
 * The account with this id, or undefined: the accounts' find, which a session's and an API key's
 * reads use after theirs.
 */
export async function findAccount(driver: Driver, id: string): Promise<AccountRecord | undefined> {
  const row = await driver.one<AccountRow>('SELECT * FROM accounts WHERE id = ?', [id]);
  return row && toAccount(row);
}

/** SQLite's and PostgreSQL's report of a duplicate key in a unique index. */
function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === '23505';
}

/** Accounts in the store (Store.accounts). */
export interface AccountStore {
  /** Inserts the account; false when its email is already taken. */
  insert(account: AccountRecord, announce?: WebhookEvent[]): Promise<boolean>;
  /**
   * Uses the invitation (usable as by LinkStore.use) and inserts the account, in one unit:
   * null when the link was not usable, 'email_taken' when the email has an account.
   */
  insertWithLink(
    account: AccountRecord,
    linkDigest: string,
    now: number,
    announce?: WebhookEvent[],
  ): Promise<'created' | 'email_taken' | null>;
  find(id: string): Promise<AccountRecord | undefined>;
  findByEmail(emailKey: string): Promise<AccountRecord | undefined>;
  /** Accounts oldest first: every one, or one page (with a `limit`, after the `after` of the page before). */
  list(query?: Omit<PageQuery, 'accountId'>): Promise<AccountRecord[]>;
  count(): Promise<number>;
  /**
   * Updates the account, and the owner_* copies on its agents when name or verification change,
   * adding one to its version; false when there is no such account or (with `version`) it no
   * longer has that version.
   */
  update(id: string, patch: AccountPatch, announce?: WebhookEvent[], version?: number): Promise<boolean>;
  /**
   * Deletes what the console keeps only for a while, in one unit: expired sessions, challenges
   * and flashes, links a day after they expired, and console events older than `eventsBefore`.
   * Resolves with how many rows.
   */
  purge(now: number, eventsBefore: number): Promise<number>;
}

/** Passkeys in the store (Store.passkeys). */
export interface PasskeyStore {
  insert(passkey: PasskeyRecord, announce?: WebhookEvent[]): Promise<void>;
  find(id: string): Promise<PasskeyRecord | undefined>;
  /** An account's passkeys, oldest first. */
  list(accountId: string): Promise<PasskeyRecord[]>;
  /** A sign-in's counter and time; only forward, so a cloned authenticator's replay loses. */
  recordUse(id: string, counter: number, now: number): Promise<boolean>;
  rename(id: string, accountId: string, name: string): Promise<boolean>;
  delete(id: string, accountId: string, announce?: WebhookEvent[]): Promise<boolean>;
}

/** WebAuthn challenges in the store (Store.challenges). */
export interface ChallengeStore {
  insert(challenge: WebauthnChallengeRecord): Promise<void>;
  /** Deletes and returns the unexpired challenge: each can be answered once. */
  take(id: string, now: number): Promise<WebauthnChallengeRecord | undefined>;
}

/** One-time links in the store (Store.links). */
export interface LinkStore {
  insert(link: AccountLinkRecord): Promise<void>;
  find(digest: string): Promise<AccountLinkRecord | undefined>;
  /**
   * Marks the link used, if it is unused, unrevoked, unexpired, of that purpose, and its creator
   * (if any) is an active account.
   */
  use(digest: string, purpose: LinkPurpose, now: number): Promise<boolean>;
  /** Uses the verification link and marks its account's email verified, in one unit. */
  useVerification(digest: string, now: number): Promise<AccountRecord | undefined>;
  /**
   * The setup and invitation links still outstanding (unused, unrevoked, unexpired), oldest
   * first: those `createdBy` made, or every one.
   */
  listOutstanding(now: number, createdBy?: string): Promise<AccountLinkRecord[]>;
  /** Revokes the link if it is still outstanding (and made by `createdBy`, when given). */
  revoke(digest: string, now: number, createdBy?: string): Promise<boolean>;
  /**
   * Revokes the outstanding links the account made, and the setup links made for it: what
   * disabling it ends. Resolves with how many.
   */
  revokeAll(accountId: string, now: number): Promise<number>;
}

/**
 * The accounts of the database behind `driver`.
 *
 * @example
 * const account = await accountStore(driver).findByEmail(emailKey(email));
 */
export function accountStore(driver: Driver): AccountStore {
  return {
    async insert(account, announce) {
      try {
        await driver.write([insert('accounts', fromAccount(account)), ...announceSteps(announce)]);
        return true;
      } catch (error) {
        if (isUniqueViolation(error)) return false;
        throw error;
      }
    },

    async insertWithLink(account, linkDigest, now, announce) {
      try {
        const used = await won(
          driver,
          useLinkStep(linkDigest, 'invite', now),
          insert('accounts', fromAccount(account)),
          ...announceSteps(announce),
        );
        return used ? 'created' : null;
      } catch (error) {
        if (isUniqueViolation(error)) return 'email_taken';
        throw error;
      }
    },

    find(id) {
      return findAccount(driver, id);
    },

    async findByEmail(emailKey) {
      const row = await driver.one<AccountRow>('SELECT * FROM accounts WHERE email_key = ?', [emailKey]);
      return row && toAccount(row);
    },

    async list(query) {
      if (query !== undefined) return (await pageRows<AccountRow>(driver, 'accounts', query)).map(toAccount);
      return (await driver.all<AccountRow>('SELECT * FROM accounts ORDER BY created_at, id')).map(toAccount);
    },

    async count() {
      const row = await driver.one<{ n: number | string }>('SELECT COUNT(*) AS n FROM accounts');
      return Number(row?.n ?? 0);
    },

    update(id, patch, announce, version) {
      const { email_verified, ...rest } = patch;
      const steps: Step[] = [
        update(
          'accounts',
          'id',
          id,
          { ...rest, ...(email_verified === undefined ? {} : { email_verified: email_verified ? 1 : 0 }) },
          version,
        ),
      ];
      // The claims of the account's agents are read from the agent row on every token: keep the copies in step.
      ownerSteps(steps, id, patch.name, email_verified);
      return won(driver, ...steps, ...announceSteps(announce));
    },

    async purge(now, eventsBefore) {
      const changes = await driver.write([
        { sql: 'DELETE FROM console_sessions WHERE expires_at < ?', params: [now] },
        { sql: 'DELETE FROM webauthn_challenges WHERE expires_at < ?', params: [now] },
        { sql: 'DELETE FROM console_flashes WHERE expires_at < ?', params: [now] },
        // Used or expired links are kept a day, so that a second click says "already used", not "unknown".
        { sql: 'DELETE FROM account_links WHERE expires_at < ?', params: [now - 86400] },
        { sql: 'DELETE FROM console_events WHERE at < ?', params: [eventsBefore] },
      ]);
      return (changes ?? []).reduce((sum, n) => sum + n, 0);
    },
  };
}

/**
 * The passkeys of the database behind `driver`.
 *
 * @example
 * const passkeys = await passkeyStore(driver).list(accountId);
 */
export function passkeyStore(driver: Driver): PasskeyStore {
  return {
    async insert(passkey, announce) {
      await driver.write([insert('passkeys', passkey), ...announceSteps(announce)]);
    },

    find(id) {
      return driver.one<PasskeyRecord>('SELECT * FROM passkeys WHERE id = ?', [id]);
    },

    list(accountId) {
      return driver.all<PasskeyRecord>('SELECT * FROM passkeys WHERE account_id = ? ORDER BY created_at, id', [
        accountId,
      ]);
    },

    recordUse(id, counter, now) {
      // Authenticators that keep no counter report 0 every time; any other must go forward.
      return won(driver, {
        sql: 'UPDATE passkeys SET counter = ?, last_used_at = ? WHERE id = ? AND (counter < ? OR (counter = 0 AND ? = 0))',
        params: [counter, now, id, counter, counter],
        guard: true,
      });
    },

    rename(id, accountId, name) {
      return won(driver, {
        sql: 'UPDATE passkeys SET name = ? WHERE id = ? AND account_id = ?',
        params: [name, id, accountId],
        guard: true,
      });
    },

    delete(id, accountId, announce) {
      return won(
        driver,
        {
          sql: 'DELETE FROM passkeys WHERE id = ? AND account_id = ?',
          params: [id, accountId],
          guard: true,
        },
        ...announceSteps(announce),
      );
    },
  };
}

/**
 * The WebAuthn challenges of the database behind `driver`.
 *
 * @example
 * const challenge = await challengeStore(driver).take(id, now); // undefined: unknown, expired or answered
 */
export function challengeStore(driver: Driver): ChallengeStore {
  return {
    async insert(challenge) {
      await driver.write([insert('webauthn_challenges', challenge)]);
    },

    async take(id, now) {
      const challenge = await driver.one<WebauthnChallengeRecord>('SELECT * FROM webauthn_challenges WHERE id = ?', [
        id,
      ]);
      if (!challenge) return undefined;
      // Deleting it is what makes this caller the one that answers it.
      const taken = await won(driver, {
        sql: 'DELETE FROM webauthn_challenges WHERE id = ?',
        params: [id],
        guard: true,
      });
      return taken && challenge.expires_at > now ? challenge : undefined;
    },
  };
}

/**
 * The one-time links of the database behind `driver`.
 *
 * @example
 * if (await linkStore(driver).use(digest, 'setup', now)) createFirstAdmin();
 */
export function linkStore(driver: Driver): LinkStore {
  const find = (digest: string) =>
    driver.one<AccountLinkRecord>('SELECT * FROM account_links WHERE digest = ?', [digest]);
  return {
    async insert(link) {
      await driver.write([insert('account_links', link)]);
    },

    find,

    use(digest, purpose, now) {
      return won(driver, useLinkStep(digest, purpose, now));
    },

    async useVerification(digest, now) {
      const link = await find(digest);
      if (link?.purpose !== 'verify' || link.account_id === null) return undefined;
      // Only while the account still has the address the link was sent to.
      const used = await won(
        driver,
        useLinkStep(digest, 'verify', now),
        {
          sql: 'UPDATE accounts SET email_verified = 1 WHERE id = ? AND email = ?',
          params: [link.account_id, link.email],
          guard: true,
        },
        ownerVerifiedStep(link.account_id),
      );
      return used ? findAccount(driver, link.account_id) : undefined;
    },

    listOutstanding(now, createdBy) {
      const outstanding = `SELECT * FROM account_links WHERE purpose IN ('setup', 'invite') AND ${OUTSTANDING}`;
      return createdBy === undefined
        ? driver.all<AccountLinkRecord>(`${outstanding} ORDER BY created_at, digest`, [now])
        : driver.all<AccountLinkRecord>(`${outstanding} AND created_by = ? ORDER BY created_at, digest`, [
            now,
            createdBy,
          ]);
    },

    revoke(digest, now, createdBy) {
      return won(
        driver,
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
    },

    async revokeAll(accountId, now) {
      const [revoked = 0] =
        (await driver.write([
          {
            sql: `UPDATE account_links SET revoked_at = ? WHERE (created_by = ? OR (purpose = 'setup' AND account_id = ?)) AND ${OUTSTANDING}`,
            params: [now, accountId, accountId, now],
          },
        ])) ?? [];
      return revoked;
    },
  };
}

/** A link not used, not revoked and not expired at the time of the one parameter it takes. */
const OUTSTANDING = 'used_at IS NULL AND revoked_at IS NULL AND expires_at > ?';

/** The step that uses a link: guarded, so a unit with it is void when the link was not usable. */
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
