/**
 * The agentauth CLI on a remote server for websites, accounts (never their setup links) and agents made for an owner
 * without an account (/clients, /accounts and the `owner` of POST /agents): the real command as
 * a child process with AGENTAUTH_URL and AGENTAUTH_API_KEY against a real server on loopback,
 * on either engine, with the database checked. The server lets public clients sign in, so that
 * `client create --public` is accepted remotely as it is beside the database.
 *
 * @engine-independent the command on a remote server is an HTTP client of the management API,
 * whose every operation runs on both engines in test/api/; what this suite checks is the client,
 * so it runs once (vitest.config.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { digest } from '../src/crypto.ts';
import { accountWithKey } from './helpers/api.ts';
import { obtainTokens, postForm, setupParty } from './helpers/flow.ts';
import { byId, cliOn } from './helpers/remote-cli.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';

let server: TestServer;
let cli: ReturnType<typeof cliOn>;
let admin: Awaited<ReturnType<typeof accountWithKey>>;
let member: Awaited<ReturnType<typeof accountWithKey>>;

beforeAll(async () => {
  server = await startTestServer({ env: { PUBLIC_CLIENTS: 'true' } });
  cli = cliOn(server);
  admin = await accountWithKey(server, { role: 'admin', key: { reach: 'all', name: 'ops script' } });
  member = await accountWithKey(server, { role: 'member' });
});
afterAll(() => server.close());

/** `agentauth … --json` on the remote server with the admin's key. */
const remote = (...args: string[]) => cli.json(cli.remoteEnv(admin.secret), args);
/** The same, on the server's database. */
const local = (...args: string[]) => cli.json(cli.localEnv(), args);

/** Whether the client authenticates with this secret (introspection answers 401 otherwise). */
async function secretWorks(clientId: string, clientSecret: string): Promise<boolean> {
  const answer = await postForm(server, '/introspect', {
    token: 'not-a-token',
    client_id: clientId,
    client_secret: clientSecret,
  });
  return answer.status === 200;
}

describe('agentauth client … on a remote server', () => {
  it('creates, lists, updates, disables, enables, rotates, revokes and deletes clients through the API', async () => {
    const created = await remote(
      'client',
      'create',
      '--name',
      'Remote shop',
      '--redirect-uri',
      'https://shop.example/cb',
      '--approval',
      'manual',
    );
    expect(created).toMatchObject({
      client_id: expect.stringMatching(/^cli_/),
      client_secret: expect.stringMatching(/^cls_[A-Za-z0-9_-]{43}$/),
      name: 'Remote shop',
      redirect_uris: ['https://shop.example/cb'],
      approval: 'manual',
      status: 'active',
      token_endpoint_auth_method: 'client_secret_post',
      source: 'manual',
      resources: [],
    });
    const id = created.client_id as string;
    expect(await server.ctx.store.clients.find(id)).toMatchObject({ name: 'Remote shop', approval: 'manual' });
    expect(await secretWorks(id, created.client_secret as string)).toBe(true);

    const publicClient = await remote(
      'client',
      'create',
      '--name',
      'Desktop host',
      '--redirect-uri',
      'http://127.0.0.1/callback',
      '--public',
    );
    expect(publicClient).toMatchObject({ token_endpoint_auth_method: 'none' });
    expect(publicClient).not.toHaveProperty('client_secret');

    const listed = (await remote('client', 'list')).clients as Array<Record<string, unknown>>;
    expect(listed.find((c) => c.client_id === id)).toMatchObject({ name: 'Remote shop' });
    expect(JSON.stringify(listed)).not.toContain('cls_');

    const updated = await remote(
      'client',
      'update',
      id,
      '--name',
      'Shop',
      '--redirect-uri',
      'https://shop2.example/cb',
    );
    expect(updated).toMatchObject({ client_id: id, name: 'Shop', redirect_uris: ['https://shop2.example/cb'] });
    expect(updated).not.toHaveProperty('client_secret');
    expect(await server.ctx.store.clients.find(id)).toMatchObject({
      name: 'Shop',
      redirect_uris: ['https://shop2.example/cb'],
      approval: 'manual',
    });
    expect(
      await cli.refusal(cli.remoteEnv(admin.secret), [
        'client',
        'update',
        id,
        '--redirect-uri',
        'http://shop.example/cb',
      ]),
    ).toMatch(/https/);
    expect((await server.ctx.store.clients.find(id))?.redirect_uris).toEqual(['https://shop2.example/cb']);

    expect(await remote('client', 'disable', id)).toEqual({ client_id: id, status: 'inactive' });
    expect((await server.ctx.store.clients.find(id))?.status).toBe('inactive');
    expect(await remote('client', 'enable', id)).toEqual({ client_id: id, status: 'active' });
    expect((await server.ctx.store.clients.find(id))?.status).toBe('active');

    const rotated = await remote('client', 'rotate-secret', id);
    expect(rotated).toEqual({
      client_id: id,
      client_secret: expect.stringMatching(/^cls_/),
      previous_secret_valid_for: 0,
    });
    expect(await secretWorks(id, created.client_secret as string)).toBe(false);
    expect(await secretWorks(id, rotated.client_secret as string)).toBe(true);

    expect(await remote('client', 'delete', id)).toEqual({
      client_id: id,
      deleted: true,
      revoked: { grants: 0, codes: 0, requests: 0 },
    });
    expect(await server.ctx.store.clients.find(id)).toBeUndefined();
    expect(await cli.refusal(cli.remoteEnv(admin.secret), ['client', 'disable', id])).toMatch(/\(404 not_found\)$/);
  });

  it('revoke-grants ends the tokens of a client', async () => {
    const party = await setupParty(server);
    const tokens = await obtainTokens(server, party);
    expect(await remote('client', 'revoke-grants', party.clientId)).toEqual({
      client_id: party.clientId,
      revoked: { grants: 1, codes: 0, requests: 0 },
    });
    const userinfo = await fetch(`${server.baseUrl}/userinfo`, {
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });
    expect(userinfo.status).toBe(401);
  });

  it('prints the same JSON as the command on the database', async () => {
    const made = await remote('client', 'create', '--name', 'Twin', '--redirect-uri', 'https://twin.example/cb');
    const madeLocally = await local('client', 'create', '--name', 'Twin', '--redirect-uri', 'https://twin.example/cb');
    expect(Object.keys(made).sort()).toEqual(Object.keys(madeLocally).sort());
    expect(byId((await remote('client', 'list')).clients)).toEqual(byId((await local('client', 'list')).clients));
    const id = made.client_id as string;
    expect(await remote('client', 'disable', id)).toEqual(await local('client', 'disable', id));
    expect(await remote('client', 'update', id, '--approval', 'manual')).toEqual(
      await local('client', 'update', id, '--approval', 'manual'),
    );
  });
});

describe('agentauth account … on a remote server', () => {
  it('lists, disables and enables accounts through the API, by email; creates none and makes no setup link', async () => {
    const created = await local('account', 'create', '--email', 'Remote.Rita@Example.com', '--name', 'Rita');
    const id = created.account_id as string;

    const listed = (await remote('account', 'list')).accounts as Array<Record<string, unknown>>;
    expect(listed.find((a) => a.account_id === id)).toMatchObject({ email: 'Remote.Rita@Example.com' });
    expect(byId(listed)).toEqual(byId((await local('account', 'list')).accounts));

    // By email, in any case, looked up with GET /accounts?email=.
    expect(await remote('account', 'disable', 'remote.rita@example.com')).toEqual({
      account_id: id,
      email: 'Remote.Rita@Example.com',
      status: 'disabled',
    });
    expect((await server.ctx.store.accounts.find(id))?.status).toBe('disabled');
    expect(await remote('account', 'enable', 'REMOTE.RITA@EXAMPLE.COM')).toEqual({
      account_id: id,
      email: 'Remote.Rita@Example.com',
      status: 'active',
    });
    expect((await server.ctx.store.accounts.find(id))?.status).toBe('active');

    // A setup link is a way in: no API key makes one, so these need the database (docs/design.md §15).
    const env = cli.remoteEnv(admin.secret);
    const linksBefore = await server.ctx.store.links.listOutstanding(server.clock());
    expect(await cli.refusal(env, ['account', 'setup-link', 'remote.rita@example.com'])).toMatch(
      /^account setup-link needs the database, since no API key makes a setup link/,
    );
    expect(await cli.refusal(env, ['account', 'create', '--email', 'remote.root@example.com', '--admin'])).toMatch(
      /^account create needs the database, since no API key makes a setup link/,
    );
    expect(await server.ctx.store.accounts.findByEmail('remote.root@example.com')).toBeUndefined();
    expect(await server.ctx.store.links.listOutstanding(server.clock())).toEqual(linksBefore);

    for (const command of ['disable', 'enable'])
      expect(await cli.refusal(env, ['account', command, 'nobody@example.com'])).toBe(
        'no account with the email nobody@example.com',
      );
    expect(await cli.refusal(env, ['account', 'disable', 'not-an-email'])).toBe('not-an-email is not an email address');
  });

  it('needs an admin key that reaches all accounts', async () => {
    expect(await cli.refusal(cli.remoteEnv(member.secret), ['account', 'list'])).toMatch(/\(403 insufficient_scope\)$/);
  });
});

describe('agentauth agent create --owner-email on a remote server', () => {
  it('makes an agent with no console account, as on the database', async () => {
    const made = await remote(
      'agent',
      'create',
      '--owner-email',
      'owner@example.com',
      '--owner-name',
      'Owner',
      '--name',
      'bot',
      '--email-verified',
    );
    expect(made).toMatchObject({
      agent_id: expect.stringMatching(/^agt_/),
      agent_secret: expect.stringMatching(/^aas_/),
      owner_email: 'owner@example.com',
      owner_name: 'Owner',
      email_verified: true,
      name: 'bot',
    });
    expect(await server.ctx.store.agents.find(made.agent_id as string)).toMatchObject({
      account_id: null,
      owner_email: 'owner@example.com',
      owner_email_verified: true,
      secret_digest: digest(made.agent_secret as string),
    });
    const madeLocally = await local('agent', 'create', '--owner-email', 'owner@example.com', '--name', 'bot');
    expect(Object.keys(made).sort()).toEqual(Object.keys(madeLocally).sort());
    // Only an admin's key reaching all accounts may name an owner.
    expect(
      await cli.refusal(cli.remoteEnv(member.secret), ['agent', 'create', '--owner-email', 'x@example.com']),
    ).toMatch(/\(403 /);
  });

  it('never printed a key', () => {
    expect(cli.printed()).not.toContain(admin.secret);
    expect(cli.printed()).not.toContain(member.secret);
  });
});
