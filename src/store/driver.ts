/**
 * The two database drivers under the Store. Both run the same SQL (written with `?`
 * placeholders); writes are declarative units, so the SQLite driver can commit the units of
 * concurrent requests together: one fsync for the batch instead of one per request (group
 * commit), while every unit still commits or rolls back as a whole and every answer waits for
 * its commit.
 */
import Database from 'better-sqlite3';
import type pg from 'pg';
import { RateLimiterMemory, RateLimiterPostgres } from 'rate-limiter-flexible';
import type { Limiter, LimiterOptions } from './types.ts';
import { type SyncFile, WalSync } from './wal-sync.ts';

export type Params = readonly unknown[];

/** One statement of a write unit. */
export interface Step {
  sql: string;
  params: Params;
  /** The unit is void unless this step changes at least one row: it rolls back and reports null. */
  guard?: boolean;
}

export interface Migration {
  version: string;
  statements: string[];
}

export interface Driver {
  readonly engine: 'sqlite' | 'postgres';
  one<T>(sql: string, params?: Params): Promise<T | undefined>;
  all<T>(sql: string, params?: Params): Promise<T[]>;
  /**
   * Runs the steps in one transaction and resolves after the commit with the number of rows
   * each step changed, or with null when a guarded step changed none (nothing is kept).
   */
  write(steps: Step[]): Promise<number[] | null>;
  migrate(migrations: Migration[]): Promise<void>;
  createLimiter(options: LimiterOptions): Promise<Limiter>;
  close(): Promise<void>;
}

// ---------------------------------------------------------------------------------------------
// SQLite: synchronous better-sqlite3, durable commits, group commit

interface QueuedUnit {
  steps: Step[];
  resolve(changes: number[] | null): void;
  reject(error: unknown): void;
}

export interface SqliteDriverOptions {
  /** SQLITE_SYNCHRONOUS: 'full' (the default) or the operator's opt-in 'normal'. */
  synchronous?: 'full' | 'normal';
  /** How the WAL file is synced (fs.fdatasync; tests pass one they control). */
  syncFile?: SyncFile;
}

export class SqliteDriver implements Driver {
  readonly engine = 'sqlite';
  private readonly statements = new Map<string, Database.Statement>();
  private queue: QueuedUnit[] = [];
  private flushScheduled = false;
  /** Syncs commits to disk off the event loop; absent for :memory: and for the opt-in 'normal'. */
  private readonly wal: WalSync | undefined;
  private readsOpen = false;

  constructor(
    private readonly db: Database.Database,
    options: SqliteDriverOptions = {},
  ) {
    // 'full': a commit is on disk before its answer, so a 200 survives kill -9 and power loss
    // (DESIGN.md §9). SQLite's own FULL would fsync inside COMMIT, on the event loop; the WAL
    // is synced by WalSync in the thread pool instead, and every answer waits for it. 'normal',
    // which an operator may choose, skips that fsync: a 200 survives kill -9, not a power loss.
    db.pragma('journal_mode = WAL');
    const durable = options.synchronous !== 'normal';
    this.wal = durable && !db.memory ? new WalSync(`${db.name}-wal`, options.syncFile) : undefined;
    db.pragma(`synchronous = ${durable && !this.wal ? 'FULL' : 'NORMAL'}`);
    db.pragma('busy_timeout = 5000');
  }

  private statement(sql: string): Database.Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  async one<T>(sql: string, params: Params = []): Promise<T | undefined> {
    this.beginReads();
    const row = this.statement(sql).get(...params) as T | undefined;
    if (this.wal?.pending) await this.wal.settled();
    return row;
  }

  async all<T>(sql: string, params: Params = []): Promise<T[]> {
    this.beginReads();
    const rows = this.statement(sql).all(...params) as T[];
    if (this.wal?.pending) await this.wal.settled();
    return rows;
  }

  /**
   * The reads of one turn of the event loop share one read transaction, ended before the next
   * group commit. Each transaction takes and releases a lock on the WAL index with a system
   * call apiece; a read on its own spent more time in those two calls than in the lookup.
   * The reads see the database as of the turn's first read: no commit of this process comes
   * between, since commits run after the turn (flush).
   */
  private beginReads(): void {
    if (this.readsOpen || this.db.inTransaction) return;
    this.statement('BEGIN').run();
    this.readsOpen = true;
    setImmediate(() => this.endReads());
  }

  private endReads(): void {
    if (!this.readsOpen) return;
    this.readsOpen = false;
    this.statement('COMMIT').run();
  }

  write(steps: Step[]): Promise<number[] | null> {
    return new Promise((resolve, reject) => {
      this.queue.push({ steps, resolve, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        // Units queued by requests handled in this turn of the event loop join the same commit.
        setImmediate(() => this.flush());
      }
    });
  }

  /** Runs every queued unit in one transaction, each in a savepoint of its own; one commit for all. */
  private flush(): void {
    const batch = this.queue;
    this.queue = [];
    this.flushScheduled = false;
    this.endReads();
    const syncFailure = this.wal?.failure;
    if (syncFailure) {
      for (const unit of batch) unit.reject(syncFailure);
      return;
    }
    const outcomes: Array<{ ok: true; value: number[] | null } | { ok: false; error: unknown }> = [];
    try {
      this.statement('BEGIN IMMEDIATE').run();
    } catch (error) {
      for (const unit of batch) unit.reject(error);
      return;
    }
    for (const unit of batch) {
      this.statement('SAVEPOINT unit').run();
      try {
        const value = this.runUnit(unit.steps);
        if (value === null) this.statement('ROLLBACK TO unit').run();
        this.statement('RELEASE unit').run();
        outcomes.push({ ok: true, value });
      } catch (error) {
        this.statement('ROLLBACK TO unit').run();
        this.statement('RELEASE unit').run();
        outcomes.push({ ok: false, error });
      }
    }
    try {
      this.statement('COMMIT').run();
    } catch (error) {
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      for (const unit of batch) unit.reject(error);
      return;
    }
    const answer = () => batch.forEach((unit, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) unit.resolve(outcome.value);
      else unit.reject(outcome.error);
    });
    if (!this.wal) return answer();
    this.wal.committedNow().then(answer, (error: unknown) => {
      for (const unit of batch) unit.reject(error);
    });
  }

  private runUnit(steps: Step[]): number[] | null {
    const changes: number[] = [];
    for (const step of steps) {
      const changed = this.statement(step.sql).run(...step.params).changes;
      if (step.guard && changed === 0) return null;
      changes.push(changed);
    }
    return changes;
  }

  async migrate(migrations: Migration[]): Promise<void> {
    this.endReads();
    this.db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version varchar(100) PRIMARY KEY, applied_at bigint NOT NULL)');
    adoptKyselyHistory((sql) => this.db.prepare(sql).all() as Array<{ name: string }>, (version) =>
      this.db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?) ON CONFLICT DO NOTHING').run(version, Date.now()),
    );
    // BEGIN IMMEDIATE takes the write lock: two processes migrating one file do it one after the other.
    this.db.transaction(() => {
      const applied = new Set((this.db.prepare('SELECT version FROM schema_migrations').all() as Array<{ version: string }>).map((row) => row.version));
      for (const migration of migrations) {
        if (applied.has(migration.version)) continue;
        for (const statement of migration.statements) this.db.exec(statement);
        this.db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)').run(migration.version, Date.now());
      }
    }).immediate();
    this.statements.clear();
  }

  async createLimiter(options: LimiterOptions): Promise<Limiter> {
    // One SQLite file serves one process, so its counters can live in that process.
    return new RateLimiterMemory(options);
  }

  async close(): Promise<void> {
    // Let queued units commit before the file closes.
    if (this.queue.length > 0) await new Promise<void>((resolve) => setImmediate(() => resolve()));
    this.endReads();
    await this.wal?.settled().catch(() => undefined);
    this.wal?.close();
    this.db.close();
  }
}

/**
 * Databases created before this driver were migrated by Kysely's Migrator; its history table
 * says which of the same migrations they already have.
 */
function adoptKyselyHistory(query: (sql: string) => Array<{ name: string }>, record: (version: string) => void): void {
  let rows: Array<{ name: string }>;
  try {
    rows = query('SELECT name FROM kysely_migration');
  } catch {
    return; // no such table: a database this driver created
  }
  for (const row of rows) record(row.name);
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL: a pg pool, one transaction per unit, named prepared statements

const INT8_OID = 20;

export class PostgresDriver implements Driver {
  readonly engine = 'postgres';
  private readonly names = new Map<string, { name: string; text: string }>();

  constructor(private readonly pool: pg.Pool) {}

  static async open(databaseUrl: string, options: { poolSize?: number; onBackgroundError?: (error: Error) => void }): Promise<PostgresDriver> {
    // Loaded only when PostgreSQL is configured: a SQLite node never pays for it.
    const { default: pg } = await import('pg');
    const pool = new pg.Pool({
      connectionString: databaseUrl,
      max: options.poolSize ?? 10,
      connectionTimeoutMillis: 5000,
      idleTimeoutMillis: 30_000,
      statement_timeout: 10_000,
      // Times are epoch seconds in bigint columns; they fit a JavaScript number exactly.
      types: { getTypeParser: ((oid: number, format?: 'text' | 'binary') => (oid === INT8_OID ? Number : pg.types.getTypeParser(oid, format))) as typeof pg.types.getTypeParser },
    });
    // A connection that breaks (database restart, failover, network) emits 'error': on the
    // pool while idle, on the client while checked out. Unhandled, either would end the
    // process; handled, the query in flight fails (503) and the pool replaces the connection.
    pool.on('error', (error) => options.onBackgroundError?.(error));
    pool.on('connect', (client) => client.on('error', (error) => options.onBackgroundError?.(error)));
    return new PostgresDriver(pool);
  }

  /** The statement with `$n` placeholders and a stable name, so each connection prepares it once. */
  private prepared(sql: string): { name: string; text: string } {
    let statement = this.names.get(sql);
    if (!statement) {
      let n = 0;
      statement = { name: `s${this.names.size}`, text: sql.replace(/\?/g, () => `$${++n}`) };
      this.names.set(sql, statement);
    }
    return statement;
  }

  private query(client: pg.Pool | pg.PoolClient, sql: string, params: Params) {
    return client.query({ ...this.prepared(sql), values: params as unknown[] });
  }

  async one<T>(sql: string, params: Params = []): Promise<T | undefined> {
    return (await this.query(this.pool, sql, params)).rows[0] as T | undefined;
  }

  async all<T>(sql: string, params: Params = []): Promise<T[]> {
    return (await this.query(this.pool, sql, params)).rows as T[];
  }

  async write(steps: Step[]): Promise<number[] | null> {
    if (steps.length === 1) {
      const changed = (await this.query(this.pool, steps[0]!.sql, steps[0]!.params)).rowCount ?? 0;
      return steps[0]!.guard && changed === 0 ? null : [changed];
    }
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      const changes: number[] = [];
      for (const step of steps) {
        const changed = (await this.query(client, step.sql, step.params)).rowCount ?? 0;
        if (step.guard && changed === 0) {
          await client.query('ROLLBACK');
          return null;
        }
        changes.push(changed);
      }
      await client.query('COMMIT');
      return changes;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }

  async migrate(migrations: Migration[]): Promise<void> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      // Nodes starting together migrate one after the other.
      await client.query("SELECT pg_advisory_xact_lock(hashtext('agentauth.migrate'))");
      await client.query('CREATE TABLE IF NOT EXISTS schema_migrations (version varchar(100) PRIMARY KEY, applied_at bigint NOT NULL)');
      const kysely = await client.query("SELECT to_regclass('kysely_migration') IS NOT NULL AS present");
      if (kysely.rows[0]?.present) {
        await client.query('INSERT INTO schema_migrations (version, applied_at) SELECT name, $1 FROM kysely_migration ON CONFLICT DO NOTHING', [Date.now()]);
      }
      const applied = new Set((await client.query('SELECT version FROM schema_migrations')).rows.map((row: { version: string }) => row.version));
      for (const migration of migrations) {
        if (applied.has(migration.version)) continue;
        for (const statement of migration.statements) await client.query(statement);
        await client.query('INSERT INTO schema_migrations (version, applied_at) VALUES ($1, $2)', [migration.version, Date.now()]);
      }
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }

  createLimiter(options: LimiterOptions): Promise<Limiter> {
    return new Promise((resolve, reject) => {
      const limiter: RateLimiterPostgres = new RateLimiterPostgres(
        { ...options, storeClient: this.pool, storeType: 'pool', tableName: 'auth_failure_counters', clearExpiredByTimeout: true },
        (error?: Error) => (error ? reject(error) : resolve(limiter)),
      );
    });
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
