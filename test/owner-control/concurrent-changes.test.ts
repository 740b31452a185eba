/**
 * Owners' limits and If-Match under concurrency (issue 35, finding 3; docs/design.md §16, §17):
 * each condition is part of the write, so it holds whatever arrives at once. Many requests are
 * sent together over real HTTP and the answers and the database are counted: a sign-ins-per-hour
 * limit lets exactly its number through, websites removed from a policy together are all gone,
 * and one If-Match tag lets exactly one change through on every record the API guards with it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_POLICY, policyOf, setAgentPolicy } from '../../src/domain/agent-policy.ts';
import { agentKeyOf, registerKeyBoundAgent } from '../../src/domain/agents.ts';
import { signAssertion, testKeyPair } from '../helpers/agent-keys.ts';
import { accountWithKey } from '../helpers/api.ts';
import { createPasswordAccount, signIn } from '../helpers/console.ts';
import { authenticate, type Party, postJson, setupParty, startFlow } from '../helpers/flow.ts';
import { createOwnedAgent } from '../helpers/owned.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let party: Party;

beforeAll(async () => {
  server = await startTestServer({ env: { AUTH_FAILURES_PER_AGENT: '100000', AUTH_FAILURES_PER_IP: '100000' } });
  party = await setupParty(server, { name: 'Acme Notes' });
});
afterAll(() => server.close());

/** How many answers had each status, as `{ 200: 1, 412: 9 }`. */
function tally(statuses: number[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const status of statuses) counts[status] = (counts[status] ?? 0) + 1;
  return counts;
}

/** An agent with a secret, or a key-bound one (whose assertion's single use is a write before the policy). */
async function signingAgent(
  kind: 'secret' | 'key',
): Promise<{ id: string; authenticate(requestId: string): Promise<Response> }> {
  if (kind === 'secret') {
    const agent = { ...party, ...(await server.createAgent()) };
    return { id: agent.agentId, authenticate: (requestId) => authenticate(server, agent, requestId) };
  }
  const key = await testKeyPair();
  const agent = await registerKeyBoundAgent(server.ctx, { ownerEmail: 'ada@example.com' }, agentKeyOf(key.publicJwk));
  return {
    id: agent.id,
    authenticate: async (requestId) =>
      postJson(server, '/api/agent/authenticate', {
        request_id: requestId,
        agent_id: agent.id,
        model: 'test-model',
        agent_assertion: await signAssertion(key, {
          agentId: agent.id,
          issuer: server.baseUrl,
          requestId,
          now: server.clock(),
        }),
      }),
  };
}

describe('a sign-ins-per-hour limit under concurrent sign-ins', () => {
  it.each(['secret', 'key'] as const)(
    'an agent with a %s: 40 sign-ins at once against "1 per hour": exactly one succeeds, 39 are refused',
    async (kind) => {
      const agent = await signingAgent(kind);
      await setAgentPolicy(server.ctx, agent.id, { ...DEFAULT_POLICY, max_sign_ins_per_hour: 1 });
      const flows = [];
      for (let i = 0; i < 40; i++) flows.push(await startFlow(server, party));

      const answers = await Promise.all(flows.map((flow) => agent.authenticate(flow.requestId)));
      const bodies = await Promise.all(answers.map((answer) => answer.json() as Promise<Record<string, string>>));

      expect(tally(answers.map((answer) => answer.status))).toEqual({ 200: 1, 403: 39 });
      for (const [i, answer] of answers.entries())
        if (answer.status === 403)
          expect(bodies[i]).toEqual({
            error: 'access_denied',
            error_description:
              'This agent has signed in 1 times in the last hour, the most its owner allows; try again later.',
          });
      // The history agrees: one sign-in, 39 refusals.
      const history = await server.ctx.store.signIns.listEvents({ agent_id: agent.id, limit: 100 });
      expect(tally(history.map((row) => (row.outcome === 'authenticated' ? 1 : 0)))).toEqual({ 1: 1, 0: 39 });
      expect(await server.ctx.store.signIns.count(agent.id, server.clock() - 3600)).toBe(1);
    },
  );
});

describe('websites listed on a policy, changed at once in the console', () => {
  it('10 removals at once: each answers removed, and none of the 10 stays allowed', async () => {
    const owner = await createPasswordAccount(server.ctx);
    const session = await signIn(server.baseUrl, owner.email);
    const { agent } = await createOwnedAgent(server.ctx, owner, 'Research assistant');
    const websites = [];
    for (let i = 0; i < 11; i++) websites.push((await server.createClient({ name: `Site ${i}` })).clientId);
    await setAgentPolicy(server.ctx, agent.id, { ...DEFAULT_POLICY, websites: 'listed', allowed_clients: websites });
    await session.get(`/console/agents/${agent.id}`);

    const removed = websites.slice(0, 10);
    const answers = await Promise.all(
      removed.map((clientId) =>
        session.post(`/console/agents/${agent.id}/policy/websites/remove`, { client_id: clientId }),
      ),
    );

    for (const answer of answers) {
      expect(answer.status).toBe(303);
      expect(answer.location).toBe(`/console/agents/${agent.id}?notice=website_unlisted`);
    }
    expect(policyOf((await server.ctx.store.agents.find(agent.id))!).allowed_clients).toEqual([websites[10]]);
  });

  it('10 additions at once: each answers listed, and all 10 are allowed', async () => {
    const owner = await createPasswordAccount(server.ctx);
    const session = await signIn(server.baseUrl, owner.email);
    const { agent } = await createOwnedAgent(server.ctx, owner, 'Research assistant');
    const websites = [];
    for (let i = 0; i < 10; i++) websites.push((await server.createClient({ name: `Added ${i}` })).clientId);
    await setAgentPolicy(server.ctx, agent.id, { ...DEFAULT_POLICY, websites: 'listed', allowed_clients: [] });
    await session.get(`/console/agents/${agent.id}`);

    const answers = await Promise.all(
      websites.map((clientId) => session.post(`/console/agents/${agent.id}/policy/websites`, { client_id: clientId })),
    );

    for (const answer of answers) expect(answer.location).toBe(`/console/agents/${agent.id}?notice=website_listed`);
    const listed = policyOf((await server.ctx.store.agents.find(agent.id))!).allowed_clients;
    expect([...listed].sort()).toEqual([...websites].sort());
  });
});

describe('If-Match under concurrent changes: exactly one writer with a tag wins', () => {
  /** Sends 10 changes at once with the tag `read` answered; each change sets a different value. */
  async function raceWithOneTag(
    call: Awaited<ReturnType<typeof accountWithKey>>['call'],
    path: string,
    method: 'PATCH' | 'PUT',
    body: (i: number) => unknown,
  ) {
    const read = await call('GET', path);
    expect(read.status).toBe(200);
    const tag = read.headers.get('etag')!;
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) => call(method, path, body(i), { 'if-match': tag })),
    );
    expect(tally(answers.map((answer) => answer.status))).toEqual({ 200: 1, 412: 9 });
    for (const answer of answers.filter((one) => one.status === 412))
      expect(answer.json).toEqual({
        error: 'precondition_failed',
        error_description: expect.stringMatching(/If-Match/),
      });
    const winner = answers.findIndex((answer) => answer.status === 200);
    // The record is the winner's, and a read answers its tag.
    const after = await call('GET', path);
    expect(after.headers.get('etag')).toBe(answers[winner]!.headers.get('etag'));
    return { winner, after: after.json };
  }

  it('an agent (PATCH), its policy (PUT) and its deletion', async () => {
    const { call } = await accountWithKey(server);
    const id = (await call('POST', '/agents', { name: 'Contested' })).json.agent.id as string;
    const renamed = await raceWithOneTag(call, `/agents/${id}`, 'PATCH', (i) => ({ name: `Name ${i}` }));
    expect(renamed.after.name).toBe(`Name ${renamed.winner}`);
    const limited = await raceWithOneTag(call, `/agents/${id}/policy`, 'PUT', (i) => ({
      clients: 'any',
      max_sign_ins_per_hour: i + 1,
    }));
    expect(limited.after.max_sign_ins_per_hour).toBe(limited.winner + 1);
    expect(policyOf((await server.ctx.store.agents.find(id))!).max_sign_ins_per_hour).toBe(limited.winner + 1);
  });

  it('a client (PATCH)', async () => {
    const { call } = await accountWithKey(server);
    const made = await call('POST', '/clients', { name: 'Contested site', redirect_uris: ['https://site.example/cb'] });
    const id = made.json.client.id as string;
    const renamed = await raceWithOneTag(call, `/clients/${id}`, 'PATCH', (i) => ({ name: `Site ${i}` }));
    expect(renamed.after.name).toBe(`Site ${renamed.winner}`);
  });

  it('an account (PATCH)', async () => {
    const { call } = await accountWithKey(server, { role: 'admin', key: { reach: 'all' } });
    const target = await createPasswordAccount(server.ctx, { name: 'Lin' });
    const renamed = await raceWithOneTag(call, `/accounts/${target.id}`, 'PATCH', (i) => ({ name: `Lin ${i}` }));
    expect(renamed.after.name).toBe(`Lin ${renamed.winner}`);
  });

  it('a webhook (PATCH)', async () => {
    const { call } = await accountWithKey(server, { role: 'admin', key: { reach: 'all' } });
    const made = await call('POST', '/webhooks', { url: 'https://hooks.example.com/in', events: ['agent.created'] });
    const id = made.json.webhook.id as string;
    const changed = await raceWithOneTag(call, `/webhooks/${id}`, 'PATCH', (i) => ({ description: `Hook ${i}` }));
    expect(changed.after.description).toBe(`Hook ${changed.winner}`);
  });

  it('deletions with one tag: one deletes, the others are told the record changed', async () => {
    const { call } = await accountWithKey(server);
    const id = (await call('POST', '/agents', { name: 'Deleted once' })).json.agent.id as string;
    const tag = (await call('GET', `/agents/${id}`)).headers.get('etag')!;
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => call('DELETE', `/agents/${id}`, undefined, { 'if-match': tag })),
    );
    const statuses = tally(answers.map((answer) => answer.status));
    expect(statuses[200]).toBe(1);
    // A loser read the agent before it was deleted (412) or after (404); none deletes twice.
    expect((statuses[412] ?? 0) + (statuses[404] ?? 0)).toBe(9);
    expect(await server.ctx.store.agents.find(id)).toBeUndefined();
  });
});
