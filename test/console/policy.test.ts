/**
 * An agent's policy in the console (issue 24, docs/design.md §16): the Policy section of the
 * agent's page sets each field through setAgentPolicy, the listed websites are added and removed
 * one by one, a refused value shows the form again with its message (never a 500), the change
 * is a console event saying what changed, and the policy then holds at POST /api/agent/authenticate.
 * Owners change their own agents' policies, admins any; another member gets the 404 page.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOwnedAgent } from '../helpers/owned.ts';

import { policyOf } from '../../src/domain/agent-policy.ts';
import type { AccountRecord } from '../../src/store/accounts.ts';
import { type ConsoleSession, createPasswordAccount, noticeOf, type Page, signIn } from '../helpers/console.ts';
import { authenticate, type Party, startFlow } from '../helpers/flow.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let owner: AccountRecord;
let session: ConsoleSession;
let website: { clientId: string; clientSecret: string; redirectUri: string };
let other: { clientId: string };

beforeAll(async () => {
  server = await startTestServer({ env: { AUTH_FAILURES_PER_AGENT: '1000', AUTH_FAILURES_PER_IP: '1000' } });
  owner = await createPasswordAccount(server.ctx, { email: 'ada@example.org', name: 'Ada' });
  session = await signIn(server.baseUrl, owner.email);
  website = await server.createClient({ name: 'Acme Notes' });
  other = await server.createClient({ name: 'Travel Planner' });
});
afterAll(() => server.close());

async function ownAgent(account: AccountRecord = owner): Promise<Party> {
  const { agent, secret } = await createOwnedAgent(server.ctx, account, 'Research assistant');
  return { ...website, agentId: agent.id, agentSecret: secret };
}

const agentPage = (id: string) => `/console/agents/${id}`;
const stored = async (id: string) => (await server.ctx.store.agents.find(id))!.policy;
const policyEvents = async (id: string) =>
  (await server.ctx.store.activity.list({ limit: 500 })).filter(
    (event) => event.action === 'agent.policy' && event.target === id,
  );
/** The field error shown beside `id` on a page. */
const fieldError = (page: Page, id: string) =>
  new RegExp(`<p class="field-error" id="${id}-error">([^<]*)</p>`).exec(page.text)?.[1];

/** Posts the policy form as the page shows it, with `fields` changed. */
async function savePolicy(agentId: string, fields: Record<string, string | null>, as = session) {
  await as.get(agentPage(agentId));
  return as.submit(`${agentPage(agentId)}/policy`, {
    websites: 'any',
    expires: '',
    per_hour: '',
    ...fields,
  });
}

describe("the agent page's Policy section", () => {
  it('shows the default policy: any website, no ceiling, never expires, no limit, nothing listed', async () => {
    const agent = await ownAgent();
    const page = await session.get(agentPage(agent.agentId));
    expect(page.status).toBe(200);
    expect(page.text).toContain('<h2 id="policy-heading">Policy</h2>');
    expect(page.text).toMatch(/<input type="radio" name="websites" value="any" checked>/);
    expect(page.text).not.toMatch(/name="scope\.\w+" value="on" checked/);
    expect(page.text).toContain('id="no-listed-websites"');
    // Both registered websites can be added.
    expect(page.text).toContain(`<option value="${website.clientId}">Acme Notes (${website.clientId})</option>`);
    expect(page.text).toContain(`<option value="${other.clientId}">Travel Planner (${other.clientId})</option>`);
  });

  it('sets each field through the form, records what changed, and the policy holds at sign-in', async () => {
    const agent = await ownAgent();
    const saved = await savePolicy(agent.agentId, {
      websites: 'ask',
      'scope.openid': 'on',
      'scope.profile': 'on',
      expires: '2099-01-31',
      per_hour: '20',
    });
    expect(saved.posted.status).toBe(303);
    expect(saved.posted.location).toBe(`${agentPage(agent.agentId)}?notice=policy_saved`);
    expect(noticeOf(saved)).toMatch(/policy is saved/);
    expect(await stored(agent.agentId)).toEqual({
      websites: 'ask',
      allowed_clients: [],
      scope_ceiling: ['openid', 'profile'],
      credentials_expire_at: Date.UTC(2099, 0, 31) / 1000,
      max_sign_ins_per_hour: 20,
      actions: [],
    });
    // The form shows the policy as stored.
    expect(saved.text).toMatch(/<input type="radio" name="websites" value="ask" checked>/);
    expect(saved.text).toMatch(/name="scope\.openid" value="on" checked/);
    expect(saved.text).not.toMatch(/name="scope\.email" value="on" checked/);
    expect(saved.text).toContain('value="2099-01-31"');
    expect(saved.text).toContain('value="20"');
    const [event] = await policyEvents(agent.agentId);
    expect(event).toMatchObject({ actor_id: owner.id });
    expect(event!.detail).toBe(
      'Websites: Any website → Ask me for a new website; Scope ceiling: any → openid profile; Credentials expire: never → 2099-01-31; Sign-ins per hour: no limit → 20',
    );

    // The scope ceiling refuses a website asking for email, at the protocol.
    const started = await startFlow(server, agent, { scope: 'openid email' });
    const refused = await authenticate(server, agent, started.requestId);
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error_description: string }).error_description).toMatch(/email/);

    // Back to the default: stored as NULL again.
    const reset = await savePolicy(agent.agentId, {});
    expect(reset.posted.status).toBe(303);
    expect(await stored(agent.agentId)).toBeNull();
    expect((await policyEvents(agent.agentId)).length).toBe(2);
  });

  it('"Only listed websites": adds a registered website, then removes it; each is an event', async () => {
    const agent = await ownAgent();
    expect((await savePolicy(agent.agentId, { websites: 'listed' })).posted.status).toBe(303);
    // Nothing listed: the website is refused.
    const first = await startFlow(server, agent);
    expect((await authenticate(server, agent, first.requestId)).status).toBe(403);

    await session.get(agentPage(agent.agentId));
    const added = await session.submit(`${agentPage(agent.agentId)}/policy/websites`, { client_id: website.clientId });
    expect(added.posted.location).toBe(`${agentPage(agent.agentId)}?notice=website_listed`);
    expect(policyOf((await server.ctx.store.agents.find(agent.agentId))!).allowed_clients).toEqual([website.clientId]);
    expect(added.text).toMatch(/<table class="data" id="listed-websites">[\s\S]*Acme Notes/);
    // A listed website is no longer offered for adding.
    const addForm = /<form [^>]*id="add-website">[\s\S]*?<\/form>/.exec(added.text)?.[0];
    expect(addForm).toContain(`<option value="${other.clientId}">`);
    expect(addForm).not.toContain(`<option value="${website.clientId}">`);
    const second = await startFlow(server, agent);
    expect((await authenticate(server, agent, second.requestId)).status).toBe(200);

    const removed = await session.submit(`${agentPage(agent.agentId)}/policy/websites/remove`, {
      client_id: website.clientId,
    });
    expect(removed.posted.location).toBe(`${agentPage(agent.agentId)}?notice=website_unlisted`);
    expect(policyOf((await server.ctx.store.agents.find(agent.agentId))!).allowed_clients).toEqual([]);
    const details = (await policyEvents(agent.agentId)).map((event) => event.detail);
    expect(details).toContain(`Listed websites: none → ${website.clientId}`);
    // Left off the list, the website's sign-in in progress (authenticated, no code yet) ends too.
    expect(details).toContain(`Listed websites: ${website.clientId} → none; revoked grants 0, codes 0, requests 1`);
  });

  it('refuses bad input with the form shown again and its message, changing nothing', async () => {
    const agent = await ownAgent();
    const cases: Array<[Record<string, string | null>, string, RegExp]> = [
      [{ websites: 'sometimes' }, 'field-websites', /Choose which websites/],
      [{ websites: null }, 'field-websites', /Choose which websites/],
      [{ expires: '31/01/2099' }, 'field-expires', /Enter a date such as 2027-01-31/],
      [{ expires: '2099-02-30' }, 'field-expires', /Enter a date/],
      [{ per_hour: 'ten' }, 'field-per_hour', /Enter a whole number/],
      [{ per_hour: '-1' }, 'field-per_hour', /Enter a whole number/],
      // The range is setAgentPolicy's rule, worded with the field's label.
      [{ per_hour: '0' }, 'field-per_hour', /^Sign-ins per hour must be a whole number from 1 to 100000\.$/],
      [{ per_hour: '100001' }, 'field-per_hour', /from 1 to 100000/],
    ];
    for (const [fields, id, message] of cases) {
      const page = await savePolicy(agent.agentId, { websites: 'listed', per_hour: '5', ...fields });
      expect(page.status, JSON.stringify(fields)).toBe(400);
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
      expect(fieldError(page, id), JSON.stringify(fields)).toMatch(message);
      expect(noticeOf(page)).toBe('Please correct the field marked below.');
    }
    // The form keeps what was typed.
    const typed = await savePolicy(agent.agentId, { websites: 'ask', per_hour: 'ten', expires: '2099-01-31' });
    expect(typed.text).toMatch(/<input type="radio" name="websites" value="ask" checked>/);
    expect(typed.text).toContain('value="ten"');
    expect(await stored(agent.agentId)).toBeNull();
    expect(await policyEvents(agent.agentId)).toEqual([]);

    // A website that is not registered, and adding nothing.
    await session.get(agentPage(agent.agentId));
    const unknown = await session.post(`${agentPage(agent.agentId)}/policy/websites`, { client_id: 'cli_nowhere' });
    expect(unknown.status).toBe(400);
    expect(fieldError(unknown, 'field-client_id')).toMatch(/cli_nowhere, which is not a registered website/);
    const nothing = await session.post(`${agentPage(agent.agentId)}/policy/websites`, {});
    expect(nothing.status).toBe(400);
    expect(fieldError(nothing, 'field-client_id')).toBe('Choose a website to add.');
    // Removing a website that is not listed: 404.
    const notListed = await session.post(`${agentPage(agent.agentId)}/policy/websites/remove`, {
      client_id: website.clientId,
    });
    expect(notListed.status).toBe(404);
    expect(await stored(agent.agentId)).toBeNull();
  });

  it("another member gets the 404 page for an agent's policy; an admin may change it", async () => {
    const agent = await ownAgent();
    const stranger = await createPasswordAccount(server.ctx);
    const theirs = await signIn(server.baseUrl, stranger.email);
    await theirs.get('/console/agents');
    for (const [path, form] of [
      ['/policy', { websites: 'listed' }],
      ['/policy/websites', { client_id: website.clientId }],
      ['/policy/websites/remove', { client_id: website.clientId }],
    ] as const) {
      const answer = await theirs.post(`${agentPage(agent.agentId)}${path}`, form);
      expect(answer.status, path).toBe(404);
      expect(answer.text).toContain('No such agent.');
    }
    expect(await stored(agent.agentId)).toBeNull();

    const admin = await createPasswordAccount(server.ctx, { role: 'admin' });
    const adminSession = await signIn(server.baseUrl, admin.email);
    const saved = await savePolicy(agent.agentId, { websites: 'listed' }, adminSession);
    expect(saved.posted.status).toBe(303);
    expect(await stored(agent.agentId)).toMatchObject({ websites: 'listed' });
    expect((await policyEvents(agent.agentId))[0]).toMatchObject({ actor_id: admin.id });
  });
});
