/**
 * A fresh server's first hour for its operator (issue 21): with no account yet, the start-up
 * warning and the console's sign-in page name the command that makes the first admin, and that
 * command, run as shown with the server's environment, gives a setup link that signs them in.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { agentauthCommand } from '../../src/paths.ts';
import { ConsoleSession } from '../helpers/console.ts';
import { freePort } from '../helpers/net.ts';
import { startTestServer, TEST_JWT_SECRET, type TestServer } from '../helpers/server.ts';
import { spawnServer, waitReady } from '../helpers/server-process.ts';

const run = promisify(execFile);
const servers: TestServer[] = [];
afterAll(async () => {
  for (const server of servers) await server.close();
});

/** The command in the page's snippet, unescaped as the browser shows it. */
function commandOnPage(html: string): string | undefined {
  const code = /<code id="first-admin-command">([^<]*)<\/code>/.exec(html)?.[1];
  return code?.replaceAll('&#64;', '@').replaceAll('&amp;', '&');
}

describe('the first admin of a fresh server', () => {
  it('is told how to be made, at start-up and on the sign-in page, and the command shown works', async () => {
    const warnings: string[] = [];
    const server = await startTestServer({ warn: (message) => warnings.push(message) });
    servers.push(server);
    expect(warnings.filter((line) => line.includes('the console has no account yet'))).toEqual([
      "the console has no account yet: run `agentauth account create --email you@example.com --admin` with this server's environment, then open the setup link it prints",
    ]);

    const visitor = new ConsoleSession(server.baseUrl);
    const page = await visitor.get('/console/sign-in');
    expect(page.status).toBe(200);
    expect(page.text).toContain('This server has no account yet');
    // Nobody can invite yet: the page does not send the first admin looking for someone who can.
    expect(page.text).not.toContain('Ask someone who has one for an invitation');
    const command = commandOnPage(page.text);
    expect(command).toBe('agentauth account create --email you@example.com --admin');

    // The operator runs it as shown, with their own address, in the server's environment.
    const args = command!.split(' ').slice(1);
    args[args.indexOf('you@example.com')] = 'first.admin@example.com';
    const { stdout } = await run('./bin/agentauth', [...args, '--json'], {
      env: {
        ...process.env,
        DATABASE_URL: server.databaseUrl,
        BASE_URL: server.baseUrl,
        JWT_SECRET: TEST_JWT_SECRET,
        NODE_ENV: undefined,
      } as NodeJS.ProcessEnv,
    });
    const created = JSON.parse(stdout) as { role: string; setup_link: string };
    expect(created.role).toBe('admin');
    const admin = new ConsoleSession(server.baseUrl);
    const link = created.setup_link.replace(server.baseUrl, '');
    expect((await admin.get(link)).status).toBe(200);
    expect((await admin.post(link)).location).toBe('/console/account?notice=welcome');
    expect((await admin.get('/console/admin')).status).toBe(200);

    // Once an account exists, neither the page nor a node starting on the database says it.
    const after = await visitor.get('/console/sign-in');
    expect(after.text).not.toContain('first-admin');
    expect(after.text).toContain('Ask someone who has one for an invitation');
    const quiet: string[] = [];
    servers.push(await startTestServer({ databaseUrl: server.databaseUrl, warn: (message) => quiet.push(message) }));
    expect(quiet.filter((line) => line.includes('no account yet'))).toEqual([]);
  });
});

describe('the command the hints name', () => {
  const ROOT = resolve(import.meta.dirname, '..', '..');
  const BIN = join(ROOT, 'bin', 'agentauth');

  it('is ./bin/agentauth when a checkout runs it, where agentauth is on no PATH', async () => {
    // A fresh database of this project's engine, with no account, for the command to start on.
    const fresh = await startTestServer();
    servers.push(fresh);
    const port = await freePort();
    const server = spawnServer({
      PORT: String(port),
      BASE_URL: `http://127.0.0.1:${port}`,
      DATABASE_URL: fresh.databaseUrl,
      JWT_SECRET: TEST_JWT_SECRET,
      // The Node this suite runs on, and the system's folders: no agentauth on any of them.
      PATH: `${dirname(process.execPath)}:/usr/bin:/bin`,
    });
    try {
      await waitReady(server);
      expect(server.output()).toContain(
        'the console has no account yet: run `./bin/agentauth account create --email you@example.com --admin`',
      );
    } finally {
      await server.kill('SIGTERM');
    }
  });

  it('is agentauth when that name on the PATH is this program, or the process is not the command', () => {
    const folder = mkdtempSync(join(tmpdir(), 'agentauth-path-'));
    try {
      mkdirSync(join(folder, 'bin'));
      symlinkSync(BIN, join(folder, 'bin', 'agentauth'));
      expect(agentauthCommand(BIN, ROOT, `/nonexistent:${join(folder, 'bin')}`)).toBe('agentauth');
      expect(agentauthCommand(BIN, ROOT, '/nonexistent')).toBe('./bin/agentauth');
      expect(agentauthCommand(BIN, join(ROOT, 'docs'), '')).toBe(BIN);
      expect(agentauthCommand('/usr/lib/node_modules/vitest/vitest.mjs', ROOT, '')).toBe('agentauth');
      expect(agentauthCommand(undefined, ROOT, '')).toBe('agentauth');
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
