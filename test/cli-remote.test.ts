/**
 * The agentauth CLI on a remote server (docs/design.md §15 "The CLI on a remote server"): the
 * real command, run as a child process with AGENTAUTH_URL and AGENTAUTH_API_KEY, against a real
 * server on loopback, on either engine. Its database is out of the command's reach (a
 * DATABASE_URL that cannot open), so everything it does goes through the management API.
 *
 * @engine-independent the command on a remote server is an HTTP client of the management API,
 * whose every operation runs on both engines in test/api/; what this suite checks is the client
 * (its arguments, output and exit statuses), so it runs once (vitest.config.ts).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { digest } from '../src/crypto.ts';
import { accountWithKey } from './helpers/api.ts';
import { obtainTokens, setupParty } from './helpers/flow.ts';
import { freePort } from './helpers/net.ts';
import { byId, cliOn } from './helpers/remote-cli.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';

let server: TestServer;
let cli: ReturnType<typeof cliOn>;
let admin: Awaited<ReturnType<typeof accountWithKey>>;
let reader: Awaited<ReturnType<typeof accountWithKey>>;

beforeAll(async () => {
  server = await startTestServer();
  cli = cliOn(server);
  admin = await accountWithKey(server, { role: 'admin', key: { reach: 'all', name: 'ops script' } });
  reader = await accountWithKey(server, { role: 'admin', key: { reach: 'all', access: 'read', name: 'dashboard' } });
});
afterAll(() => server.close());

const remoteEnv = (key: string, extra: Record<string, string> = {}) => cli.remoteEnv(key, extra);
const localEnv = () => cli.localEnv();
const agentauth = (env: NodeJS.ProcessEnv, args: string[]) => cli.agentauth(env, args);
const refusal = (env: NodeJS.ProcessEnv, args: string[]) => cli.refusal(env, args);
/** `agentauth … --json` on the remote server with the admin's key. */
const remote = (...args: string[]) => cli.json(remoteEnv(admin.secret), args);
/** The same, on the server's database. */
const local = (...args: string[]) => cli.json(localEnv(), args);

describe('agentauth agent … on a remote server (AGENTAUTH_URL, AGENTAUTH_API_KEY)', () => {
  it('creates, lists, disables, enables, rotates, revokes and deletes agents through the API', async () => {
    // Without --owner-email, the agent belongs to the key's account.
    const created = await remote('agent', 'create', '--name', 'Deploy bot');
    expect(created).toMatchObject({
      agent_id: expect.stringMatching(/^agt_/),
      agent_secret: expect.stringMatching(/^aas_[A-Za-z0-9_-]{43}$/),
      name: 'Deploy bot',
      owner_email: admin.account.email,
      status: 'active',
      last_used_at: null,
    });
    const id = created.agent_id as string;
    const stored = await server.ctx.store.agents.find(id);
    expect(stored).toMatchObject({ account_id: admin.account.id, name: 'Deploy bot', status: 'active' });
    expect(stored!.secret_digest).toBe(digest(created.agent_secret as string));

    const listed = (await remote('agent', 'list')).agents as Array<Record<string, unknown>>;
    expect(listed.find((a) => a.agent_id === id)).toMatchObject({ name: 'Deploy bot', status: 'active' });
    expect(JSON.stringify(listed)).not.toContain(created.agent_secret as string);

    expect(await remote('agent', 'disable', id)).toEqual({ agent_id: id, status: 'disabled' });
    expect((await server.ctx.store.agents.find(id))?.status).toBe('disabled');
    const { stdout: text } = await agentauth(remoteEnv(admin.secret), ['agent', 'enable', id]);
    expect(text).toBe(`${id} is active\n`);
    expect((await server.ctx.store.agents.find(id))?.status).toBe('active');

    const rotated = await remote('agent', 'rotate-secret', id, '--grace', '3600');
    expect(rotated).toEqual({
      agent_id: id,
      agent_secret: expect.stringMatching(/^aas_/),
      previous_secret_valid_for: 3600,
    });
    const afterRotation = await server.ctx.store.agents.find(id);
    expect(afterRotation!.secret_digest).toBe(digest(rotated.agent_secret as string));
    expect(afterRotation!.previous_secret_digest).toBe(digest(created.agent_secret as string));
    expect(afterRotation!.previous_secret_expires_at).toBe(server.clock() + 3600);

    // The API recorded each act in the activity, in the console's words, as the key's account.
    const events = (await server.ctx.store.activity.list({ limit: 200 })).filter((e) => e.target === id);
    expect(events.map((e) => e.action)).toEqual(
      expect.arrayContaining(['agent.create', 'agent.disable', 'agent.enable', 'agent.rotate_secret']),
    );
    expect(events.every((e) => e.actor_id === admin.account.id)).toBe(true);

    expect(await remote('agent', 'delete', id)).toEqual({
      agent_id: id,
      deleted: true,
      revoked: { grants: 0, codes: 0, requests: 0 },
    });
    expect(await server.ctx.store.agents.find(id)).toBeUndefined();
    expect(await refusal(remoteEnv(admin.secret), ['agent', 'disable', id])).toBe(
      `${server.baseUrl} refused: No such agent. (404 not_found)`,
    );
  });

  it('revoke-grants and rotate-secret --revoke-grants end the tokens an agent holds', async () => {
    const party = await setupParty(server);
    const tokens = await obtainTokens(server, party);
    const userinfo = async (token: string) =>
      (await fetch(`${server.baseUrl}/userinfo`, { headers: { authorization: `Bearer ${token}` } })).status;
    expect(await userinfo(tokens.access_token)).toBe(200);
    expect(await remote('agent', 'revoke-grants', party.agentId)).toEqual({
      agent_id: party.agentId,
      revoked: { grants: 1, codes: 0, requests: 0 },
    });
    expect(await userinfo(tokens.access_token)).toBe(401);

    const again = await obtainTokens(server, party);
    const rotated = await remote('agent', 'rotate-secret', party.agentId, '--revoke-grants');
    expect(rotated).toMatchObject({ previous_secret_valid_for: 0, revoked: { grants: 1 } });
    expect(await userinfo(again.access_token)).toBe(401);
    expect((await server.ctx.store.agents.find(party.agentId))!.secret_digest).toBe(
      digest(rotated.agent_secret as string),
    );
  });

  it('webhook test sends a test event through the API, and its delivery is in the log', async () => {
    const made = await admin.call('POST', '/webhooks', { url: 'https://hooks.example.com/remote', events: ['*'] });
    const id = made.json.webhook.id as string;
    const sent = await remote('webhook', 'test', id);
    expect(sent).toMatchObject({ event_type: 'webhook.test', payload: { type: 'webhook.test' } });
    const log = await admin.call('GET', `/webhooks/${id}/deliveries`);
    expect(log.json.data.map((d: { message_id: string }) => d.message_id)).toContain(sent.message_id);
    expect(log.json.data[0].payload.data.actor).toMatchObject({ type: 'api_key' });
  });

  it('prints the same JSON as the command on the database', async () => {
    await setupParty(server);
    const made = await remote('agent', 'create', '--name', 'Twin');
    const madeLocally = await local('agent', 'create', '--owner-email', 'twin@example.com', '--name', 'Twin');
    expect(Object.keys(made).sort()).toEqual(Object.keys(madeLocally).sort());

    // Every agent (an admin's key reaching all accounts sees what the database holds).
    expect(byId((await remote('agent', 'list')).agents)).toEqual(byId((await local('agent', 'list')).agents));
    const id = made.agent_id as string;
    expect(await remote('agent', 'disable', id)).toEqual(await local('agent', 'disable', id));
    expect(await remote('agent', 'enable', id)).toEqual(await local('agent', 'enable', id));
    const [remoteText, localText] = [
      await agentauth(remoteEnv(admin.secret), ['agent', 'list']),
      await agentauth(localEnv(), ['agent', 'list']),
    ];
    expect(remoteText.stdout.split('\n').sort()).toEqual(localText.stdout.split('\n').sort());

    // The keys: the calling key's last use is written as its answer leaves, so it is left aside.
    const remoteKeys = byId((await remote('api-key', 'list')).api_keys);
    const localKeys = byId((await local('api-key', 'list')).api_keys);
    const lastUseAside = (keys: Array<Record<string, unknown>>) =>
      keys.map((k) => (k.id === admin.key.id ? { ...k, last_used_at: null, last_used_ip: null } : k));
    expect(lastUseAside(remoteKeys)).toEqual(lastUseAside(localKeys));
    expect(remoteKeys.map((k) => k.id)).toContain(reader.key.id);

    // agent delete, new beside the database too: the same answer, and the CLI's event.
    const doomed = madeLocally.agent_id as string;
    expect(await local('agent', 'delete', doomed)).toEqual({
      agent_id: doomed,
      deleted: true,
      revoked: { grants: 0, codes: 0, requests: 0 },
    });
    expect(await server.ctx.store.agents.find(doomed)).toBeUndefined();
    const [deletion] = (await server.ctx.store.activity.list({ limit: 200 })).filter(
      (e) => e.target === doomed && e.action === 'agent.delete',
    );
    expect(deletion).toMatchObject({ actor_id: null, detail: 'cli: Twin: grants 0, codes 0, requests 0' });
  });

  it('agent create names its owner beside the database, and a label or an owner remotely', async () => {
    expect(await refusal(localEnv(), ['agent', 'create', '--name', 'Orphan'])).toBe(
      '--owner-email is required on the database: the agent has no console account to belong to',
    );
    expect(await refusal(remoteEnv(admin.secret), ['agent', 'create'])).toBe(
      "give --name (the agent then belongs to the API key's account) or --owner-email",
    );
  });
});

describe('agentauth agent policy …, on the database and on a remote server alike', () => {
  it('keeps a change someone else made between the command’s read and its write', async () => {
    const first = (await setupParty(server, { name: 'First site' })).clientId;
    const second = (await setupParty(server, { name: 'Second site' })).clientId;
    const third = (await setupParty(server, { name: 'Third site' })).clientId;
    const id = (await remote('agent', 'create', '--name', 'Crossing bot')).agent_id as string;
    const listing = (clients: string[]) => ({
      clients: 'listed',
      allowed_clients: clients,
      scope_ceiling: null,
      credentials_expire_at: null,
      max_sign_ins_per_hour: null,
      actions: [],
    });
    expect((await admin.call('PUT', `/agents/${id}/policy`, listing([first]))).status).toBe(200);
    // In front of the server, a proxy that lets someone else list `third` just before the
    // command's first write reaches the server: after the command read the policy.
    let crossed = false;
    const proxy = createServer(async (request, response) => {
      const chunks: Buffer[] = [];
      for await (const chunk of request) chunks.push(chunk as Buffer);
      if (request.method === 'PUT' && !crossed) {
        crossed = true;
        const other = await admin.call('PUT', `/agents/${id}/policy`, listing([first, third]));
        expect(other.status).toBe(200);
      }
      const headers = Object.fromEntries(
        Object.entries(request.headers).filter(([name]) => !['host', 'content-length', 'connection'].includes(name)),
      ) as Record<string, string>;
      const answer = await fetch(`${server.baseUrl}${request.url}`, {
        method: request.method,
        headers,
        body: chunks.length === 0 ? undefined : Buffer.concat(chunks),
      });
      response
        .writeHead(answer.status, Object.fromEntries(answer.headers))
        .end(Buffer.from(await answer.arrayBuffer()));
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    try {
      const env = remoteEnv(admin.secret, {
        AGENTAUTH_URL: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
      });
      const changed = await cli.json(env, ['agent', 'policy', id, '--allow', second]);
      expect(crossed).toBe(true);
      // The command's change is applied to the policy as it was written, not as it was read.
      expect(changed).toEqual({ agent_id: id, policy: listing([first, third, second]) });
      expect((await server.ctx.store.agents.find(id))!.policy!.allowed_clients).toEqual([first, third, second]);
    } finally {
      await new Promise((resolve) => proxy.close(resolve));
    }
  });

  it('shows the default, changes one part at a time, and prints the same on either side', async () => {
    const website = (await setupParty(server, { name: 'Acme Notes' })).clientId;
    const other = (await setupParty(server, { name: 'Mail' })).clientId;
    const id = (await remote('agent', 'create', '--name', 'Policy bot')).agent_id as string;
    const DEFAULT = {
      clients: 'any',
      allowed_clients: [],
      scope_ceiling: null,
      credentials_expire_at: null,
      max_sign_ins_per_hour: null,
      actions: [],
    };
    expect(await remote('agent', 'policy', id)).toEqual({ agent_id: id, policy: DEFAULT });
    expect(await local('agent', 'policy', id)).toEqual({ agent_id: id, policy: DEFAULT });

    const listed = await remote(
      'agent',
      'policy',
      id,
      '--clients',
      'listed',
      '--allow',
      website,
      '--allow',
      other,
      '--scope-ceiling',
      'profile openid',
      '--credentials-expire',
      '2027-01-31',
      '--max-sign-ins-per-hour',
      '20',
    );
    const expected = {
      clients: 'listed',
      allowed_clients: [website, other],
      scope_ceiling: ['openid', 'profile'],
      credentials_expire_at: '2027-01-31T00:00:00Z',
      max_sign_ins_per_hour: 20,
      actions: [],
    };
    expect(listed).toEqual({ agent_id: id, policy: expected });
    const { clients, ...rest } = expected;
    expect((await server.ctx.store.agents.find(id))!.policy).toEqual({
      ...rest,
      websites: clients,
      credentials_expire_at: Date.parse('2027-01-31T00:00:00Z') / 1000,
    });
    expect(await local('agent', 'policy', id)).toEqual(listed);

    // On the database: one part changes, the rest stays.
    const asking = await local(
      'agent',
      'policy',
      id,
      '--clients',
      'ask',
      '--disallow',
      other,
      '--credentials-expire',
      '2027-02-01T12:30:00Z',
    );
    expect(asking).toEqual({
      agent_id: id,
      policy: {
        ...expected,
        clients: 'ask',
        allowed_clients: [website],
        credentials_expire_at: '2027-02-01T12:30:00Z',
      },
    });
    expect(await remote('agent', 'policy', id)).toEqual(asking);

    // The text a person reads.
    const shown = await agentauth(remoteEnv(admin.secret), ['agent', 'policy', id]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toBe(
      `${id}\n` +
        '  Websites:           Ask me for a new website (ask)\n' +
        `  Listed websites:    ${website}\n` +
        '  Scope ceiling:      openid profile\n' +
        '  Credentials expire: 2027-02-01T12:30:00Z\n' +
        '  Sign-ins per hour:  20\n' +
        '  Actions:            ask the owner for every website\n',
    );

    // Every --no- option takes a part back to its default; all of them, the agent back to NULL.
    const reset = await remote(
      'agent',
      'policy',
      id,
      '--clients',
      'any',
      '--disallow',
      website,
      '--no-scope-ceiling',
      '--no-credentials-expire',
      '--no-max-sign-ins-per-hour',
    );
    expect(reset).toEqual({ agent_id: id, policy: DEFAULT });
    expect((await server.ctx.store.agents.find(id))!.policy).toBeNull();
  });

  it('refuses what the rule refuses, in one line, on either side; a read-only key changes nothing', async () => {
    const id = (await remote('agent', 'create', '--name', 'Strict bot')).agent_id as string;
    for (const env of [remoteEnv(admin.secret), localEnv()]) {
      expect(await refusal(env, ['agent', 'policy', id, '--allow', 'cli_nowhere'])).toMatch(
        /allowed_clients names cli_nowhere, which is not a registered website/,
      );
      expect(await refusal(env, ['agent', 'policy', id, '--scope-ceiling', 'openid admin'])).toMatch(
        // The rule's words on the database; the API's schema, which lists the scopes, remotely.
        /scope_ceiling( names admin, which is not a scope|\.1 must be one of openid, email, profile)/,
      );
      expect(await refusal(env, ['agent', 'policy', 'agt_nobody'])).toMatch(/agt_nobody|not found|No such|no agent/i);
    }
    expect(await refusal(remoteEnv(reader.secret), ['agent', 'policy', id, '--clients', 'ask'])).toBe(
      `${server.baseUrl} refused: This API key may only read. (403 insufficient_scope)`,
    );
    expect((await server.ctx.store.agents.find(id))!.policy).toBeNull();
    // Bad values are usage errors of the command itself (exit 1, before anything is sent).
    const bad = await agentauth(remoteEnv(admin.secret), ['agent', 'policy', id, '--clients', 'some']);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('any, listed or ask');
    const badDate = await agentauth(remoteEnv(admin.secret), ['agent', 'policy', id, '--credentials-expire', 'soon']);
    expect(badDate.stderr).toContain('a date (2027-01-31) or an ISO time');
  });
});

describe('agentauth api-key … on a remote server', () => {
  it('api-key create is made on the database: a key made beside the server works remotely, and revokes itself', async () => {
    const made = await local('api-key', 'create', '--email', admin.account.email, '--name', 'cron', '--all');
    const secret = made.api_key as string;
    expect(secret).toMatch(/^aak_/);
    const env = remoteEnv(secret);
    const { stdout } = await agentauth(env, ['api-key', 'list']);
    expect(stdout).toMatch(
      new RegExp(`^${made.id}  …${secret.slice(-4)}  cron  write/all  expires \\S+  last used `, 'm'),
    );

    expect(await refusal(env, ['api-key', 'create', '--email', admin.account.email, '--name', 'x'])).toBe(
      'api-key create needs the database, since no API key makes keys: make one in the console (/console/api-keys), or run it beside the server (where DATABASE_URL reaches the database), without --url or AGENTAUTH_URL',
    );

    const revoked = JSON.parse((await agentauth(env, ['api-key', 'revoke', made.id as string, '--json'])).stdout);
    expect(revoked).toMatchObject({ id: made.id, revoked_at: expect.any(String) });
    expect((await server.ctx.store.apiKeys.find(made.id as string))?.revoked_at).toEqual(expect.any(Number));
    expect(await refusal(env, ['agent', 'list'])).toBe(
      `${server.baseUrl} refused: The API key is unknown, revoked or expired, or its account is disabled. (401 invalid_token)`,
    );
  });
});

describe('what the remote CLI refuses, in one line and exit code 1', () => {
  it('a read-only key writing: the API says why, and nothing changes', async () => {
    const before = (await server.ctx.store.agents.list()).length;
    const env = remoteEnv(reader.secret);
    expect(await refusal(env, ['agent', 'create', '--name', 'Not allowed'])).toBe(
      `${server.baseUrl} refused: This API key may only read. (403 insufficient_scope)`,
    );
    const someone = (await server.ctx.store.agents.list())[0]!;
    expect(await refusal(env, ['agent', 'disable', someone.id])).toMatch(/\(403 insufficient_scope\)$/);
    expect((await server.ctx.store.agents.list()).length).toBe(before);
    expect((await server.ctx.store.agents.find(someone.id))?.status).toBe(someone.status);
    // Reading is what it may do.
    expect((await agentauth(env, ['agent', 'list', '--json'])).code).toBe(0);
  });

  it('a wrong key, never repeated in the message', async () => {
    const wrong = 'aak_thisKeyWasNeverMadeByTheServer000000000000';
    const message = await refusal(remoteEnv(wrong), ['agent', 'list']);
    expect(message).toBe(
      `${server.baseUrl} refused: The API key is unknown, revoked or expired, or its account is disabled. (401 invalid_token)`,
    );
    const flagged = await refusal(remoteEnv('', { AGENTAUTH_URL: '' }), [
      'agent',
      'list',
      '--url',
      server.baseUrl,
      '--api-key',
      wrong,
    ]);
    expect(flagged).toBe(message);
    expect(cli.printed()).not.toContain(wrong);
  });

  it('plain http to a host that is not a loopback address, before anything is sent', async () => {
    const expected =
      'refusing to send the API key over plain http to id.example.com: use https (plain http only to a loopback address: localhost, 127.0.0.0/8, [::1])';
    expect(await refusal(remoteEnv(admin.secret, { AGENTAUTH_URL: 'http://id.example.com' }), ['agent', 'list'])).toBe(
      expected,
    );
    expect(await refusal(remoteEnv(admin.secret), ['agent', 'list', '--url', 'http://id.example.com/'])).toBe(expected);
    expect(await refusal(remoteEnv(admin.secret, { AGENTAUTH_URL: 'ftp://id.example.com' }), ['agent', 'list'])).toBe(
      'AGENTAUTH_URL must be an https address, such as https://id.example.com (got "ftp://id.example.com")',
    );
    expect(await refusal(remoteEnv(admin.secret, { AGENTAUTH_URL: 'id.example.com' }), ['agent', 'list'])).toBe(
      'AGENTAUTH_URL must be the server\'s address, such as https://id.example.com (got "id.example.com")',
    );
    // Loopback over http is allowed, with or without the API's path.
    const withPath = remoteEnv(admin.secret, { AGENTAUTH_URL: `${server.baseUrl}/api/admin/v1/` });
    expect((await agentauth(withPath, ['agent', 'list', '--json'])).code).toBe(0);
    const localhost = remoteEnv(admin.secret, { AGENTAUTH_URL: server.baseUrl.replace('127.0.0.1', 'localhost') });
    expect((await agentauth(localhost, ['agent', 'list', '--json'])).code).toBe(0);
  });

  it('plain http to a name under .localhost, which a resolver may send anywhere, before anything is sent', async () => {
    const seen: string[] = [];
    const other = createServer((request, response) => {
      seen.push(request.url ?? '');
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"data":[],"next_cursor":null}');
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    const port = (other.address() as AddressInfo).port;
    try {
      for (const host of ['agentauth.localhost', 'a.b.localhost', 'localhost.', 'evil.com.localhost']) {
        expect(
          await refusal(remoteEnv(admin.secret, { AGENTAUTH_URL: `http://${host}:${port}` }), ['agent', 'list']),
        ).toBe(
          `refusing to send the API key over plain http to ${host}:${port}: use https (plain http only to a loopback address: localhost, 127.0.0.0/8, [::1])`,
        );
      }
      // Any loopback literal is one: the key goes there over plain http.
      expect(
        (await agentauth(remoteEnv(admin.secret, { AGENTAUTH_URL: `http://127.0.0.1:${port}` }), ['agent', 'list']))
          .code,
      ).toBe(0);
      expect(seen).toHaveLength(1);
    } finally {
      await new Promise((resolve) => other.close(resolve));
    }
  });

  it('a server that pages for ever, or in a circle, is stopped with a message', async () => {
    let calls = 0;
    const circle = new URL('/circle', 'http://x').pathname;
    const other = createServer((request, response) => {
      calls++;
      const cursor = request.url?.startsWith(circle) ? 'same' : `page-${calls}`;
      response
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ data: [], next_cursor: cursor }));
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    const address = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
    try {
      expect(await refusal(remoteEnv(admin.secret, { AGENTAUTH_URL: address }), ['agent', 'list'])).toBe(
        `${address} answered more than 1000 pages of agents (100000 records) and still named a next page: stopped`,
      );
      expect(calls).toBe(1000);
      calls = 0;
      expect(await refusal(remoteEnv(admin.secret, { AGENTAUTH_URL: `${address}/circle` }), ['client', 'list'])).toBe(
        `${address} named the same next page of clients twice (its paging goes in a circle): stopped`,
      );
      expect(calls).toBe(2);
    } finally {
      await new Promise((resolve) => other.close(resolve));
    }
  });

  it("prints a server's words without the control characters a terminal would act on", async () => {
    // ESC sequences (clear the screen, set the window title), BEL, a C1 CSI, DEL, and a line break
    // that would forge a line of output.
    const hostile = 'bad\u001b[2J\u001b]0;pwned\u0007\u009b31mred\u007f\nagentauth: all good';
    const other = createServer((request, response) => {
      if (request.url?.includes('/clients'))
        response
          .writeHead(401, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: 'invalid_token\u001b[31m', error_description: hostile }));
      else
        response.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            data: [{ id: 'agt_1', name: hostile, status: 'active', owner: { email: 'a@example.com' } }],
            next_cursor: null,
          }),
        );
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    const address = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
    const env = remoteEnv(admin.secret, { AGENTAUTH_URL: address });
    try {
      const message = await refusal(env, ['client', 'list']);
      expect(message).toBe(
        `${address} refused: bad\\u001b[2J\\u001b]0;pwned\\u0007\\u009b31mred\\u007f\\u000aagentauth: all good (401 invalid_token\\u001b[31m)`,
      );
      const listed = await agentauth(env, ['agent', 'list']);
      expect(listed.code).toBe(0);
      expect(listed.stdout.split('\n')).toHaveLength(2);
      const json = await agentauth(env, ['agent', 'list', '--json']);
      expect(json.code).toBe(0);
      for (const printed of [message, listed.stdout, json.stdout, json.stderr, listed.stderr])
        expect(printed.replaceAll('\n', '')).not.toMatch(/\p{Cc}/u);
    } finally {
      await new Promise((resolve) => other.close(resolve));
    }
  });

  it('a redirect, reported and not followed, and an address that is not an agentauth server', async () => {
    const seen: Array<string | undefined> = [];
    const other = createServer((request, response) => {
      seen.push(request.headers.authorization);
      if (request.url?.startsWith('/moved/')) {
        response.writeHead(301, { location: 'https://id.example.com/api/admin/v1/agents' }).end();
      } else response.writeHead(404, { 'content-type': 'text/html' }).end('<h1>Not here</h1>');
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    const address = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
    try {
      expect(await refusal(remoteEnv(admin.secret, { AGENTAUTH_URL: `${address}/moved` }), ['agent', 'list'])).toBe(
        `${address} answered 301, a redirect to https://id.example.com/api/admin/v1/agents: set AGENTAUTH_URL to the address it redirects to`,
      );
      expect(await refusal(remoteEnv(admin.secret, { AGENTAUTH_URL: address }), ['agent', 'list'])).toBe(
        `${address} answered 404 without the management API's answer: is ${address}/api/admin/v1/ the address of an agentauth server?`,
      );
      // The key went to the address given, once per command, and nowhere else.
      expect(seen).toEqual([`Bearer ${admin.secret}`, `Bearer ${admin.secret}`]);
    } finally {
      await new Promise((resolve) => other.close(resolve));
    }
  });

  it('half a configuration, an unreachable server, and the commands that need the database', async () => {
    expect(await refusal(remoteEnv('', {}), ['agent', 'list'])).toBe(
      'AGENTAUTH_URL names a server but no API key is given: set AGENTAUTH_API_KEY (or --api-key) to a key made in the console or with `agentauth api-key create`',
    );
    expect(await refusal(remoteEnv(admin.secret, { AGENTAUTH_URL: '' }), ['agent', 'list'])).toBe(
      "an API key is given but no server: set AGENTAUTH_URL (or --url) to the server's address, or unset AGENTAUTH_API_KEY to work on the database",
    );
    const nobody = `http://127.0.0.1:${await freePort()}`;
    expect(await refusal(remoteEnv(admin.secret, { AGENTAUTH_URL: nobody }), ['agent', 'list'])).toBe(
      `cannot reach ${nobody}: ECONNREFUSED`,
    );
    const env = remoteEnv(admin.secret);
    expect(await refusal(env, ['client', 'reseal'])).toBe(
      'client reseal re-encrypts the secrets stored in the database: run it beside the server (where DATABASE_URL reaches the database), without --url or AGENTAUTH_URL',
    );
    expect(await refusal(env, ['migrate'])).toBe(
      'migrate applies the migrations to the database: run it beside the server (where DATABASE_URL reaches the database), without --url or AGENTAUTH_URL',
    );
    expect(await refusal(env, ['serve'])).toBe(
      'serve runs the server on its own database; it takes no --url or AGENTAUTH_URL',
    );
  });
});

describe('the API key', () => {
  it('is never printed, in answers or in errors', () => {
    const all = cli.printed();
    expect(all).not.toContain(admin.secret);
    expect(all).not.toContain(reader.secret);
    expect(all).toContain('refused'); // the errors were among what was read
  });
});
