/**
 * The CLI and its database (issue 38, item 5, and item 4 on SQLite): a command other than serve
 * and migrate never makes a database (run from another directory, DATABASE_URL's relative
 * default named an empty new one, whose setup links then failed), and says which database it
 * used, on stderr, keeping stdout for --json; `agentauth database check` on a SQLite file. The
 * real CLI as a child process, on files of its own (vitest.config.ts: SQLITE_ONLY).
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { migrations } from '../src/store/migrations.ts';

const CLI = resolve('bin/agentauth');
const dir = realpathSync(mkdtempSync(join(tmpdir(), 'agentauth-cli-database-')));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** The CLI in `cwd` with this environment (no DATABASE_URL unless given: the default, relative one). */
function agentauth(args: string[], options: { cwd?: string; env?: Record<string, string> } = {}): Promise<Run> {
  const env = {
    ...process.env,
    DATABASE_URL: undefined,
    BASE_URL: undefined,
    JWT_SECRET: undefined,
    NODE_ENV: undefined,
    ...options.env,
  } as NodeJS.ProcessEnv;
  return new Promise((done) => {
    execFile(CLI, args, { cwd: options.cwd ?? dir, env }, (error, stdout, stderr) =>
      done({ code: error ? ((error as { code?: number }).code ?? -1) : 0, stdout, stderr }),
    );
  });
}

describe('a command run where there is no database', () => {
  it('refuses, naming the file it looked for and how to name the right one; creates nothing', async () => {
    const elsewhere = mkdtempSync(join(dir, 'elsewhere-'));
    for (const args of [
      ['account', 'create', '--admin', '--email', 'you@example.com'],
      ['agent', 'list', '--json'],
      ['api-key', 'create', '--email', 'you@example.com', '--name', 'ci'],
    ]) {
      const run = await agentauth(args, { cwd: elsewhere });
      expect(run.code).toBe(1);
      expect(run.stdout).toBe('');
      expect(run.stderr).toBe(
        `agentauth: cannot use the database ${elsewhere}/data/agentauth.db: There is no agentauth database at ${elsewhere}/data/agentauth.db (DATABASE_URL sqlite:./data/agentauth.db is relative to the directory the command runs in, ${elsewhere}). Run the command where the server runs, or set DATABASE_URL to the server's database with an absolute path (sqlite:///srv/agentauth/data/agentauth.db); to start a new database there, run \`agentauth migrate\` first.\n`,
      );
    }
    // Not even the data directory or a development secret.
    expect(readdirSync(elsewhere)).toEqual([]);
  });
});

describe('commands on an existing database', () => {
  const file = join(dir, 'data', 'agentauth.db');

  it('migrate makes it; every command then says on stderr which database it used, stdout stays JSON', async () => {
    const migrated = await agentauth(['migrate']);
    expect(migrated).toEqual({ code: 0, stdout: `migrations applied to ${file}\n`, stderr: '' });

    const made = await agentauth(['agent', 'create', '--owner-email', 'ada@example.com', '--json'], {
      env: { JWT_SECRET: 'x'.repeat(40) },
    });
    expect(made.code).toBe(0);
    expect(made.stderr).toBe(`database: ${file}\n`);
    expect(JSON.parse(made.stdout)).toMatchObject({ owner_email: 'ada@example.com' });

    // Named absolutely from anywhere, the same database, and the same line.
    const listed = await agentauth(['agent', 'list'], {
      cwd: tmpdir(),
      env: { DATABASE_URL: `sqlite://${file}`, JWT_SECRET: 'x'.repeat(40) },
    });
    expect(listed.code).toBe(0);
    expect(listed.stderr).toBe(`database: ${file}\n`);
    expect(listed.stdout).toMatch(/^agt_\S+ +active +ada@example\.com +<ada@example\.com>\n$/);
  });
});

describe('database check on SQLite', () => {
  it('a missing file: what to do, exit 1, and the file is still not there', async () => {
    const missing = join(dir, 'nowhere', 'agentauth.db');
    const run = await agentauth(['database', 'check'], { env: { DATABASE_URL: `sqlite://${missing}` } });
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(`database: ${missing}\n`);
    expect(run.stdout).toBe(
      `connection: MISSING: There is no agentauth database at ${missing}.\n  what to do: Run the command where the server runs, or set DATABASE_URL to the server's database with an absolute path (sqlite:///srv/agentauth/data/agentauth.db); to start a new database there, run \`agentauth migrate\` first.\nnot ready to serve\n`,
    );
    expect(existsSync(join(dir, 'nowhere'))).toBe(false);
  });

  it('a migrated file: ready to serve, exit 0; one newer than this build: exit 1', async () => {
    const file = join(dir, 'data', 'agentauth.db');
    const run = await agentauth(['database', 'check']);
    expect(run).toEqual({
      code: 0,
      stdout: `connection: ok: SQLite file ${file}.\nprivileges: ok: The file and its directory can be read and written by this user.\nmigrations: ok: ${migrations.length} of ${migrations.length} applied, none pending.\nready to serve\n`,
      stderr: `database: ${file}\n`,
    });

    const db = new Database(file);
    db.prepare("INSERT INTO schema_migrations (version, applied_at) VALUES ('9999_from_the_future', 0)").run();
    db.close();
    const newer = await agentauth(['database', 'check', '--json']);
    expect(newer.code).toBe(1);
    const report = JSON.parse(newer.stdout);
    expect(report).toMatchObject({ ok: false, engine: 'sqlite', database: file });
    expect(report.migrations).toEqual({
      applied: migrations.map((migration) => migration.version),
      pending: [],
      unknown: ['9999_from_the_future'],
    });
    expect(report.checks.at(-1)).toMatchObject({
      name: 'migrations',
      ok: false,
      message:
        'The database is newer than this build of agentauth: it has migration 9999_from_the_future, which this build does not know.',
    });
  });

  it('a file that is not a database: said so, for the check and for a command', async () => {
    const junk = join(dir, 'junk.db');
    writeFileSync(junk, 'this is not a database, but it is long enough to have a header of 100 bytes. '.repeat(3));
    const env = { DATABASE_URL: `sqlite://${junk}`, JWT_SECRET: 'x'.repeat(40) };
    const checked = await agentauth(['database', 'check'], { env });
    expect(checked.code).toBe(1);
    expect(checked.stdout).toContain(
      `connection: MISSING: ${junk} is not a SQLite database, or it is damaged (SQLITE_NOTADB).`,
    );
    const listed = await agentauth(['agent', 'list'], { env });
    expect(listed.code).toBe(1);
    expect(listed.stderr).toContain(`${junk} is not a SQLite database, or it is damaged (SQLITE_NOTADB).`);
  });

  // Root may read anything; another user, as a service runs, meets the directory's mode. The
  // bundle the earlier commands built runs as `nobody` (bin/agentauth would write dist/ first).
  it.runIf(process.getuid?.() === 0)(
    "a user who may not read the server's database: said so, not 'missing', by the check and at start",
    async () => {
      const file = join(dir, 'data', 'agentauth.db');
      await agentauth(['--version']); // bundles src/ into dist/ as it is now
      const asNobody = (args: string[]) =>
        new Promise<Run>((done) => {
          const program = `import(${JSON.stringify(resolve('dist/agentauth.mjs'))}).then((m) => m.main(['node', 'agentauth', ...${JSON.stringify(args)}]))`;
          execFile(
            'runuser',
            ['-u', 'nobody', '--', process.execPath, '-e', program],
            {
              cwd: tmpdir(),
              env: { PATH: process.env.PATH, DATABASE_URL: `sqlite://${file}`, JWT_SECRET: 'x'.repeat(40), PORT: '0' },
            },
            (error, stdout, stderr) =>
              done({ code: error ? ((error as { code?: number }).code ?? -1) : 0, stdout, stderr }),
          );
        });
      const problem = `The SQLite database ${file} or its directory cannot be read and written by this user (nobody): EACCES.`;
      const remedy = `Give the directory and the database's files to this user (chown nobody ${dirname(file)} ${file}*; chmod 700 ${dirname(file)})`;
      const checked = await asNobody(['database', 'check']);
      expect(checked.code).toBe(1);
      expect(checked.stdout).toContain(`connection: MISSING: ${problem}\n  what to do: ${remedy}`);
      const served = await asNobody(['serve']);
      expect(served.code).toBe(1);
      expect(served.stderr).toContain(`agentauth: cannot use the database ${file}: ${problem} ${remedy}`);
      const listed = await asNobody(['agent', 'list']);
      expect(listed.code).toBe(1);
      expect(listed.stderr).toContain(problem);
    },
  );
});
