/**
 * The SQLite driver: synchronous better-sqlite3 on one file, durable commits, and group commit
 * (the units of concurrent requests commit together, one fsync for the batch).
 */
import type Database from 'better-sqlite3';
import { RateLimiterMemory } from 'rate-limiter-flexible';
import {
  type ChangeListener,
  type Channel,
  type Driver,
  type Migration,
  type Params,
  STATUS_CHANNEL,
  type Step,
} from './driver.ts';
import type { Limiter, LimiterOptions } from './limits.ts';
import { type SyncFile, WalSync } from './wal-sync.ts';

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
  private readonly listeners = new Set<{ listener: ChangeListener; channel: Channel }>();
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
    const notes: Array<{ channel: Channel; payload: string }> = [];
    try {
      this.statement('BEGIN IMMEDIATE').run();
      for (const unit of batch) {
        this.statement('SAVEPOINT unit').run();
        try {
          const value = this.runUnit(unit.steps);
          if (value === null) this.statement('ROLLBACK TO unit').run();
          else
            for (const [i, step] of unit.steps.entries())
              if (step.notify !== undefined && value[i]! > 0)
                notes.push({ channel: step.channel ?? STATUS_CHANNEL, payload: step.notify });
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
      for (const note of notes)
        for (const { listener, channel } of this.listeners)
          if (channel === note.channel) listener.changed(note.payload);
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
    while (expired < this.queue.length && this.queue[expired]!.deadline !== 0 && this.queue[expired]!.deadline <= now)
      expired++;
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
    this.db.exec(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version varchar(100) PRIMARY KEY, applied_at bigint NOT NULL)',
    );
    adoptKyselyHistory(
      (sql) => this.db.prepare(sql).all() as Array<{ name: string }>,
      (version) =>
        this.db
          .prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?) ON CONFLICT DO NOTHING')
          .run(version, Date.now()),
    );
    // BEGIN IMMEDIATE takes the write lock: two processes migrating one file do it one after the other.
    this.db
      .transaction(() => {
        const applied = new Set(
          (this.db.prepare('SELECT version FROM schema_migrations').all() as Array<{ version: string }>).map(
            (row) => row.version,
          ),
        );
        for (const migration of migrations) {
          if (applied.has(migration.version)) continue;
          for (const statement of migration.statements) this.db.exec(statement);
          this.db
            .prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)')
            .run(migration.version, Date.now());
        }
      })
      .immediate();
  }

  async createLimiter(options: LimiterOptions): Promise<Limiter> {
    // One SQLite file serves one process, so its counters can live in that process.
    return new RateLimiterMemory(options);
  }

  async listen(listener: ChangeListener, channel: Channel = STATUS_CHANNEL): Promise<() => Promise<void>> {
    const entry = { listener, channel };
    this.listeners.add(entry);
    return async () => {
      this.listeners.delete(entry);
    };
  }

  async close(): Promise<void> {
    // Let queued units commit before the file closes (or, while another connection holds the
    // lock, wait for it until their deadline).
    while (this.queue.length > 0)
      await new Promise<void>((resolve) =>
        this.waitingForLock ? setTimeout(resolve, RETRY_MAX_MS) : setImmediate(resolve),
      );
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
