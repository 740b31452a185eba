/**
 * `agentauth database check`: whether the database DATABASE_URL names can serve this build, and
 * exactly what is missing if not: the connection, the privileges, the migrations. It reads and
 * never changes anything (no file is created, no migration applied), and says each problem as
 * start-up would (./diagnosis.ts).
 */
import { accessSync, constants, existsSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import type pg from 'pg';
import {
  type DatabaseProblem,
  explainPostgresError,
  explainSqliteError,
  noDatabase,
  sqliteFileState,
  postgresTarget,
  sqlIdentifier,
  tableGrants,
} from './diagnosis.ts';
import { migrations } from './migrations.ts';
import { databaseName, sqlitePath } from './open.ts';

/** One of the three things checked, in the order they are. */
export type CheckName = 'connection' | 'privileges' | 'migrations';

/** What one check found: `ok`, in words, and when not, the remedy. */
export interface CheckResult {
  name: CheckName;
  ok: boolean;
  /** What was found, in plain words (the problem when not ok). */
  message: string;
  /** What to do, with the SQL or command to run (when not ok). */
  remedy?: string;
}

/** Which of this build's migrations the database has. */
export interface MigrationState {
  applied: string[];
  /** This build's migrations the database does not have yet (serve and migrate apply them). */
  pending: string[];
  /** Migrations the database has that this build does not know: it is newer than this build. */
  unknown: string[];
}

/** The whole report: ok when nothing is missing. */
export interface DatabaseCheck {
  /** The database checked: a SQLite file's path, or the URL without its password. */
  database: string;
  engine: 'sqlite' | 'postgres';
  ok: boolean;
  checks: CheckResult[];
  /** Undefined when they could not be read (no connection, no file). */
  migrations?: MigrationState;
}

/** The migrations state of a database that has applied `applied`. */
function migrationState(applied: string[]): MigrationState {
  const known = new Set(migrations.map((migration) => migration.version));
  const have = new Set(applied);
  return {
    applied: migrations.map((migration) => migration.version).filter((version) => have.has(version)),
    pending: migrations.map((migration) => migration.version).filter((version) => !have.has(version)),
    unknown: applied.filter((version) => !known.has(version)).sort(),
  };
}

/** The migrations check: pending ones are fine when `canApply` (start-up applies them); unknown ones never. */
function migrationsCheck(state: MigrationState, canApply: DatabaseProblem | null): CheckResult {
  if (state.unknown.length > 0)
    return {
      name: 'migrations',
      ok: false,
      message: `The database is newer than this build of agentauth: it has migration${state.unknown.length === 1 ? '' : 's'} ${state.unknown.join(', ')}, which this build does not know.`,
      remedy:
        'Run the agentauth version that migrated it (or a later one) against this database; going back to an older version is not supported.',
    };
  const applied = `${state.applied.length} of ${migrations.length} applied`;
  if (state.pending.length === 0) return { name: 'migrations', ok: true, message: `${applied}, none pending.` };
  const many = state.pending.length > 3;
  const pending = `${applied}; ${state.pending.length} pending (${many ? `${state.pending[0]} … ${state.pending.at(-1)}` : state.pending.join(', ')})`;
  if (canApply)
    return { name: 'migrations', ok: false, message: `${pending}. ${canApply.problem}`, remedy: canApply.remedy };
  return {
    name: 'migrations',
    ok: true,
    message: `${pending}. \`agentauth migrate\` or the server's start applies them.`,
  };
}

/** The report of checks, ok when all are. */
function report(
  databaseUrl: string,
  engine: 'sqlite' | 'postgres',
  checks: CheckResult[],
  state?: MigrationState,
): DatabaseCheck {
  return {
    database: databaseName(databaseUrl),
    engine,
    ok: checks.every((check) => check.ok),
    checks,
    ...(state ? { migrations: state } : {}),
  };
}

/** A check that failed with an error `explain` may know. */
function failed(name: CheckName, error: unknown, explained: DatabaseProblem | undefined): CheckResult {
  return explained
    ? { name, ok: false, message: explained.problem, remedy: explained.remedy }
    : { name, ok: false, message: error instanceof Error ? error.message : String(error) };
}

/**
 * Checks the database `databaseUrl` names, changing nothing.
 *
 * @example
 * const result = await checkDatabase('postgres://agentauth:pw@db.internal/agentauth');
 * if (!result.ok) for (const check of result.checks) console.log(check.message, check.remedy);
 */
export function checkDatabase(databaseUrl: string): Promise<DatabaseCheck> {
  return databaseUrl.startsWith('sqlite:') ? checkSqlite(databaseUrl) : checkPostgres(databaseUrl);
}

async function checkSqlite(databaseUrl: string): Promise<DatabaseCheck> {
  const path = sqlitePath(databaseUrl);
  if (path === ':memory:')
    return report(databaseUrl, 'sqlite', [
      { name: 'connection', ok: true, message: 'An in-memory database: made at each start, gone at each stop.' },
    ]);
  const directory = dirname(path);
  const file = sqliteFileState(path);
  if (file === 'denied') {
    const denied = explainSqliteError(Object.assign(new Error('not readable'), { code: 'EACCES' }), databaseUrl)!;
    return report(databaseUrl, 'sqlite', [
      { name: 'connection', ok: false, message: denied.problem, remedy: denied.remedy },
    ]);
  }
  if (file === 'missing') {
    const missing = noDatabase(databaseUrl);
    const unwritable = existsSync(directory) && !canWrite(directory);
    return report(databaseUrl, 'sqlite', [
      {
        name: 'connection',
        ok: false,
        message: missing.problem,
        remedy: `${missing.remedy}${unwritable ? ` This user may not write ${directory}, where it would be made.` : ''}`,
      },
    ]);
  }
  let db: Database.Database;
  let applied: string[];
  try {
    db = new Database(path, { readonly: true, fileMustExist: true });
  } catch (error) {
    return report(databaseUrl, 'sqlite', [failed('connection', error, explainSqliteError(error, databaseUrl))]);
  }
  try {
    const history = db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'")
      .get();
    applied = history
      ? (db.prepare('SELECT version FROM schema_migrations').all() as Array<{ version: string }>).map(
          (row) => row.version,
        )
      : [];
  } catch (error) {
    return report(databaseUrl, 'sqlite', [failed('connection', error, explainSqliteError(error, databaseUrl))]);
  } finally {
    db.close();
  }
  const checks: CheckResult[] = [{ name: 'connection', ok: true, message: `SQLite file ${path}.` }];
  // SQLite writes beside the file too (its -wal and -shm files), so both must be writable.
  const unwritable = [directory, path].filter((place) => !canWrite(place));
  const denied =
    unwritable.length === 0
      ? null
      : explainSqliteError(Object.assign(new Error('not writable'), { code: 'EACCES' }), databaseUrl)!;
  checks.push(
    denied
      ? {
          name: 'privileges',
          ok: false,
          message: `${unwritable.join(' and ')} cannot be written by this user.`,
          remedy: denied.remedy,
        }
      : { name: 'privileges', ok: true, message: 'The file and its directory can be read and written by this user.' },
  );
  const state = migrationState(applied);
  checks.push(migrationsCheck(state, denied));
  return report(databaseUrl, 'sqlite', checks, state);
}

function canWrite(path: string): boolean {
  try {
    accessSync(path, constants.W_OK | constants.R_OK);
    return true;
  } catch {
    return false;
  }
}

/** A table of the schema, and what the connected role may do with it. */
interface TableRow {
  name: string;
  owner: string;
  owned: boolean;
  readable: boolean;
  writable: boolean;
}

async function checkPostgres(databaseUrl: string): Promise<DatabaseCheck> {
  const { default: pgModule } = await import('pg');
  const client: pg.Client = new pgModule.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 5000 });
  client.on('error', () => undefined); // a connection that breaks fails the query in flight, which says so
  try {
    await client.connect();
  } catch (error) {
    await client.end().catch(() => undefined);
    return report(databaseUrl, 'postgres', [failed('connection', error, explainPostgresError(error, databaseUrl))]);
  }
  try {
    const who = (
      await client.query(
        `SELECT current_user AS role, current_database() AS database, current_schema() AS schema,
                current_setting('server_version') AS version,
                has_schema_privilege(current_schema(), 'USAGE') AS usage,
                has_schema_privilege(current_schema(), 'CREATE') AS create`,
      )
    ).rows[0] as {
      role: string;
      database: string;
      schema: string | null;
      version: string;
      usage: boolean | null;
      create: boolean | null;
    };
    const target = postgresTarget(databaseUrl);
    const checks: CheckResult[] = [
      {
        name: 'connection',
        ok: true,
        message: `PostgreSQL ${who.version} at ${target.address}, database ${who.database}, role ${who.role}.`,
      },
    ];
    const role = sqlIdentifier(who.role);
    if (who.schema === null) {
      checks.push({
        name: 'privileges',
        ok: false,
        message: `Role ${who.role} can use no schema of its search_path in database ${who.database}.`,
        remedy: `As the database's owner or a superuser: GRANT USAGE, CREATE ON SCHEMA public TO ${role}; (or set the role's search_path to a schema it may use)`,
      });
      return report(databaseUrl, 'postgres', checks);
    }
    const schema = sqlIdentifier(who.schema);
    const tables = (
      await client.query(
        `SELECT c.relname AS name, pg_get_userbyid(c.relowner) AS owner,
                pg_has_role(c.relowner, 'MEMBER') AS owned,
                has_table_privilege(c.oid, 'SELECT') AS readable,
                has_table_privilege(c.oid, 'INSERT') AND has_table_privilege(c.oid, 'UPDATE')
                  AND has_table_privilege(c.oid, 'DELETE') AS writable
           FROM pg_class c
          WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p')
          ORDER BY c.relname`,
      )
    ).rows as TableRow[];
    const history = tables.find((table) => table.name === 'schema_migrations');
    const notReadWrite = tables.filter((table) => !(table.readable && table.writable)).map((table) => table.name);
    const owners = [...new Set(tables.filter((table) => !table.owned).map((table) => table.owner))];

    // Privileges on what exists; creating tables matters only while migrations are pending.
    if (notReadWrite.length > 0)
      checks.push({
        name: 'privileges',
        ok: false,
        message: `Role ${who.role} may not read and write ${notReadWrite.length === tables.length ? 'the tables' : `${notReadWrite.length} of the ${tables.length} tables`} of schema ${who.schema} (${notReadWrite.slice(0, 5).join(', ')}${notReadWrite.length > 5 ? ', …' : ''}).`,
        remedy: `As the tables' owner (${owners.join(', ') || 'the role that ran the migrations'}): ${tableGrants(schema, role)}`,
      });
    else
      checks.push({
        name: 'privileges',
        ok: true,
        message: `Role ${who.role} may ${tables.length > 0 ? `read and write every table of schema ${who.schema}` : `use schema ${who.schema}`}${who.create ? ` and create tables in it` : `, not create tables in it (needed only to apply migrations)`}.`,
      });

    let applied: string[] = [];
    if (history) {
      if (!history.readable) return report(databaseUrl, 'postgres', checks);
      applied = ((await client.query('SELECT version FROM schema_migrations')).rows as Array<{ version: string }>).map(
        (row) => row.version,
      );
    }
    const state = migrationState(applied);
    let cannotApply: DatabaseProblem | null = null;
    if (state.pending.length > 0 && !(who.usage && who.create))
      cannotApply = explainPostgresError(
        Object.assign(new Error(`permission denied for schema ${who.schema}`), { code: '42501' }),
        databaseUrl,
      )!;
    else if (state.pending.length > 0 && state.applied.length > 0 && owners.length > 0)
      cannotApply = {
        problem: `Migrations change existing tables, which only their owner (${owners.join(', ')}) may change, and role ${who.role} does not own them.`,
        remedy: `Run \`agentauth migrate\` with DATABASE_URL naming ${owners.join(' or ')}; this role can then serve.`,
      };
    checks.push(migrationsCheck(state, cannotApply));
    return report(databaseUrl, 'postgres', checks, state);
  } catch (error) {
    return report(databaseUrl, 'postgres', [failed('connection', error, explainPostgresError(error, databaseUrl))]);
  } finally {
    await client.end().catch(() => undefined);
  }
}
