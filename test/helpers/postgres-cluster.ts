/**
 * A throwaway PostgreSQL cluster for tests and the benchmark: initdb and pg_ctl on a temporary
 * directory, listening on a unix socket only, removed afterwards. As root, the server runs as
 * the `postgres` user (initdb refuses root). TEST_DATABASE_URL, when set, is used instead.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

export interface Cluster {
  /** Connection URL of the cluster's `postgres` database, as the admin user. */
  url: string;
  stop(): void;
}

/** The bin directory of the newest PostgreSQL installed from Debian, or undefined. */
export function postgresBinDir(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((version) => existsSync(join(root, version, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? undefined : join(root, versions[0], 'bin');
}

/** Why PostgreSQL tests cannot run here, or undefined when they can. */
export function postgresUnavailableReason(): string | undefined {
  if (process.env.TEST_DATABASE_URL || postgresBinDir()) return undefined;
  return 'PostgreSQL tests skipped: no /usr/lib/postgresql/*/bin/initdb and TEST_DATABASE_URL is not set; install PostgreSQL (apt-get install -y postgresql) or set TEST_DATABASE_URL=postgres://… to enable them';
}

/**
 * A new data directory made by initdb in a fresh temporary directory (which also holds the
 * socket and the log), and `run` for PostgreSQL's tools on it: as the postgres user when this
 * process is root, since PostgreSQL refuses to run as root.
 */
export function initDataDirectory(prefix: string): {
  dir: string;
  data: string;
  run(tool: string, args: string[]): void;
} {
  const bin = postgresBinDir();
  if (!bin) throw new Error(postgresUnavailableReason());
  const dir = mkdtempSync(join(tmpdir(), prefix));
  chmodSync(dir, 0o777);
  const data = join(dir, 'data');
  const asRoot = process.getuid?.() === 0;
  const run = (tool: string, args: string[]) =>
    void (asRoot
      ? execFileSync('runuser', ['-u', 'postgres', '--', join(bin, tool), ...args], { stdio: 'pipe' })
      : execFileSync(join(bin, tool), args, { stdio: 'pipe' }));
  run('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8']);
  return { dir, data, run };
}

/**
 * `observed` loads pg_stat_statements, so that the benchmark can count the statements (round
 * trips) each operation costs (bench/database-activity.ts).
 */
export function startCluster(options: { durable?: boolean; observed?: boolean } = {}): Cluster {
  if (process.env.TEST_DATABASE_URL) return { url: process.env.TEST_DATABASE_URL, stop() {} };
  const { dir, data, run } = initDataDirectory('agentauth-pg-');
  const port = 20000 + Math.floor(Math.random() * 20000);
  // Tests do not need the database itself to survive a power cut (our server's durability is
  // about its answers being committed); the benchmark asks for a durable one.
  const speed = options.durable ? '' : ' -c fsync=off -c synchronous_commit=off -c full_page_writes=off';
  const observed = options.observed
    ? ' -c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.track=all'
    : '';
  run('pg_ctl', [
    '-D',
    data,
    '-w',
    '-l',
    join(dir, 'log'),
    '-o',
    `-c listen_addresses='' -c unix_socket_directories=${dir} -p ${port} -c max_connections=300${speed}${observed}`,
    'start',
  ]);
  return {
    url: `postgres://postgres@localhost/postgres?host=${encodeURIComponent(dir)}&port=${port}`,
    stop() {
      try {
        run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

/** Creates a fresh database in the cluster and returns its URL and a function that drops it. */
export async function createDatabase(
  clusterUrl: string,
  name = `agentauth_${Math.random().toString(36).slice(2, 10)}`,
): Promise<{ url: string; drop(): Promise<void> }> {
  const admin = new pg.Client({ connectionString: clusterUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(clusterUrl);
  url.pathname = `/${name}`;
  return {
    url: url.href,
    async drop() {
      const client = new pg.Client({ connectionString: clusterUrl });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}
