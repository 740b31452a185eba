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
  /**
   * When this step changes a row, the listeners of every node (listen) hear this payload once
   * the unit has committed: an authorization request's id, or '*' for "any request may have
   * changed". PostgreSQL: NOTIFY in the same statement; SQLite: in-process, after the commit.
   */
  notify?: string;
}

/** Who hears of committed status changes (Step.notify). */
export interface ChangeListener {
  changed(payload: string): void;
  /** The channel was interrupted and is back: changes in between may have been missed. */
  resumed(): void;
}

/** The PostgreSQL channel of Step.notify. */
export const STATUS_CHANNEL = 'agentauth_status';

export interface Migration {
  version: string;
  statements: string[];
  /**
   * Run after `statements` on PostgreSQL only: what SQLite has no syntax for and no need of
   * (it does not enforce varchar lengths, so widening a column is PostgreSQL's business alone).
   */
  postgresOnly?: string[];
}

/** What the steps of a write unit promise about each other. */
export interface UnitOptions {
  /**
   * No step reads or changes a row that another step changes, so each may see the database as
   * it was before the unit. PostgreSQL then runs the unit as one statement (data-modifying WITH
   * clauses): one round trip, where BEGIN, one per step and COMMIT would be several.
   */
  independent?: boolean;
}

export interface Driver {
  readonly engine: 'sqlite' | 'postgres';
  one<T>(sql: string, params?: Params): Promise<T | undefined>;
  all<T>(sql: string, params?: Params): Promise<T[]>;
  /**
   * The first row as its values in select order, for the wide joined reads: naming each column
   * of a row costs about as much as reading it (a 42-column row: 26 µs as an object, 13 µs as
   * values, measured with better-sqlite3).
   */
  values(sql: string, params?: Params): Promise<readonly unknown[] | undefined>;
  /**
   * Runs the steps in one transaction and resolves after the commit with the number of rows
   * each step changed, or with null when a guarded step changed none (nothing is kept).
   */
  write(steps: Step[], options?: UnitOptions): Promise<number[] | null>;
  migrate(migrations: Migration[]): Promise<void>;
  createLimiter(options: LimiterOptions): Promise<Limiter>;
  /** Delivers the payloads of Step.notify to `listener` until the returned function is called. */
  listen(listener: ChangeListener): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

// ---------------------------------------------------------------------------------------------
// SQLite: synchronous better-sqlite3, durable commits, group commit

interface QueuedUnit {
  steps: Step[];
  resolve(changes: number[] | null): void;
  reject(error: unknown): void;
  /** When it stops waiting for a lock held by another connection (epoch ms); 0 until it meets one. */
  deadline: number;
}

/** How long a unit or a read waits for a lock held by another connection before it fails with SQLITE_BUSY (503). */
const LOCK_WAIT_MS = 5000;
/** The first and the longest pause between two attempts to take such a lock. */
const RETRY_FIRST_MS = 1;
const RETRY_MAX_MS = 32;

/** SQLITE_BUSY and its extended codes: another connection holds a lock this one needs. */
function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}

export interface SqliteDriverOptions {
  /** SQLITE_SYNCHRONOUS: 'full' (the default) or the operator's opt-in 'normal'. */
  synchronous?: 'full' | 'normal';
  /** How the WAL file is synced (fs.fdatasync; tests pass one they control). */
  syncFile?: SyncFile;
  /** How long to wait for a lock held by another connection (5000 ms; tests pass less). */
  lockWaitMs?: number;
}

/** WAL pages between automatic checkpoints (SQLite's default is 1,000). */
const WAL_CHECKPOINT_PAGES = 4000;

export class SqliteDriver implements Driver {
  readonly engine = 'sqlite';
  private readonly statements = new Map<string, Database.Statement>();
  private readonly rawStatements = new Map<string, Database.Statement>();
  private readonly listeners = new Set<ChangeListener>();
  private queue: QueuedUnit[] = [];
  private flushScheduled = false;
  /** Syncs commits to disk off the event loop; absent for :memory: and for the opt-in 'normal'. */
  private readonly wal: WalSync | undefined;
  private readsOpen = false;
  private readonly lockWaitMs: number;
  /** While the queued units wait for a lock held by another connection: the next pause. */
  private retryPause = RETRY_FIRST_MS;
  private waitingForLock = false;

  constructor(
    private readonly db: Database.Database,
    options: SqliteDriverOptions = {},
  ) {
    // 'full': a commit is on disk before its answer, so a 200 survives kill -9 and power loss
    // (docs/design.md §9). SQLite's own FULL would fsync inside COMMIT, on the event loop; the WAL
    // is synced by WalSync in the thread pool instead, and every answer waits for it. 'normal',
    // which an operator may choose, skips that fsync: a 200 survives kill -9, not a power loss.
    db.pragma('journal_mode = WAL');
    const durable = options.synchronous !== 'normal';
    this.wal = durable && !db.memory ? new WalSync(`${db.name}-wal`, options.syncFile) : undefined;
    db.pragma(`synchronous = ${durable && !this.wal ? 'FULL' : 'NORMAL'}`);
    // A checkpoint copies every page the WAL holds into the database, once per page however many
    // commits changed it: rarer checkpoints copy less per write. 4,000 pages (16 MB of WAL, which
    // SQLite then reuses rather than grows) instead of SQLite's 1,000 took the CPU of a refresh's
    // write from 131 to 116 µs (a replay of refresh units on this machine's disk).
    db.pragma(`wal_autocheckpoint = ${WAL_CHECKPOINT_PAGES}`);
    // A lock held by another connection (a sqlite3 shell, a backup, a second process) is never
    // waited for inside SQLite, whose busy handler sleeps on the event loop: a statement that
    // meets one fails at once with SQLITE_BUSY, and the driver tries again on a timer
    // (retryLater, readLater) while the process serves everything else (docs/design.md §10). Only
    // migrate, at start-up, waits inside SQLite.
    this.lockWaitMs = options.lockWaitMs ?? LOCK_WAIT_MS;
    db.pragma('busy_timeout = 0');
  }

  /** The prepared statement, kept for the life of the connection; `raw` ones answer rows as arrays of values. */
  private statement(sql: string, raw = false): Database.Statement {
    const cache = raw ? this.rawStatements : this.statements;
    let statement = cache.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      if (raw) statement.raw(true);
      cache.set(sql, statement);
    }
    return statement;
  }

  one<T>(sql: string, params: Params = []): Promise<T | undefined> {
    return this.read(() => this.statement(sql).get(...params) as T | undefined);
  }

  all<T>(sql: string, params: Params = []): Promise<T[]> {
    return this.read(() => this.statement(sql).all(...params) as T[]);
  }

  values(sql: string, params: Params = []): Promise<readonly unknown[] | undefined> {
    return this.read(() => this.statement(sql, true).get(...params) as unknown[] | undefined);
  }

  /** A read in the turn's read transaction, answered once what it may have seen is on disk. */
  private async read<T>(run: () => T): Promise<T> {
    let value: T;
    try {
      this.beginReads();
      value = run();
    } catch (error) {
      if (!isBusy(error)) throw error;
      return this.readLater(run, error);
    }
    if (this.wal?.pending) await this.wal.settled();
    return value;
  }

  /**
   * A read that met a lock held by another connection (rare in WAL mode, where readers do not
   * wait for writers: a connection recovering the WAL, or one holding the file exclusively) is
   * tried again on a timer, as a write is, until its deadline.
   */
  private async readLater<T>(read: () => T, error: unknown): Promise<T> {
    const deadline = Date.now() + this.lockWaitMs;
    for (let pause = RETRY_FIRST_MS; ; pause = Math.min(pause * 2, RETRY_MAX_MS)) {
      // Should SQLite have ended the turn's read transaction, endReads must not commit it.
      if (this.readsOpen && !this.db.inTransaction) this.readsOpen = false;
      const left = deadline - Date.now();
      if (left <= 0) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.min(pause, left)));
      let value: T;
      try {
        this.beginReads();
        value = read();
      } catch (retryError) {
        if (!isBusy(retryError)) throw retryError;
        error = retryError;
        continue;
      }
      if (this.wal?.pending) await this.wal.settled();
      return value;
    }
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

  // Every unit of a turn already shares one transaction and one commit: UnitOptions change nothing here.
  write(steps: Step[]): Promise<number[] | null> {
    return new Promise((resolve, reject) => {
      this.queue.push({ steps, resolve, reject, deadline: 0 });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        // Units queued by requests handled in this turn of the event loop join the same commit.
        setImmediate(() => this.flush());
      }
    });
  }

  /**
   * Runs every queued unit in one transaction, each in a savepoint of its own; one commit for
   * all. The queue is taken once committed: when another connection holds the lock (SQLITE_BUSY
   * from BEGIN IMMEDIATE, or from any later statement), the transaction is rolled back whole
   * and the units stay queued, in order, for retryLater.
   */
  private flush(): void {
    this.endReads();
    const syncFailure = this.wal?.failure;
    if (syncFailure) return this.failQueue(syncFailure);
    const batch = this.queue;
    const outcomes: Array<{ ok: true; value: number[] | null } | { ok: false; error: unknown }> = [];
    const notes: string[] = [];
    try {
      this.statement('BEGIN IMMEDIATE').run();
      for (const unit of batch) {
        this.statement('SAVEPOINT unit').run();
        try {
          const value = this.runUnit(unit.steps);
          if (value === null) this.statement('ROLLBACK TO unit').run();
          else unit.steps.forEach((step, i) => step.notify !== undefined && value[i]! > 0 && notes.push(step.notify));
          this.statement('RELEASE unit').run();
          outcomes.push({ ok: true, value });
        } catch (error) {
          if (isBusy(error)) throw error; // the whole batch waits and runs again
          this.statement('ROLLBACK TO unit').run();
          this.statement('RELEASE unit').run();
          outcomes.push({ ok: false, error });
        }
      }
      this.statement('COMMIT').run();
    } catch (error) {
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      if (isBusy(error)) return this.retryLater(error);
      return this.failQueue(error);
    }
    this.queue = [];
    this.flushScheduled = false;
    if (this.waitingForLock) this.lockFree();
    const answer = () => {
      batch.forEach((unit, i) => {
        const outcome = outcomes[i]!;
        if (outcome.ok) unit.resolve(outcome.value);
        else unit.reject(outcome.error);
      });
      // One file, one process: the listeners are all here, and hear of changes once on disk.
      for (const payload of notes) for (const listener of this.listeners) listener.changed(payload);
    };
    if (!this.wal) return answer();
    this.wal.committedNow().then(answer, (error: unknown) => {
      for (const unit of batch) unit.reject(error);
    });
  }

  /**
   * Another connection holds the lock. The queued units wait for it on a timer, the event loop
   * serving everything else meanwhile; units queued in the meantime join them (flushScheduled
   * stays set) and commit with them. Each unit waits at most lockWaitMs from the first attempt
   * that found the lock taken, then fails with SQLITE_BUSY (answered 503); the units wait in
   * the order they came, so they time out from the front of the queue.
   */
  private retryLater(error: unknown): void {
    const now = Date.now();
    let expired = 0;
    while (expired < this.queue.length && this.queue[expired]!.deadline !== 0 && this.queue[expired]!.deadline <= now) expired++;
    const failed = this.queue.splice(0, expired);
    for (const unit of this.queue) if (unit.deadline === 0) unit.deadline = now + this.lockWaitMs;
    if (this.queue.length === 0) {
      this.flushScheduled = false;
      this.lockFree();
    } else {
      this.waitingForLock = true;
      const pause = Math.min(this.retryPause, this.queue[0]!.deadline - now);
      this.retryPause = Math.min(this.retryPause * 2, RETRY_MAX_MS);
      setTimeout(() => this.flush(), pause);
    }
    for (const unit of failed) unit.reject(error);
  }

  private lockFree(): void {
    this.waitingForLock = false;
    this.retryPause = RETRY_FIRST_MS;
  }

  /** Fails every queued unit with this error. */
  private failQueue(error: unknown): void {
    const batch = this.queue;
    this.queue = [];
    this.flushScheduled = false;
    if (this.waitingForLock) this.lockFree();
    for (const unit of batch) unit.reject(error);
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
    // At start-up, before anything is served, SQLite's own busy wait is harmless: a second
    // process migrating the same file waits here for the first.
    this.db.pragma(`busy_timeout = ${this.lockWaitMs}`);
    try {
      this.migrateNow(migrations);
    } finally {
      this.db.pragma('busy_timeout = 0');
    }
    this.statements.clear();
  }

  private migrateNow(migrations: Migration[]): void {
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
  }

  async createLimiter(options: LimiterOptions): Promise<Limiter> {
    // One SQLite file serves one process, so its counters can live in that process.
    return new RateLimiterMemory(options);
  }

  async listen(listener: ChangeListener): Promise<() => Promise<void>> {
    this.listeners.add(listener);
    return async () => {
      this.listeners.delete(listener);
    };
  }

  async close(): Promise<void> {
    // Let queued units commit before the file closes (or, while another connection holds the
    // lock, wait for it until their deadline).
    while (this.queue.length > 0) await new Promise<void>((resolve) => (this.waitingForLock ? setTimeout(resolve, RETRY_MAX_MS) : setImmediate(resolve)));
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

/** A step's notification, as a RETURNING item: sent for each row the step changes (Step.notify). */
const NOTIFY = `pg_notify('${STATUS_CHANNEL}', ?)`;
/** A step's parameters, with its notification's payload last when it has one (NOTIFY's placeholder). */
const withPayload = (step: Step): Params => (step.notify === undefined ? step.params : [...step.params, step.notify]);

/** The SQLSTATE of agentauth_void_unit(): a guarded step of a one-statement unit changed no row. */
const VOID_UNIT = 'AA001';

export class PostgresDriver implements Driver {
  readonly engine = 'postgres';
  private readonly names = new Map<string, { name: string; text: string }>();

  constructor(
    private readonly pool: pg.Pool,
    private readonly connect: () => pg.Client,
  ) {}

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
    return new PostgresDriver(pool, () => new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 5000 }));
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

  /** A prepared statement's result; with `rowMode` 'array', rows are arrays of values (Driver.values). */
  private query(client: pg.Pool | pg.PoolClient, sql: string, params: Params, rowMode?: 'array') {
    const config = { ...this.prepared(sql), values: params as unknown[] };
    return rowMode ? client.query({ ...config, rowMode }) : client.query(config);
  }

  async one<T>(sql: string, params: Params = []): Promise<T | undefined> {
    return (await this.query(this.pool, sql, params)).rows[0] as T | undefined;
  }

  async all<T>(sql: string, params: Params = []): Promise<T[]> {
    return (await this.query(this.pool, sql, params)).rows as T[];
  }

  async values(sql: string, params: Params = []): Promise<readonly unknown[] | undefined> {
    return (await this.query(this.pool, sql, params, 'array')).rows[0] as readonly unknown[] | undefined;
  }

  /**
   * A step's statement, with its notification in the same statement: NOTIFY is sent for each
   * row it changes (PostgreSQL folds repeats within a transaction) and delivered at commit.
   */
  private run(client: pg.Pool | pg.PoolClient, step: Step) {
    return step.notify === undefined ? this.query(client, step.sql, step.params) : this.query(client, `${step.sql} RETURNING ${NOTIFY}`, withPayload(step));
  }

  async write(steps: Step[], options: UnitOptions = {}): Promise<number[] | null> {
    if (steps.length === 1) {
      const changed = (await this.run(this.pool, steps[0]!)).rowCount ?? 0;
      return steps[0]!.guard && changed === 0 ? null : [changed];
    }
    if (options.independent) return this.writeAsOneStatement(steps);
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      const changes: number[] = [];
      for (const step of steps) {
        const changed = (await this.run(client, step)).rowCount ?? 0;
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

  /**
   * An independent unit as one statement, atomic by itself: each step a data-modifying WITH
   * clause (all run to completion, on one snapshot), and the rows each changed counted by the
   * outer SELECT. A guarded step that changed no row makes the statement fail with VOID_UNIT
   * (agentauth_void_unit(), migration 0007), which undoes the other steps and their NOTIFY.
   */
  private async writeAsOneStatement(steps: Step[]): Promise<number[] | null> {
    const clauses: string[] = [];
    const params: unknown[] = [];
    steps.forEach((step, i) => {
      clauses.push(`s${i} AS (${step.sql} RETURNING ${step.notify === undefined ? '1' : NOTIFY})`);
      params.push(...withPayload(step));
    });
    const counts = steps.map((_, i) => `(SELECT count(*) FROM s${i}) AS c${i}`);
    const guards = steps.flatMap((step, i) => (step.guard ? [`NOT EXISTS (SELECT 1 FROM s${i})`] : []));
    if (guards.length > 0) counts.push(`CASE WHEN ${guards.join(' OR ')} THEN agentauth_void_unit() END AS void`);
    try {
      const row = (await this.query(this.pool, `WITH ${clauses.join(', ')} SELECT ${counts.join(', ')}`, params)).rows[0] as Record<string, number>;
      return steps.map((_, i) => row[`c${i}`]!);
    } catch (error) {
      if ((error as { code?: unknown }).code === VOID_UNIT) return null;
      throw error;
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
        for (const statement of [...migration.statements, ...(migration.postgresOnly ?? [])]) await client.query(statement);
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

  /**
   * One dedicated connection per node LISTENs (not from the pool: a pooled connection would be
   * handed to queries, and its LISTEN lost). When it breaks it is opened again, with a growing
   * pause, and the listener is told to re-read what it watches.
   */
  async listen(listener: ChangeListener): Promise<() => Promise<void>> {
    let stopped = false;
    let client: pg.Client | undefined;
    const attach = async (): Promise<void> => {
      const candidate = this.connect();
      candidate.on('error', () => undefined); // a broken connection also ends: 'end' below reopens it
      candidate.on('notification', (message) => {
        if (message.channel === STATUS_CHANNEL && message.payload !== undefined) listener.changed(message.payload);
      });
      try {
        await candidate.connect();
        await candidate.query(`LISTEN ${STATUS_CHANNEL}`);
      } catch (error) {
        await candidate.end().catch(() => undefined);
        throw error;
      }
      client = candidate;
      candidate.once('end', () => {
        client = undefined;
        if (!stopped) void reattach();
      });
    };
    const reattach = async (): Promise<void> => {
      for (let pause = 100; !stopped; pause = Math.min(pause * 2, 5000)) {
        await new Promise((resolve) => setTimeout(resolve, pause).unref());
        if (stopped) return;
        try {
          await attach();
          listener.resumed();
          return;
        } catch {
          // the database is still away: try again later
        }
      }
    };
    // The first attempt's failure is the caller's (it answers 503); later ones retry by themselves.
    await attach();
    return async () => {
      stopped = true;
      await client?.end().catch(() => undefined);
    };
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
