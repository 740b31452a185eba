/**
 * The server as an operator installs it on a machine without the repository: `npm pack` (whose
 * prepack builds the bundle), then `npm install -g --prefix` of the tarball into a prefix made
 * read-only (root's, no write bit anywhere), started by deploy/systemd/agentauth.service's own
 * ExecStart, WorkingDirectory and Environment= lines as an unprivileged user (65534, as
 * DynamicUser= would be) in the state directory the unit gets. A whole sign-in goes through it,
 * and nothing in the prefix changes. Besides, the tarball installed into a project, where npm
 * hoists the dependencies beside the package (as `npx` does), serves the pages' files too.
 *
 * It runs once, on SQLite (the unit's database): no engine setting reaches it.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { obtainTokens, type Party } from './helpers/flow.ts';
import { freePort } from './helpers/net.ts';
import type { TestServer } from './helpers/server.ts';
import { type ServerProcess, spawnCommand, waitReady } from './helpers/server-process.ts';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../', import.meta.url));
const UNIT = join(ROOT, 'deploy/systemd/agentauth.service');
const { version: VERSION } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
/** nobody: the unprivileged user a DynamicUser= service resembles; only root can become it. */
const SERVICE_USER = 65534;
const asRoot = process.getuid?.() === 0;
/** systemd's PATH for services, after the folder of the Node this suite runs on (the server runs on it too). */
const SERVICE_PATH = `${dirname(process.execPath)}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`;

/**
 * The environment of a child: without npm's variables, nor vitest's and Vite's (NODE_ENV=test, and
 * BASE_URL=/, which the server would read as its issuer), so nothing leaks in from this run.
 */
function cleanEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (
      value !== undefined &&
      !/^(npm_|NODE_(OPTIONS|PATH|ENV)$|VITEST|AGENTAUTH_|(BASE_URL|MODE|DEV|PROD|SSR|TEST)$)/i.test(name)
    )
      env[name] = value;
  }
  return { ...env, ...extra };
}

/** Every path under a folder with what would show a write: kind, mode, size, mtime. */
function listing(folder: string): string[] {
  const walk = (path: string): string[] => {
    const stat = lstatSync(path);
    const line = `${relative(folder, path) || '.'} ${stat.mode.toString(8)} ${stat.size} ${stat.mtimeMs}`;
    return stat.isDirectory() ? [line, ...readdirSync(path).flatMap((name) => walk(join(path, name)))] : [line];
  };
  return walk(folder).sort();
}

/** The [Service] section's settings, each with its values in order (Environment= comes many times). */
function unitSettings(text: string): Map<string, string[]> {
  const settings = new Map<string, string[]>();
  let section = '';
  for (const line of text.split('\n').map((raw) => raw.trim())) {
    if (line === '' || line.startsWith('#')) continue;
    if (line.startsWith('[')) section = line;
    else if (section === '[Service]') {
      const at = line.indexOf('=');
      settings.set(line.slice(0, at), [...(settings.get(line.slice(0, at)) ?? []), line.slice(at + 1)]);
    }
  }
  return settings;
}

let work: string;
let tarball: string;
let packedFiles: string[];
let prefix: string;
let installOutput: string;
let project: string;
let server: ServerProcess | undefined;
let projectServer: ServerProcess | undefined;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'agentauth-package-'));
  chmodSync(work, 0o755); // the service's user walks through it to the prefix
  // prepack builds dist/agentauth.mjs; its output comes before the JSON on stdout.
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', work], { cwd: ROOT, env: cleanEnv() });
  const packed = (
    JSON.parse(stdout.slice(stdout.indexOf('\n[') + 1)) as { filename: string; files: { path: string }[] }[]
  )[0]!;
  tarball = join(work, packed.filename);
  packedFiles = packed.files.map((file) => file.path).sort();

  // better-sqlite3's install script (prebuild-install) fetches its binary from GitHub, which this
  // machine cannot reach, and then compiles SQLite: 3 min 18 s measured (74 s of CPU) against
  // 22 s. It is given the binary this checkout's `npm ci` built for this Node as a local prebuild
  // (npm_config_<package>_local_prebuilds, prebuild-install's way for offline machines), named
  // as the download it stands for; everything else installs as it does for a user.
  const sqlite = join(ROOT, 'node_modules/better-sqlite3');
  const { version } = JSON.parse(readFileSync(join(sqlite, 'package.json'), 'utf8')) as { version: string };
  const prebuilds = join(work, 'prebuilds');
  mkdirSync(prebuilds);
  const name = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
  await run('tar', ['-czf', join(prebuilds, name), '-C', sqlite, 'build/Release/better_sqlite3.node']);
  const env = cleanEnv({ npm_config_better_sqlite3_local_prebuilds: prebuilds });
  const options = ['--prefer-offline', '--no-audit', '--no-fund'];

  prefix = join(work, 'prefix');
  project = join(work, 'project');
  mkdirSync(project);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'a-project', private: true }));
  const started = Date.now();
  const [global] = await Promise.all([
    run('npm', ['install', '-g', '--prefix', prefix, ...options, tarball], { env }),
    run('npm', ['install', ...options, tarball], { cwd: project, env }),
  ]);
  installOutput = global.stdout + global.stderr;
  console.log(`the two installs of the tarball took ${Date.now() - started} ms`);
  // Read-only: no write bit anywhere, and root's when this suite is root.
  await run('chmod', ['-R', 'a-w', prefix]);
}, 240_000);

afterAll(async () => {
  await server?.kill('SIGKILL');
  await projectServer?.kill('SIGKILL');
  if (work) {
    if (existsSync(prefix)) await run('chmod', ['-R', 'u+w', prefix]);
    rmSync(work, { recursive: true, force: true });
  }
});

describe('the packed server', () => {
  it('packs the bundle, the pages’ files, the command, the licence and the README: no sources, tests or docs', () => {
    expect(packedFiles).toEqual(
      [
        'LICENSE',
        'README.md',
        'bin/agentauth',
        'bin/bundle.mjs',
        'dist/agentauth.mjs',
        'package.json',
        ...readdirSync(join(ROOT, 'src/web/assets')).map((file) => `src/web/assets/${file}`),
      ].sort(),
    );
  });

  it('says no more of its engines than is true: npm warns of a dependency’s engine only where it warns of agentauth’s', () => {
    const warned = [...installOutput.matchAll(/EBADENGINE\s+package: '([^']+)'/g)].map((match) => match[1]!);
    const ours = warned.filter((name) => name.startsWith('agentauth@'));
    // On a Node that package.json's engines admit, nothing warns; on an older one, agentauth does.
    if (ours.length === 0) expect(warned).toEqual([]);
    else expect(ours).toEqual([`agentauth@${VERSION}`]);
  });

  it('leaves no tarball in the clone: npm pack in the docs names a destination, and git ignores one left anyway', async () => {
    const docs = [
      'README.md',
      'packages/agent/README.md',
      ...readdirSync(join(ROOT, 'docs'), { recursive: true, encoding: 'utf8' })
        .filter((file) => file.endsWith('.md'))
        .map((file) => `docs/${file}`),
    ];
    // Every command line in a fenced block that runs npm pack.
    const packs = docs.flatMap((file) =>
      readFileSync(join(ROOT, file), 'utf8')
        .split('```')
        .filter((_, index) => index % 2 === 1)
        .flatMap((block) => block.split('\n'))
        .filter((line) => /(^|&&|;)\s*(\$\s*)?npm pack\b/.test(line.trim()))
        .map((line) => `${file}: ${line.trim()}`),
    );
    expect(packs.length).toBeGreaterThan(0);
    expect(packs.filter((line) => !line.includes('--pack-destination'))).toEqual([]);
    const tarballs = [`agentauth-${VERSION}.tgz`, 'packages/agent/agentauth-agent-0.1.0.tgz'];
    const { stdout } = await run('git', ['check-ignore', ...tarballs], { cwd: ROOT });
    expect(stdout.trim().split('\n')).toEqual(tarballs);
  });
});

describe('the systemd unit’s command line on a read-only install, as an unprivileged user', () => {
  const settings = unitSettings(readFileSync(UNIT, 'utf8'));
  const one = (name: string) => {
    const values = settings.get(name) ?? [];
    expect(values, name).toHaveLength(1);
    return values[0]!;
  };

  it('has the hardening the operator’s guide promises', () => {
    for (const [name, value] of Object.entries({
      DynamicUser: 'yes',
      User: 'agentauth',
      StateDirectory: 'agentauth',
      StateDirectoryMode: '0700',
      ProtectSystem: 'strict',
      ProtectHome: 'yes',
      PrivateTmp: 'yes',
      NoNewPrivileges: 'yes',
      EnvironmentFile: '/etc/agentauth/agentauth.env',
    }))
      expect(settings.get(name), name).toEqual([value]);
  });

  it('passes systemd’s own checks: every setting known, exposure rated OK or better', async () => {
    // systemd-analyze reads a unit offline; ExecStart must name an executable, so the copy names the install's.
    const copy = join(work, 'agentauth.service');
    writeFileSync(copy, readFileSync(UNIT, 'utf8').replaceAll('/usr/local/', `${prefix}/`));
    const verified = await run('systemd-analyze', ['verify', copy]).catch((error: Error & { stderr?: string }) => {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT')
        throw new Error("systemd-analyze is missing: install Debian's systemd package (apt-get install -y systemd)");
      throw error;
    });
    expect(verified.stderr).toBe('');
    const { stdout } = await run('systemd-analyze', ['security', '--offline=true', copy]);
    const exposure = Number(/Overall exposure level for agentauth\.service: ([\d.]+)/.exec(stdout)?.[1]);
    // systemd's scale: 0–2 "OK", up to 5 "MEDIUM", above "EXPOSED" and "UNSAFE".
    expect(exposure).toBeLessThanOrEqual(2);
  });

  it('serves, signs in and writes only to its state directory', async () => {
    const stateDirectory = `/var/lib/${one('StateDirectory')}`;
    const state = join(work, 'state');
    const etc = join(work, 'etc');
    /** Where the unit's absolute paths are in this test. */
    const here = (path: string) =>
      path
        .replace(/^\/usr\/local\//, `${prefix}/`)
        .replace(stateDirectory, state)
        .replace(/^\/etc\//, `${etc}/`);
    const execStart = one('ExecStart');
    // What this reading of the unit understands: no quoting, specifiers or variables.
    expect(execStart).toMatch(/^[^"'%$\\]+$/);
    const environment: Record<string, string> = {};
    for (const assignment of settings.get('Environment') ?? []) {
      const [, name, value] = /^([A-Z_][A-Z0-9_]*)=([^\s"'%$\\]*)$/.exec(assignment) ?? [];
      expect(name, `Environment=${assignment}: one NAME=VALUE, unquoted`).toBeDefined();
      environment[name!] = here(value!);
    }
    expect(environment).toMatchObject({ NODE_ENV: 'production', DATABASE_URL: `sqlite:${state}/agentauth.db` });

    // What systemd does before ExecStart: the state directory, the service's own (0700), and the
    // environment file, read as root; its lines override the Environment= lines.
    mkdirSync(state, { mode: 0o700 });
    if (asRoot) chownSync(state, SERVICE_USER, SERVICE_USER);
    const port = String(await freePort());
    const file = {
      JWT_SECRET: randomBytes(48).toString('base64'),
      BASE_URL: `http://127.0.0.1:${port}`,
      PORT: port,
    };
    mkdirSync(dirname(here(one('EnvironmentFile'))), { recursive: true });
    writeFileSync(
      here(one('EnvironmentFile')),
      Object.entries(file)
        .map(([name, value]) => `${name}=${value}\n`)
        .join(''),
      { mode: 0o600 },
    );
    const env = { PATH: SERVICE_PATH, STATE_DIRECTORY: state, ...environment, ...file };
    const asService = (command: string[]) =>
      asRoot
        ? ['setpriv', `--reuid=${SERVICE_USER}`, `--regid=${SERVICE_USER}`, '--clear-groups', '--', ...command]
        : command;
    const cwd = here(one('WorkingDirectory'));
    const before = listing(prefix);

    const [executable, ...serveArguments] = execStart.split(/\s+/).map(here);
    server = spawnCommand(asService([executable!, ...serveArguments]), { env, cwd, port });
    await waitReady(server);
    const ready = await fetch(`${server.baseUrl}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ status: 'ready', database: 'sqlite' });

    // A website and an agent, made by the installed command as the service's user, then a whole sign-in.
    const agentauth = async (...args: string[]) => {
      const [file, ...rest] = asService([executable!, ...args]);
      return JSON.parse((await run(file!, rest, { env, cwd })).stdout) as Record<string, string>;
    };
    const client = await agentauth(
      'client',
      'create',
      '--name',
      'Acme Notes',
      '--redirect-uri',
      'https://notes.acme.example/callback',
      '--json',
    );
    const agent = await agentauth(
      'agent',
      'create',
      '--owner-email',
      'ada@example.com',
      '--name',
      'Ada’s agent',
      '--json',
    );
    const party: Party = {
      clientId: client.client_id!,
      clientSecret: client.client_secret!,
      redirectUri: 'https://notes.acme.example/callback',
      agentId: agent.agent_id!,
      agentSecret: agent.agent_secret!,
    };
    const at = { baseUrl: server.baseUrl } as TestServer;
    const tokens = await obtainTokens(at, party, { scope: 'openid email' });
    expect(tokens).toMatchObject({ token_type: 'Bearer', scope: 'openid email' });
    const userinfo = await fetch(`${server.baseUrl}/userinfo`, {
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });
    expect(userinfo.status).toBe(200);
    expect(await userinfo.json()).toMatchObject({ sub: party.agentId, email: 'ada@example.com' });

    expect(await server.kill('SIGTERM')).toEqual({ code: 0, signal: null });
    expect(listing(prefix)).toEqual(before);
    // The database, the service's alone; no development secret beside it (JWT_SECRET was set).
    expect(readdirSync(state).filter((name) => !/^agentauth\.db(-wal|-shm)?$/.test(name))).toEqual([]);
    const database = statSync(join(state, 'agentauth.db'));
    expect(database.mode & 0o777).toBe(0o600);
    if (asRoot) expect(database.uid).toBe(SERVICE_USER);
    expect(server.output()).not.toContain(file.JWT_SECRET);
  });
});

describe('the tarball installed into a project, its dependencies hoisted beside it', () => {
  it('serves its pages and the passkey script from where npm put them', async () => {
    // The layout this case is about: @simplewebauthn/browser beside agentauth, not inside it.
    const hoisted = join(project, 'node_modules/@simplewebauthn/browser');
    expect(existsSync(hoisted)).toBe(true);
    expect(existsSync(join(project, 'node_modules/agentauth/node_modules/@simplewebauthn/browser'))).toBe(false);
    const port = String(await freePort());
    // Its own command, not `npx`: npm exec ends on SIGTERM without its server, which went on running.
    projectServer = spawnCommand([join(project, 'node_modules/.bin/agentauth'), 'serve'], {
      env: cleanEnv({ PORT: port, HOST: '127.0.0.1' }),
      cwd: project,
      port,
    });
    await waitReady(projectServer);
    const script = await fetch(`${projectServer.baseUrl}/assets/simplewebauthn-browser.js`);
    expect(script.status).toBe(200);
    expect(Buffer.from(await script.arrayBuffer())).toEqual(
      readFileSync(join(hoisted, 'dist/bundle/index.umd.min.js')),
    );
    const page = await fetch(`${projectServer.baseUrl}/assets/authorize.js`);
    expect(await page.text()).toBe(readFileSync(join(ROOT, 'src/web/assets/authorize.js'), 'utf8'));
    // Its data where the docs say: ./data of the directory it runs in.
    expect(existsSync(join(project, 'data/agentauth.db'))).toBe(true);
    expect((await projectServer.kill('SIGTERM')).code).toBe(0);
  });
});
