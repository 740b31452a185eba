/**
 * What the browser is told while the agent's owner is asked to approve (docs/design.md §16):
 * GET /authorize/agent (the page's script; only the browser that started the request) names
 * whose approval it waits for, by the owner's name, or the agent's when the owner has none,
 * never by an email; the page without script says the same after Continue.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_POLICY, setAgentPolicy } from '../../src/domain/agent-policy.ts';
import { authenticate, continueFlow, type Party, setupParty, startFlow } from '../helpers/flow.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let party: Party;

beforeAll(async () => {
  server = await startTestServer({ env: { AUTH_FAILURES_PER_AGENT: '1000', AUTH_FAILURES_PER_IP: '1000' } });
  party = await setupParty(server, { name: 'Acme Notes' });
});
afterAll(() => server.close());

async function heldFor(owner: { ownerName?: string; name: string }) {
  const agent = await server.createAgent({ ownerEmail: 'owner@example.com', ownerName: undefined, ...owner });
  await setAgentPolicy(server.ctx, agent.agentId, { ...DEFAULT_POLICY, websites: 'ask' });
  const who = { ...party, ...agent };
  const started = await startFlow(server, who);
  expect((await authenticate(server, who, started.requestId)).status).toBe(202);
  return started;
}

const agentView = (requestId: string, cookie?: string) =>
  fetch(`${server.baseUrl}/authorize/agent?request_id=${requestId}`, { headers: cookie ? { cookie } : {} });

describe('the browser while the owner is asked', () => {
  it('names the owner (not their email) to the browser that started the request, and nobody else', async () => {
    const started = await heldFor({ ownerName: 'Grace Hopper', name: 'Compiler bot' });
    const answer = await agentView(started.requestId, started.cookie);
    expect(answer.status).toBe(200);
    const text = await answer.text();
    expect(JSON.parse(text)).toEqual({
      status: 'pending',
      approval: { agent_name: 'Compiler bot', owner_name: 'Grace Hopper' },
    });
    expect(text).not.toContain('owner@example.com');
    expect((await agentView(started.requestId)).status).toBe(403);

    const page = await continueFlow(server, started);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain(
      'Waiting for approval from Grace Hopper. Your agent asked its owner to allow signing in to Acme Notes; this page continues as soon as they approve.',
    );
    expect(html).toContain('data-state="approval"');
    expect(html).not.toContain('owner@example.com');
  });

  it("an owner without a name: the agent's name and 'its owner'", async () => {
    const started = await heldFor({ name: 'Nameless bot' });
    expect(await (await agentView(started.requestId, started.cookie)).json()).toEqual({
      status: 'pending',
      approval: { agent_name: 'Nameless bot', owner_name: null },
    });
    const html = await (await continueFlow(server, started)).text();
    expect(html).toContain('Waiting for approval from the owner of Nameless bot.');
    expect(html).not.toContain('owner@example.com');
  });
});
