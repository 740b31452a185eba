/**
 * PostgreSQL set up in one step (issue 38, item 4): `agentauth database check` says exactly what
 * a database URL lacks (connection, privileges, migrations) with the SQL that fixes it, never the
 * password; `agentauth serve` stops with the same words; and the least privilege the operator's
 * guide gives works: a role that owns the schema migrates, a role with only read and write grants
 * serves, and the guide's SQL is run as written. On the PostgreSQL cluster the suites use
 * (vitest.config.ts: POSTGRES_ONLY).
 */
import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { migrations } from '../src/store/migrations.ts';
import { freePort } from './helpers/net.ts';
import { createDatabase, initDataDirectory, postgresBinDir } from './helpers/postgres-cluster.ts';
import { spawnServer, waitReady } from './helpers/server-process.ts';
import { TEST_JWT_SECRET } from './helpers/server.ts';

/** In every URL the commands get; never in what they print. */
const PASSWORD = 'pw-never-printed-7Qx';
const suffix = randomBytes(4).toString('hex');
/** A role with no privilege beyond PostgreSQL's defaults (PUBLIC's). */
const NOBODY = `aa_nobody_${suffix}`;
/** The server's role in the two-role setup: read and write grants only. */
const APP = `aa_app_${suffix}`;

let clusterUrl: string;
let database: { url: string; drop(): Promise<void> };
let admin: pg.Client;

beforeAll(async () => {
  clusterUrl = inject('postgresUrl');
  database = await createDatabase(clusterUrl);
  admin = new pg.Client({ connectionString: database.url });
  await admin.connect();
  await admin.query(`CREATE ROLE ${NOBODY} LOGIN`);
  await admin.query(`CREATE ROLE ${APP} LOGIN`);
});
afterAll(async () => {
  await admin?.end();
  await database?.drop();
  const cleanup = new pg.Client({ connectionString: clusterUrl });
  await cleanup.connect();
  await cleanup.query(`DROP ROLE IF EXISTS ${NOBODY}`);
  await cleanup.query(`DROP OWNED BY ${APP}`).catch(() => undefined);
  await cleanup.query(`DROP ROLE IF EXISTS ${APP}`);
  await cleanup.end();
});

/** `url` as `role`, with the password that must never be printed (the cluster trusts local connections). */
function as(role: string, url = database.url): string {
  const changed = new URL(url);
  changed.username = role;
  changed.password = PASSWORD;
  return changed.href;
}

/** What `agentauth serve` needs besides DATABASE_URL (not Vite's BASE_URL of '/'). */
function serverEnv(port: number): Record<string, string> {
  return { PORT: String(port), BASE_URL: `http://127.0.0.1:${port}`, JWT_SECRET: TEST_JWT_SECRET };
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function agentauth(databaseUrl: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      './bin/agentauth',
      args,
      { env: { ...process.env, DATABASE_URL: databaseUrl, JWT_SECRET: TEST_JWT_SECRET, BASE_URL: undefined, ...env } },
      (error, stdout, stderr) =>
        resolve({ code: error ? ((error as { code?: number }).code ?? -1) : 0, stdout, stderr }),
    );
  });
}

/** `database check`, in text: its lines, exit code, and that the password is nowhere. */
async function check(databaseUrl: string): Promise<Run> {
  // Before the node's other settings are in place: the check needs the database's URL alone.
  const run = await agentauth(databaseUrl, ['database', 'check'], { JWT_SECRET: undefined, NODE_ENV: 'production' });
  expect(run.stdout + run.stderr).not.toContain(PASSWORD);
  expect(run.stderr).toMatch(/^database: postgres:\/\/[^\n]*:\*\*\*@/m);
  return run;
}

interface Report {
  ok: boolean;
  database: string;
  checks: Array<{ name: string; ok: boolean; message: string; remedy?: string }>;
  migrations?: { applied: string[]; pending: string[]; unknown: string[] };
}

async function checkJson(databaseUrl: string): Promise<{ code: number; report: Report }> {
  const run = await agentauth(databaseUrl, ['database', 'check', '--json'], { JWT_SECRET: undefined });
  expect(run.stdout + run.stderr).not.toContain(PASSWORD);
  return { code: run.code, report: JSON.parse(run.stdout) as Report };
}

describe('a role without privileges on a new database', () => {
  it('database check: connected, but it may not create the tables; the grant to run; exit 1', async () => {
    const run = await check(as(NOBODY));
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(
      /^connection: ok: PostgreSQL \d+\.\d+ .* at .*, database agentauth_\w+, role aa_nobody_\w+\.\n/,
    );
    expect(run.stdout).toContain(
      `migrations: MISSING: 0 of ${migrations.length} applied; ${migrations.length} pending (0001_initial … ${migrations.at(-1)!.version}). `,
    );
    expect(run.stdout).toContain(`Role ${NOBODY} may not create tables in schema public of database`);
    expect(run.stdout).toContain(`GRANT USAGE, CREATE ON SCHEMA public TO ${NOBODY};`);
    expect(run.stdout).toMatch(/\nnot ready to serve\n$/);

    const { code, report } = await checkJson(as(NOBODY));
    expect(code).toBe(1);
    expect(report.ok).toBe(false);
    expect(report.checks.map((found) => [found.name, found.ok])).toEqual([
      ['connection', true],
      ['privileges', true],
      ['migrations', false],
    ]);
    expect(report.migrations).toEqual({ applied: [], pending: migrations.map((m) => m.version), unknown: [] });
    expect(report.database).toContain(':***@');
  });

  it('serve stops at start-up with the same words and the same remedy, not only PostgreSQL’s', async () => {
    const server = spawnServer({ DATABASE_URL: as(NOBODY), ...serverEnv(await freePort()) });
    const exit = await server.exited;
    expect(exit.code).toBe(1);
    const output = server.output();
    expect(output).toContain(`Role ${NOBODY} may not create tables in schema public of database`);
    expect(output).toContain(`GRANT USAGE, CREATE ON SCHEMA public TO ${NOBODY};`);
    expect(output).toContain('(the database said: permission denied for schema public)');
    expect(output).not.toContain(PASSWORD);
  });

  it('refuses a management command on a database without agentauth’s tables, making none', async () => {
    const run = await agentauth(as('postgres'), ['agent', 'list']);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/has no agentauth tables\. Check that DATABASE_URL names the server's database/);
    expect(run.stderr).not.toContain(PASSWORD);
    const tables = await admin.query("SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public'");
    expect(tables.rows[0].n).toBe(0);
  });
});

describe('the two-role setup of the operator guide', () => {
  it('the owner migrates; the server role lacks table grants until the printed SQL is run, then serves', async () => {
    const migrated = await agentauth(as('postgres'), ['migrate']);
    expect(migrated.code, migrated.stderr).toBe(0);
    expect(migrated.stdout).toMatch(/^migrations applied to postgres:\/\/postgres:\*\*\*@/);

    const before = await check(as(APP));
    expect(before.code).toBe(1);
    expect(before.stdout).toContain(
      `privileges: MISSING: Role ${APP} may not read and write the tables of schema public`,
    );
    const remedy = /\n {2}what to do: As the tables' owner \(postgres\): (GRANT [^\n]+)\n/.exec(before.stdout)?.[1];
    expect(remedy).toBe(
      `GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO ${APP}; ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO ${APP};`,
    );
    await admin.query(remedy!);

    const after = await check(as(APP));
    expect(after.code).toBe(0);
    expect(after.stdout.split('\n').slice(1)).toEqual([
      `privileges: ok: Role ${APP} may read and write every table of schema public, not create tables in it (needed only to apply migrations).`,
      `migrations: ok: ${migrations.length} of ${migrations.length} applied, none pending.`,
      'ready to serve',
      '',
    ]);

    // Today's start-up needs no CREATE when nothing is pending: the server role serves.
    const server = spawnServer({ DATABASE_URL: as(APP), ...serverEnv(await freePort()) });
    try {
      await waitReady(server);
      expect((await fetch(`${server.baseUrl}/readyz`)).status).toBe(200);
    } finally {
      await server.kill('SIGTERM');
    }
    expect(server.output()).not.toContain(PASSWORD);
  });

  it('says the database is newer than this build when it has a migration this build does not know', async () => {
    await admin.query("INSERT INTO schema_migrations (version, applied_at) VALUES ('9999_from_the_future', 0)");
    try {
      const { code, report } = await checkJson(as('postgres'));
      expect(code).toBe(1);
      expect(report.migrations?.unknown).toEqual(['9999_from_the_future']);
      expect(report.checks.find((found) => found.name === 'migrations')).toMatchObject({
        ok: false,
        message: expect.stringContaining(
          'The database is newer than this build of agentauth: it has migration 9999_from_the_future',
        ),
      });
    } finally {
      await admin.query("DELETE FROM schema_migrations WHERE version = '9999_from_the_future'");
    }
  });
});

/**
 * The SQL block of docs/guides/operator.md after `heading`, run as psql would: one statement a
 * line, as the cluster's superuser until a `\\connect DATABASE ROLE` line, then as that role there.
 */
async function runGuideSql(heading: string): Promise<void> {
  const guide = readFileSync('docs/guides/operator.md', 'utf8');
  const block = /```sql\n([\s\S]*?)```/.exec(guide.slice(guide.indexOf(heading)))![1]!;
  let client = new pg.Client({ connectionString: clusterUrl });
  await client.connect();
  try {
    for (const line of block.split('\n').map((text) => text.trim())) {
      if (line === '' || line.startsWith('--')) continue;
      const connect = /^\\connect (\S+) (\S+)$/.exec(line);
      if (!connect) {
        await client.query(line);
        continue;
      }
      await client.end();
      const url = new URL(clusterUrl);
      url.pathname = `/${connect[1]}`;
      url.username = connect[2]!;
      client = new pg.Client({ connectionString: url.href });
      await client.connect();
    }
  } finally {
    await client.end();
  }
}

/** Drops what the guide's SQL made, as the cluster's superuser. */
async function dropGuideObjects(roles: string[]): Promise<void> {
  const cleanup = new pg.Client({ connectionString: clusterUrl });
  await cleanup.connect();
  try {
    await cleanup.query('DROP DATABASE IF EXISTS agentauth WITH (FORCE)');
    for (const role of roles) await cleanup.query(`DROP ROLE IF EXISTS ${role}`);
  } finally {
    await cleanup.end();
  }
}

describe("the operator guide's SQL, as written", () => {
  /** The cluster's URL on database agentauth as `role`. */
  const guideUrl = (role: string) => {
    const url = new URL(clusterUrl);
    url.pathname = '/agentauth';
    return as(role, url.href);
  };

  it('one role owning the database: nothing missing, its migrations to be applied at start', async () => {
    await runGuideSql('**Simplest: one role that owns the database.**');
    try {
      const { code, report } = await checkJson(guideUrl('agentauth'));
      expect(code).toBe(0);
      expect(report.ok).toBe(true);
      expect(report.checks.at(-1)?.message).toBe(
        `0 of ${migrations.length} applied; ${migrations.length} pending (0001_initial … ${migrations.at(-1)!.version}). \`agentauth migrate\` or the server's start applies them.`,
      );
    } finally {
      await dropGuideObjects(['agentauth']);
    }
  });

  it('a role that migrates and a role that serves: the owner migrates, the other serves', async () => {
    await runGuideSql('**Least privilege: a role that migrates and a role that serves.**');
    try {
      const migrated = await agentauth(guideUrl('agentauth_owner'), ['migrate']);
      expect(migrated.code, migrated.stderr).toBe(0);
      const checked = await check(guideUrl('agentauth_app'));
      expect(checked.code, checked.stdout).toBe(0);
      expect(checked.stdout).toContain(
        'privileges: ok: Role agentauth_app may read and write every table of schema public, not create tables in it',
      );
      const server = spawnServer({ DATABASE_URL: guideUrl('agentauth_app'), ...serverEnv(await freePort()) });
      try {
        await waitReady(server);
      } finally {
        await server.kill('SIGTERM');
      }
    } finally {
      await dropGuideObjects(['agentauth_app', 'agentauth_owner']);
    }
  });
});

describe('connections that fail, each in words with its remedy', () => {
  it('a database that does not exist', async () => {
    const url = new URL(as(NOBODY));
    url.pathname = `/aa_missing_${suffix}`;
    const run = await check(url.href);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain(`connection: MISSING: There is no database aa_missing_${suffix} on `);
    expect(run.stdout).toContain(`what to do: As a superuser: CREATE DATABASE aa_missing_${suffix} OWNER ${NOBODY};`);
  });

  it('a role that does not exist', async () => {
    const run = await check(as(`aa_ghost_${suffix}`));
    expect(run.code).toBe(1);
    expect(run.stdout).toContain(`connection: MISSING: There is no role aa_ghost_${suffix} on `);
    expect(run.stdout).toContain(`CREATE ROLE aa_ghost_${suffix} LOGIN PASSWORD '…';`);
  });

  it('a role that may not connect to the database', async () => {
    const locked = await createDatabase(clusterUrl);
    try {
      const owner = new pg.Client({ connectionString: locked.url });
      await owner.connect();
      const name = new URL(locked.url).pathname.slice(1);
      await owner.query(`REVOKE CONNECT ON DATABASE ${name} FROM PUBLIC`);
      await owner.end();
      const run = await check(as(NOBODY, locked.url));
      expect(run.code).toBe(1);
      expect(run.stdout).toContain(`connection: MISSING: Role ${NOBODY} may not connect to database ${name}.`);
      expect(run.stdout).toContain(`GRANT CONNECT ON DATABASE ${name} TO ${NOBODY};`);
    } finally {
      await locked.drop();
    }
  });

  it('nothing listening, a host name that does not resolve, TLS asked of a server without it', async () => {
    const port = await freePort();
    const refused = await check(`postgres://agentauth:${PASSWORD}@127.0.0.1:${port}/agentauth`);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain(
      `connection: MISSING: Nothing accepts PostgreSQL connections at 127.0.0.1:${port}.`,
    );
    expect(refused.stdout).toContain('Check that PostgreSQL is running and listens there');

    const unknown = await check(`postgres://agentauth:${PASSWORD}@no-such-host.invalid/agentauth`);
    expect(unknown.code).toBe(1);
    expect(unknown.stdout).toMatch(/connection: MISSING: The host name no-such-host\.invalid cannot be resolved/);

    const tls = await check(`${as(NOBODY)}&sslmode=verify-full`);
    expect(tls.code).toBe(1);
    expect(tls.stdout).toContain('connection: MISSING: DATABASE_URL asks for TLS (sslmode), but PostgreSQL on ');
    expect(tls.stdout).toContain('Turn on TLS in PostgreSQL (ssl = on');
  });
});

/**
 * A cluster of its own, which only local PostgreSQL binaries can start: the suites' cluster trusts
 * every local connection and offers no TLS. This one asks for passwords on its socket and offers
 * TLS on 127.0.0.1 with a self-signed certificate for another name (other.example).
 */
describe.runIf(postgresBinDir() && !process.env.TEST_DATABASE_URL)('passwords and certificates', () => {
  let cluster: ReturnType<typeof initDataDirectory>;
  let port: number;
  beforeAll(async () => {
    cluster = initDataDirectory('agentauth-pg-auth-');
    const { dir, data, run } = cluster;
    writeFileSync(
      join(data, 'pg_hba.conf'),
      'local all postgres trust\nlocal all all scram-sha-256\nhostssl all all 127.0.0.1/32 trust\n',
    );
    execFileSync(
      'openssl',
      [
        ...['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=other.example'],
        ...['-addext', 'subjectAltName=DNS:other.example', '-keyout', join(data, 'server.key')],
        ...['-out', join(data, 'server.crt')],
      ],
      { stdio: 'ignore' },
    );
    chmodSync(join(data, 'server.key'), 0o600);
    if (process.getuid?.() === 0)
      execFileSync('chown', ['postgres', join(data, 'server.key'), join(data, 'server.crt')]);
    port = await freePort();
    const options = `-c listen_addresses=127.0.0.1 -c unix_socket_directories=${dir} -p ${port} -c ssl=on`;
    run('pg_ctl', ['-D', data, '-w', '-l', join(dir, 'log'), '-o', options, 'start']);
  });
  afterAll(() => {
    if (!cluster) return;
    try {
      cluster.run('pg_ctl', ['-D', cluster.data, '-m', 'immediate', '-w', 'stop']);
    } finally {
      rmSync(cluster.dir, { recursive: true, force: true });
    }
  });

  it('a password PostgreSQL refuses', async () => {
    const socket = `host=${encodeURIComponent(cluster.dir)}&port=${port}`;
    const owner = new pg.Client({ connectionString: `postgres://postgres@localhost/postgres?${socket}` });
    await owner.connect();
    await owner.query("CREATE ROLE agentauth LOGIN PASSWORD 'the-right-one'");
    await owner.end();
    const refused = await check(`postgres://agentauth:${PASSWORD}@localhost/postgres?${socket}`);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain('connection: MISSING: PostgreSQL on ');
    expect(refused.stdout).toContain('refused the password of role agentauth.');
    expect(refused.stdout).toContain("ALTER ROLE agentauth PASSWORD '…';");
  });

  it('a certificate Node does not trust, and one for another name', async () => {
    const url = `postgres://postgres:${PASSWORD}@127.0.0.1:${port}/postgres?sslmode=verify-full`;
    const untrusted = await check(url);
    expect(untrusted.code).toBe(1);
    expect(untrusted.stdout).toContain(
      `connection: MISSING: The TLS certificate of PostgreSQL on 127.0.0.1:${port} is not trusted (DEPTH_ZERO_SELF_SIGNED_CERT).`,
    );
    expect(untrusted.stdout).toContain('NODE_EXTRA_CA_CERTS=/path/to/ca.pem');

    const elsewhere = await check(`${url}&sslrootcert=${encodeURIComponent(join(cluster.data, 'server.crt'))}`);
    expect(elsewhere.code).toBe(1);
    expect(elsewhere.stdout).toContain(
      `connection: MISSING: The TLS certificate of PostgreSQL on 127.0.0.1:${port} is not for the name 127.0.0.1.`,
    );
  });
});
