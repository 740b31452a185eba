/** Opens the store named by DATABASE_URL: SQLite (one node) or PostgreSQL (many nodes). */
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { PostgresDriver, SqliteDriver } from './driver.ts';
import { SqlStore } from './sql-store.ts';
import type { Store } from './types.ts';

export interface StoreOptions {
  /** Connections per node (PostgreSQL only; DATABASE_POOL_SIZE). */
  poolSize?: number;
  /** Called with errors of broken connections, which must not crash the process. */
  onBackgroundError?: (error: Error) => void;
  /** SQLite only: SQLITE_SYNCHRONOUS (default 'full'). */
  sqliteSynchronous?: 'full' | 'normal';
}

/** The file behind a `sqlite:` URL (`sqlite:./data/x.db`, `sqlite:///abs/x.db`, `sqlite::memory:`). */
export function sqlitePath(databaseUrl: string): string {
  const rest = databaseUrl.slice('sqlite:'.length);
  if (rest === ':memory:') return rest;
  return resolve(rest.startsWith('//') ? rest.slice(2) : rest);
}

export async function openStore(databaseUrl: string, options: StoreOptions = {}): Promise<Store> {
  if (databaseUrl.startsWith('sqlite:')) {
    const path = sqlitePath(databaseUrl);
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    return new SqlStore(new SqliteDriver(new Database(path), { synchronous: options.sqliteSynchronous }));
  }
  return new SqlStore(await PostgresDriver.open(databaseUrl, options));
}

/** A database URL with its password removed, for messages and logs. */
export function redactUrl(url: string): string {
  return url.replace(/\/\/([^:/@]+):[^@]*@/, '//$1:***@');
}
