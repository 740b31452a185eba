/**
 * `bin/agentauth` in a checkout its user may not write (installed by root, run by a service's
 * user): it cannot bundle into dist/, so it runs the bundle `npm run build` left, says so when a
 * source is newer, and without one says in one line what to run; never an EACCES stack trace.
 * The checkout is a copy of this one's files (its node_modules linked), owned by root and run as
 * user 65534; when this suite is not root, a copy without write bits run as the suite's user.
 *
 * It runs once: it opens no database of the test engine (serve runs on SQLite).
 */
import { execFile } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  symlinkSync,
  utimesSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from './helpers/net.ts';
import { type ServerProcess, spawnCommand, waitReady } from './helpers/server-process.ts';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../', import.meta.url));
const SERVICE_USER = 65534;
const asRoot = process.getuid?.() === 0;

let work: string;
let checkout: string;
let server: ServerProcess | undefined;

/** The command as the service's user would run it: 65534 when we are root, ourselves otherwise. */
function asService(command: string[]): string[] {
  return asRoot
    ? ['setpriv', `--reuid=${SERVICE_USER}`, `--regid=${SERVICE_USER}`, '--clear-groups', '--', ...command]
    : command;
}

/** Runs `node bin/agentauth …` in the checkout as the service's user: exit code, stdout, stderr. */
async function agentauth(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const [file, ...rest] = asService([process.execPath, join(checkout, 'bin/agentauth'), ...args]);
  try {
    const { stdout, stderr } = await run(file!, rest, { cwd: work, env: { PATH: process.env.PATH } });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

/** Every path of the checkout (not through its node_modules link) with its mode, size and mtime. */
function listing(folder: string): string[] {
  const walk = (path: string): string[] => {
    const stat = lstatSync(path);
    const line = `${relative(folder, path) || '.'} ${stat.mode.toString(8)} ${stat.size} ${stat.mtimeMs}`;
    return stat.isDirectory() ? [line, ...readdirSync(path).flatMap((name) => walk(join(path, name)))] : [line];
  };
  return walk(folder).sort();
}

const writable = (on: boolean) => run('chmod', ['-R', on ? 'u+w' : 'a-w', checkout]);

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'agentauth-checkout-'));
  chmodSync(work, 0o755);
  checkout = join(work, 'agentauth');
  mkdirSync(checkout);
  for (const path of ['bin', 'src', 'package.json', 'tsconfig.json'])
    cpSync(join(ROOT, path), join(checkout, path), { recursive: true, filter: (source) => !source.includes('/dist') });
  symlinkSync(join(ROOT, 'node_modules'), join(checkout, 'node_modules'));
  await writable(false);
});

afterAll(async () => {
  await server?.kill('SIGKILL');
  if (work) {
    await writable(true);
    rmSync(work, { recursive: true, force: true });
  }
});

describe('a checkout its user may not write', () => {
  it('without a bundle, says in one line what to run, and exits 1', async () => {
    const { code, stdout, stderr } = await agentauth('--version');
    expect({ code, stdout }).toEqual({ code: 1, stdout: '' });
    expect(stderr).toBe(
      `agentauth: cannot write ${checkout}/dist/ (EACCES) and no bundle is there: run \`npm run build\` in ${checkout}/ as a user who may write there\n`,
    );
    expect(existsSync(join(checkout, 'dist'))).toBe(false);
  });

  it('runs the bundle npm run build left, silently while it is current, and writes nothing', async () => {
    await writable(true);
    await run('npm', ['run', 'build'], { cwd: checkout });
    await writable(false);
    const before = listing(checkout);
    expect(await agentauth('--version')).toEqual({ code: 0, stdout: '0.1.0\n', stderr: '' });

    // It serves, the passkey script found through its node_modules as well as its own pages' files.
    const state = join(work, 'state');
    mkdirSync(state, { mode: 0o700 });
    if (asRoot) chownSync(state, SERVICE_USER, SERVICE_USER);
    const port = String(await freePort());
    server = spawnCommand(asService([process.execPath, join(checkout, 'bin/agentauth'), 'serve']), {
      env: { PATH: process.env.PATH, PORT: port, HOST: '127.0.0.1', DATABASE_URL: `sqlite:${state}/agentauth.db` },
      cwd: state,
      port,
    });
    await waitReady(server);
    for (const asset of ['simplewebauthn-browser.js', 'authorize.js'])
      expect((await fetch(`${server.baseUrl}/assets/${asset}`)).status, asset).toBe(200);
    expect(await server.kill('SIGTERM')).toEqual({ code: 0, signal: null });
    expect(server.output()).not.toMatch(/EACCES|cannot write/);
    expect(listing(checkout)).toEqual(before);
  });

  it('runs a bundle older than the sources, naming the newer file and what to run', async () => {
    const later = new Date(Date.now() + 60_000);
    utimesSync(join(checkout, 'src/cli/main.ts'), later, later);
    expect(await agentauth('--version')).toEqual({
      code: 0,
      stdout: '0.1.0\n',
      stderr: `agentauth: cannot write ${checkout}/dist/ (EACCES); running dist/agentauth.mjs, older than src/cli/main.ts: run \`npm run build\` in ${checkout}/ as a user who may write there\n`,
    });
  });
});
