/**
 * The owner hears of an approval at once (docs/design.md §16): by mail through a real SMTP server
 * on loopback (only to an address known to be theirs), and by the signed webhooks
 * agent.approval.requested and agent.approval.decided, verified by a real HTTPS receiver.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../src/domain/accounts.ts';
import { DEFAULT_POLICY, setAgentPolicy } from '../../src/domain/agent-policy.ts';
import { decideApproval } from '../../src/domain/approvals.ts';
import { registerClient } from '../../src/domain/clients.ts';
import { createWebhook } from '../../src/domain/webhooks/endpoints.ts';
import type { AccountRecord } from '../../src/store/accounts.ts';
import { authenticate, type Party, setupParty, startFlow } from '../helpers/flow.ts';
import { startMailbox } from '../helpers/mailbox.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { allowLoopback, startWebhookReceiver } from '../helpers/webhook-receiver.ts';

let server: TestServer;
let mailbox: Awaited<ReturnType<typeof startMailbox>>;
let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
let owner: AccountRecord;
let party: Party;

beforeAll(async () => {
  mailbox = await startMailbox();
  receiver = await startWebhookReceiver();
  server = await startTestServer({
    env: { SMTP_URL: mailbox.url, SMTP_FROM: 'agentauth <no-reply@id.example>' },
    webhooks: { fetch: { ca: receiver.ca, allowAddress: allowLoopback }, pollMs: 50 },
  });
  owner = await createAccount(server.ctx, { email: 'ada@example.com', name: 'Ada', role: 'admin' });
  party = await setupParty(server, { name: 'Acme Notes' });
  const { secret } = await createWebhook(server.ctx, owner, {
    url: receiver.url,
    events: ['agent.approval.requested', 'agent.approval.decided'],
  });
  receiver.useSecret(secret);
});
afterAll(async () => {
  await server.close();
  await receiver.close();
  await mailbox.close();
});

async function askingAgent(input: Parameters<TestServer['createAgent']>[0]): Promise<Party> {
  const agent = await server.createAgent(input);
  await setAgentPolicy(server.ctx, agent.agentId, { ...DEFAULT_POLICY, websites: 'ask' });
  return { ...party, ...agent };
}

describe('telling the owner about an approval', () => {
  it('mails the owner of a console account a link to decide, and announces the request and the decision', async () => {
    const agent = await askingAgent({ ownerEmail: owner.email, accountId: owner.id, name: 'Research assistant' });
    const started = await startFlow(server, agent, { scope: 'openid email' });
    const response = await authenticate(server, agent, started.requestId, 'claude-opus-4');
    expect(response.status).toBe(202);
    const { approval_id } = (await response.json()) as { approval_id: string };

    const mail = await mailbox.next();
    expect(mail.to).toEqual(['ada@example.com']);
    expect(mail.headers).toMatch(/Subject: Approve Research assistant signing in to Acme Notes\?/);
    expect(mail.text).toContain(`${server.baseUrl}/console/approvals/${approval_id}`);
    expect(mail.text).toContain('claude-opus-4');
    expect(mail.text).toContain('openid email');

    const [requested] = await receiver.until((all) => all.length >= 1);
    expect(requested!.verified).toBe(true);
    expect(requested!.payload).toMatchObject({
      type: 'agent.approval.requested',
      data: {
        approval: { id: approval_id, status: 'pending', decision: null },
        request: { id: started.requestId, scope: 'openid email' },
        agent: { id: agent.agentId, name: 'Research assistant' },
        client: { id: party.clientId, name: 'Acme Notes' },
        model: 'claude-opus-4',
      },
    });
    // Neither the agent's address nor anything secret leaves in the event.
    expect(requested!.raw).not.toMatch(/127\.0\.0\.1|aas_|user_agent/);

    await decideApproval(server.ctx, approval_id, 'always', owner.id);
    const all = await receiver.until((received) => received.length >= 2);
    expect(all[1]!.payload).toMatchObject({
      type: 'agent.approval.decided',
      data: { approval: { id: approval_id, status: 'approved', decision: 'always' } },
    });
  });

  it('does not mail an address nobody confirmed (an agent made with any owner email)', async () => {
    const agent = await askingAgent({ ownerEmail: 'stranger@example.com', emailVerified: false });
    const started = await startFlow(server, agent);
    const before = mailbox.received.length;
    expect((await authenticate(server, agent, started.requestId)).status).toBe(202);
    // The webhook is the proof the request was handled; no mail followed it.
    await receiver.until((all) => all.some((d) => d.payload.data?.request?.id === started.requestId));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(mailbox.received.length).toBe(before);
  });

  it('says what each resource scope allows, in the words its resource server registered', async () => {
    const notes = 'https://notes.example/mcp';
    await registerClient(server.ctx, {
      name: 'Notes MCP server',
      redirectUris: [],
      resources: [notes],
      scopes: [{ name: 'notes:read', description: 'Read your notes' }],
    });
    const agent = await askingAgent({ ownerEmail: owner.email, accountId: owner.id, name: 'Note taker' });
    const started = await startFlow(server, agent, { scope: 'openid notes:read', resource: notes });
    expect((await authenticate(server, agent, started.requestId)).status).toBe(202);
    const mail = await mailbox.next();
    expect(mail.headers).toMatch(/Subject: Approve Note taker signing in/);
    expect(mail.text).toContain('asking for: openid notes:read (Read your notes).');
  });
});
