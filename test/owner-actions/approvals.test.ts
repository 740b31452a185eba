/**
 * The owner's side of action requests (issue 39, docs/design.md §21), over real HTTP: a website
 * asks at /bc-authorize; the owner reads the action in words in the console (list, page, live
 * notice), escaped, the binding message quoted as the website's own, the details as sent; two
 * decisions (no "always"), each with a fresh password here (the passkey in
 * approvals-browser.test.ts); a decision made twice is a 409 page; another owner gets 404; the
 * mail and the webhooks carry the words; the agent's policy answers for the owner (always within
 * and beyond its limit, never, ask); and the agent learns of it at GET /api/agent/actions and
 * through its SDK: waiting, then approved.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentAuth } from '../../packages/agent/src/index.ts';
import { readPublicKey } from '../../src/domain/agent-keys.ts';
import { DEFAULT_POLICY, setAgentPolicy } from '../../src/domain/agent-policy.ts';
import { createWebhook } from '../../src/domain/webhooks/endpoints.ts';
import type { AccountRecord } from '../../src/store/accounts.ts';
import type { ActionRule } from '../../src/store/agents.ts';
import type { ActionType } from '../../src/store/clients.ts';
import { type ConsoleSession, createPasswordAccount, noticeOf, signIn, TEST_PASSWORD } from '../helpers/console.ts';
import { obtainTokens, type Party, postForm } from '../helpers/flow.ts';
import { startMailbox } from '../helpers/mailbox.ts';
import { signAssertion, testKeyPair } from '../helpers/agent-keys.ts';
import { createOwnedAgent, createOwnedKeyBoundAgent } from '../helpers/owned.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { allowLoopback, startWebhookReceiver } from '../helpers/webhook-receiver.ts';

/** A type whose words carry markup, as a hostile website could register them. */
const PAYMENT: ActionType = {
  type: 'payment',
  description: 'Pay {amount} {currency} to <b>{payee}</b>',
  fields: {
    amount: { type: 'number', required: true },
    currency: { type: 'string', required: true },
    payee: { type: 'string', required: true },
  },
  amount_field: 'amount',
  currency_field: 'currency',
};
const pay = (amount: number, payee = 'Acme') => [{ type: 'payment', amount, currency: 'EUR', payee }];
const CIBA = 'urn:openid:params:grant-type:ciba';

let server: TestServer;
let mailbox: Awaited<ReturnType<typeof startMailbox>>;
let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
let owner: AccountRecord;
let session: ConsoleSession;
let shop: { clientId: string; clientSecret: string; redirectUri: string };

beforeAll(async () => {
  mailbox = await startMailbox();
  receiver = await startWebhookReceiver();
  server = await startTestServer({
    env: { ACTION_APPROVALS: 'on', SMTP_URL: mailbox.url, SMTP_FROM: 'agentauth <no-reply@id.example>' },
    webhooks: { fetch: { ca: receiver.ca, allowAddress: allowLoopback }, pollMs: 50 },
  });
  owner = await createPasswordAccount(server.ctx, { email: 'ada@example.org', name: 'Ada' });
  session = await signIn(server.baseUrl, owner.email);
  shop = await server.createClient({ name: 'Acme Shop', redirectUris: ['https://shop.example/callback'] });
  await server.ctx.store.clients.update(shop.clientId, { action_types: [PAYMENT] });
  const admin = await createPasswordAccount(server.ctx, { email: 'root@example.org', name: 'Root', role: 'admin' });
  const { secret } = await createWebhook(server.ctx, admin, {
    url: receiver.url,
    events: ['agent.approval.requested', 'agent.approval.decided'],
  });
  receiver.useSecret(secret);
});
afterAll(async () => {
  await server?.close();
  await receiver?.close();
  await mailbox?.close();
});

/** An agent of `account` that signed in to the shop (a website may ask only about such an agent). */
async function signedInAgent(name: string, account = owner): Promise<Party> {
  const { agent, secret } = await createOwnedAgent(server.ctx, account, name);
  const party = { ...shop, agentId: agent.id, agentSecret: secret };
  await obtainTokens(server, party, { scope: 'openid' });
  return party;
}

/** The website asks its agent's owner (client_secret_post). */
async function askAbout(agent: Party, details: unknown[], bindingMessage?: string) {
  const response = await postForm(server, '/bc-authorize', {
    client_id: shop.clientId,
    client_secret: shop.clientSecret,
    scope: 'openid',
    login_hint: agent.agentId,
    authorization_details: JSON.stringify(details),
    ...(bindingMessage === undefined ? {} : { binding_message: bindingMessage }),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as { auth_req_id: string; expires_in: number; interval: number };
}

/** The website polls /token once. */
async function poll(authReqId: string) {
  const response = await postForm(server, '/token', {
    grant_type: CIBA,
    auth_req_id: authReqId,
    client_id: shop.clientId,
    client_secret: shop.clientSecret,
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** The action approval waiting for `agentId`, by the console's own read. */
async function waitingApproval(agentId: string) {
  const waiting = await server.ctx.store.approvals.list({
    accountId: null,
    status: 'pending',
    now: server.clock(),
    limit: 100,
  });
  const approval = waiting.find((each) => each.agent_id === agentId && each.kind === 'action');
  if (!approval) throw new Error(`no action approval waits for ${agentId}`);
  return approval;
}

const approvalPath = (id: string) => `/console/approvals/${id}`;

describe('the owner reads an action in words and decides it', () => {
  it('lists and shows the question escaped, quotes the website’s message, keeps the JSON below, and offers two decisions', async () => {
    const agent = await signedInAgent('Research assistant');
    await askAbout(agent, pay(20, '<script>alert(1)</script>'), 'Order <img src=x onerror=alert(1)>');
    const approval = await waitingApproval(agent.agentId);

    const list = await session.get('/console/approvals');
    expect(list.status).toBe(200);
    expect(list.text).toContain('Pay 20 EUR to &lt;b&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;/b&gt;');
    expect(list.text).not.toContain('<script>alert(1)');
    expect(list.text).not.toContain('<img src=x');
    expect(list.text).toContain('Acme Shop says: <q>Order &lt;img src=x onerror=alert(1)&gt;</q>');
    // The live notice on the overview says it as a question.
    const overview = await session.get('/console');
    expect(overview.text).toContain(
      'Acme Shop asks whether Research assistant may: Pay 20 EUR to &lt;b&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;/b&gt;',
    );

    const page = await session.get(approvalPath(approval.id));
    expect(page.status).toBe(200);
    expect(page.text).toContain('<h2 id="request-heading">The action</h2>');
    expect(page.text).toContain('Acme Shop asks whether Research assistant may:');
    expect(page.text).toContain(
      '<li><strong>Pay 20 EUR to &lt;b&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;/b&gt;</strong></li>',
    );
    expect(page.text).toMatch(
      /id="approval-binding-message">Acme Shop says: <q>Order &lt;img src=x onerror=alert\(1\)&gt;<\/q>/,
    );
    expect(page.text).toContain('agentauth did not write or check them');
    // The details as sent, escaped, inside a <details>.
    expect(page.text).toMatch(
      /<details id="approval-details-json">[\s\S]*&quot;payee&quot;: &quot;&lt;script&gt;alert\(1\)&lt;\/script&gt;&quot;[\s\S]*<\/details>/,
    );
    expect(page.text).toContain(
      '<button type="submit" name="decision" value="once" aria-describedby="decide-how">Approve</button>',
    );
    expect(page.text).toContain('value="deny"');
    expect(page.text).not.toContain('value="always"');

    // "Always" is not a decision an action offers.
    const always = await session.post(`${approvalPath(approval.id)}/decide`, {
      decision: 'always',
      password: TEST_PASSWORD,
    });
    expect(always.status).toBe(400);
    expect(always.text).toContain('Choose Approve or Deny.');
    expect((await server.ctx.store.approvals.find(approval.id))!.status).toBe('pending');
  });

  it('approves with the password: the website gets its token; the activity says who, what and with which proof; twice is 409', async () => {
    const agent = await signedInAgent('Bookkeeper');
    const asked = await askAbout(agent, pay(20));
    const approval = await waitingApproval(agent.agentId);
    expect((await poll(asked.auth_req_id)).body.error).toBe('authorization_pending');

    await session.get(approvalPath(approval.id));
    const decided = await session.submit(`${approvalPath(approval.id)}/decide`, {
      decision: 'once',
      password: TEST_PASSWORD,
    });
    expect(decided.posted.status).toBe(303);
    expect(decided.posted.location).toBe(`${approvalPath(approval.id)}?notice=action_approved`);
    expect(noticeOf(decided)).toMatch(/Approved: the website may do this action, once/);
    expect(decided.text).toContain('id="approval-outcome">Approved by you on');
    expect(decided.text).not.toContain('id="decide-form"');

    server.clock.advance(asked.interval);
    const token = await poll(asked.auth_req_id);
    expect(token.status).toBe(200);
    expect(token.body.authorization_details).toEqual(pay(20));

    const events = (await server.ctx.store.activity.list({ limit: 500 })).filter(
      (event) => event.target === approval.id,
    );
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ actor_id: owner.id, action: 'approval.approve_action' });
    expect(events[0]!.detail).toBe(
      `Bookkeeper (${agent.agentId}) at Acme Shop: Pay 20 EUR to <b>Acme</b>; confirmed with the password`,
    );
    // The agent's history says what happened.
    const history = await session.get(`/console/agents/${agent.agentId}`);
    expect(history.text).toContain('Action approved by its owner');

    // Replayed: the same post again is a 409 page that shows the outcome; nothing changes.
    const again = await session.post(`${approvalPath(approval.id)}/decide`, {
      decision: 'deny',
      password: TEST_PASSWORD,
    });
    expect(again.status).toBe(409);
    expect(again.text).toContain('This action was already decided or has expired.');
    expect((await server.ctx.store.approvals.find(approval.id))!.status).toBe('approved');
  });

  it('denies: the website is told access_denied, and the page says so', async () => {
    const agent = await signedInAgent('Careful agent');
    const asked = await askAbout(agent, pay(900));
    const approval = await waitingApproval(agent.agentId);
    await session.get(approvalPath(approval.id));
    const denied = await session.submit(`${approvalPath(approval.id)}/decide`, {
      decision: 'deny',
      password: TEST_PASSWORD,
    });
    expect(denied.posted.location).toBe(`${approvalPath(approval.id)}?notice=action_denied`);
    expect(denied.text).toContain('Denied by you on');
    expect((await poll(asked.auth_req_id)).body.error).toBe('access_denied');
  });

  it('another owner can neither see nor decide it (404), and the list does not name it', async () => {
    const agent = await signedInAgent('Private agent');
    await askAbout(agent, pay(5));
    const approval = await waitingApproval(agent.agentId);
    const stranger = await createPasswordAccount(server.ctx, { email: 'eve@example.org', name: 'Eve' });
    const eve = await signIn(server.baseUrl, stranger.email);
    expect((await eve.get(approvalPath(approval.id))).status).toBe(404);
    const list = await eve.get('/console/approvals');
    expect(list.text).not.toContain(approval.id);
    const decide = await eve.post(`${approvalPath(approval.id)}/decide`, { decision: 'once', password: TEST_PASSWORD });
    expect(decide.status).toBe(404);
    expect((await server.ctx.store.approvals.find(approval.id))!.status).toBe('pending');
  });
});

describe('the mail and the webhooks say the action in words', () => {
  it('mails the owner the question and the website’s message, and announces kind, words and details', async () => {
    const agent = await signedInAgent('Mailing agent');
    await askAbout(agent, pay(20), 'Order 1142');
    const approval = await waitingApproval(agent.agentId);

    // Every ask before mailed the owner too: this one's mail is the one linking its approval.
    await expect
      .poll(() => mailbox.received.some((each) => each.text.includes(approval.id)), { timeout: 10_000 })
      .toBe(true);
    const mail = mailbox.received.find((each) => each.text.includes(approval.id))!;
    expect(mail.to).toEqual([owner.email]);
    expect(mail.headers).toMatch(/Subject: Approve Mailing agent at Acme Shop: Pay 20 EUR to <b>Acme<\/b>\?/);
    expect(mail.text).toContain('Acme Shop asks whether your agent Mailing agent may:');
    expect(mail.text).toContain('Pay 20 EUR to <b>Acme</b>');
    expect(mail.text).toContain('Acme Shop says: "Order 1142"');
    expect(mail.text).toContain(`${server.baseUrl}/console/approvals/${approval.id}`);

    const requested = await receiver.until((all) =>
      all.some(
        (each) => each.payload.type === 'agent.approval.requested' && each.payload.data?.approval?.id === approval.id,
      ),
    );
    const event = requested.find((each) => each.payload.data?.approval?.id === approval.id)!;
    expect(event.verified).toBe(true);
    expect(event.payload.data).toMatchObject({
      approval: { id: approval.id, kind: 'action', status: 'pending' },
      agent: { id: agent.agentId, name: 'Mailing agent' },
      client: { id: shop.clientId, name: 'Acme Shop' },
      action: { words: ['Pay 20 EUR to <b>Acme</b>'], binding_message: 'Order 1142', authorization_details: pay(20) },
    });

    await session.get(approvalPath(approval.id));
    await session.submit(`${approvalPath(approval.id)}/decide`, { decision: 'deny', password: TEST_PASSWORD });
    const all = await receiver.until((received) =>
      received.some(
        (each) => each.payload.type === 'agent.approval.decided' && each.payload.data?.approval?.id === approval.id,
      ),
    );
    const decided = all.find(
      (each) => each.payload.type === 'agent.approval.decided' && each.payload.data?.approval?.id === approval.id,
    )!;
    expect(decided.payload.data).toMatchObject({
      approval: { kind: 'action', status: 'denied' },
      action: { words: ['Pay 20 EUR to <b>Acme</b>'] },
    });
  });
});

describe("the agent's policy answers for its owner", () => {
  const rule = (agent: Party, answer: ActionRule) =>
    setAgentPolicy(server.ctx, agent.agentId, { ...DEFAULT_POLICY, actions: [answer] });

  it('always up to 50 EUR: 20 EUR is approved without asking, 70 EUR is asked about', async () => {
    const agent = await signedInAgent('Limited shopper');
    await rule(agent, { client_id: shop.clientId, answer: 'always', up_to: { amount: 50, currency: 'EUR' } });
    const within = await askAbout(agent, pay(20));
    const token = await poll(within.auth_req_id);
    expect(token.status).toBe(200);
    expect(token.body.authorization_details).toEqual(pay(20));
    await expect(waitingApproval(agent.agentId)).rejects.toThrow(/no action approval/);

    const beyond = await askAbout(agent, pay(70));
    expect((await poll(beyond.auth_req_id)).body.error).toBe('authorization_pending');
    expect((await waitingApproval(agent.agentId)).authorization_details).toEqual(pay(70));
  });

  it('never: denied without asking; ask (the default): the owner is asked', async () => {
    const refused = await signedInAgent('Refused shopper');
    await rule(refused, { client_id: shop.clientId, answer: 'never' });
    const denied = await askAbout(refused, pay(1));
    expect((await poll(denied.auth_req_id)).body.error).toBe('access_denied');
    await expect(waitingApproval(refused.agentId)).rejects.toThrow(/no action approval/);

    const asking = await signedInAgent('Asking shopper');
    const asked = await askAbout(asking, pay(1));
    expect((await poll(asked.auth_req_id)).body.error).toBe('authorization_pending');
    expect((await waitingApproval(asking.agentId)).status).toBe('pending');
  });
});

describe('the agent learns of its actions', () => {
  it('GET /api/agent/actions and the SDK: waiting, then approved, in words; wrong credentials are 401', async () => {
    const agent = await signedInAgent('Told agent');
    await askAbout(agent, pay(20), 'Order 7');
    const basic = `Basic ${Buffer.from(`${agent.agentId}:${agent.agentSecret}`).toString('base64')}`;
    const listed = await fetch(`${server.baseUrl}/api/agent/actions`, { headers: { authorization: basic } });
    expect(listed.status).toBe(200);
    expect(listed.headers.get('cache-control')).toBe('no-store');
    const body = (await listed.json()) as { actions: Array<Record<string, unknown>>; interval: number };
    expect(body.interval).toBe(5);
    expect(body.actions).toHaveLength(1);
    expect(body.actions[0]).toMatchObject({
      client_id: shop.clientId,
      client_name: 'Acme Shop',
      words: ['Pay 20 EUR to <b>Acme</b>'],
      message: 'Waiting for your owner to approve: Pay 20 EUR to <b>Acme</b> (Acme Shop)',
      binding_message: 'Order 7',
      status: 'pending',
      answered_by: null,
      expires_in: 300,
    });

    const wrong = await fetch(`${server.baseUrl}/api/agent/actions`, {
      headers: { authorization: `Basic ${Buffer.from(`${agent.agentId}:aas_wrong`).toString('base64')}` },
    });
    expect(wrong.status).toBe(401);
    expect(await wrong.json()).toMatchObject({ error: 'invalid_credentials' });
    const none = await fetch(`${server.baseUrl}/api/agent/actions`);
    expect(none.status).toBe(400);

    const sdk = new AgentAuth({ issuer: server.baseUrl, agentId: agent.agentId, agentSecret: agent.agentSecret });
    const [waiting] = await sdk.listActions();
    expect(waiting!.status).toBe('pending');
    const told: string[] = [];
    const outcome = sdk.waitForAction(waiting!.id, { onWaiting: (action) => told.push(action.message) });
    const approval = await waitingApproval(agent.agentId);
    await session.get(approvalPath(approval.id));
    await session.submit(`${approvalPath(approval.id)}/decide`, { decision: 'once', password: TEST_PASSWORD });
    const decided = await outcome;
    expect(told).toEqual(['Waiting for your owner to approve: Pay 20 EUR to <b>Acme</b> (Acme Shop)']);
    expect(decided).toMatchObject({
      id: waiting!.id,
      status: 'approved',
      answered_by: 'owner',
      message: 'Your owner approved: Pay 20 EUR to <b>Acme</b> (Acme Shop)',
    });
  });

  it('a key-bound agent lists with an assertion made for "agent-actions", once; one made for a sign-in is refused', async () => {
    const keys = await testKeyPair();
    const read = readPublicKey(keys.publicJwk);
    if (!('key' in read)) throw new Error(read.problem);
    const agent = await createOwnedKeyBoundAgent(server.ctx, owner, 'Key-bound agent', read.key);
    const list = (assertion: string) =>
      fetch(`${server.baseUrl}/api/agent/actions`, { headers: { authorization: `Bearer ${assertion}` } });
    const claims = { agentId: agent.id, issuer: server.baseUrl, now: server.clock() };
    const assertion = await signAssertion(keys, { ...claims, requestId: 'agent-actions' });
    const first = await list(assertion);
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({ actions: [], interval: 5 });
    expect((await list(assertion)).status).toBe(401);
    const forSignIn = await list(await signAssertion(keys, { ...claims, requestId: 'req_abcdefghijklmnopqrstuv' }));
    expect(forSignIn.status).toBe(401);
    // The SDK signs a fresh one for each call.
    const sdk = new AgentAuth({ issuer: server.baseUrl, agentId: agent.id, privateKey: keys.privateJwk });
    expect(await sdk.listActions()).toEqual([]);
    expect(await sdk.listActions()).toEqual([]);
  });

  it('is not there where ACTION_APPROVALS is off', async () => {
    const off = await startTestServer();
    try {
      const agent = await off.createAgent();
      const basic = `Basic ${Buffer.from(`${agent.agentId}:${agent.agentSecret}`).toString('base64')}`;
      const answer = await fetch(`${off.baseUrl}/api/agent/actions`, { headers: { authorization: basic } });
      expect(answer.status).toBe(404);
    } finally {
      await off.close();
    }
  });
});
