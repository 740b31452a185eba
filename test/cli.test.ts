/** The agentauth CLI (docs/design.md §7) and `agentauth serve` as a real process (§8, §10). */
import { freePort } from './helpers/net.ts';
import { spawnServer, waitReady } from './helpers/server-process.ts';
import { ConsoleSession, createPasswordAccount, signIn } from './helpers/console.ts';
import { startTestServer } from './helpers/server.ts';
import { obtainCode, obtainTokens, redeem } from './helpers/flow.ts';
import { digest } from '../src/crypto.ts';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), 'agentauth-cli-'));
// Vite puts BASE_URL=/ into the test environment; the CLI must not inherit it.
const env = {
  ...process.env,
  DATABASE_URL: `sqlite:${join(dir, 'cli.db')}`,
  JWT_SECRET: undefined,
  NODE_ENV: undefined,
  BASE_URL: undefined,
} as NodeJS.ProcessEnv;
afterAll(() => rmSync(dir, { recursive: true, force: true }));
// The database the commands use; none of them but serve and migrate makes one.
beforeAll(() => run('./bin/agentauth', ['migrate'], { env }));

async function cli(...args: string[]): Promise<Record<string, unknown>> {
  const { stdout } = await run('./bin/agentauth', [...args, '--json'], { env });
  return JSON.parse(stdout) as Record<string, unknown>;
}

/** As cli(), with more of the environment (BASE_URL of a server on the same database). */
async function cliWith(extraEnv: Record<string, string>, ...args: string[]): Promise<Record<string, unknown>> {
  const { stdout } = await run('./bin/agentauth', [...args, '--json'], { env: { ...env, ...extraEnv } });
  return JSON.parse(stdout) as Record<string, unknown>;
}

async function cliFails(args: string[], extraEnv: Record<string, string> = {}): Promise<string> {
  try {
    await run('./bin/agentauth', args, { env: { ...env, ...extraEnv } });
  } catch (error) {
    const failure = error as { code: number; stderr: string };
    expect(failure.code).toBe(1);
    // What follows the line naming the database, when the command got as far as opening it.
    return failure.stderr.replace(`database: ${join(dir, 'cli.db')}\n`, '');
  }
  throw new Error('expected the command to fail');
}

describe('agentauth --version', () => {
  it('prints the version of package.json, alone on its line, and exits 0', async () => {
    const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
    for (const flag of ['--version', '-V']) {
      const { stdout, stderr } = await run('./bin/agentauth', [flag], { env });
      expect(stdout).toBe(`${version}\n`);
      expect(stderr).toBe('');
    }
  });
});

describe('agentauth client and agent commands', () => {
  it('creates, lists, disables, enables and rotates clients', async () => {
    const created = await cli(
      'client',
      'create',
      '--name',
      'My App',
      '--redirect-uri',
      'https://app.example/cb',
      '--redirect-uri',
      'http://localhost:9000/cb',
      '--approval',
      'manual',
    );
    expect(created).toMatchObject({
      client_id: expect.stringMatching(/^cli_/),
      client_secret: expect.stringMatching(/^cls_[A-Za-z0-9_-]{43}$/),
      name: 'My App',
      approval: 'manual',
      status: 'active',
    });
    expect(created.redirect_uris).toEqual(['https://app.example/cb', 'http://localhost:9000/cb']);
    const id = created.client_id as string;
    expect(await cli('client', 'disable', id)).toEqual({ client_id: id, status: 'inactive' });
    const listed = (await cli('client', 'list')).clients as Array<Record<string, unknown>>;
    expect(listed.find((c) => c.client_id === id)).toMatchObject({ status: 'inactive' });
    expect(JSON.stringify(listed)).not.toContain('cls_');
    expect(await cli('client', 'enable', id)).toEqual({ client_id: id, status: 'active' });
    const rotated = await cli('client', 'rotate-secret', id);
    expect(rotated.client_secret).toMatch(/^cls_/);
    expect(rotated.client_secret).not.toBe(created.client_secret);
    // The development secret that encrypts client secrets is kept beside the database, private.
    expect(statSync(join(dir, 'jwt-secret')).mode & 0o777).toBe(0o600);
  });

  it('creates a public client (no secret) and a resource server (no redirect URI)', async () => {
    const publicClient = await cli(
      'client',
      'create',
      '--name',
      'Desktop MCP host',
      '--redirect-uri',
      'http://127.0.0.1/callback',
      '--public',
    );
    expect(publicClient).toMatchObject({
      client_id: expect.stringMatching(/^cli_/),
      token_endpoint_auth_method: 'none',
      source: 'manual',
      resources: [],
    });
    expect(publicClient).not.toHaveProperty('client_secret');
    await expect(cliFails(['client', 'rotate-secret', publicClient.client_id as string])).resolves.toMatch(
      /public client; it has no secret to rotate/,
    );

    const resourceServer = await cli(
      'client',
      'create',
      '--name',
      'Docs MCP server',
      '--resource',
      'https://mcp.example.com/mcp',
    );
    expect(resourceServer).toMatchObject({
      token_endpoint_auth_method: 'client_secret_post',
      redirect_uris: [],
      resources: ['https://mcp.example.com/mcp'],
      client_secret: expect.stringMatching(/^cls_/),
    });
    await expect(cliFails(['client', 'create', '--name', 'X', '--resource', '/relative'])).resolves.toMatch(
      /resource \/relative must be an absolute URI/,
    );
    await expect(cliFails(['client', 'create', '--name', 'X'])).resolves.toMatch(
      /at least one redirect URI is required/,
    );
    await expect(
      cliFails(['client', 'create', '--name', 'X', '--public', '--resource', 'https://mcp.example.com/mcp']),
    ).resolves.toMatch(/cannot be a public client/);
  });

  it('creates, lists, disables and rotates agents; the secret is shown once and stored hashed', async () => {
    const created = await cli(
      'agent',
      'create',
      '--owner-email',
      'owner@example.com',
      '--owner-name',
      'Owner',
      '--name',
      'bot',
    );
    expect(created).toMatchObject({
      agent_id: expect.stringMatching(/^agt_/),
      agent_secret: expect.stringMatching(/^aas_[A-Za-z0-9_-]{43}$/),
      owner_email: 'owner@example.com',
      name: 'bot',
      email_verified: false,
    });
    const id = created.agent_id as string;
    const listed = await cli('agent', 'list');
    expect(JSON.stringify(listed)).not.toContain(created.agent_secret as string);
    expect(await cli('agent', 'disable', id)).toEqual({ agent_id: id, status: 'disabled' });
    const rotated = await cli('agent', 'rotate-secret', id);
    expect(rotated.agent_secret).not.toBe(created.agent_secret);
  });

  it('updates a client under the rules of registration and deletes it, ending what it holds, with audit rows', async () => {
    const server = await startTestServer({ databaseUrl: env.DATABASE_URL! });
    try {
      const created = await cli('client', 'create', '--name', 'Typo site', '--redirect-uri', 'https://typo.exmaple/cb');
      const id = created.client_id as string;
      const updated = await cli(
        'client',
        'update',
        id,
        '--name',
        'Fixed site',
        '--redirect-uri',
        'https://fixed.example/cb',
        '--redirect-uri',
        'http://localhost:9000/cb',
        '--approval',
        'manual',
      );
      expect(updated).toMatchObject({
        client_id: id,
        name: 'Fixed site',
        redirect_uris: ['https://fixed.example/cb', 'http://localhost:9000/cb'],
        approval: 'manual',
        status: 'active',
      });
      expect(updated).not.toHaveProperty('client_secret');
      // Only what is given changes; the text form says what the client is now.
      const { stdout } = await run('./bin/agentauth', ['client', 'update', id, '--approval', 'auto'], { env });
      expect(stdout).toBe(
        `${id} is updated\nname:          Fixed site\nredirect URIs: https://fixed.example/cb http://localhost:9000/cb\napproval:      auto\n`,
      );
      const events = (await server.ctx.store.activity.list({ limit: 200 })).filter(
        (e) => e.target === id && e.action === 'website.update',
      );
      // Both commands may run within one second, where the list's order is the ids': compare as a set.
      expect(events.map((e) => [e.actor_id, e.detail]).sort()).toEqual([
        [null, 'cli: approval auto'],
        [
          null,
          'cli: name Fixed site; redirect URIs https://fixed.example/cb http://localhost:9000/cb; approval manual',
        ],
      ]);
      // The admins' Activity names the CLI as who did it.
      const admin = await createPasswordAccount(server.ctx, { role: 'admin' });
      const activity = await (await signIn(server.baseUrl, admin.email)).get('/console/admin/events');
      expect(activity.text).toMatch(/<span class="muted">CLI<\/span>[\s\S]*website\.update/);

      // Refused as at registration, with one clear line and exit 1; nothing changes.
      expect(await cliFails(['client', 'update', id, '--redirect-uri', 'http://fixed.example/cb'])).toMatch(
        /^agentauth: redirect URI http:\/\/fixed.example\/cb must use https.*\n$/,
      );
      expect(await cliFails(['client', 'update', id, '--name', ' '])).toMatch(
        /client name must be 1 to 200 characters/,
      );
      expect(await cliFails(['client', 'update', id, '--approval', 'sometimes'])).toMatch(
        /Allowed choices are auto, manual/,
      );
      expect(await cliFails(['client', 'update', id])).toMatch(/nothing to change/);
      expect(await cliFails(['client', 'update', 'cli_nobody', '--name', 'X'])).toMatch(/no client cli_nobody/);
      expect(await server.ctx.store.clients.find(id)).toMatchObject({ name: 'Fixed site', approval: 'auto' });

      // Delete: its tokens stop working and its code cannot be redeemed, in one step. (Made by the
      // server, whose JWT_SECRET seals its secret; the CLI here runs with another.)
      await cli('client', 'delete', id);
      const party = { ...(await server.createClient({ name: 'Doomed site' })), ...(await server.createAgent()) };
      const tokens = await obtainTokens(server, party);
      const unredeemed = await obtainCode(server, party);
      const deleted = await cli('client', 'delete', party.clientId);
      expect(deleted).toEqual({
        client_id: party.clientId,
        deleted: true,
        revoked: { grants: 1, codes: 1, requests: 0 },
      });
      expect(await server.ctx.store.clients.find(party.clientId)).toBeUndefined();
      const userinfo = await fetch(`${server.baseUrl}/userinfo`, {
        headers: { authorization: `Bearer ${tokens.access_token}` },
      });
      expect(userinfo.status).toBe(401);
      expect((await redeem(server, party, unredeemed.code, unredeemed.verifier)).status).toBe(401);
      const [event] = (await server.ctx.store.activity.list({ limit: 200 })).filter(
        (e) => e.target === party.clientId && e.action === 'website.delete',
      );
      expect(event).toMatchObject({ actor_id: null, detail: 'cli: Doomed site: grants 1, codes 1, requests 0' });
      expect(await cliFails(['client', 'delete', id])).toMatch(new RegExp(`no client ${id}`));
      const { stdout: text } = await run(
        './bin/agentauth',
        ['client', 'delete', (await server.createClient()).clientId],
        { env },
      );
      expect(text).toMatch(/^cli_\S+ is deleted; revoked 0 grant\(s\), expired 0 code\(s\), ended 0 request\(s\)\n$/);
    } finally {
      await server.close();
    }
  });

  it('refuses bad input with one clear line and exit code 1', async () => {
    expect(await cliFails(['client', 'create', '--name', 'X', '--redirect-uri', 'http://app.example/cb'])).toMatch(
      /^agentauth: redirect URI http:\/\/app.example\/cb must use https.*\n$/,
    );
    expect(
      await cliFails(['client', 'create', '--name', 'X', '--redirect-uri', 'https://app.example/cb#frag']),
    ).toMatch(/fragment/);
    expect(await cliFails(['agent', 'create', '--owner-email', 'not-an-email'])).toMatch(/not an email address/);
    expect(await cliFails(['client', 'disable', 'cli_nobody'])).toMatch(/no client cli_nobody/);
    expect(await cliFails(['client', 'list'], { PORT: 'abc' })).toBe(
      'agentauth: PORT must be a whole number >= 0 (got "abc")\n',
    );
  });
});

describe('agentauth account commands', () => {
  it('creates an admin with a one-time setup link that a server on the same database opens and signs in with', async () => {
    const server = await startTestServer({ databaseUrl: env.DATABASE_URL! });
    try {
      const now = Math.floor(Date.now() / 1000);
      const created = await cliWith(
        { BASE_URL: server.baseUrl, CONSOLE_LINK_TTL: '3600' },
        'account',
        'create',
        '--email',
        'Root.Admin@Example.com',
        '--name',
        'Root Admin',
        '--admin',
      );
      expect(created).toMatchObject({
        account_id: expect.stringMatching(/^acc_/),
        email: 'Root.Admin@Example.com',
        name: 'Root Admin',
        role: 'admin',
        status: 'active',
        email_verified: false,
      });
      const url = created.setup_link as string;
      expect(url.startsWith(`${server.baseUrl}/console/setup/`)).toBe(true);
      expect(`${server.baseUrl}${created.setup_link_path}`).toBe(url);
      const expiresAt = Date.parse(created.setup_link_expires_at as string) / 1000;
      expect(expiresAt).toBeGreaterThanOrEqual(now + 3600);
      expect(expiresAt).toBeLessThan(now + 3600 + 60);
      // Only the link's digest is stored.
      const token = url.slice(url.lastIndexOf('/') + 1);
      expect(await server.ctx.store.links.find(digest(token))).toMatchObject({
        purpose: 'setup',
        account_id: created.account_id,
        used_at: null,
      });
      const event = (await server.ctx.store.activity.list({ limit: 100 })).find(
        (e) => e.action === 'admin.create_account' && e.target === created.account_id,
      );
      expect(event).toMatchObject({ actor_id: null, detail: 'cli' });

      const person = new ConsoleSession(server.baseUrl);
      const landing = await person.get(url.replace(server.baseUrl, ''));
      expect(landing.status).toBe(200);
      expect(landing.text).toContain('Set up your account');
      expect((await person.post(url.replace(server.baseUrl, ''))).location).toBe('/console/account?notice=welcome');
      expect((await person.get('/console/admin')).status).toBe(200);
    } finally {
      await server.close();
    }
  });

  it('prints the link in text too, and refuses a duplicate, an invalid or an unknown email with one clear line and exit code 1', async () => {
    const { stdout } = await run('./bin/agentauth', ['account', 'create', '--email', 'text.person@example.com'], {
      env: { ...env, BASE_URL: 'https://id.example' },
    });
    expect(stdout).toMatch(
      /^account_id: acc_\S+\nemail: +text\.person@example\.com\nrole: +member\nsetup link: https:\/\/id\.example\/console\/setup\/lnk_[A-Za-z0-9_-]+\n\(the link works once, until \d{4}-\d\d-\d\dT/,
    );
    expect(await cliFails(['account', 'create', '--email', 'TEXT.person@example.com'])).toBe(
      'agentauth: TEXT.person@example.com: An account with this email already exists.\n',
    );
    expect(await cliFails(['account', 'create', '--email', 'not-an-email'])).toBe(
      'agentauth: not-an-email: Enter an email address, such as ada@example.com.\n',
    );
    expect(await cliFails(['account', 'create'])).toMatch(/required option '--email <email>' not specified/);
    for (const command of ['disable', 'enable', 'setup-link']) {
      expect(await cliFails(['account', command, 'nobody@example.com'])).toBe(
        'agentauth: no account with the email nobody@example.com\n',
      );
    }
    expect(await cliFails(['account', 'disable', 'not-an-email'])).toBe(
      'agentauth: not-an-email is not an email address\n',
    );
  });

  it('prints the path and what to set, never a guessed address, when BASE_URL is not set; exit 0', async () => {
    // The server may listen on any PORT: neither the default nor this command's PORT makes the link.
    for (const extra of [{}, { PORT: '42100' }]) {
      const { stdout, stderr } = await run(
        './bin/agentauth',
        ['account', 'create', '--email', `no.base.${Object.keys(extra).length}@example.com`],
        { env: { ...env, ...extra } },
      );
      expect(stdout).toMatch(
        /\nsetup link: \/console\/setup\/lnk_[A-Za-z0-9_-]+\nBASE_URL is not set, so this command does not know the server's address: open the path on the server's own address \(where its console is\), or set BASE_URL to the server's public URL to print the whole link\.\n\(the link works once, until \d{4}-/,
      );
      expect(stdout).not.toMatch(/https?:|localhost|3000|42100/);
      expect(stderr).toBe(`database: ${join(dir, 'cli.db')}\n`);
    }
    const json = await cli('account', 'setup-link', 'no.base.0@example.com');
    expect(json).toMatchObject({
      setup_link: null,
      setup_link_path: expect.stringMatching(/^\/console\/setup\/lnk_[A-Za-z0-9_-]+$/),
      setup_link_expires_at: expect.any(String),
    });
    const { stdout: withBase } = await run('./bin/agentauth', ['account', 'setup-link', 'no.base.0@example.com'], {
      env: { ...env, BASE_URL: 'https://id.example/' },
    });
    expect(withBase).toMatch(/^setup link: https:\/\/id\.example\/console\/setup\/lnk_[A-Za-z0-9_-]+\n/);
    expect(withBase).not.toContain('BASE_URL');
  });

  it('lists accounts, disables one (ending its sessions) and enables it, and makes a new setup link', async () => {
    const server = await startTestServer({ databaseUrl: env.DATABASE_URL! });
    try {
      const created = await cliWith(
        { BASE_URL: server.baseUrl },
        'account',
        'create',
        '--email',
        'Member.Mia@Example.com',
        '--name',
        'Mia',
      );
      const id = created.account_id as string;
      const listed = (await cli('account', 'list')).accounts as Array<Record<string, unknown>>;
      expect(listed.find((a) => a.account_id === id)).toMatchObject({
        email: 'Member.Mia@Example.com',
        name: 'Mia',
        role: 'member',
        status: 'active',
        email_verified: false,
        last_sign_in_at: null,
      });
      expect(JSON.stringify(listed)).not.toMatch(/password|lnk_/);
      const { stdout: text } = await run('./bin/agentauth', ['account', 'list'], { env });
      expect(text).toMatch(new RegExp(`^${id}  active    member  Member\\.Mia@Example\\.com  \\(Mia\\)$`, 'm'));

      // Signed in by the setup link; disabling (the email in any case) ends that session.
      const person = new ConsoleSession(server.baseUrl);
      const path = (created.setup_link as string).replace(server.baseUrl, '');
      await person.get(path);
      await person.post(path);
      expect((await person.get('/console')).status).toBe(200);
      expect(await cli('account', 'disable', 'member.mia@example.com')).toEqual({
        account_id: id,
        email: 'Member.Mia@Example.com',
        status: 'disabled',
      });
      expect((await server.ctx.store.accounts.find(id))?.status).toBe('disabled');
      expect(await server.ctx.store.sessions.list(id, server.clock())).toEqual([]);
      expect((await person.get('/console')).location).toBe('/console/sign-in?next=%2Fconsole');
      expect((await cli('account', 'list')).accounts).toEqual(
        expect.arrayContaining([expect.objectContaining({ account_id: id, status: 'disabled' })]),
      );

      expect(await cli('account', 'enable', 'MEMBER.MIA@EXAMPLE.COM')).toEqual({
        account_id: id,
        email: 'Member.Mia@Example.com',
        status: 'active',
      });
      expect((await server.ctx.store.accounts.find(id))?.status).toBe('active');

      // A new link for someone who lost their passkey: it signs them in once.
      const fresh = await cliWith({ BASE_URL: server.baseUrl }, 'account', 'setup-link', 'member.mia@example.com');
      expect(fresh).toMatchObject({
        account_id: id,
        email: 'Member.Mia@Example.com',
        setup_link: expect.stringMatching(new RegExp(`^${server.baseUrl}/console/setup/lnk_`)),
      });
      expect(fresh.setup_link).not.toBe(created.setup_link);
      const again = new ConsoleSession(server.baseUrl);
      const freshPath = (fresh.setup_link as string).replace(server.baseUrl, '');
      expect((await again.get(freshPath)).status).toBe(200);
      expect((await again.post(freshPath)).location).toBe('/console/account?notice=welcome');

      const actions = (await server.ctx.store.activity.list({ limit: 200 })).filter((e) => e.target === id);
      expect(actions.map((e) => e.action)).toEqual(
        expect.arrayContaining([
          'admin.create_account',
          'admin.setup_link',
          'admin.disable_account',
          'admin.enable_account',
        ]),
      );
      expect(
        actions.filter((e) => e.action.startsWith('admin.')).every((e) => e.actor_id === null && e.detail === 'cli'),
      ).toBe(true);
    } finally {
      await server.close();
    }
  });

  it('account disable ends the links the account made, and account enable does not bring them back', async () => {
    const server = await startTestServer({ databaseUrl: env.DATABASE_URL! });
    try {
      const inviter = await createPasswordAccount(server.ctx, { email: 'inviter.ivo@example.com' });
      const person = await signIn(server.baseUrl, inviter.email);
      await person.get('/console/account');
      const url = /<code id="invitation-url">([^<]+)<\/code>/.exec(
        (await person.submit('/console/account/invitations')).text,
      )![1]!;
      expect((await fetch(url)).status).toBe(200);
      await cli('account', 'disable', 'inviter.ivo@example.com');
      expect((await server.ctx.store.links.find(digest(url.split('/').pop()!)))?.revoked_at).toEqual(
        expect.any(Number),
      );
      await cli('account', 'enable', 'inviter.ivo@example.com');
      const answer = await fetch(url);
      expect(answer.status).toBe(404);
      expect(await answer.text()).toContain('This link was revoked.');
    } finally {
      await server.close();
    }
  });
});

describe('agentauth serve', () => {
  let child: ChildProcess | undefined;
  afterAll(() => child?.kill('SIGKILL'));

  it('serves with the environment, answers /healthz and /readyz, warns about SQLITE_SYNCHRONOUS=normal, and stops cleanly on SIGTERM', async () => {
    const port = await freePort();
    child = spawn('node', ['bin/agentauth', 'serve'], {
      env: { ...env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info', SQLITE_SYNCHRONOUS: 'normal' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout!.on('data', (chunk) => (output += chunk));
    child.stderr!.on('data', (chunk) => (output += chunk));
    const base = `http://127.0.0.1:${port}`;
    for (let i = 0; i < 100; i++) {
      try {
        if ((await fetch(`${base}/healthz`)).ok) break;
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    expect(await (await fetch(`${base}/healthz`)).json()).toEqual({ status: 'ok' });
    expect(await (await fetch(`${base}/readyz`)).json()).toEqual({ status: 'ready', database: 'sqlite' });
    const metadata = (await (await fetch(`${base}/.well-known/oauth-authorization-server`)).json()) as {
      issuer: string;
    };
    expect(metadata.issuer).toBe(`http://localhost:${port}`);
    const exited = new Promise<number | null>((resolve) => child!.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(output).toContain('shutting down');
    // LOG_FORMAT auto on a pipe: JSON lines, as a log collector reads them.
    expect(output).toMatch(/^\{"level":30,"time":\d+,.*"msg":"agentauth is serving"\}$/m);
    expect(output).toContain('JWT_SECRET is not set');
    expect(output).toContain(
      'SQLITE_SYNCHRONOUS=normal: answers survive a crash of the process, but a power loss may lose',
    );
  });

  it('writes readable lines with LOG_FORMAT=pretty, even on a pipe, and still no link token', async () => {
    const port = await freePort();
    const server = spawnServer({ ...env, PORT: String(port), HOST: '127.0.0.1', LOG_FORMAT: 'pretty' } as Record<
      string,
      string
    >);
    try {
      await waitReady(server);
      await fetch(`${server.baseUrl}/console/setup/lnk_NOT_IN_LOGS?state=x`);
      await server.kill('SIGTERM');
      const output = server.output();
      expect(output).toMatch(
        /^\d\d:\d\d:\d\d\.\d{3} INFO {2}agentauth is serving {2}issuer=http:\/\/localhost:\d+ database=\/\S+\/cli\.db statusStreamsMax=\d+$/m,
      );
      expect(output).toMatch(
        /^\d\d:\d\d:\d\d\.\d{3} INFO {2}request GET \/console\/setup\/lnk_\[redacted\] 404 [\d.]+ ms {2}reqId=req-\d+ from=127\.0\.0\.1$/m,
      );
      expect(output).not.toContain('{"level"');
      expect(output).not.toContain('NOT_IN_LOGS');
    } finally {
      await server.kill('SIGKILL');
    }
  });

  it('refuses to start in production without JWT_SECRET, with one clear line', async () => {
    expect(await cliFails(['serve'], { NODE_ENV: 'production' })).toBe(
      'agentauth: JWT_SECRET (or JWT_SECRET_FILE) is required when NODE_ENV=production (at least 32 bytes)\n',
    );
  });
});

describe('npm run demo', () => {
  it('walks the whole flow and exits 0 without printing a secret in full', async () => {
    const { stdout } = await run('node', ['--import', 'tsx', 'scripts/demo.ts'], { env });
    expect(stdout).toMatch(/Done: all 12 steps answered as expected/);
    expect(stdout).toMatch(/"email": "ada@example.com"|"email":"ada@example.com"/);
    expect(stdout).not.toMatch(
      /cls_[A-Za-z0-9_-]{43}|aas_[A-Za-z0-9_-]{43}|rft_[A-Za-z0-9_-]{43}|cod_[A-Za-z0-9_-]{43}/,
    );
  });
});
