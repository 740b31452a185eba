/** The ApiStore in SQL, one text for SQLite and PostgreSQL (see api-types.ts). */
import type { ApiKeyRecord, ApiStore, IdempotentRecord } from './api-types.ts';
import { type ConsoleEvent, consoleEventStep } from './history.ts';
import type { AccountRecord } from './accounts.ts';
import type { Driver } from './driver.ts';
import { insert } from './rows.ts';

type AccountRow = Omit<AccountRecord, 'email_verified'> & { email_verified: number };

export class SqlApiStore implements ApiStore {
  constructor(private readonly driver: Driver) {}

  async insertKey(key: ApiKeyRecord): Promise<void> {
    await this.driver.write([insert('api_keys', key)]);
  }

  async findKeyByDigest(digest: string): Promise<{ key: ApiKeyRecord; account: AccountRecord } | undefined> {
    const key = await this.driver.one<ApiKeyRecord>('SELECT * FROM api_keys WHERE digest = ?', [digest]);
    if (!key) return undefined;
    const account = await this.driver.one<AccountRow>('SELECT * FROM accounts WHERE id = ?', [key.account_id]);
    if (!account) return undefined;
    return { key, account: { ...account, email_verified: account.email_verified === 1 } };
  }

  async findKey(id: string): Promise<ApiKeyRecord | undefined> {
    return this.driver.one<ApiKeyRecord>('SELECT * FROM api_keys WHERE id = ?', [id]);
  }

  async listKeys(accountId?: string): Promise<ApiKeyRecord[]> {
    return accountId
      ? this.driver.all<ApiKeyRecord>('SELECT * FROM api_keys WHERE account_id = ? ORDER BY created_at DESC, id', [
          accountId,
        ])
      : this.driver.all<ApiKeyRecord>('SELECT * FROM api_keys ORDER BY created_at DESC, id');
  }

  async revokeKey(id: string, now: number): Promise<boolean> {
    const done = await this.driver.write([
      { sql: 'UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL', params: [now, id], guard: true },
    ]);
    return done !== null;
  }

  async recordCall(keyId: string, now: number, ip: string | null, event: ConsoleEvent | null): Promise<void> {
    await this.driver.write(
      [
        { sql: 'UPDATE api_keys SET last_used_at = ?, last_used_ip = ? WHERE id = ?', params: [now, ip, keyId] },
        ...(event ? [consoleEventStep(event)] : []),
      ],
      { independent: true },
    );
  }

  async claimIdempotencyKey(
    keyId: string,
    idempotencyKey: string,
    fingerprint: string,
    now: number,
  ): Promise<IdempotentRecord | null> {
    // INSERT … ON CONFLICT DO NOTHING is the claim: exactly one of two racing first uses inserts.
    const inserted = await this.driver.write([
      {
        sql: 'INSERT INTO api_idempotency (key_id, idempotency_key, fingerprint, status, sealed, created_at) VALUES (?, ?, ?, NULL, NULL, ?) ON CONFLICT DO NOTHING',
        params: [keyId, idempotencyKey, fingerprint, now],
        guard: true,
      },
    ]);
    if (inserted !== null) return null;
    const row = await this.driver.one<IdempotentRecord>(
      'SELECT fingerprint, status, sealed, created_at FROM api_idempotency WHERE key_id = ? AND idempotency_key = ?',
      [keyId, idempotencyKey],
    );
    // Released between the two statements: the caller may claim it again.
    if (!row) return this.claimIdempotencyKey(keyId, idempotencyKey, fingerprint, now);
    return row;
  }

  async finishIdempotencyKey(keyId: string, idempotencyKey: string, status: number, sealed: string): Promise<void> {
    await this.driver.write([
      {
        sql: 'UPDATE api_idempotency SET status = ?, sealed = ? WHERE key_id = ? AND idempotency_key = ?',
        params: [status, sealed, keyId, idempotencyKey],
      },
    ]);
  }

  async releaseIdempotencyKey(keyId: string, idempotencyKey: string): Promise<void> {
    await this.driver.write([
      { sql: 'DELETE FROM api_idempotency WHERE key_id = ? AND idempotency_key = ?', params: [keyId, idempotencyKey] },
    ]);
  }

  async purge(before: number): Promise<number> {
    const [count] = (await this.driver.write([
      { sql: 'DELETE FROM api_idempotency WHERE created_at < ?', params: [before] },
    ])) ?? [0];
    return count ?? 0;
  }
}
