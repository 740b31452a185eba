/**
 * The data directory and the development secret (docs/design.md §10): the directory is created
 * 0700, the database and its -wal and -shm files and the secret 0600; looser modes found at
 * start are warned about; the secret file is validated like JWT_SECRET and written atomically
 * and exclusively, so processes starting together share one secret. SQLite only: these are
 * the files of a SQLite installation.
 */
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.ts';
import { resolveJwtSecret, startServer } from '../src/server.ts';
import { openStore } from '../src/store/open.ts';
import { freePort } from './helpers/net.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'agentauth-datadir-'));
  dirs.push(dir);
  return dir;
}

const mode = (path: string) => `0${(statSync(path).mode & 0o777).toString(8)}`;
/** The development configuration: no JWT_SECRET, SQLite in `data`. */
const devConfig = (data: string, env: Record<string, string> = {}) =>
  loadConfig({ DATABASE_URL: `sqlite:${join(data, 'agentauth.db')}`, ...env });

describe('the development secret file', () => {
  it.each([
    ['empty', ''],
    ['1 byte', '%'],
    ['31 bytes, with surrounding whitespace', `  ${'s'.repeat(31)}\n\n`],
  ])('refuses a %s jwt-secret with one clear line naming the file and what to do', (_name, content) => {
    const data = tempDir();
    writeFileSync(join(data, 'jwt-secret'), content, { mode: 0o600 });
    const attempt = () => resolveJwtSecret(devConfig(data), () => {});
    expect(attempt).toThrow(ConfigError);
    let message = '';
    try {
      attempt();
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).not.toContain('\n');
    expect(message).toContain(join(data, 'jwt-secret'));
    expect(message).toMatch(/at least 32 bytes/);
    expect(message).toMatch(/set JWT_SECRET/);
    expect(message).toMatch(/delete/);
    // The content is never echoed.
    if (content.trim()) expect(message).not.toContain(content.trim());
  });

  it('accepts a 32-byte secret file, trimmed', () => {
    const data = tempDir();
    writeFileSync(join(data, 'jwt-secret'), `${'k'.repeat(32)}\n`, { mode: 0o600 });
    expect(resolveJwtSecret(devConfig(data), () => {})).toBe('k'.repeat(32));
  });

  it('the server refuses to start on a short secret file, with the same line', async () => {
    const data = tempDir();
    writeFileSync(join(data, 'jwt-secret'), 'x', { mode: 0o600 });
    const port = await freePort();
    await expect(
      startServer(devConfig(data, { PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'silent' }), { warn: () => {} }),
    ).rejects.toThrow(ConfigError);
  });

  it('processes starting together on a fresh directory all use the same secret, never a half-written one', async () => {
    // Two processes (one per core) race on each of 100 fresh directories, every race started on
    // the same millisecond.
    const root = tempDir();
    const races = Array.from({ length: 100 }, (_, i) => join(root, `race-${i}`));
    for (const dir of races) mkdirSync(dir, { mode: 0o700 });
    const start = Date.now() + 4000;
    const script = `
      import { loadConfig } from ${JSON.stringify(new URL('../src/config.ts', import.meta.url).pathname)};
      import { resolveJwtSecret } from ${JSON.stringify(new URL('../src/server.ts', import.meta.url).pathname)};
      const dirs = JSON.parse(process.env.RACES);
      const out = [];
      for (const [i, dir] of dirs.entries()) {
        const at = Number(process.env.START) + i * 30;
        while (Date.now() < at) {}
        try { out.push(resolveJwtSecret(loadConfig({ DATABASE_URL: 'sqlite:' + dir + '/agentauth.db' }), () => {})); }
        catch (error) { out.push('error: ' + error.message); }
      }
      process.stdout.write(JSON.stringify(out));
    `;
    const run = () =>
      new Promise<string[]>((resolve, reject) => {
        const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
          env: { ...process.env, RACES: JSON.stringify(races), START: String(start) },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let out = '';
        let err = '';
        child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
        child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
        child.once('error', reject);
        child.once('exit', (code) =>
          code === 0 ? resolve(JSON.parse(out) as string[]) : reject(new Error(`exit ${code}: ${err}`)),
        );
      });
    const results = await Promise.all([run(), run()]);
    for (const [i, dir] of races.entries()) {
      const seen = results.map((result) => result[i]!);
      const onDisk = readFileSync(join(dir, 'jwt-secret'), 'utf8');
      expect(seen, dir).toEqual([onDisk, onDisk]);
      expect(Buffer.byteLength(onDisk)).toBeGreaterThanOrEqual(32);
    }
  }, 60_000);
});

describe('file modes', () => {
  it('a fresh data directory is 0700; the database, its -wal and -shm files and the secret are 0600', async () => {
    const data = join(tempDir(), 'nested', 'data');
    const warnings: string[] = [];
    const port = await freePort();
    const server = await startServer(devConfig(data, { PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'silent' }), {
      warn: (message) => warnings.push(message),
    });
    try {
      // A write, so that the WAL holds something.
      await server.ctx.store.signIns.record({
        at: 1,
        agent_id: null,
        request_id: null,
        client_id: null,
        model: null,
        ip: null,
        user_agent: null,
        outcome: 'test',
      });
      expect(mode(data)).toBe('0700');
      expect(mode(join(data, '..'))).toBe('0700');
      for (const file of ['agentauth.db', 'agentauth.db-wal', 'agentauth.db-shm', 'jwt-secret'])
        expect(mode(join(data, file)), file).toBe('0600');
      expect(warnings.filter((warning) => /group or others/.test(warning))).toEqual([]);
    } finally {
      await server.close();
    }
  });

  it('warns at start about a data directory, database file or secret file that group or others can read or write', async () => {
    const data = join(tempDir(), 'data');
    mkdirSync(data, { mode: 0o755 });
    chmodSync(data, 0o755);
    writeFileSync(join(data, 'jwt-secret'), 'a-development-secret-of-at-least-32-bytes', { mode: 0o644 });
    chmodSync(join(data, 'jwt-secret'), 0o644);
    const store = await openStore(`sqlite:${join(data, 'agentauth.db')}`);
    await store.close();
    chmodSync(join(data, 'agentauth.db'), 0o664);
    const warnings: string[] = [];
    const port = await freePort();
    const server = await startServer(devConfig(data, { PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'silent' }), {
      warn: (message) => warnings.push(message),
    });
    await server.close();
    const loose = warnings.filter((warning) => /group or others/.test(warning));
    expect(loose).toHaveLength(3);
    expect(loose.find((warning) => warning.includes(`${data} `))).toMatch(/mode 0755.*chmod 700/);
    expect(loose.find((warning) => warning.includes(join(data, 'jwt-secret')))).toMatch(/mode 0644.*chmod 600/);
    expect(loose.find((warning) => warning.includes(join(data, 'agentauth.db')))).toMatch(/mode 0664.*chmod 600/);
    // Warned about, not changed: the operator decides.
    expect(mode(data)).toBe('0755');
  });
});
