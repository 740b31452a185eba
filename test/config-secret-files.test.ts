/**
 * Secrets from files (docs/reference/configuration.md): JWT_SECRET_FILE, DATABASE_URL_FILE and the
 * other secrets' NAME_FILE, as a container's or a systemd unit's secrets arrive. The server and
 * the CLI read the file's text without its final line break; both variables set, or a file that
 * cannot be read or is empty, stop start-up with one line that names the variable and the path,
 * never the secret. SQLite only, chosen here: a file's reading is the same whatever the engine.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { jwtVerify } from 'jose';
import { afterAll, describe, expect, it } from 'vitest';
import { obtainTokens, type Party, postForm } from './helpers/flow.ts';
import { freePort } from './helpers/net.ts';
import { spawnServer, waitReady } from './helpers/server-process.ts';
import type { TestServer } from './helpers/server.ts';

const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), 'agentauth-secret-files-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SECRET = 'a-secret-read-from-a-file-of-at-least-32-bytes';
/** A file holding `text`, in this suite's directory. */
function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text, { mode: 0o600 });
  return path;
}

// Vite puts BASE_URL=/ into the test environment; none of the secrets may come from it either.
const base = {
  ...process.env,
  BASE_URL: undefined,
  NODE_ENV: undefined,
  JWT_SECRET: undefined,
  DATABASE_URL: undefined,
} as NodeJS.ProcessEnv;

/** `agentauth ARGS` with this environment: its exit code and what it wrote. */
async function agentauth(args: string[], env: Record<string, string>) {
  try {
    // A server that starts where it should have refused is stopped after a while.
    const { stdout, stderr } = await run('./bin/agentauth', args, { env: { ...base, ...env }, timeout: 15_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failure = error as { code: number; stdout: string; stderr: string };
    return { code: failure.code, stdout: failure.stdout, stderr: failure.stderr };
  }
}

describe('secrets from files', () => {
  it('a server and the CLI read JWT_SECRET_FILE and DATABASE_URL_FILE, without the final line break, also in production', async () => {
    const env = {
      NODE_ENV: 'production',
      JWT_SECRET_FILE: file('jwt_secret', `${SECRET}\n`),
      DATABASE_URL_FILE: file('database_url', `sqlite:${join(dir, 'data', 'agentauth.db')}\r\n`),
      LOG_LEVEL: 'warn',
    };
    // Commands other than serve and migrate never create a database.
    const migrated = await agentauth(['migrate'], env);
    expect(migrated.code, migrated.stderr).toBe(0);
    const client = JSON.parse(
      (
        await agentauth(
          ['client', 'create', '--name', 'Files', '--redirect-uri', 'https://files.example/cb', '--json'],
          env,
        )
      ).stdout,
    ) as { client_id: string; client_secret: string };
    const agent = JSON.parse(
      (await agentauth(['agent', 'create', '--owner-email', 'files@example.com', '--json'], env)).stdout,
    ) as { agent_id: string; agent_secret: string };
    const port = await freePort();
    // Empty counts as unset: nothing of the test's own environment stands in for the files.
    const server = spawnServer({
      ...env,
      JWT_SECRET: '',
      DATABASE_URL: '',
      PORT: String(port),
      HOST: '127.0.0.1',
      BASE_URL: `http://127.0.0.1:${port}`,
    });
    try {
      await waitReady(server);
      const node = { baseUrl: server.baseUrl } as TestServer;
      const party: Party = {
        clientId: client.client_id,
        clientSecret: client.client_secret,
        redirectUri: 'https://files.example/cb',
        agentId: agent.agent_id,
        agentSecret: agent.agent_secret,
      };
      // The client secret the CLI sealed under the file's secret opens in the server: one secret.
      const tokens = await obtainTokens(node, party);
      const key = new TextEncoder().encode(SECRET);
      const { payload } = await jwtVerify(tokens.access_token, key, { audience: client.client_id });
      expect(payload.sub).toBe(agent.agent_id);
      // The line break is no part of the key.
      await expect(jwtVerify(tokens.access_token, new TextEncoder().encode(`${SECRET}\n`))).rejects.toThrow(
        /signature verification failed/,
      );
      const introspection = await postForm(node, '/introspect', {
        token: tokens.access_token,
        client_id: client.client_id,
        client_secret: client.client_secret,
      });
      expect(await introspection.json()).toMatchObject({ active: true, sub: agent.agent_id });
    } finally {
      await server.kill('SIGTERM');
    }
  });

  const missing = join(dir, 'missing');
  const folder = join(dir, 'a-folder');
  mkdirSync(folder);
  const uid = process.getuid!();
  it.each([
    [
      'JWT_SECRET and JWT_SECRET_FILE both',
      () => ({ JWT_SECRET: SECRET, JWT_SECRET_FILE: file('both', `${SECRET}\n`) }),
      'JWT_SECRET and JWT_SECRET_FILE are both set: set only one of them',
    ],
    [
      'a file that does not exist',
      () => ({ JWT_SECRET_FILE: missing }),
      `JWT_SECRET_FILE names ${missing}, which cannot be read by this user (uid ${uid}) (ENOENT)`,
    ],
    [
      'a folder',
      () => ({ JWT_SECRET_FILE: folder }),
      `JWT_SECRET_FILE names ${folder}, which cannot be read by this user (uid ${uid}) (EISDIR)`,
    ],
    [
      'an empty file',
      () => ({ JWT_SECRET_FILE: file('empty', '\n') }),
      `JWT_SECRET_FILE names ${join(dir, 'empty')}, which is empty`,
    ],
    [
      'a file holding a short secret',
      () => ({ JWT_SECRET_FILE: file('short', 'short-but-secret\n') }),
      'JWT_SECRET (from JWT_SECRET_FILE) must be at least 32 bytes long',
    ],
    [
      'a file holding a URL of no database',
      () => ({ DATABASE_URL_FILE: file('database', 'mysql://root:hunter2@db/agentauth\n') }),
      'DATABASE_URL must start with sqlite: or postgres://',
    ],
  ])('refuses %s at start, in one line naming the variable, never the secret', async (_case, given, message) => {
    const env = { DATABASE_URL: `sqlite:${join(dir, 'refused', 'agentauth.db')}`, ...given() };
    if ('DATABASE_URL_FILE' in env) delete (env as { DATABASE_URL?: string }).DATABASE_URL;
    const { code, stdout, stderr } = await agentauth(['serve'], { ...env, PORT: String(await freePort()) });
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toBe(`agentauth: ${message}\n`);
    for (const secret of [SECRET, 'short-but-secret', 'hunter2']) expect(stderr).not.toContain(secret);
  });
});
