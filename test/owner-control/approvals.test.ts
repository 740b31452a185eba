/**
 * Approval on first use, the protocol's side (docs/design.md §16): "ask me" answers 202, the
 * request stays pending with approval_pending, and the owner's decision (decideApproval, which
 * the console calls after its checks) authenticates it, or ends it, exactly once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_POLICY, setAgentPolicy } from '../../src/domain/agent-policy.ts';
import { decideApproval } from '../../src/domain/approvals.ts';
import { authenticate, checkStatus, continueFlow, type Party, setupParty, startFlow } from '../helpers/flow.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let party: Party;

beforeAll(async () => {
  server = await startTestServer({ env: { AUTH_FAILURES_PER_AGENT: '1000', AUTH_FAILURES_PER_IP: '1000' } });
  party = await setupParty(server, { name: 'Acme Notes' });
});
afterAll(() => server.close());

async function askingAgent(allowed: string[] = []): Promise<Party> {
  const agent = await server.createAgent({ ownerName: 'Ada' });
  await setAgentPolicy(server.ctx, agent.agentId, { ...DEFAULT_POLICY, websites: 'ask', allowed_clients: allowed });
  return { ...party, ...agent };
}

async function asked(agent: Party) {
  const started = await startFlow(server, agent);
  const response = await authenticate(server, agent, started.requestId);
  expect(response.status).toBe(202);
  expect(response.headers.get('cache-control')).toBe('no-store');
  const body = (await response.json()) as { approval_id: string; expires_in: number; message: string };
  return { started, body };
}

describe('approval on first use', () => {
  it('202 approval_pending; check-status says pending with approval_pending; approving once authenticates', async () => {
    const agent = await askingAgent();
    const { started, body } = await asked(agent);
    expect(body).toEqual({
      status: 'approval_pending',
      message: expect.stringMatching(/^Waiting for Ada to approve signing in to Acme Notes/),
      approval_id: expect.stringMatching(/^apr_/),
      expires_at: expect.any(Number),
      expires_in: 600,
    });
    expect((await checkStatus(server, started.requestId)).body).toEqual({ status: 'pending', approval_pending: true });
    const described = await fetch(new URL(`/api/agent/request?request_id=${started.requestId}`, server.baseUrl));
    expect(await described.json()).toMatchObject({
      status: 'pending',
      approval_pending: true,
      client_name: 'Acme Notes',
    });
    // The browser cannot go on yet.
    expect((await continueFlow(server, started)).status).toBe(200);

    // Asking again (an SDK's retry) gets the same approval, not a second one.
    const again = await authenticate(server, agent, started.requestId);
    expect(again.status).toBe(202);
    expect(((await again.json()) as { approval_id: string }).approval_id).toBe(body.approval_id);

    const decided = await decideApproval(server.ctx, body.approval_id, 'once', 'acc_owner');
    expect(decided).toMatchObject({ status: 'approved', decision: 'once', decided_by: 'acc_owner' });
    expect((await checkStatus(server, started.requestId)).body).toEqual({ status: 'authenticated' });
    expect(await server.ctx.store.requests.find(started.requestId)).toMatchObject({
      agent_id: agent.agentId,
      model: 'test-model',
    });
    const redirect = await continueFlow(server, started);
    expect(redirect.status).toBe(302);
    expect(new URL(redirect.headers.get('location')!).searchParams.get('code')).toBeTruthy();

    // Single use: the same approval cannot be decided again.
    await expect(decideApproval(server.ctx, body.approval_id, 'once', 'acc_owner')).rejects.toThrow(/no longer waits/);
    const history = (await server.ctx.store.signIns.listEvents({ agent_id: agent.agentId, limit: 10 }))
      .filter((row) => row.request_id === started.requestId)
      .map((row) => row.outcome)
      .sort();
    expect(history).toEqual(['approval_pending', 'authenticated']);
  });

  it('approving once does not approve the next request; approving always adds the website', async () => {
    const agent = await askingAgent();
    const first = await asked(agent);
    await decideApproval(server.ctx, first.body.approval_id, 'once', 'acc_owner');
    const second = await asked(agent);
    expect(second.body.approval_id).not.toBe(first.body.approval_id);
    await decideApproval(server.ctx, second.body.approval_id, 'always', 'acc_owner');
    expect((await server.ctx.store.agents.find(agent.agentId))!.policy).toMatchObject({
      websites: 'ask',
      allowed_clients: [party.clientId],
    });
    const third = await startFlow(server, agent);
    expect((await authenticate(server, agent, third.requestId)).status).toBe(200);
  });

  it('denying ends the request in access_denied', async () => {
    const agent = await askingAgent();
    const { started, body } = await asked(agent);
    await decideApproval(server.ctx, body.approval_id, 'deny', 'acc_owner');
    expect((await checkStatus(server, started.requestId)).body).toEqual({
      status: 'error',
      error: 'access_denied',
      error_description: "The agent's owner denied this sign-in.",
    });
    // The browser is shown what happened, with the way back to the website.
    const page = await continueFlow(server, started);
    expect(page.status).toBe(400);
    const text = await page.text();
    expect(text).toContain('<h1>The agent&#39;s owner denied this sign-in</h1>');
    expect(text).toContain('Nothing was shared with Acme Notes.');
    // The page's way back (its script turns Cancel into it) tells the website the truth.
    const back = await continueFlow(server, started, { action: 'cancel' });
    expect(back.status).toBe(302);
    const location = new URL(back.headers.get('location')!);
    expect(location.searchParams.get('error')).toBe('access_denied');
    expect(location.searchParams.get('error_description')).toBe("The agent's owner denied this sign-in.");
    expect(location.searchParams.get('state')).toBe(started.state);
  });

  it('a cancel at the page tells the website the user cancelled, before and after the end', async () => {
    const agent = await askingAgent();
    const { started } = await asked(agent);
    const cancelled = await continueFlow(server, started, { action: 'cancel' });
    expect(cancelled.status).toBe(302);
    const location = new URL(cancelled.headers.get('location')!);
    expect(location.searchParams.get('error')).toBe('access_denied');
    expect(location.searchParams.get('error_description')).toBe('The user cancelled the authorization request.');
    expect(location.searchParams.get('state')).toBe(started.state);
    // Back again from the ended request (another tab): the same words, not the owner's.
    const again = await continueFlow(server, started, { action: 'cancel' });
    expect(new URL(again.headers.get('location')!).searchParams.get('error_description')).toBe(
      'The user cancelled the authorization request.',
    );
    const page = await continueFlow(server, started);
    expect(page.status).toBe(400);
    const text = await page.text();
    expect(text).toContain('Nothing was shared.');
    expect(text).not.toContain('owner denied');
  });

  it('a held request cannot be taken by another agent, and expiry ends the approval', async () => {
    const agent = await askingAgent();
    const { started, body } = await asked(agent);
    const other = await server.createAgent();
    const response = await authenticate(server, { ...party, ...other }, started.requestId);
    expect(response.status).toBe(409);
    expect(((await response.json()) as { error: string }).error).toBe('request_already_used');
    server.clock.advance(601);
    expect((await checkStatus(server, started.requestId)).body).toMatchObject({
      status: 'error',
      error: 'request_expired',
    });
    await expect(decideApproval(server.ctx, body.approval_id, 'once', 'acc_owner')).rejects.toThrow(/no longer waits/);
  });

  it('a listed website signs in at once, without asking', async () => {
    const agent = await askingAgent([party.clientId]);
    const started = await startFlow(server, agent);
    expect((await authenticate(server, agent, started.requestId)).status).toBe(200);
  });
});
