/**
 * The container image (docs/guides/operator.md, Containers; docs/design.md §20): the repository's
 * Dockerfile, built unchanged with podman, runs read-only as uid 1000 with its data on a volume;
 * a sign-in goes through it on SQLite and on PostgreSQL (two containers on one database, the
 * flow hopping between them); a stop lets an in-flight request finish and exits 0 promptly; a new
 * container on the same volume or database has lost nothing.
 *
 * It needs podman and the base image, node:24-bookworm-slim: CI's machines cannot reach an image
 * registry, so .ci/run builds a local stand-in under that name (.ci/container-base.sh). Without
 * either the suite is skipped with the reason printed, unless AGENTAUTH_CONTAINER_TESTS=required
 * (CI), when it fails. PostgreSQL comes from the postgres project (vitest.config.ts lists this
 * suite in POSTGRES_ONLY), so the suite runs once, in that project; SQLite is the container's own.
 * It takes a few minutes, most of them the image's build (the figures are printed).
 */
import { execFile, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  authenticate,
  continueFlow,
  obtainTokens,
  type Party,
  postForm,
  redeem,
  startFlow,
  type Tokens,
} from './helpers/flow.ts';
import { freePort } from './helpers/net.ts';
import { createDatabase } from './helpers/postgres-cluster.ts';
import type { TestServer } from './helpers/server.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** The official name the Dockerfile builds FROM; on CI's machines, the stand-in of .ci/container-base.sh. */
const BASE_IMAGE = 'docker.io/library/node:24-bookworm-slim';
const REQUIRED = process.env.AGENTAUTH_CONTAINER_TESTS === 'required';
/** podman's settings for CI's machines (.ci/containers.conf), unless the environment names others. */
const PODMAN_ENV = {
  ...process.env,
  CONTAINERS_CONF: process.env.CONTAINERS_CONF || join(ROOT, '.ci/containers.conf'),
};

/** Why the suite cannot run here, or undefined when it can. */
function unavailableReason(): string | undefined {
  const version = spawnSync('podman', ['--version'], { env: PODMAN_ENV, encoding: 'utf8' });
  if (version.error || version.status !== 0)
    return 'container tests skipped: podman is not installed (apt-get install -y podman runc)';
  const base = spawnSync('podman', ['image', 'exists', BASE_IMAGE], { env: PODMAN_ENV });
  if (base.status !== 0)
    return `container tests skipped: no ${BASE_IMAGE} here and no registry to pull it from; build the stand-in with .ci/container-base.sh`;
  return undefined;
}

const unavailable = unavailableReason();
if (unavailable && !REQUIRED) console.warn(`\n${unavailable}\n`);

const run = promisify(execFile);
/** `podman ARGS`: its standard output, or an error carrying its standard error. */
async function podman(args: string[], timeoutMs = 120_000): Promise<string> {
  try {
    const { stdout } = await run('podman', args, {
      env: PODMAN_ENV,
      timeout: timeoutMs,
      maxBuffer: 64 * 1024 * 1024,
    });
    return stdout;
  } catch (error) {
    const failure = error as { code?: number; stderr?: string; message: string };
    throw Object.assign(new Error(`podman ${args.slice(0, 2).join(' ')} failed (${failure.code}): ${failure.stderr}`), {
      code: failure.code,
      stderr: failure.stderr ?? '',
    });
  }
}

const suffix = randomBytes(4).toString('hex');
const IMAGE = `localhost/agentauth-test-container-${suffix}`;
const made = { containers: [] as string[], volumes: [] as string[] };
const figures: string[] = [];
/** The secrets' files the containers mount, made once the suite runs. */
let secrets = '';
const JWT_SECRET = `container-secret-${randomBytes(24).toString('base64url')}`;

/**
 * How every container here runs: read-only, as uid 1000, with no capability and no way to gain
 * one, on the host's network (the tests' PostgreSQL is on its loopback or a socket).
 */
const HARDENED = [
  '--read-only',
  '--user',
  '1000',
  '--cap-drop=ALL',
  '--security-opt=no-new-privileges',
  '--network=host',
];
const environment = (env: Record<string, string>) =>
  Object.entries(env).flatMap(([name, value]) => ['-e', `${name}=${value}`]);

/** `agentauth ARGS --json` in a container of its own, as an operator runs a command: its JSON answer. */
async function command(mounts: string[], env: Record<string, string>, args: string[]) {
  const out = await podman([
    'run',
    '--rm',
    ...HARDENED,
    '--no-healthcheck',
    ...mounts,
    ...environment(env),
    IMAGE,
    ...args,
  ]);
  return JSON.parse(out) as Record<string, unknown>;
}

interface Node {
  name: string;
  server: TestServer;
  port: number;
}

/** `podman run -d IMAGE` (the image's own command, serve), awaited until /readyz answers 200. */
async function startNode(
  label: string,
  mounts: string[],
  env: Record<string, string>,
): Promise<Node & { readyMs: number }> {
  const name = `agentauth-test-${suffix}-${label}`;
  const port = await freePort();
  const started = Date.now();
  made.containers.push(name);
  await podman([
    'run',
    '-d',
    '--name',
    name,
    ...HARDENED,
    ...mounts,
    ...environment({ ...env, PORT: String(port), HOST: '127.0.0.1' }),
    IMAGE,
  ]);
  const server = { baseUrl: `http://127.0.0.1:${port}` } as TestServer;
  const deadline = started + 30_000;
  while (Date.now() < deadline) {
    const ok = await fetch(`${server.baseUrl}/readyz`, { signal: AbortSignal.timeout(1000) }).then(
      (response) => response.ok,
      () => false,
    );
    if (ok) return { name, server, port, readyMs: Date.now() - started };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${name} was not ready within 30 s:\n${await podman(['logs', name]).catch(String)}`);
}

/** `podman stop`: how long it took and the exit status the container ended with. */
async function stopNode(node: Node): Promise<{ ms: number; exitCode: number }> {
  const started = Date.now();
  await podman(['stop', '--time', '20', node.name], 60_000);
  const ms = Date.now() - started;
  return { ms, exitCode: Number((await podman(['inspect', '--format', '{{.State.ExitCode}}', node.name])).trim()) };
}

/**
 * A refresh at /token whose body arrives only after `between` has run (the stop of the node): a
 * request in flight when the signal comes. Resolves with its status and body.
 */
function refreshAcrossStop(
  node: Node,
  party: Party,
  refreshToken: string,
  between: () => Promise<unknown>,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const body = new URLSearchParams({
    grant_type: 'refresh_token',
    refresh_token: refreshToken,
    client_id: party.clientId,
    client_secret: party.clientSecret,
  }).toString();
  const half = Math.floor(body.length / 2);
  return new Promise((resolve, reject) => {
    const outgoing = request(
      `${node.server.baseUrl}/token`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': String(body.length) },
      },
      (response) => {
        let text = '';
        response.on('data', (chunk: Buffer) => (text += chunk.toString()));
        response.on('end', () => resolve({ status: response.statusCode!, body: JSON.parse(text) }));
      },
    );
    outgoing.on('error', reject);
    outgoing.write(body.slice(0, half));
    outgoing.flushHeaders();
    between().then(
      () => outgoing.end(body.slice(half)),
      (error: unknown) => reject(error),
    );
  });
}

const refresh = (node: Node, party: Party, refreshToken: string) =>
  postForm(node.server, '/token', {
    grant_type: 'refresh_token',
    refresh_token: refreshToken,
    client_id: party.clientId,
    client_secret: party.clientSecret,
  });

/** `agentauth migrate` in a container, as an operator prepares a database before the nodes start. */
async function migrate(mounts: string[], env: Record<string, string>): Promise<void> {
  const out = await podman([
    'run',
    '--rm',
    ...HARDENED,
    '--no-healthcheck',
    ...mounts,
    ...environment(env),
    IMAGE,
    'migrate',
  ]);
  expect(out).toMatch(/^migrations applied to /);
}

/** The client and the agent, made by the CLI in the image. */
async function createParty(mounts: string[], env: Record<string, string>): Promise<Party> {
  const redirectUri = 'https://container.example/callback';
  const client = await command(mounts, env, [
    'client',
    'create',
    '--name',
    'Container site',
    '--redirect-uri',
    redirectUri,
    '--json',
  ]);
  const agent = await command(mounts, env, ['agent', 'create', '--owner-email', 'ops@example.com', '--json']);
  return {
    clientId: client.client_id as string,
    clientSecret: client.client_secret as string,
    redirectUri,
    agentId: agent.agent_id as string,
    agentSecret: agent.agent_secret as string,
  };
}

describe.skipIf(unavailable !== undefined && !REQUIRED)('the container image', () => {
  if (unavailable) {
    it('can be built and run here (AGENTAUTH_CONTAINER_TESTS=required)', () => {
      throw new Error(unavailable);
    });
    return;
  }

  beforeAll(async () => {
    secrets = mkdtempSync(join(tmpdir(), 'agentauth-container-'));
    const started = Date.now();
    // --format docker: the OCI format has no HEALTHCHECK, and podman would drop it. --pull=never:
    // the base image is the one here. --network=host: apt-get and npm ci reach their registries.
    await podman(['build', '--format', 'docker', '--pull=never', '--network=host', '-t', IMAGE, ROOT], 15 * 60_000);
    figures.push(`build ${((Date.now() - started) / 1000).toFixed(0)} s`);
  }, 16 * 60_000);

  afterAll(async () => {
    for (const name of made.containers) await podman(['rm', '--force', '--volumes', name]).catch(() => undefined);
    for (const name of made.volumes) await podman(['volume', 'rm', '--force', name]).catch(() => undefined);
    await podman(['rmi', '--force', IMAGE]).catch(() => undefined);
    if (secrets) rmSync(secrets, { recursive: true, force: true });
    console.log(`container image: ${figures.join(', ')}`);
  }, 120_000);

  it('is what the Dockerfile says: user node, a /data volume, port 3000, a health check, serve by default', async () => {
    const [image] = JSON.parse(await podman(['image', 'inspect', IMAGE])) as Array<{
      Size: number;
      Config: Record<string, unknown>;
      Healthcheck?: { Test: string[] };
    }>;
    figures.push(`size ${(image!.Size / 1e6).toFixed(0)} MB`);
    expect(image!.Config).toMatchObject({
      User: 'node',
      Volumes: { '/data': {} },
      ExposedPorts: { '3000/tcp': {} },
      Entrypoint: ['node', '--max-semi-space-size=4', '/app/bin/agentauth'],
      Cmd: ['serve'],
    });
    expect(image!.Config.Env).toEqual(expect.arrayContaining(['DATABASE_URL=sqlite:///data/agentauth.db']));
    expect(image!.Healthcheck?.Test.join(' ')).toMatch(/^CMD node -e .*\/readyz/);
    // The final stage holds the bundle and the pages' files, not the sources: nothing to bundle at start.
    const listing = await podman(['run', '--rm', '--no-healthcheck', '--entrypoint', 'ls', IMAGE, '/app', '/app/src']);
    expect(listing.split('\n').filter(Boolean).sort()).toEqual(
      ['/app/src:', '/app:', 'bin', 'dist', 'node_modules', 'package.json', 'src', 'web'].sort(),
    );
  });

  it('on SQLite: serves read-only as uid 1000 from a volume, stops gracefully, and a new container loses nothing', async () => {
    const volume = `agentauth-test-${suffix}-data`;
    made.volumes.push(volume);
    await podman(['volume', 'create', volume]);
    // The secret as a mounted file (a Compose secret), readable by uid 1000 only.
    const secretFile = join(secrets, 'jwt_secret');
    writeFileSync(secretFile, `${JWT_SECRET}\n`, { mode: 0o400 });
    if (process.getuid?.() === 0) spawnSync('chown', ['1000', secretFile]);
    const mounts = ['-v', `${volume}:/data`, '-v', `${secretFile}:/run/secrets/jwt_secret:ro`];
    const env = { NODE_ENV: 'production', JWT_SECRET_FILE: '/run/secrets/jwt_secret' };

    await migrate(mounts, env);
    const party = await createParty(mounts, env);
    const first = await startNode('sqlite-1', mounts, { ...env, BASE_URL: 'http://agentauth.test' });
    figures.push(`ready in ${first.readyMs} ms (new volume)`);
    expect((await podman(['exec', first.name, 'id', '-u'])).trim()).toBe('1000');
    // Not even root in the container writes the image's files; the volume is the server's.
    await expect(podman(['exec', '--user', '0', first.name, 'touch', '/app/written'])).rejects.toMatchObject({
      stderr: expect.stringContaining('Read-only file system'),
    });
    await podman(['exec', first.name, 'touch', '/data/written']);
    // The command the start-up hint names is the one that works in the container.
    const logs = await run('podman', ['logs', first.name], { env: PODMAN_ENV });
    expect(logs.stdout + logs.stderr).toContain(
      'the console has no account yet: run `agentauth account create --email you@example.com --admin`',
    );
    expect((await podman(['exec', first.name, 'agentauth', '--version'])).trim()).toMatch(/^\d+\.\d+\.\d+$/);
    // The image's HEALTHCHECK, run now (podman runs it on a systemd timer, which CI has not).
    await podman(['healthcheck', 'run', first.name]);
    expect((await podman(['inspect', '--format', '{{.State.Health.Status}}', first.name])).trim()).toBe('healthy');

    const tokens = await obtainTokens(first.server, party);
    // A refresh in flight when podman stop sends SIGTERM is answered; then the node exits 0.
    let stopping: Promise<{ ms: number; exitCode: number }> | undefined;
    const inFlight = await refreshAcrossStop(first, party, tokens.refresh_token, async () => {
      stopping = stopNode(first);
      await new Promise((resolve) => setTimeout(resolve, 500));
    });
    expect(inFlight.status).toBe(200);
    const kept = inFlight.body as unknown as Tokens;
    expect(kept.refresh_token).toMatch(/.{40,}/);
    const stopped = await stopping!;
    expect(stopped.exitCode).toBe(0);
    // SHUTDOWN_TIMEOUT is 10 s; podman would send SIGKILL after its --time, 20 s.
    expect(stopped.ms).toBeLessThan(10_000);
    figures.push(`stop ${stopped.ms} ms with a request in flight`);

    // A new container on the same volume: the client, the agent and the refresh token are there.
    const second = await startNode('sqlite-2', mounts, { ...env, BASE_URL: 'http://agentauth.test' });
    figures.push(`ready in ${second.readyMs} ms (restart)`);
    const refreshed = await refresh(second, party, kept.refresh_token);
    expect(refreshed.status).toBe(200);
    await expect(obtainTokens(second.server, party)).resolves.toMatchObject({ token_type: 'Bearer' });
    const listed = await command(mounts, env, ['client', 'list', '--json']);
    expect(listed.clients).toEqual([expect.objectContaining({ client_id: party.clientId, name: 'Container site' })]);
    expect((await stopNode(second)).exitCode).toBe(0);
  }, 300_000);

  it('on PostgreSQL: two containers serve one database; a code issued through one is redeemed at the other', async () => {
    const database = await createDatabase(inject('postgresUrl'));
    try {
      // The tests' cluster listens on a unix socket in a directory of its own (or TEST_DATABASE_URL
      // names a server on the loopback): the containers get the directory.
      const socket = new URL(database.url).searchParams.get('host');
      const mounts = socket?.startsWith('/') ? ['-v', `${socket}:${socket}`] : [];
      const env = { DATABASE_URL: database.url, JWT_SECRET, BASE_URL: 'http://agentauth.test' };
      await migrate(mounts, env);
      const party = await createParty(mounts, env);
      const [a, b] = await Promise.all([startNode('pg-a', mounts, env), startNode('pg-b', mounts, env)]);
      figures.push(`ready in ${Math.max(a!.readyMs, b!.readyMs)} ms (PostgreSQL, two at once)`);

      const started = await startFlow(a!.server, party);
      expect((await authenticate(b!.server, party, started.requestId)).status).toBe(200);
      const redirect = await continueFlow(a!.server, started);
      expect(redirect.status).toBe(302);
      const code = new URL(redirect.headers.get('location')!).searchParams.get('code')!;
      const exchanged = await redeem(b!.server, party, code, started.verifier);
      expect(exchanged.status).toBe(200);
      const tokens = (await exchanged.json()) as Tokens;
      // The refresh token issued at one node is rotated at the other.
      const rotated = await refresh(a!, party, tokens.refresh_token);
      expect(rotated.status).toBe(200);
      const kept = (await rotated.json()) as Tokens;

      for (const node of [a!, b!]) expect((await stopNode(node)).exitCode).toBe(0);
      const again = await startNode('pg-c', mounts, env);
      expect((await refresh(again, party, kept.refresh_token)).status).toBe(200);
      expect((await stopNode(again)).exitCode).toBe(0);
    } finally {
      await database.drop();
    }
  }, 300_000);
});
