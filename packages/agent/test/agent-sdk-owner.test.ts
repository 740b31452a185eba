/**
 * The TypeScript agent SDK when the agent's owner is in control (docs/design.md §16), against a
 * real server over real HTTP: a policy's refusal is an AccessDeniedError in plain words; "ask
 * me" answers 202 and the SDK waits for the owner's decision without sending its credentials
 * again; approval signs in (the browser then gets its code), denial and expiry end it clearly.
 * The owner's decision is decideApproval, as the console calls it after its checks.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_POLICY, setAgentPolicy } from '../../../src/domain/agent-policy.ts';
import { agentKeyOf, registerKeyBoundAgent } from '../../../src/domain/agents.ts';
import { decideApproval } from '../../../src/domain/approvals.ts';
import type { AgentPolicy } from '../../../src/store/agents.ts';
import { continueFlow, type Party, setupParty, startFlow } from '../../../test/helpers/flow.ts';
import { startTestServer, type TestServer } from '../../../test/helpers/server.ts';
import {
  AccessDeniedError,
  AgentAuth,
  type ApprovalPending,
  ConfigurationError,
  generateAgentKey,
  RequestExpiredError,
  type SignInOptions,
  TimeoutError,
} from '../src/index.ts';

const REDIRECT_URI = 'https://notes.acme.example/callback';
const HOST = 'notes.acme.example';

let server: TestServer;
let party: Party;

beforeAll(async () => {
  server = await startTestServer({ env: { AUTH_FAILURES_PER_AGENT: '1000', AUTH_FAILURES_PER_IP: '1000' } });
  party = await setupParty(server, { name: 'Acme Notes', redirectUris: [REDIRECT_URI] });
});
afterAll(() => server.close());

/** An agent of Ada's under the policy, with the website's party. */
async function agentUnder(policy: Partial<AgentPolicy>): Promise<{ who: Party; agent: AgentAuth }> {
  const created = await server.createAgent({ ownerName: 'Ada' });
  await setAgentPolicy(server.ctx, created.agentId, { ...DEFAULT_POLICY, ...policy });
  const who = { ...party, ...created };
  return {
    who,
    agent: new AgentAuth({ issuer: server.baseUrl, agentId: who.agentId, agentSecret: who.agentSecret, model: 'm' }),
  };
}

/** Starts signIn, resolving `asked` once the SDK has been told approval is awaited. */
function signInAsking(agent: AgentAuth, requestId: string, options: Partial<SignInOptions> = {}) {
  let told!: (pending: ApprovalPending) => void;
  const asked = new Promise<ApprovalPending>((resolve) => (told = resolve));
  const calls: ApprovalPending[] = [];
  const signedIn = agent.signIn({
    requestId,
    expect: { host: HOST },
    onApprovalPending: (pending) => {
      calls.push(pending);
      told(pending);
    },
    ...options,
  });
  signedIn.catch(() => {}); // asserted by the test; unhandled until then
  return { signedIn, asked, calls };
}

describe("the owner's policy", () => {
  it('a refusal is AccessDeniedError (403) in plain words; nothing is waited for', async () => {
    const { who, agent } = await agentUnder({ websites: 'listed' });
    const started = await startFlow(server, who);
    const error = await agent.signIn({ requestId: started.requestId, expect: { host: HOST } }).then(
      () => undefined,
      (reason: unknown) => reason,
    );
    expect(error).toBeInstanceOf(AccessDeniedError);
    expect(error).toMatchObject({
      code: 'access_denied',
      status: 403,
      description: 'Your owner has not allowed Acme Notes (notes.acme.example) for this agent.',
    });
    // The request is still usable for another agent.
    expect((await agent.checkStatus(started.requestId)).status).toBe('pending');
  });

  it('a listed website signs in at once, without approved_by_owner', async () => {
    const { who, agent } = await agentUnder({ websites: 'ask', allowed_clients: [party.clientId] });
    const started = await startFlow(server, who);
    const { signedIn, calls } = signInAsking(agent, started.requestId);
    const result = await signedIn;
    expect(result.status).toBe('authenticated');
    expect(result).not.toHaveProperty('approved_by_owner');
    expect(calls).toEqual([]);
  });
});

describe('waiting for the owner\'s approval ("ask me")', () => {
  it('202: told once, waits by push, and the approval signs in; the browser then gets its code', async () => {
    const { who, agent } = await agentUnder({ websites: 'ask' });
    const started = await startFlow(server, who);
    const { signedIn, asked, calls } = signInAsking(agent, started.requestId);
    const pending = await asked;
    expect(pending).toEqual({
      message: expect.stringMatching(/^Waiting for Ada to approve signing in to Acme Notes/),
      approvalId: expect.stringMatching(/^apr_/),
      expiresAt: expect.any(Number),
      expiresIn: 600,
    });
    expect(await agent.checkStatus(started.requestId)).toEqual({ status: 'pending', approval_pending: true });

    await decideApproval(server.ctx, pending.approvalId, 'once', 'acc_owner');
    const result = await signedIn;
    expect(result).toMatchObject({
      request_id: started.requestId,
      status: 'authenticated',
      approved_by_owner: true,
      client_id: party.clientId,
      redirect_host: HOST,
      message: "The agent's owner approved this sign-in; the browser will now continue to notes.acme.example.",
    });
    expect(calls).toHaveLength(1);
    // One authentication: the credentials were not sent again (one approval_pending, then the owner's).
    const history = (await server.ctx.store.signIns.listEvents({ agent_id: who.agentId, limit: 10 }))
      .filter((row) => row.request_id === started.requestId)
      .map((row) => row.outcome)
      .sort();
    expect(history).toEqual(['approval_pending', 'authenticated']);

    const redirect = await continueFlow(server, started);
    expect(redirect.status).toBe(302);
    expect(new URL(redirect.headers.get('location')!).searchParams.get('code')).toBeTruthy();
    await expect(agent.waitForCompletion(started.requestId, { timeoutMs: 5000 })).resolves.toEqual({
      status: 'completed',
    });
  });

  it('polling only (push: false) sees the approval as well', async () => {
    const { who, agent } = await agentUnder({ websites: 'ask' });
    const started = await startFlow(server, who);
    const { signedIn, asked } = signInAsking(agent, started.requestId, { push: false });
    await decideApproval(server.ctx, (await asked).approvalId, 'always', 'acc_owner');
    expect(await signedIn).toMatchObject({ status: 'authenticated', approved_by_owner: true });
  });

  it("a denial rejects with AccessDeniedError: the owner's words", async () => {
    const { who, agent } = await agentUnder({ websites: 'ask' });
    const started = await startFlow(server, who);
    const { signedIn, asked } = signInAsking(agent, started.requestId);
    await decideApproval(server.ctx, (await asked).approvalId, 'deny', 'acc_owner');
    const error = await signedIn.then(
      () => undefined,
      (reason: unknown) => reason,
    );
    expect(error).toBeInstanceOf(AccessDeniedError);
    expect(error).toMatchObject({
      code: 'access_denied',
      status: undefined,
      description: "The agent's owner denied this sign-in.",
    });
  });

  it('the request expiring while waiting rejects with RequestExpiredError saying the owner did not decide', async () => {
    const { who, agent } = await agentUnder({ websites: 'ask' });
    const started = await startFlow(server, who);
    // Polling: the test clock moves the server's time, which no stream hears of until its next tick.
    const { signedIn, asked } = signInAsking(agent, started.requestId, { push: false });
    await asked;
    server.clock.advance(601);
    const error = await signedIn.then(
      () => undefined,
      (reason: unknown) => reason,
    );
    expect(error).toBeInstanceOf(RequestExpiredError);
    expect(error).toMatchObject({
      code: 'request_expired',
      description: "The request expired before the agent's owner decided; start the sign-in again.",
    });
  });

  it('approvalTimeoutMs bounds the wait: TimeoutError, and the request still waits for the owner', async () => {
    const { who, agent } = await agentUnder({ websites: 'ask' });
    const started = await startFlow(server, who);
    const { signedIn } = signInAsking(agent, started.requestId, { approvalTimeoutMs: 300, push: false });
    const error = await signedIn.then(
      () => undefined,
      (reason: unknown) => reason,
    );
    expect(error).toBeInstanceOf(TimeoutError);
    expect((error as TimeoutError).description).toMatch(/still waits for their approval/);
    expect(await agent.checkStatus(started.requestId)).toEqual({ status: 'pending', approval_pending: true });
  });

  it('signing in again while held waits on the same approval (the credentials once more, no second ask)', async () => {
    const { who, agent } = await agentUnder({ websites: 'ask' });
    const started = await startFlow(server, who);
    const first = signInAsking(agent, started.requestId, { approvalTimeoutMs: 200, push: false });
    await expect(first.signedIn).rejects.toBeInstanceOf(TimeoutError);
    const again = signInAsking(agent, started.requestId);
    const pending = await again.asked;
    expect(pending.approvalId).toBe((await first.asked).approvalId);
    await decideApproval(server.ctx, pending.approvalId, 'once', 'acc_owner');
    const result = await again.signedIn;
    expect(result).toMatchObject({ status: 'authenticated', approved_by_owner: true });
    expect(result).not.toHaveProperty('approval_pending');
  });

  it("an aborted signal ends the wait with the caller's reason", async () => {
    const { who, agent } = await agentUnder({ websites: 'ask' });
    const started = await startFlow(server, who);
    const controller = new AbortController();
    const { signedIn, asked } = signInAsking(agent, started.requestId, { signal: controller.signal });
    await asked;
    controller.abort(new Error('the person gave up'));
    await expect(signedIn).rejects.toThrow('the person gave up');
  });
});

describe('a signal aborted by onApprovalPending itself', () => {
  it('ends the wait at once with its reason (what the MCP tool does to answer without waiting)', async () => {
    const { who, agent } = await agentUnder({ websites: 'ask' });
    const started = await startFlow(server, who);
    const controller = new AbortController();
    const reason = new Error('answer now');
    const signedIn = agent.signIn({
      requestId: started.requestId,
      expect: { host: HOST },
      signal: controller.signal,
      onApprovalPending: () => controller.abort(reason),
    });
    await expect(signedIn).rejects.toBe(reason);
  });
});

describe('options', () => {
  it('a malformed approvalTimeoutMs is a ConfigurationError before anything is sent', async () => {
    const { who, agent } = await agentUnder({ websites: 'ask' });
    const started = await startFlow(server, who);
    await expect(
      agent.signIn({ requestId: started.requestId, expect: { host: HOST }, approvalTimeoutMs: -1 }),
    ).rejects.toBeInstanceOf(ConfigurationError);
    expect((await server.ctx.store.requests.find(started.requestId))!.approval_id).toBeNull();
  });
});

describe('a key-bound agent', () => {
  it('waits for its owner in the same way, and the approval signs it in without a second assertion', async () => {
    // A server of its own: its clock has not been moved (an assertion is checked against it).
    const fresh = await startTestServer();
    try {
      const website = await setupParty(fresh, { name: 'Acme Notes', redirectUris: [REDIRECT_URI] });
      const { privateKey, publicKey } = await generateAgentKey('Ed25519');
      const registered = await registerKeyBoundAgent(
        fresh.ctx,
        { ownerEmail: 'ada@example.com', ownerName: 'Ada' },
        agentKeyOf(publicKey),
      );
      await setAgentPolicy(fresh.ctx, registered.id, { ...DEFAULT_POLICY, websites: 'ask' });
      const agent = new AgentAuth({ issuer: fresh.baseUrl, agentId: registered.id, privateKey, model: 'm' });
      const started = await startFlow(fresh, { ...website, agentId: registered.id, agentSecret: '' });
      const { signedIn, asked } = signInAsking(agent, started.requestId);
      // Whichever comes first: the SDK's word that it waits, or its failure.
      const pending = await Promise.race([asked, signedIn.then(() => undefined)]);
      await decideApproval(fresh.ctx, pending!.approvalId, 'once', 'acc_owner');
      expect(await signedIn).toMatchObject({ status: 'authenticated', approved_by_owner: true });
      const redirect = await continueFlow(fresh, started);
      expect(new URL(redirect.headers.get('location')!).searchParams.get('code')).toBeTruthy();
    } finally {
      await fresh.close();
    }
  });
});
