/**
 * The management API's keys and idempotent creations (docs/design.md §15): their records and SQL,
 * one text for SQLite and PostgreSQL. Two namespaces of the Store: apiKeys and idempotency. A
 * call's record (the key's last use and, for a call no act records, its console event) is one
 * unit.
 */
import { type AccountRecord, findAccount } from './accounts.ts';
import type { Driver } from './driver.ts';
import { type ConsoleEvent, consoleEventStep } from './history.ts';
import { insert } from './rows.ts';

/** What a key may do: read only, or read and change. */
export type ApiKeyAccess = 'read' | 'write';
/** Whose records a key reaches: its account's own agents and websites, or everything (admins only). */
export type ApiKeyReach = 'own' | 'all';

/** A management API key, stored by the digest of the key. */
export interface ApiKeyRecord {
  /** `key_…`: names the key in lists, URLs and the activity; not a secret. */
  id: string;
  /** SHA-256 of the whole key (`aak_…`); the key itself is shown once and never stored. */
  digest: string;
  account_id: string;
  name: string;
  access: ApiKeyAccess;
  reach: ApiKeyReach;
  /** The key's last four characters, so a person can tell their keys apart. */
  hint: string;
  created_at: number;
  /** The account that made it (an admin may make a key for someone else from the CLI: null). */
  created_by: string | null;
  expires_at: number;
  last_used_at: number | null;
  last_used_ip: string | null;
  revoked_at: number | null;
}

/** A retry of an idempotent creation finds what the first attempt left: unfinished (status null) or its answer. */
export interface IdempotentRecord {
  fingerprint: string;
  status: number | null;
  /** The answer's body, sealed under the server secret. */
  sealed: string | null;
  created_at: number;
}

/** API keys in the store (Store.apiKeys). */
export interface ApiKeyStore {
  /**
   * Inserts a key while its account is active, in one unit with a guard on the account's row:
   * false (nothing inserted) when the account is disabled or gone. So a key made while its account
   * is being disabled is either refused or revoked by the disable, never left to outlive it.
   */
  insert(key: ApiKeyRecord): Promise<boolean>;
  /** The key with this digest and its account (two reads: the key, then its account). */
  findByDigest(digest: string): Promise<{ key: ApiKeyRecord; account: AccountRecord } | undefined>;
  find(id: string): Promise<ApiKeyRecord | undefined>;
  /** Every key, or an account's, newest first. */
  list(accountId?: string): Promise<ApiKeyRecord[]>;
  /** Revokes a live key; false when it was already revoked (or is unknown). */
  revoke(id: string, now: number): Promise<boolean>;
  /**
   * Revokes an account's live keys (only those reaching `reach`, when given); returns how many.
   * What ends an account's access (disabling it, signing out everywhere with its keys, taking
   * the admin role) ends its keys for good.
   */
  revokeAll(accountId: string, now: number, reach?: ApiKeyReach): Promise<number>;
  /** Records a call: the key's last use and the console event (none for a call its act records), in one unit. */
  recordCall(keyId: string, now: number, ip: string | null, event: ConsoleEvent | null): Promise<void>;
}

/** Idempotent creations in the store (Store.idempotency): each Idempotency-Key of a key, claimed once. */
export interface IdempotencyStore {
  /**
   * Claims an idempotency key for a creation: null when this is the first use (a row now marks
   * it unfinished), else what the earlier use left.
   */
  claim(keyId: string, idempotencyKey: string, fingerprint: string, now: number): Promise<IdempotentRecord | null>;
  /** Keeps the answer of a claimed creation for its retries. */
  finish(keyId: string, idempotencyKey: string, status: number, sealed: string): Promise<void>;
  /** Lets a claimed creation be tried again (it failed without an answer worth repeating). */
  release(keyId: string, idempotencyKey: string): Promise<void>;
  /** Deletes idempotency records created before `before`; returns how many. */
  purge(before: number): Promise<number>;
}

/**
 * The API keys of the database behind `driver`.
 *
 * @example
 * const found = await apiKeyStore(driver).findByDigest(digest(presented)); // { key, account } | undefined
 */
export function apiKeyStore(driver: Driver): ApiKeyStore {
  return {
    async insert(key) {
      // The guard also locks the account's row (PostgreSQL), so a disable waits for this unit
      // and then revokes the key, or comes first and makes this unit void.
      const done = await driver.write([
        {
          sql: "UPDATE accounts SET status = status WHERE id = ? AND status = 'active'",
          params: [key.account_id],
          guard: true,
        },
        insert('api_keys', key),
      ]);
      return done !== null;
    },

    async findByDigest(digest) {
      const key = await driver.one<ApiKeyRecord>('SELECT * FROM api_keys WHERE digest = ?', [digest]);
      if (!key) return undefined;
      const account = await findAccount(driver, key.account_id);
      if (!account) return undefined;
      return { key, account };
    },

    async find(id) {
      return driver.one<ApiKeyRecord>('SELECT * FROM api_keys WHERE id = ?', [id]);
    },

    async list(accountId) {
      return accountId
        ? driver.all<ApiKeyRecord>('SELECT * FROM api_keys WHERE account_id = ? ORDER BY created_at DESC, id', [
            accountId,
          ])
        : driver.all<ApiKeyRecord>('SELECT * FROM api_keys ORDER BY created_at DESC, id');
    },

    async revoke(id, now) {
      const done = await driver.write([
        {
          sql: 'UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL',
          params: [now, id],
          guard: true,
        },
      ]);
      return done !== null;
    },

    async revokeAll(accountId, now, reach) {
      const [revoked = 0] =
        (await driver.write([
          reach === undefined
            ? {
                sql: 'UPDATE api_keys SET revoked_at = ? WHERE account_id = ? AND revoked_at IS NULL',
                params: [now, accountId],
              }
            : {
                sql: 'UPDATE api_keys SET revoked_at = ? WHERE account_id = ? AND reach = ? AND revoked_at IS NULL',
                params: [now, accountId, reach],
              },
        ])) ?? [];
      return revoked;
    },

    async recordCall(keyId, now, ip, event) {
      await driver.write(
        [
          { sql: 'UPDATE api_keys SET last_used_at = ?, last_used_ip = ? WHERE id = ?', params: [now, ip, keyId] },
          ...(event ? [consoleEventStep(event)] : []),
        ],
        { independent: true },
      );
    },
  };
}

/**
 * The idempotent creations of the database behind `driver`.
 *
 * @example
 * const earlier = await idempotencyStore(driver).claim(key.id, header, fingerprint, now); // null: first use
 */
export function idempotencyStore(driver: Driver): IdempotencyStore {
  const idempotency: IdempotencyStore = {
    async claim(keyId, idempotencyKey, fingerprint, now) {
      // INSERT … ON CONFLICT DO NOTHING is the claim: exactly one of two racing first uses inserts.
      const inserted = await driver.write([
        {
          sql: 'INSERT INTO api_idempotency (key_id, idempotency_key, fingerprint, status, sealed, created_at) VALUES (?, ?, ?, NULL, NULL, ?) ON CONFLICT DO NOTHING',
          params: [keyId, idempotencyKey, fingerprint, now],
          guard: true,
        },
      ]);
      if (inserted !== null) return null;
      const row = await driver.one<IdempotentRecord>(
        'SELECT fingerprint, status, sealed, created_at FROM api_idempotency WHERE key_id = ? AND idempotency_key = ?',
        [keyId, idempotencyKey],
      );
      // Released between the two statements: the caller may claim it again.
      if (!row) return idempotency.claim(keyId, idempotencyKey, fingerprint, now);
      return row;
    },

    async finish(keyId, idempotencyKey, status, sealed) {
      await driver.write([
        {
          sql: 'UPDATE api_idempotency SET status = ?, sealed = ? WHERE key_id = ? AND idempotency_key = ?',
          params: [status, sealed, keyId, idempotencyKey],
        },
      ]);
    },

    async release(keyId, idempotencyKey) {
      await driver.write([
        {
          sql: 'DELETE FROM api_idempotency WHERE key_id = ? AND idempotency_key = ?',
          params: [keyId, idempotencyKey],
        },
      ]);
    },

    async purge(before) {
      const [count] = (await driver.write([
        { sql: 'DELETE FROM api_idempotency WHERE created_at < ?', params: [before] },
      ])) ?? [0];
      return count ?? 0;
    },
  };
  return idempotency;
}
