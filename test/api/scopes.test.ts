/**
 * What a key's scopes allow across every resource: a read key changes nothing, a key of one
 * account reaches nothing of another's (it answers 404, as for a record that does not exist),
 * and accounts and the activity are for an admin's `all` key alone.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountWithKey } from '../helpers/api.ts';
import { obtainTokens, type Party } from '../helpers/flow.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let alice: Awaited<ReturnType<typeof accountWithKey>>;
let alicesParty: Party;
let grantId: string;

beforeAll(async () => {
  server = await startTestServer();
  alice = await accountWithKey(server);
  alicesParty = {
    ...(await server.createClient({ accountId: alice.account.id })),
    ...(await server.createAgent({ accountId: alice.account.id })),
  };
  await obtainTokens(server, alicesParty);
  grantId = (await alice.call('GET', '/grants')).json.data[0].id;
});
afterAll(() => server.close());

describe('management API: scopes', () => {
  it('refuses every change to a read key (403 insufficient_scope), and changes nothing', async () => {
    const reader = await accountWithKey(server, { key: { access: 'read' } });
    const agent = (await alice.call('POST', '/agents', { name: 'Reader’s?' })).json.agent.id;
    const own = await server.createClient({ accountId: reader.account.id });
    const ownAgent = await server.createAgent({ accountId: reader.account.id });
    const writes: Array<[string, string, unknown?]> = [
      ['POST', '/agents', { name: 'x' }],
      ['PATCH', `/agents/${ownAgent.agentId}`, { name: 'x' }],
      ['DELETE', `/agents/${ownAgent.agentId}`],
      ['POST', `/agents/${ownAgent.agentId}/rotate-secret`, {}],
      ['POST', `/agents/${ownAgent.agentId}/revoke-grants`],
      ['POST', '/clients', { name: 'x', redirect_uris: ['https://x.example/cb'] }],
      ['PATCH', `/clients/${own.clientId}`, { name: 'x' }],
      ['DELETE', `/clients/${own.clientId}`],
      ['POST', `/clients/${own.clientId}/rotate-secret`, {}],
      ['POST', `/clients/${own.clientId}/revoke-grants`],
      ['POST', `/grants/${grantId}/revoke`],
    ];
    for (const [method, path, body] of writes) {
      const answer = await reader.call(method, path, body);
      expect(answer.status, `${method} ${path}`).toBe(403);
      expect(answer.json.error, `${method} ${path}`).toBe('insufficient_scope');
    }
    expect(await server.ctx.store.clients.find(own.clientId)).toMatchObject({ name: 'Test App', status: 'active' });
    expect(await server.ctx.store.agents.find(ownAgent.agentId)).toBeDefined();
    expect(await server.ctx.store.agents.find(agent)).toBeDefined();
    // Reading is what it may do.
    expect((await reader.call('GET', `/clients/${own.clientId}`)).status).toBe(200);

    const adminReader = await accountWithKey(server, { role: 'admin', key: { access: 'read', reach: 'all' } });
    expect((await adminReader.call('GET', '/accounts')).status).toBe(200);
    for (const [method, path, body] of [['PATCH', `/accounts/${alice.account.id}`, { name: 'x' }]] as const) {
      const answer = await adminReader.call(method, path, body);
      expect(answer.status, `${method} ${path}`).toBe(403);
      expect(answer.json.error).toBe('insufficient_scope');
    }
  });

  it('keeps a member’s key from another account’s agents, clients, grants and sign-ins: 404, and absent from lists', async () => {
    const bob = await accountWithKey(server);
    const { agentId, clientId } = alicesParty;
    for (const [method, path, body] of [
      ['GET', `/agents/${agentId}`],
      ['PATCH', `/agents/${agentId}`, { name: 'Bob’s now' }],
      ['DELETE', `/agents/${agentId}`],
      ['POST', `/agents/${agentId}/rotate-secret`, {}],
      ['POST', `/agents/${agentId}/revoke-grants`],
      ['GET', `/clients/${clientId}`],
      ['PATCH', `/clients/${clientId}`, { name: 'Bob’s now' }],
      ['DELETE', `/clients/${clientId}`],
      ['POST', `/clients/${clientId}/rotate-secret`, {}],
      ['POST', `/clients/${clientId}/revoke-grants`],
      ['GET', `/grants/${grantId}`],
      ['POST', `/grants/${grantId}/revoke`],
    ] as const) {
      const answer = await bob.call(method, path, body);
      expect(answer.status, `${method} ${path}`).toBe(404);
      expect(answer.json.error).toBe('not_found');
    }
    for (const path of ['/agents', '/clients', '/grants', '/sign-ins', `/sign-ins?agent_id=${agentId}`]) {
      const answer = await bob.call('GET', path);
      expect(answer.status, path).toBe(200);
      expect(answer.json.data, path).toEqual([]);
    }
    // Naming Alice's account in a filter or a creation does not reach it either.
    expect((await bob.call('GET', `/clients?account_id=${alice.account.id}`)).json.data).toEqual([]);
    const foreign = await bob.call('POST', '/clients', {
      name: 'x',
      redirect_uris: ['https://x.example/cb'],
      account_id: alice.account.id,
    });
    expect(foreign.status).toBe(403);
    expect(await server.ctx.store.agents.find(agentId)).toMatchObject({ name: 'Ada Lovelace', status: 'active' });
    expect((await server.ctx.store.grants.find(grantId))?.revoked_at).toBeNull();
    expect((await alice.call('GET', '/sign-ins')).json.data).toHaveLength(1);
  });

  it('answers 403 to a member’s key, and to an admin’s own key, on accounts and the activity', async () => {
    const member = await accountWithKey(server);
    const adminOwn = await accountWithKey(server, { role: 'admin' });
    for (const key of [member, adminOwn]) {
      for (const [method, path, body] of [
        ['GET', '/accounts'],
        ['GET', `/accounts?email=${encodeURIComponent(alice.account.email)}`],
        ['GET', `/accounts/${key.account.id}`],
        ['PATCH', `/accounts/${key.account.id}`, { role: 'admin' }],
        ['GET', '/activity'],
      ] as const) {
        const answer = await key.call(method, path, body);
        expect(answer.status, `${method} ${path}`).toBe(403);
        expect(answer.json.error).toBe('insufficient_scope');
      }
    }
    expect((await server.ctx.store.accounts.find(member.account.id))?.role).toBe('member');
    expect(await server.ctx.store.accounts.findByEmail('new@example.com')).toBeUndefined();
  });

  it('lets only an admin’s `all` key make an agent for an owner without an account', async () => {
    const admin = await accountWithKey(server, { role: 'admin', key: { reach: 'all' } });
    const made = await admin.call('POST', '/agents', {
      owner: { email: 'Owner@Example.com', name: 'Olive', email_verified: true },
    });
    expect(made.status).toBe(201);
    expect(made.json.agent_secret).toMatch(/^aas_/);
    expect(made.json.agent).toMatchObject({
      name: 'Olive',
      account_id: null,
      owner: { email: 'Owner@Example.com', name: 'Olive', email_verified: true },
    });
    expect(await server.ctx.store.agents.find(made.json.agent.id)).toMatchObject({
      account_id: null,
      owner_email: 'Owner@Example.com',
      owner_email_verified: true,
    });
    const named = await admin.call('POST', '/agents', { name: 'Scraper', owner: { email: 'o@example.com' } });
    expect(named.json.agent).toMatchObject({ name: 'Scraper', owner: { email_verified: false, name: null } });

    const both = await admin.call('POST', '/agents', {
      owner: { email: 'o@example.com' },
      account_id: admin.account.id,
    });
    expect(both.status).toBe(400);
    expect(both.json.error_description).toBe('Send account_id or owner, not both.');
    const badEmail = await admin.call('POST', '/agents', { owner: { email: 'nope' } });
    expect(badEmail.status).toBe(400);
    const noName = await admin.call('POST', '/agents', {});
    expect(noName.status).toBe(400);

    for (const key of [alice, await accountWithKey(server, { role: 'admin' })]) {
      const refused = await key.call('POST', '/agents', { owner: { email: 'o@example.com' } });
      expect(refused.status).toBe(403);
      expect(refused.json.error).toBe('insufficient_scope');
    }
    expect((await alice.call('GET', `/agents/${made.json.agent.id}`)).status).toBe(404);
    expect((await admin.call('GET', `/agents/${made.json.agent.id}`)).status).toBe(200);
  });
});
