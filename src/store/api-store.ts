/** The ApiStore in SQL, one text for SQLite and PostgreSQL (see api-types.ts). */
import { newAuditEventId } from '../crypto.ts';
import type {
  ActivityPageQuery,
  ApiKeyRecord,
  ApiStore,
  HistoryPageQuery,
  IdempotentRecord,
  SignInPageQuery,
} from './api-types.ts';
import type { AccountRecord, ConsoleEvent, ConsoleEventView, SignInRecord } from './console-types.ts';
import type { Driver } from './driver.ts';
import { insert, type PageQuery, pageRows } from './rows.ts';

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
        ...(event ? [insert('console_events', { id: newAuditEventId(), ...event })] : []),
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

  // Lists in pages, oldest first, each after the (created_at, id) of the page before.

  async pageAccounts(query: Omit<PageQuery, 'accountId'>): Promise<AccountRecord[]> {
    return (await pageRows<AccountRow>(this.driver, 'accounts', query)).map((row) => ({
      ...row,
      email_verified: row.email_verified === 1,
    }));
  }

  // Histories, newest first, each page older than the (at, id) of the page before.

  pageSignIns(query: SignInPageQuery): Promise<SignInRecord[]> {
    const where: string[] = [];
    const params: unknown[] = [];
    if (query.agentId !== undefined) where.push('e.agent_id = ?') && params.push(query.agentId);
    if (query.clientId !== undefined) where.push('e.client_id = ?') && params.push(query.clientId);
    if (query.outcome && 'is' in query.outcome) where.push('e.outcome = ?') && params.push(query.outcome.is);
    if (query.outcome && 'not' in query.outcome) where.push('e.outcome <> ?') && params.push(query.outcome.not);
    if (query.accountId !== undefined) {
      // An account's sign-ins: those of its agents and those to its websites.
      where.push(
        '(e.agent_id IN (SELECT id FROM agents WHERE account_id = ?) OR e.client_id IN (SELECT id FROM clients WHERE account_id = ?))',
      );
      params.push(query.accountId, query.accountId);
    }
    return this.history<SignInRecord>(
      'SELECT e.id, e.at, e.agent_id, e.client_id, c.name AS client_name, e.model, e.ip, e.user_agent, e.outcome FROM audit_events e LEFT JOIN clients c ON c.id = e.client_id',
      query,
      where,
      params,
    );
  }

  pageActivity(query: ActivityPageQuery): Promise<ConsoleEventView[]> {
    const where: string[] = [];
    const params: unknown[] = [];
    if (query.actorId !== undefined) where.push('e.actor_id = ?') && params.push(query.actorId);
    if (query.action && 'is' in query.action) where.push('e.action = ?') && params.push(query.action.is);
    // substr, not LIKE: an action's underscores would be LIKE's wildcards.
    if (query.action && 'prefix' in query.action)
      where.push('substr(e.action, 1, ?) = ?') && params.push(query.action.prefix.length, query.action.prefix);
    return this.history<ConsoleEventView>(
      'SELECT e.*, a.email AS actor_email FROM console_events e LEFT JOIN accounts a ON a.id = e.actor_id',
      query,
      where,
      params,
    );
  }

  /** A newest-first page of `select` (whose events table is `e`), by (at, id) as the console's histories. */
  private history<R>(select: string, query: HistoryPageQuery, where: string[], params: unknown[]): Promise<R[]> {
    const conditions = [...where];
    const values = [...params];
    if (query.since !== undefined) conditions.push('e.at >= ?') && values.push(query.since);
    if (query.until !== undefined) conditions.push('e.at < ?') && values.push(query.until);
    const id = this.driver.engine === 'postgres' ? 'e.id COLLATE "C"' : 'e.id';
    if (query.before)
      conditions.push(`(e.at < ? OR (e.at = ? AND ${id} < ?))`) &&
        values.push(query.before.at, query.before.at, query.before.id);
    const filter = conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : '';
    return this.driver.all<R>(`${select} ${filter} ORDER BY e.at DESC, ${id} DESC LIMIT ?`, [...values, query.limit]);
  }
}
