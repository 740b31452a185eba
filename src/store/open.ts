/** Opens the store named by DATABASE_URL. */
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { type Database as Schema, SqlStore } from './sql-store.ts';
import type { Store } from './types.ts';

export interface StoreOptions {
  poolSize?: number;
}

/** The file behind a `sqlite:` URL (`sqlite:./data/x.db`, `sqlite:///abs/x.db`, `sqlite::memory:`). */
export function sqlitePath(databaseUrl: string): string {
  const rest = databaseUrl.slice('sqlite:'.length);
  if (rest === ':memory:') return rest;
  return resolve(rest.startsWith('//') ? rest.slice(2) : rest);
}

export async function openStore(databaseUrl: string, _options: StoreOptions = {}): Promise<Store> {
  if (databaseUrl.startsWith('sqlite:')) return openSqlite(sqlitePath(databaseUrl));
  throw new Error(`PostgreSQL is not supported yet (DATABASE_URL=${redactUrl(databaseUrl)})`);
}

function openSqlite(path: string): Store {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const database = new Database(path);
  // WAL with synchronous=FULL: a commit is on disk before the statement returns, so a 200
  // survives kill -9 and power loss (DESIGN.md §9).
  database.pragma('journal_mode = WAL');
  database.pragma('synchronous = FULL');
  database.pragma('busy_timeout = 5000');
  return new SqlStore('sqlite', new Kysely<Schema>({ dialect: new SqliteDialect({ database }) }));
}

/** A database URL with its password removed, for messages and logs. */
export function redactUrl(url: string): string {
  return url.replace(/\/\/([^:/@]+):[^@]*@/, '//$1:***@');
}
