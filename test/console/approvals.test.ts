/**
 * Approvals in the console (issue 24 §2, docs/design.md §16) over real HTTP: an agent whose
 * policy says "ask me" authenticates for a new website (a real POST /api/agent/authenticate);
 * its owner sees the approval listed (and counted in the navigation, and on the overview and
 * the agent's page), and approves it once, always, or denies it, each with a fresh password in
 * the same post; check-status and the agent's policy follow. A decision without a fresh proof,
 * a second decision, another member's look or decision are refused; an admin may decide. The
 * live stream counts what waits and tells of each change. A resource scope is said in the words
 * its resource server registered, as on the sign-in page.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOwnedAgent } from '../helpers/owned.ts';

import { DEFAULT_POLICY, setAgentPolicy } from '../../src/domain/agent-policy.ts';
import { registerClient } from '../../src/domain/clients.ts';
import type { AccountRecord } from '../../src/store/accounts.ts';
import { STREAMS_PER_SESSION } from '../../src/console/routes/approval-events.ts';
import {
  type ConsoleSession,
  createPasswordAccount,
  noticeOf,
  type Page,
  signIn,
  TEST_PASSWORD,
} from '../helpers/console.ts';
import { EventReader } from '../helpers/events.ts';
import { assertion, passkeyOf } from '../helpers/passkey.ts';
import { authenticate, checkStatus, continueFlow, type Party, startFlow } from '../helpers/flow.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { rawSql } from '../faults/support.ts';

let server: TestServer;
let owner: AccountRecord;
let session: ConsoleSession;
let website: { clientId: string; clientSecret: string; redirectUri: string };

beforeAll(async () => {
  server = await startTestServer({ env: { AUTH_FAILURES_PER_AGENT: '1000', AUTH_FAILURES_PER_IP: '1000' } });
  owner = await createPasswordAccount(server.ctx, { email: 'ada@example.org', name: 'Ada' });
  session = await signIn(server.baseUrl, owner.email);
  website = await server.createClient({ name: 'Acme Notes', redirectUris: ['https://notes.example/callback'] });
});
afterAll(() => server.close());

/** An agent of `account` whose policy says "Ask me for a new website". */
async function askingAgent(account: AccountRecord = owner, name = 'Research assistant'): Promise<Party> {
  const { agent, secret } = await createOwnedAgent(server.ctx, account, name);
  await setAgentPolicy(server.ctx, agent.id, { ...DEFAULT_POLICY, websites: 'ask' });
  return { ...website, agentId: agent.id, agentSecret: secret };
}

/** The agent authenticates for a new website: 202, and the approval it waits for. */
async function asked(agent: Party, scope = 'openid email', resource?: string) {
  const started = await startFlow(server, agent, { scope, resource });
  const response = await authenticate(server, agent, started.requestId, 'claude-sonnet-4');
  expect(response.status).toBe(202);
  const body = (await response.json()) as { approval_id: string };
  return { started, approvalId: body.approval_id };
}

const approvalPage = (id: string) => `/console/approvals/${id}`;

const HOSTILE = '<script>alert(1)</script> & "Delete" <b>everything</b>';
const HOSTILE_ESCAPED = '&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;Delete&quot; &lt;b&gt;everything&lt;/b&gt;';

/** Opens the approval's page, then posts a decision with the form's token. */
async function decide(id: string, form: Record<string, string | null>, as = session) {
  await as.get(approvalPage(id));
  return as.submit(`${approvalPage(id)}/decide`, form);
}

const eventsOf = async (action: string, target: string) =>
  (await server.ctx.store.activity.list({ limit: 500 })).filter(
    (event) => event.action === action && event.target === target,
  );
const badgeOf = (page: Page) => {
  const badge =
    /<span class="count-badge" id="approvals-badge" data-version="[^"]*"( hidden)?><span id="approvals-count">([^<]*)<\/span>/.exec(
      page.text,
    );
  return badge?.[1] ? 0 : badge?.[2];
};
const statusOf = async (id: string) => (await server.ctx.store.approvals.find(id))!.status;

describe('the approvals list', () => {
  it('lists a waiting approval with agent, model, website, host, scopes and time left; counts it everywhere', async () => {
    const agent = await askingAgent(owner, 'Lister agent');
    const { approvalId } = await asked(agent, 'openid email profile');
    const list = await session.get('/console/approvals');
    expect(list.status).toBe(200);
    const row = new RegExp(`<tr data-approval="${approvalId}">([\\s\\S]*?)</tr>`).exec(list.text)?.[1];
    expect(row).toBeDefined();
    expect(row).toContain(`<a href="/console/approvals/${approvalId}">Lister agent</a>`);
    expect(row).toContain('claude-sonnet-4');
    expect(row).toContain('Acme Notes <span class="muted">notes.example</span>');
    expect(row).toContain('<code>openid</code> <code>email</code> <code>profile</code>');
    expect(row).toContain('10 minutes left');
    expect(Number(badgeOf(list))).toBeGreaterThanOrEqual(1);
    expect(list.text).toContain('aria-current="page">Approvals');

    // The overview and the agent's page say it waits.
    const overview = await session.get('/console');
    expect(overview.text).toContain(
      `<a href="/console/approvals/${approvalId}">Lister agent is waiting for your approval to sign in to Acme Notes (notes.example)</a>`,
    );
    const agentPage = await session.get(`/console/agents/${agent.agentId}`);
    expect(agentPage.text).toContain('Lister agent is waiting for your approval to sign in to Acme Notes');
    // The history words the step as what it is: not a failure, not a success.
    expect(agentPage.text).toContain('Asked for its owner&#39;s approval');

    // Another member sees none of it.
    const stranger = await signIn(server.baseUrl, (await createPasswordAccount(server.ctx)).email);
    const theirs = await stranger.get('/console/approvals');
    expect(theirs.text).not.toContain(approvalId);
    expect(badgeOf(theirs)).toBe(0);
    expect((await stranger.get('/console')).text).not.toContain('waiting for');
  });

  it('needs a session: the list, an approval and the stream send a visitor to sign in', async () => {
    const visitor = new (session.constructor as new (base: string) => ConsoleSession)(server.baseUrl);
    for (const path of ['/console/approvals', '/console/approvals/apr_x', '/console/approvals/events']) {
      const answer = await visitor.get(path);
      expect(answer.status, path).toBe(303);
      expect(answer.location).toBe(`/console/sign-in?next=${encodeURIComponent(path)}`);
    }
  });
});

describe('the scopes in words', () => {
  it('the list and the page say what each resource scope allows, as the sign-in page does, escaped', async () => {
    const notes = 'https://notes.example/mcp';
    await registerClient(server.ctx, {
      name: 'Notes MCP server',
      redirectUris: [],
      resources: [notes],
      scopes: [
        { name: 'notes:read', description: 'Read your notes' },
        { name: 'notes:write', description: HOSTILE },
      ],
    });
    const agent = await askingAgent(owner, 'Scoped agent');
    const { started, approvalId } = await asked(agent, 'openid notes:read notes:write', notes);
    // The words the person at the browser read.
    expect(started.page).toContain('Read your notes');

    const read =
      '<span class="resource-scope" data-scope="notes:read">Read your notes (<code>notes:read</code>)</span>';
    const write = `<span class="resource-scope" data-scope="notes:write">${HOSTILE_ESCAPED} (<code>notes:write</code>)</span>`;
    const page = await session.get(approvalPage(approvalId));
    expect(page.status).toBe(200);
    const scopes = /<dd id="approval-scopes">([\s\S]*?)<\/dd>/.exec(page.text)?.[1];
    expect(scopes).toBe(`<code>openid</code> ${read} ${write} `);
    expect(page.text).not.toContain('<script>alert(1)</script>');

    const list = await session.get('/console/approvals');
    const row = new RegExp(`<tr data-approval="${approvalId}">([\\s\\S]*?)</tr>`).exec(list.text)?.[1];
    expect(row).toContain(`<code>openid</code> ${read} ${write} `);
    expect(list.text).not.toContain('<script>alert(1)</script>');
  });
});

describe('deciding with a fresh password', () => {
  it('approve once: the request is authenticated, the policy unchanged, the page shows the outcome', async () => {
    const agent = await askingAgent();
    const { started, approvalId } = await asked(agent);
    const page = await session.get(approvalPage(approvalId));
    expect(page.status).toBe(200);
    expect(page.text).toContain('<dd id="approval-model">claude-sonnet-4</dd>');
    expect(page.text).toContain('<dd id="approval-host">notes.example</dd>');
    expect(page.text).toContain('<button type="submit" name="decision" value="always" class="secondary"');
    expect(page.text).toContain('Always allow Acme Notes</button>');

    const decided = await decide(approvalId, { decision: 'once', password: TEST_PASSWORD });
    expect(decided.posted.status).toBe(303);
    expect(decided.posted.location).toBe(`${approvalPage(approvalId)}?notice=approval_approved`);
    expect(noticeOf(decided)).toMatch(/Approved once/);
    expect(decided.text).toContain('Approved once by you');
    expect(decided.text).not.toContain('id="decide-form"');
    expect((await checkStatus(server, started.requestId)).body).toEqual({ status: 'authenticated' });
    const redirect = await continueFlow(server, started);
    expect(redirect.status).toBe(302);
    expect(new URL(redirect.headers.get('location')!).searchParams.get('code')).toBeTruthy();
    expect((await server.ctx.store.agents.find(agent.agentId))!.policy).toMatchObject({ allowed_clients: [] });
    const [event] = await eventsOf('approval.approve_once', approvalId);
    expect(event).toMatchObject({ actor_id: owner.id });
    expect(event!.detail).toContain('Research assistant');
    expect(event!.detail).toContain('Acme Notes (notes.example)');

    // Listed among the recent decisions.
    const list = await session.get('/console/approvals');
    expect(list.text).toMatch(new RegExp(`<tr data-approval="${approvalId}">[\\s\\S]*?Approved once`));
  });

  it("always allow: the website joins the agent's list, and the next sign-in needs no approval", async () => {
    const agent = await askingAgent();
    const { started, approvalId } = await asked(agent);
    const decided = await decide(approvalId, { decision: 'always', password: TEST_PASSWORD });
    expect(decided.posted.location).toBe(`${approvalPage(approvalId)}?notice=approval_allowed`);
    expect((await checkStatus(server, started.requestId)).body).toEqual({ status: 'authenticated' });
    expect((await server.ctx.store.agents.find(agent.agentId))!.policy).toMatchObject({
      websites: 'ask',
      allowed_clients: [website.clientId],
    });
    expect(await eventsOf('approval.allow_always', approvalId)).toHaveLength(1);
    const next = await startFlow(server, agent);
    expect((await authenticate(server, agent, next.requestId)).status).toBe(200);
  });

  it('deny: the request ends in access_denied', async () => {
    const agent = await askingAgent();
    const { started, approvalId } = await asked(agent);
    const decided = await decide(approvalId, { decision: 'deny', password: TEST_PASSWORD });
    expect(decided.posted.location).toBe(`${approvalPage(approvalId)}?notice=approval_denied`);
    expect(decided.text).toContain('Denied by you');
    expect((await checkStatus(server, started.requestId)).body).toEqual({
      status: 'error',
      error: 'access_denied',
      error_description: "The agent's owner denied this sign-in.",
    });
    expect(await eventsOf('approval.deny', approvalId)).toHaveLength(1);
  });

  it('a second decision is refused with a clear page, and the first stands', async () => {
    const agent = await askingAgent();
    const { started, approvalId } = await asked(agent);
    await decide(approvalId, { decision: 'deny', password: TEST_PASSWORD });
    // The form as the page had it before the first decision, posted again.
    const again = await session.post(`${approvalPage(approvalId)}/decide`, {
      decision: 'once',
      password: TEST_PASSWORD,
    });
    expect(again.status).toBe(409);
    expect(again.headers.get('content-type')).toMatch(/^text\/html/);
    expect(noticeOf(again)).toBe('This sign-in was already decided or has expired.');
    expect(again.text).toContain('Denied by you');
    expect(await statusOf(approvalId)).toBe('denied');
    expect((await checkStatus(server, started.requestId)).body).toMatchObject({ error: 'access_denied' });
    // The passkey's way too.
    const json = await session.postJson(`${approvalPage(approvalId)}/passkey/options`, { decision: 'once' });
    expect(json.status).toBe(409);
    expect(json.body.error).toBe('conflict');
  });

  it('a sign-in cancelled at the browser ends its approval: Cancelled, out of the count, and not decidable', async () => {
    const account = await createPasswordAccount(server.ctx);
    const own = await signIn(server.baseUrl, account.email);
    const agent = await askingAgent(account, 'Cancelled agent');
    const { started, approvalId } = await asked(agent);
    expect(badgeOf(await own.get('/console/approvals'))).toBe('1');

    const cancelled = await continueFlow(server, started, { action: 'cancel' });
    expect(cancelled.status).toBe(302);
    expect(new URL(cancelled.headers.get('location')!).searchParams.get('error')).toBe('access_denied');
    expect(await statusOf(approvalId)).toBe('cancelled');

    const list = await own.get('/console/approvals');
    expect(badgeOf(list)).toBe(0);
    expect(list.text).toContain('id="no-pending"');
    const row = new RegExp(`<tr data-approval="${approvalId}">([\\s\\S]*?)</tr>`).exec(list.text)?.[1];
    expect(row).toContain('<span class="badge off">Cancelled</span>');
    expect((await own.get('/console')).text).not.toContain('waiting for your approval');
    expect((await own.get(`/console/agents/${agent.agentId}`)).text).not.toContain('waiting for your approval');

    const page = await own.get(approvalPage(approvalId));
    expect(page.text).toContain('<span class="badge off">Cancelled</span>');
    expect(page.text).toContain('Cancelled at the browser');
    expect(page.text).not.toContain('id="decide-form"');
    const refused = await decide(approvalId, { decision: 'once', password: TEST_PASSWORD }, own);
    expect(refused.status).toBe(409);
    expect((await checkStatus(server, started.requestId)).body).toMatchObject({
      status: 'error',
      error: 'access_denied',
    });
  });

  it('an approval whose request ended some other way is not waiting either', async () => {
    const account = await createPasswordAccount(server.ctx);
    const own = await signIn(server.baseUrl, account.email);
    const { started, approvalId } = await asked(await askingAgent(account, 'Ended agent'));
    // Ended by a path that does not touch the approval (another node's older code, a future path):
    // the request's own state decides.
    const sql = await rawSql(server.databaseUrl);
    try {
      await sql.exec(
        `UPDATE authorization_requests SET status = 'error', error = 'access_denied' WHERE id = '${started.requestId}'`,
      );
    } finally {
      await sql.close();
    }
    expect(await statusOf(approvalId)).toBe('pending');
    const list = await own.get('/console/approvals');
    expect(badgeOf(list)).toBe(0);
    expect(list.text).toContain('<span class="badge off">Ended</span>');
    const page = await own.get(approvalPage(approvalId));
    expect(page.text).toContain('The sign-in ended before anyone decided');
    expect((await decide(approvalId, { decision: 'once', password: TEST_PASSWORD }, own)).status).toBe(409);
  });

  it('an expired approval shows that it expired, without buttons', async () => {
    const agent = await askingAgent();
    const { approvalId } = await asked(agent);
    server.clock.advance(601);
    const page = await session.get(approvalPage(approvalId));
    expect(page.text).toContain('<span class="badge off">Expired</span>');
    expect(page.text).toContain('Nobody decided before the sign-in expired');
    expect(page.text).not.toContain('id="decide-form"');
    const refused = await decide(approvalId, { decision: 'once', password: TEST_PASSWORD });
    expect(refused.status).toBe(409);
  });
});

describe('a decision needs a fresh proof made for it', () => {
  it('refuses a decision without a password, with a wrong one, or with an unknown decision', async () => {
    const agent = await askingAgent();
    const { started, approvalId } = await asked(agent);
    // The session has just signed in with the password: that is not a proof for this decision.
    const bare = await decide(approvalId, { decision: 'once' });
    expect(bare.status).toBe(400);
    expect(bare.text).toContain('Enter your password to confirm the decision.');
    const wrong = await decide(approvalId, { decision: 'once', password: 'not the password at all' });
    expect(wrong.status).toBe(401);
    expect(wrong.text).toContain('The password is wrong.');
    const unknown = await decide(approvalId, { decision: 'maybe', password: TEST_PASSWORD });
    expect(unknown.status).toBe(400);
    expect(unknown.text).toContain('Choose Approve once, Always allow or Deny.');
    expect(await statusOf(approvalId)).toBe('pending');
    expect((await checkStatus(server, started.requestId)).body).toEqual({ status: 'pending', approval_pending: true });
    expect((await eventsOf('account.reauthenticate_failed', owner.id)).length).toBeGreaterThanOrEqual(1);
  });

  it('refuses a passkey answer that is missing, forged, or made for another challenge', async () => {
    const agent = await askingAgent();
    const { approvalId } = await asked(agent);
    await session.get(approvalPage(approvalId));
    const incomplete = await session.postJson(`${approvalPage(approvalId)}/decide/passkey`, { decision: 'once' });
    expect(incomplete.status).toBe(400);
    const forged = await session.postJson(`${approvalPage(approvalId)}/decide/passkey`, {
      decision: 'once',
      challengeId: 'chl_forged',
      response: { id: 'nope', rawId: 'nope', type: 'public-key', response: {} },
    });
    expect(forged.status).toBe(400);
    expect(forged.body.error_description).toMatch(/could not confirm it is you/);
    // The account has no passkey: the options say so.
    const options = await session.postJson(`${approvalPage(approvalId)}/passkey/options`, { decision: 'once' });
    expect(options.status).toBe(400);
    expect(await statusOf(approvalId)).toBe('pending');
  });
});

describe('deciding with a passkey', () => {
  it('counts only an answer to a challenge made for this approval and this decision, with user verification', async () => {
    const account = await createPasswordAccount(server.ctx, { name: 'Pat' });
    const key = await passkeyOf(server, account.id);
    const own = await signIn(server.baseUrl, account.email);
    const agent = await askingAgent(account);
    const { started, approvalId } = await asked(agent);
    const other = await asked(await askingAgent(account));
    await own.get(approvalPage(approvalId));
    let counter = 0;
    const challenge = async (path: string, body: unknown) => {
      const answer = await own.postJson(path, body);
      expect(answer.status, path).toBe(200);
      const { challengeId, options } = answer.body as {
        challengeId: string;
        options: { challenge: string; userVerification: string; allowCredentials: Array<{ id: string }> };
      };
      expect(options.userVerification).toBe('required');
      expect(options.allowCredentials.map((credential) => credential.id)).toEqual([key.id]);
      return { challengeId, challenge: options.challenge };
    };
    const decideWith = (made: { challengeId: string; challenge: string }, decision: string, verified = true) =>
      own.postJson(`${approvalPage(approvalId)}/decide/passkey`, {
        decision,
        challengeId: made.challengeId,
        response: assertion(server, key, made.challenge, verified, ++counter),
      });

    // Made for denying, answered to approve: refused.
    const forDeny = await challenge(`${approvalPage(approvalId)}/passkey/options`, { decision: 'deny' });
    expect((await decideWith(forDeny, 'once')).status).toBe(400);
    // Made for another approval: refused.
    const forOther = await challenge(`${approvalPage(other.approvalId)}/passkey/options`, { decision: 'once' });
    expect((await decideWith(forOther, 'once')).status).toBe(400);
    // Made to confirm it is you on the account page: refused.
    const forAccount = await challenge('/console/account/confirm/passkey/options', {});
    expect((await decideWith(forAccount, 'once')).status).toBe(400);
    // Made for it, but without user verification: refused.
    const unverified = await challenge(`${approvalPage(approvalId)}/passkey/options`, { decision: 'once' });
    expect((await decideWith(unverified, 'once', false)).status).toBe(400);
    expect(await statusOf(approvalId)).toBe('pending');

    const made = await challenge(`${approvalPage(approvalId)}/passkey/options`, { decision: 'once' });
    const decided = await decideWith(made, 'once');
    expect(decided).toEqual({
      status: 200,
      body: { redirect: `${approvalPage(approvalId)}?notice=approval_approved` },
    });
    expect((await checkStatus(server, started.requestId)).body).toEqual({ status: 'authenticated' });
    // The same answer again: the challenge was taken once.
    expect((await decideWith(made, 'once')).status).toBe(400);
  });
});

describe('who may see and decide', () => {
  it('another member gets the 404 page for the approval and every decision; an admin may decide', async () => {
    const agent = await askingAgent();
    const { started, approvalId } = await asked(agent);
    const strangerAccount = await createPasswordAccount(server.ctx);
    const stranger = await signIn(server.baseUrl, strangerAccount.email);
    const missing = await stranger.get('/console/approvals/apr_no_such_approval');
    const foreign = await stranger.get(approvalPage(approvalId));
    expect(missing.status).toBe(404);
    expect(foreign.status).toBe(404);
    const description = (page: Page) => /id="error-description"[^>]*>([^<]*)</.exec(page.text)?.[1];
    expect(description(foreign)).toBe(description(missing));
    await stranger.get('/console/approvals');
    const post = await stranger.post(`${approvalPage(approvalId)}/decide`, {
      decision: 'once',
      password: TEST_PASSWORD,
    });
    expect(post.status).toBe(404);
    const options = await stranger.postJson(`${approvalPage(approvalId)}/passkey/options`, { decision: 'once' });
    expect(options.status).toBe(404);
    const answer = await stranger.postJson(`${approvalPage(approvalId)}/decide/passkey`, {
      decision: 'once',
      challengeId: 'x',
      response: {},
    });
    expect(answer.status).toBe(404);
    expect(await statusOf(approvalId)).toBe('pending');

    const adminAccount = await createPasswordAccount(server.ctx, { role: 'admin', name: 'Grace' });
    const admin = await signIn(server.baseUrl, adminAccount.email);
    const list = await admin.get('/console/approvals');
    expect(list.text).toContain(`data-approval="${approvalId}"`);
    const decided = await decide(approvalId, { decision: 'once', password: TEST_PASSWORD }, admin);
    expect(decided.posted.status).toBe(303);
    expect((await checkStatus(server, started.requestId)).body).toEqual({ status: 'authenticated' });
    expect((await server.ctx.store.approvals.find(approvalId))!.decided_by).toBe(adminAccount.id);
    // The owner sees who decided.
    expect((await session.get(approvalPage(approvalId))).text).toContain('Approved once by Grace');
  });
});

describe('the live stream', () => {
  async function openStream(as: ConsoleSession): Promise<EventReader> {
    const response = await fetch(`${server.baseUrl}/console/approvals/events`, {
      headers: {
        cookie: [...as.cookies].map(([name, value]) => `${name}=${value}`).join('; '),
        accept: 'text/event-stream',
      },
    });
    if (response.status !== 200) throw new Error(`the stream answered ${response.status}`);
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
    return new EventReader(response);
  }
  const countOf = async (reader: EventReader) => {
    const event = await reader.next();
    expect(event?.event).toBe('approvals');
    return JSON.parse(event!.data) as { pending: number; version: string };
  };

  it('sends the count now, then on each request and decision; a few streams per session at most', async () => {
    const account = await createPasswordAccount(server.ctx);
    const own = await signIn(server.baseUrl, account.email);
    const reader = await openStream(own);
    expect(await countOf(reader)).toMatchObject({ pending: 0 });
    const agent = await askingAgent(account);
    const { approvalId } = await asked(agent);
    const after = await countOf(reader);
    expect(after.pending).toBe(1);
    // The page's badge carries the same version, so console.js knows the page is current.
    const list = await own.get('/console/approvals');
    expect(list.text).toContain(`data-version="${after.version}"`);
    expect(badgeOf(list)).toBe('1');
    await decide(approvalId, { decision: 'deny', password: TEST_PASSWORD }, own);
    expect(await countOf(reader)).toMatchObject({ pending: 0 });
    // A cancel at the browser is a change too: the count drops at once.
    const again = await asked(agent);
    expect(await countOf(reader)).toMatchObject({ pending: 1 });
    expect((await continueFlow(server, again.started, { action: 'cancel' })).status).toBe(302);
    expect(await countOf(reader)).toMatchObject({ pending: 0 });

    const more: EventReader[] = [];
    for (let i = 1; i < STREAMS_PER_SESSION; i++) more.push(await openStream(own));
    const refused = await fetch(`${server.baseUrl}/console/approvals/events`, {
      headers: { cookie: [...own.cookies].map(([name, value]) => `${name}=${value}`).join('; ') },
    });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('30');
    await refused.text();
    for (const stream of [reader, ...more]) await stream.close();
  });
});
