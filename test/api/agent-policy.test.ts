/**
 * GET and PUT /agents/{id}/policy (docs/design.md §16): what an owner allows an agent, read and
 * set through the management API by the one rule (setAgentPolicy), and enforced at sign-in.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authenticate, setupParty, startFlow } from '../helpers/flow.ts';
import { accountWithKey } from '../helpers/api.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let websiteId: string;
beforeAll(async () => {
  server = await startTestServer({ env: { AUTH_FAILURES_PER_AGENT: '1000', AUTH_FAILURES_PER_IP: '1000' } });
  websiteId = (await setupParty(server, { name: 'Acme Notes' })).clientId;
});
afterAll(() => server.close());

const DEFAULT = {
  clients: 'any',
  allowed_clients: [],
  scope_ceiling: null,
  credentials_expire_at: null,
  max_sign_ins_per_hour: null,
  actions: [],
};

describe('management API: an agent’s policy', () => {
  it('reads the default, sets a policy (fields left out take their default), and the sign-in obeys it', async () => {
    const { call } = await accountWithKey(server);
    const created = await call('POST', '/agents', { name: 'Research assistant' });
    const id = created.json.agent.id as string;
    const secret = created.json.agent_secret as string;

    const read = await call('GET', `/agents/${id}/policy`);
    expect(read.status).toBe(200);
    expect(read.json).toEqual(DEFAULT);
    const etag = read.headers.get('etag')!;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{27}"$/);

    const policy = {
      clients: 'listed',
      allowed_clients: [websiteId, websiteId],
      scope_ceiling: ['profile', 'openid'],
      credentials_expire_at: '2027-01-31T00:00:00Z',
      max_sign_ins_per_hour: 10,
      actions: [],
    };
    const set = await call('PUT', `/agents/${id}/policy`, policy, { 'if-match': etag });
    expect(set.status).toBe(200);
    // Stored normalized: the list without repeats, the scopes in the server's order.
    expect(set.json).toEqual({ ...policy, allowed_clients: [websiteId], scope_ceiling: ['openid', 'profile'] });
    expect(set.headers.get('etag')).not.toBe(etag);
    expect((await server.ctx.store.agents.find(id))!.policy).toEqual({
      websites: 'listed',
      allowed_clients: [websiteId],
      scope_ceiling: ['openid', 'profile'],
      credentials_expire_at: Date.parse('2027-01-31T00:00:00Z') / 1000,
      max_sign_ins_per_hour: 10,
      actions: [],
    });
    expect((await call('GET', `/agents/${id}/policy`)).json).toEqual(set.json);

    // A stale If-Match changes nothing.
    const stale = await call('PUT', `/agents/${id}/policy`, { clients: 'any' }, { 'if-match': etag });
    expect(stale.status).toBe(412);

    // Only listed websites: another website is refused in plain words.
    const other = await setupParty(server, { name: 'Other Site', redirectUris: ['https://other.example/cb'] });
    const refusedFlow = await startFlow(server, other, { scope: 'openid' });
    const refused = await authenticate(server, { ...other, agentId: id, agentSecret: secret }, refusedFlow.requestId);
    expect(refused.status).toBe(403);
    expect(await refused.json()).toEqual({
      error: 'access_denied',
      error_description: 'Your owner has not allowed Other Site (other.example) for this agent.',
    });

    // Back to the default: {"clients":"any"} stores nothing (NULL), the agent is on SPEC.md's path.
    const reset = await call('PUT', `/agents/${id}/policy`, { clients: 'any' });
    expect(reset.json).toEqual(DEFAULT);
    expect((await server.ctx.store.agents.find(id))!.policy).toBeNull();
  });

  it('refuses a bad policy with a clear 400, and changes nothing', async () => {
    const { call } = await accountWithKey(server);
    const id = (await call('POST', '/agents', { name: 'Strict' })).json.agent.id as string;
    const cases: Array<[unknown, RegExp]> = [
      [{ clients: 'some' }, /clients/],
      [{}, /clients/],
      [{ clients: 'listed', allowed_clients: ['cli_unknown'] }, /cli_unknown, which is not a registered website/],
      [{ clients: 'any', scope_ceiling: ['admin'] }, /scope_ceiling/],
      [{ clients: 'any', credentials_expire_at: 'tomorrow' }, /credentials_expire_at/],
      [{ clients: 'any', max_sign_ins_per_hour: 0 }, /max_sign_ins_per_hour/],
      [{ clients: 'any', colour: 'blue' }, /colour|additional/],
    ];
    for (const [body, description] of cases) {
      const answer = await call('PUT', `/agents/${id}/policy`, body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.json.error).toBe('invalid_request');
      expect(answer.json.error_description).toMatch(description);
    }
    expect((await server.ctx.store.agents.find(id))!.policy).toBeNull();
  });

  it('keeps owners apart (404) and read keys from writing (403)', async () => {
    const alice = await accountWithKey(server);
    const id = (await alice.call('POST', '/agents', { name: 'Alice’s' })).json.agent.id as string;
    const bob = await accountWithKey(server);
    expect((await bob.call('GET', `/agents/${id}/policy`)).status).toBe(404);
    const notBobs = await bob.call('PUT', `/agents/${id}/policy`, { clients: 'ask' });
    expect(notBobs.status).toBe(404);
    expect(notBobs.json.error).toBe('not_found');
    expect((await alice.call('GET', '/agents/agt_missing/policy')).status).toBe(404);

    const admin = await accountWithKey(server, { role: 'admin', key: { reach: 'all', access: 'read' } });
    expect((await admin.call('GET', `/agents/${id}/policy`)).status).toBe(200);
    const readOnly = await admin.call('PUT', `/agents/${id}/policy`, { clients: 'ask' });
    expect(readOnly.status).toBe(403);
    expect(readOnly.json.error).toBe('insufficient_scope');
    expect((await server.ctx.store.agents.find(id))!.policy).toBeNull();

    const adminWrite = await accountWithKey(server, { role: 'admin', key: { reach: 'all' } });
    expect((await adminWrite.call('PUT', `/agents/${id}/policy`, { clients: 'ask' })).json.clients).toBe('ask');
  });

  it('publishes the AgentPolicy schema and both operations in the OpenAPI document', async () => {
    const { call } = await accountWithKey(server);
    const doc = await call('GET', '/openapi.json');
    expect(doc.json.components.schemas.AgentPolicy).toBeDefined();
    expect(doc.json.paths['/agents/{id}/policy'].get.operationId).toBe('getAgentPolicy');
    expect(doc.json.paths['/agents/{id}/policy'].put.operationId).toBe('setAgentPolicy');
  });
});
