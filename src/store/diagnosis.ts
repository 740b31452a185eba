/**
 * What is wrong with a database, in the operator's words, and what to do about it: one place for
 * the wording that `agentauth database check` prints and start-up stops with (docs/guides/operator.md,
 * "PostgreSQL"). PostgreSQL's and SQLite's own messages name no remedy (`permission denied for
 * schema public`); these name the role, the database and the SQL or command to run.
 */
import { statSync } from 'node:fs';
import { userInfo } from 'node:os';
import { dirname } from 'node:path';
import { CERTIFICATE_NOT_TRUSTED, unreachedKindOf } from '../outbound/request.ts';
import { databaseName, sqlitePath } from './open.ts';

/** A problem with the database, as an operator reads it. */
export interface DatabaseProblem {
  /** What is wrong, in plain words, naming the role, database, host or file. */
  problem: string;
  /** What to do: a sentence, with the SQL or command to run. */
  remedy: string;
}

/** Where a PostgreSQL URL connects, and as whom: as pg reads it (query parameters and PG* variables too). */
export interface PostgresTarget {
  role: string;
  database: string;
  /** host:port, or the directory of the unix socket. */
  address: string;
  host: string;
}

/**
 * The role, database and address of a PostgreSQL URL, as pg resolves them (its defaults:
 * PGUSER or the system user, the role's name as database, localhost:5432).
 *
 * @example
 * postgresTarget('postgres://app:pw@db.internal/agentauth').role; // 'app'
 */
export function postgresTarget(databaseUrl: string): PostgresTarget {
  let url: URL;
  try {
    url = new URL(databaseUrl);
  } catch {
    return { role: '?', database: '?', address: '?', host: '?' };
  }
  const param = (name: string) => url.searchParams.get(name) || undefined;
  const role = decodeURIComponent(url.username) || param('user') || process.env.PGUSER || userInfo().username;
  const database = decodeURIComponent(url.pathname.slice(1)) || param('dbname') || process.env.PGDATABASE || role;
  const host = param('host') ?? (url.hostname || process.env.PGHOST || 'localhost');
  const port = param('port') ?? (url.port || process.env.PGPORT || '5432');
  return { role, database, host, address: host.startsWith('/') ? `${host} (port ${port})` : `${host}:${port}` };
}

/**
 * An identifier as SQL writes it: bare when PostgreSQL would read it back unchanged, else quoted.
 *
 * @example
 * sqlIdentifier('agentauth'); // 'agentauth'
 * sqlIdentifier('App-Role');  // '"App-Role"'
 */
export function sqlIdentifier(name: string): string {
  return /^[a-z_][a-z0-9_$]*$/.test(name) ? name : `"${name.replaceAll('"', '""')}"`;
}

/** What a pg or Node error carries besides its message. */
interface ErrorFields {
  code?: string;
  syscall?: string;
}

/**
 * PostgreSQL's error (connecting, or applying migrations) in the operator's words, with the SQL
 * that fixes it; undefined for an error this does not know.
 *
 * @example
 * explainPostgresError({ code: '3D000', message: 'database "x" does not exist' }, url);
 * // { problem: 'There is no database "x" on db.internal:5432.', remedy: 'As a superuser: CREATE DATABASE x OWNER app;' }
 */
export function explainPostgresError(error: unknown, databaseUrl: string): DatabaseProblem | undefined {
  if (!(error instanceof Error)) return undefined;
  const { code, syscall } = error as Error & ErrorFields;
  const message = error.message;
  const target = postgresTarget(databaseUrl);
  const role = sqlIdentifier(target.role);
  const database = sqlIdentifier(target.database);
  const on = `on ${target.address}`;
  const named = (pattern: RegExp) => pattern.exec(message)?.[1] ?? '?';

  if (code === 'ECONNREFUSED' || (code === 'ENOENT' && syscall === 'connect'))
    return {
      problem: `Nothing accepts PostgreSQL connections at ${target.address}.`,
      remedy:
        'Check that PostgreSQL is running and listens there (listen_addresses and port in postgresql.conf; a firewall between), and that DATABASE_URL names the right host and port.',
    };
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN')
    return {
      problem: `The host name ${target.host} cannot be resolved${code === 'EAI_AGAIN' ? ' (the name server did not answer)' : ''}.`,
      remedy:
        'Check the host in DATABASE_URL, and that this machine resolves it (DNS, /etc/hosts, the container network).',
    };
  if (
    code === 'ETIMEDOUT' ||
    code === 'EHOSTUNREACH' ||
    code === 'ENETUNREACH' ||
    /connection timeout|timeout expired/i.test(message)
  )
    return {
      problem: `PostgreSQL at ${target.address} did not answer in time (${code ?? 'timeout'}).`,
      remedy: 'Check that the host is up and that the network and firewalls let this machine reach its port.',
    };
  if (/does not support SSL/i.test(message))
    return {
      problem: `DATABASE_URL asks for TLS (sslmode), but PostgreSQL ${on} does not offer it.`,
      remedy:
        'Turn on TLS in PostgreSQL (ssl = on, with ssl_cert_file and ssl_key_file), or, on a network you trust, remove sslmode from DATABASE_URL.',
    };
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID')
    return {
      problem: `The TLS certificate of PostgreSQL ${on} is not for the name ${target.host}.`,
      remedy: 'Connect by a name the certificate lists (its subjectAltName), or issue a certificate for this name.',
    };
  if (code !== undefined && CERTIFICATE_NOT_TRUSTED.has(unreachedKindOf(code) ?? 'other'))
    return {
      problem: `The TLS certificate of PostgreSQL ${on} is not trusted (${code}).`,
      remedy:
        "Give Node the certificate authority that signed it: NODE_EXTRA_CA_CERTS=/path/to/ca.pem in the server's environment, or sslrootcert=/path/to/ca.pem in DATABASE_URL.",
    };
  switch (code) {
    case '28P01':
      return {
        problem: `PostgreSQL ${on} refused the password of role ${target.role}.`,
        remedy: `Check the password in DATABASE_URL (percent-encode @ : / ? # in it), or set a new one as a superuser: ALTER ROLE ${role} PASSWORD '…';`,
      };
    case '28000':
      if (/role .* does not exist/.test(message))
        return {
          problem: `There is no role ${target.role} ${on}.`,
          remedy: `As a superuser: CREATE ROLE ${role} LOGIN PASSWORD '…'; (or fix the user name in DATABASE_URL)`,
        };
      if (/no pg_hba\.conf entry/.test(message))
        return {
          problem: `PostgreSQL ${on} lets no connection of role ${target.role} to database ${target.database} in from this machine${/no encryption|SSL off/i.test(message) ? ' without TLS' : ''} (pg_hba.conf).`,
          remedy: `Add a line for it to pg_hba.conf, such as \`hostssl ${target.database} ${target.role} 10.0.0.0/8 scram-sha-256\` with this machine's network, then SELECT pg_reload_conf(); (or add sslmode=verify-full to DATABASE_URL if only TLS is let in).`,
        };
      return {
        problem: `PostgreSQL ${on} did not let role ${target.role} in (${message}).`,
        remedy: 'Check the user and password in DATABASE_URL and the lines of pg_hba.conf that apply.',
      };
    case '3D000':
      return {
        problem: `There is no database ${target.database} ${on}.`,
        remedy: `As a superuser: CREATE DATABASE ${database} OWNER ${role}; (or fix the database name in DATABASE_URL)`,
      };
    case '53300':
      return {
        problem: `PostgreSQL ${on} has no connection left (max_connections).`,
        remedy:
          'Lower DATABASE_POOL_SIZE (each node keeps that many, plus one to listen), or raise max_connections in postgresql.conf.',
      };
    case '57P03':
      return {
        problem: `PostgreSQL ${on} is starting up, shutting down or recovering.`,
        remedy: 'Wait until it accepts connections, then start again.',
      };
    case '42501': {
      if (/permission denied for database/.test(message))
        return {
          problem: `Role ${target.role} may not connect to database ${target.database}.`,
          remedy: `As the database's owner or a superuser: GRANT CONNECT ON DATABASE ${database} TO ${role};`,
        };
      if (/permission denied for schema/.test(message)) {
        const schema = sqlIdentifier(named(/schema "?([^"\s]+)"?/));
        return {
          problem: `Role ${target.role} may not create tables in schema ${schema} of database ${target.database}, and this database needs its tables made or changed (migrations).`,
          remedy: `Run \`agentauth migrate\` once as the role that owns the schema, or let this role do it, as the database's owner or a superuser: GRANT USAGE, CREATE ON SCHEMA ${schema} TO ${role}; (PostgreSQL 15 and later no longer let every role create tables in schema public.)`,
        };
      }
      if (/must be owner of/.test(message)) {
        const table = named(/must be owner of \w+ "?([^"\s]+)"?/);
        return {
          problem: `A migration changes table ${table}, which only its owner may change, and role ${target.role} does not own it.`,
          remedy: `Run \`agentauth migrate\` as the role that made the tables (their owner), or, as a superuser, give them to this role: ALTER TABLE ${sqlIdentifier(table)} OWNER TO ${role};`,
        };
      }
      if (/permission denied for (table|relation|sequence)/.test(message)) {
        const table = named(/permission denied for \w+ "?([^"\s]+)"?/);
        return {
          problem: `Role ${target.role} may not read or write table ${table} of database ${target.database}.`,
          remedy: `As the tables' owner: ${tableGrants('public', role)}`,
        };
      }
      return {
        problem: `Role ${target.role} lacks a privilege in database ${target.database} (${message}).`,
        remedy: 'See the operator guide’s PostgreSQL part for the grants agentauth needs.',
      };
    }
  }
  return undefined;
}

/**
 * The grants that let `role` read and write every table of `schema`, now and those a later
 * migration makes (run by the role that owns the tables).
 *
 * @example
 * tableGrants('public', 'agentauth'); // 'GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO agentauth; ALTER DEFAULT …'
 */
export function tableGrants(schema: string, role: string): string {
  return `GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ${schema} TO ${role}; ALTER DEFAULT PRIVILEGES IN SCHEMA ${schema} GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO ${role};`;
}

/**
 * SQLite's or the file system's error (opening the file, applying migrations) in the operator's
 * words; undefined for an error this does not know.
 *
 * @example
 * explainSqliteError(Object.assign(new Error('…'), { code: 'EACCES' }), 'sqlite:/srv/agentauth.db');
 */
export function explainSqliteError(error: unknown, databaseUrl: string): DatabaseProblem | undefined {
  if (!(error instanceof Error)) return undefined;
  const code = (error as Error & ErrorFields).code ?? '';
  const path = sqlitePath(databaseUrl);
  const user = userInfo().username;
  if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS' || code.startsWith('SQLITE_READONLY'))
    return {
      problem: `The SQLite database ${path} or its directory cannot be ${code === 'EROFS' ? 'written: the file system is read-only' : `read and written by this user (${user}): ${code}`}.`,
      remedy:
        code === 'EROFS'
          ? 'Put the database on a volume and set DATABASE_URL to it (sqlite:///var/lib/agentauth/agentauth.db).'
          : `Give the directory and the database's files to this user (chown ${user} ${dirname(path)} ${path}*; chmod 700 ${dirname(path)}), or set DATABASE_URL to a place it may write, such as a volume (sqlite:///var/lib/agentauth/agentauth.db).`,
    };
  if (code === 'SQLITE_CANTOPEN')
    return {
      problem: `SQLite cannot open ${path}.`,
      remedy: 'Check that its directory exists and that this user may read and write both the directory and the file.',
    };
  if (code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT')
    return {
      problem: `${path} is not a SQLite database, or it is damaged (${code}).`,
      remedy: 'Check that DATABASE_URL names the server’s database file; restore it from a backup if it is damaged.',
    };
  return undefined;
}

/**
 * Whether the SQLite file is there: 'denied' when this user may not even look (a directory of
 * another user's), which is not the same as missing.
 *
 * @example
 * sqliteFileState('/srv/agentauth/data/agentauth.db'); // 'present'
 */
export function sqliteFileState(path: string): 'present' | 'missing' | 'denied' {
  try {
    statSync(path);
    return 'present';
  } catch (error) {
    const code = (error as { code?: string }).code;
    return code === 'EACCES' || code === 'EPERM' ? 'denied' : 'missing';
  }
}

/**
 * What a command that never creates a database says when DATABASE_URL names none: a SQLite file
 * that is not there, or a PostgreSQL database without agentauth's tables.
 *
 * @example
 * noDatabase('sqlite:./data/agentauth.db').problem; // 'There is no agentauth database at /home/ada/data/agentauth.db …'
 */
export function noDatabase(databaseUrl: string): DatabaseProblem {
  if (databaseUrl.startsWith('sqlite:')) {
    const path = sqlitePath(databaseUrl);
    const relative = !databaseUrl.startsWith('sqlite:/');
    return {
      problem: `There is no agentauth database at ${path}${relative ? ` (DATABASE_URL ${databaseUrl} is relative to the directory the command runs in, ${process.cwd()})` : ''}.`,
      remedy:
        "Run the command where the server runs, or set DATABASE_URL to the server's database with an absolute path (sqlite:///srv/agentauth/data/agentauth.db); to start a new database there, run `agentauth migrate` first.",
    };
  }
  const target = postgresTarget(databaseUrl);
  return {
    problem: `Database ${target.database} on ${target.address} has no agentauth tables.`,
    remedy:
      "Check that DATABASE_URL names the server's database; to start a new one there, run `agentauth migrate` (or start the server) first.",
  };
}

/**
 * The database's error in the operator's words, whichever the engine.
 *
 * @example
 * explainDatabaseError(error, config.databaseUrl)?.problem;
 */
export function explainDatabaseError(error: unknown, databaseUrl: string): DatabaseProblem | undefined {
  return databaseUrl.startsWith('sqlite:')
    ? explainSqliteError(error, databaseUrl)
    : explainPostgresError(error, databaseUrl);
}

/** The database named by DATABASE_URL cannot be used as it is: what is wrong and what to do. */
export class DatabaseUnusable extends Error {
  constructor(
    readonly database: string,
    readonly diagnosis: DatabaseProblem,
    readonly original?: unknown,
  ) {
    // The engine's own words last, as a search engine knows them (never a password: neither puts one in).
    const said = original instanceof Error ? ` (the database said: ${original.message})` : '';
    super(`cannot use the database ${database}: ${diagnosis.problem} ${diagnosis.remedy}${said}`);
    this.name = 'DatabaseUnusable';
  }
}

/**
 * `error` as DatabaseUnusable when it is a database problem this module can say in words (and
 * not one already), else `error` itself: what start-up and the commands throw.
 *
 * @example
 * await store.migrate().catch((error) => { throw inWords(error, config.databaseUrl); });
 */
export function inWords(error: unknown, databaseUrl: string): unknown {
  if (error instanceof DatabaseUnusable) return error;
  const diagnosis = explainDatabaseError(error, databaseUrl);
  return diagnosis ? new DatabaseUnusable(databaseName(databaseUrl), diagnosis, error) : error;
}
