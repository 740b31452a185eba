/** Opens the store named by DATABASE_URL: SQLite (one node) or PostgreSQL (many nodes). */
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import { RateLimiterMemory, RateLimiterPostgres } from 'rate-limiter-flexible';
import { type Database as Schema, SqlStore } from './sql-store.ts';
import type { Limiter, LimiterOptions, Store } from './types.ts';

export interface StoreOptions {
  /** Connections per node (PostgreSQL only; DATABASE_POOL_SIZE). */
  poolSize?: number;
  /** Called with errors of idle connections, which must not crash the process. */
  onBackgroundError?: (error: Error) => void;
}

/** The file behind a `sqlite:` URL (`sqlite:./data/x.db`, `sqlite:///abs/x.db`, `sqlite::memory:`). */
export function sqlitePath(databaseUrl: string): string {
  const rest = databaseUrl.slice('sqlite:'.length);
  if (rest === ':memory:') return rest;
  return resolve(rest.startsWith('//') ? rest.slice(2) : rest);
}

export async function openStore(databaseUrl: string, options: StoreOptions = {}): Promise<Store> {
  if (databaseUrl.startsWith('sqlite:')) return openSqlite(sqlitePath(databaseUrl));
  return openPostgres(databaseUrl, options);
}

function openSqlite(path: string): Store {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const database = new Database(path);
  // WAL with synchronous=FULL: a commit is on disk before the statement returns, so a 200
  // survives kill -9 and power loss (DESIGN.md §9).
  database.pragma('journal_mode = WAL');
  database.pragma('synchronous = FULL');
  database.pragma('busy_timeout = 5000');
  return new SqlStore('sqlite', new Kysely<Schema>({ dialect: new SqliteDialect({ database }) }), {
    // One SQLite file serves one process, so its counters can live in that process.
    createLimiter: async (limiter) => new RateLimiterMemory(limiter),
  });
}

const INT8_OID = 20;

async function openPostgres(databaseUrl: string, options: StoreOptions): Promise<Store> {
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: options.poolSize ?? 10,
    connectionTimeoutMillis: 5000,
    idleTimeoutMillis: 30_000,
    statement_timeout: 10_000,
    // Times are epoch seconds in bigint columns; they fit a JavaScript number exactly.
    types: { getTypeParser: ((oid: number, format?: 'text' | 'binary') => (oid === INT8_OID ? Number : pg.types.getTypeParser(oid, format))) as typeof pg.types.getTypeParser },
  });
  // An idle connection that breaks (database restart, network) emits 'error' on the pool;
  // unhandled, it would end the process. The next query reconnects.
  pool.on('error', (error) => options.onBackgroundError?.(error));
  return new SqlStore('postgres', new Kysely<Schema>({ dialect: new PostgresDialect({ pool }) }), {
    createLimiter: (limiter) => postgresLimiter(pool, limiter),
  });
}

function postgresLimiter(pool: pg.Pool, options: LimiterOptions): Promise<Limiter> {
  return new Promise((resolveLimiter, reject) => {
    const limiter: RateLimiterPostgres = new RateLimiterPostgres(
      { ...options, storeClient: pool, storeType: 'pool', tableName: 'auth_failure_counters', clearExpiredByTimeout: true },
      (error?: Error) => (error ? reject(error) : resolveLimiter(limiter)),
    );
  });
}

/** A database URL with its password removed, for messages and logs. */
export function redactUrl(url: string): string {
  return url.replace(/\/\/([^:/@]+):[^@]*@/, '//$1:***@');
}
