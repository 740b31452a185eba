/**
 * An agent's policy at POST /api/agent/authenticate (docs/design.md §16): each rule refuses with
 * 403 access_denied before any state change, is recorded in the history, and leaves the request
 * usable for another agent; an agent without a policy is untouched.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_POLICY, policyOf, setAgentPolicy } from '../../src/domain/agent-policy.ts';
import type { AgentPolicy } from '../../src/store/agents.ts';
import { authenticate, checkStatus, continueFlow, type Party, setupParty, startFlow } from '../helpers/flow.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let party: Party;

beforeAll(async () => {
  server = await startTestServer({ env: { AUTH_FAILURES_PER_AGENT: '1000', AUTH_FAILURES_PER_IP: '1000' } });
  party = await setupParty(server, { name: 'Acme Notes' });
});
afterAll(() => server.close());

async function agentWith(policy: Partial<AgentPolicy>): Promise<Party> {
  const agent = await server.createAgent();
  await setAgentPolicy(server.ctx, agent.agentId, { ...DEFAULT_POLICY, ...policy });
  return { ...party, ...agent };
}

async function historyOf(agentId: string, requestId: string) {
  const rows = await server.ctx.store.signIns.listEvents({ agent_id: agentId, limit: 50 });
  return rows.filter((row) => row.request_id === requestId).map((row) => row.outcome);
}

/** A refusal: 403 access_denied with words for a person, the request still pending, and the history row. */
async function expectRefused(agent: Party, requestId: string, words: RegExp) {
  const response = await authenticate(server, agent, requestId);
  expect(response.status).toBe(403);
  const body = (await response.json()) as Record<string, string>;
  expect(body).toEqual({ error: 'access_denied', error_description: expect.stringMatching(words) });
  expect((await checkStatus(server, requestId)).body).toEqual({ status: 'pending' });
  expect(await historyOf(agent.agentId, requestId)).toEqual(['access_denied']);
  // Another agent (no policy) can still sign in to the same request.
  const other = await server.createAgent();
  expect((await authenticate(server, { ...party, ...other }, requestId)).status).toBe(200);
}

describe('an agent policy at POST /api/agent/authenticate', () => {
  it('an agent without a policy signs in exactly as before (no policy stored)', async () => {
    const agent = await server.createAgent();
    expect((await server.ctx.store.agents.find(agent.agentId))!.policy).toBeNull();
    const started = await startFlow(server, party);
    expect((await authenticate(server, { ...party, ...agent }, started.requestId)).status).toBe(200);
  });

  it('only listed websites: another website is refused, a listed one signs in', async () => {
    const other = await server.createClient({ name: 'Other Site' });
    const agent = await agentWith({ websites: 'listed', allowed_clients: [other.clientId] });
    const started = await startFlow(server, party);
    await expectRefused(agent, started.requestId, /has not allowed Acme Notes \([^)]+\) for this agent\./);
    const listed = await startFlow(server, { ...party, ...other });
    expect((await authenticate(server, agent, listed.requestId)).status).toBe(200);
  });

  it('a scope ceiling refuses a request asking for more', async () => {
    const agent = await agentWith({ scope_ceiling: ['openid', 'profile'] });
    const started = await startFlow(server, party, { scope: 'openid email' });
    await expectRefused(agent, started.requestId, /does not allow this agent to share email/);
    const within = await startFlow(server, party, { scope: 'openid profile' });
    expect((await authenticate(server, agent, within.requestId)).status).toBe(200);
  });

  it('expired credentials are refused', async () => {
    const agent = await agentWith({ credentials_expire_at: server.clock() - 1 });
    const started = await startFlow(server, party);
    await expectRefused(agent, started.requestId, /credentials expired on \d{4}-\d\d-\d\dT/);
  });

  it('the sign-ins per hour limit refuses the one past it', async () => {
    const agent = await agentWith({ max_sign_ins_per_hour: 2 });
    for (let i = 0; i < 2; i++) {
      const started = await startFlow(server, party);
      expect((await authenticate(server, agent, started.requestId)).status).toBe(200);
    }
    const third = await startFlow(server, party);
    await expectRefused(agent, third.requestId, /signed in 2 times in the last hour/);
    server.clock.advance(3601);
    const later = await startFlow(server, party);
    expect((await authenticate(server, agent, later.requestId)).status).toBe(200);
  });

  it('a policy equal to the default is stored as none; unknown websites and scopes are refused', async () => {
    const agent = await agentWith({ websites: 'listed', allowed_clients: [party.clientId] });
    expect(policyOf((await server.ctx.store.agents.find(agent.agentId))!).websites).toBe('listed');
    await setAgentPolicy(server.ctx, agent.agentId, { ...DEFAULT_POLICY });
    expect((await server.ctx.store.agents.find(agent.agentId))!.policy).toBeNull();
    await expect(
      setAgentPolicy(server.ctx, agent.agentId, { ...DEFAULT_POLICY, allowed_clients: ['cli_nope'] }),
    ).rejects.toThrow(/cli_nope, which is not a registered website/);
    await expect(
      setAgentPolicy(server.ctx, agent.agentId, { ...DEFAULT_POLICY, scope_ceiling: ['admin'] }),
    ).rejects.toThrow(/names admin, which is not a scope/);
    await expect(
      setAgentPolicy(server.ctx, agent.agentId, { ...DEFAULT_POLICY, max_sign_ins_per_hour: 0 }),
    ).rejects.toThrow(/from 1 to/);
  });

  it('a refused agent does not stop the browser from finishing with another agent', async () => {
    const agent = await agentWith({ websites: 'listed', allowed_clients: [] });
    const started = await startFlow(server, party);
    await expectRefused(agent, started.requestId, /has not allowed/);
    expect((await continueFlow(server, started)).status).toBe(302);
  });
});
