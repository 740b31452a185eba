/** Opens the store named by DATABASE_URL: SQLite (one node) or PostgreSQL (many nodes). */
import { chmodSync, closeSync, fchmodSync, mkdirSync, openSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { DatabaseUnusable, noDatabase, sqliteFileState } from './diagnosis.ts';
import { PostgresDriver } from './postgres-driver.ts';
import { SqliteDriver } from './sqlite-driver.ts';
import { SqlStore } from './sql-store.ts';
import type { Store } from './types.ts';

export interface StoreOptions {
  /** Connections per node (PostgreSQL only; DATABASE_POOL_SIZE). */
  poolSize?: number;
  /** Called with errors of broken connections, which must not crash the process. */
  onBackgroundError?: (error: Error) => void;
  /** SQLite only: SQLITE_SYNCHRONOUS (default 'full'). */
  sqliteSynchronous?: 'full' | 'normal';
  /** SQLite only: told about a data directory or database file that group or others can read or write. */
  warn?: (message: string) => void;
  /**
   * Whether a missing database is made (serve, migrate; the default): false refuses one that is not
   * there (DatabaseUnusable), a SQLite file or a PostgreSQL database without agentauth's tables.
   */
  create?: boolean;
}

/** The file behind a `sqlite:` URL (`sqlite:./data/x.db`, `sqlite:///abs/x.db`, `sqlite::memory:`). */
export function sqlitePath(databaseUrl: string): string {
  const rest = databaseUrl.slice('sqlite:'.length);
  if (rest === ':memory:') return rest;
  return resolve(rest.startsWith('//') ? rest.slice(2) : rest);
}

/** Permission bits that let group or others read or write. */
const OPEN_TO_OTHERS = 0o066;

/** Warns when group or others can read or write `path` (docs/design.md §10); never changes it. */
export function warnIfOpenToOthers(
  path: string,
  kind: 'directory' | 'file',
  warn: ((message: string) => void) | undefined,
): void {
  const mode = statSync(path).mode & 0o777;
  if (mode & OPEN_TO_OTHERS) {
    warn?.(
      `${path} is readable or writable by group or others (mode 0${mode.toString(8)}); it holds the database or its secret: chmod ${kind === 'directory' ? '700' : '600'} ${path}`,
    );
  }
}

/**
 * The directory of the SQLite database and the development secret: created 0700 (with any
 * missing parents); an existing one open to group or others is warned about.
 */
export function prepareDataDirectory(dir: string, warn?: (message: string) => void): void {
  if (mkdirSync(dir, { recursive: true, mode: 0o700 }) !== undefined) chmodSync(dir, 0o700);
  else warnIfOpenToOthers(dir, 'directory', warn);
}

/**
 * Creates the database file 0600 before SQLite opens it: SQLite creates its -wal and -shm
 * files with the database file's mode. An existing file open to others is warned about.
 */
function prepareDatabaseFile(path: string, warn?: (message: string) => void): void {
  let fd: number;
  try {
    fd = openSync(path, 'wx', 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    warnIfOpenToOthers(path, 'file', warn);
    return;
  }
  try {
    fchmodSync(fd, 0o600); // whatever the umask
  } finally {
    closeSync(fd);
  }
}

/**
 * The store DATABASE_URL names, opened (not yet migrated); with `create: false`, only one that is
 * there already.
 *
 * @example
 * const store = await openStore('sqlite:./data/agentauth.db', { create: false });
 */
export async function openStore(databaseUrl: string, options: StoreOptions = {}): Promise<Store> {
  const missing = () => new DatabaseUnusable(databaseName(databaseUrl), noDatabase(databaseUrl));
  if (databaseUrl.startsWith('sqlite:')) {
    const path = sqlitePath(databaseUrl);
    if (path !== ':memory:' && options.create === false) {
      const state = sqliteFileState(path);
      if (state === 'missing') throw missing();
      // Not allowed to look: opening it says so in words (EACCES).
      if (state === 'denied') statSync(path);
    }
    if (path !== ':memory:') {
      prepareDataDirectory(dirname(path), options.warn);
      prepareDatabaseFile(path, options.warn);
    }
    return new SqlStore(new SqliteDriver(new Database(path), { synchronous: options.sqliteSynchronous }));
  }
  const driver = await PostgresDriver.open(databaseUrl, options);
  if (options.create === false) {
    const history = await driver
      .one<{ present: boolean }>("SELECT to_regclass('schema_migrations') IS NOT NULL AS present")
      .catch(async (error: unknown) => {
        await driver.close();
        throw error;
      });
    if (!history?.present) {
      await driver.close();
      throw missing();
    }
  }
  return new SqlStore(driver);
}

/**
 * A database URL with its passwords removed, for messages and logs: the one after the user name
 * and those of the query (`password=`, `sslpassword=`, which pg reads too).
 *
 * @example
 * redactUrl('postgres://app:s3cret@db/agentauth?sslpassword=x'); // 'postgres://app:***@db/agentauth?sslpassword=***'
 */
export function redactUrl(url: string): string {
  return url.replace(/\/\/([^:/@]*):[^/]*@/, '//$1:***@').replace(/([?&](?:ssl)?password=)[^&#]*/gi, '$1***');
}

/**
 * The database a URL names, as a command says which one it used: a SQLite file's absolute path,
 * or the PostgreSQL URL without its passwords.
 *
 * @example
 * databaseName('sqlite:./data/agentauth.db'); // '/srv/agentauth/data/agentauth.db'
 */
export function databaseName(databaseUrl: string): string {
  return databaseUrl.startsWith('sqlite:') ? sqlitePath(databaseUrl) : redactUrl(databaseUrl);
}
