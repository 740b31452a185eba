/**
 * The console's agents area over real HTTP (issue 10, item 3): creating an agent that then signs
 * in for real, its history, chart and connected sites, rotation with grace, disable, revocation,
 * deletion, and who may reach which agent.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AccountRecord } from '../../src/store/accounts.ts';
import { type ConsoleSession, codeOf, createPasswordAccount, noticeOf, type Page, signIn } from '../helpers/console.ts';
import { authenticate, obtainTokens, type Party, postForm, startFlow } from '../helpers/flow.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let owner: AccountRecord;
let session: ConsoleSession;
/** A website (registered in the console by another member) the owner's agents sign in to. */
let website: { clientId: string; clientSecret: string; redirectUri: string };
const WEBSITE_NAME = 'Bookshop';

beforeAll(async () => {
  // Tests move the clock by hours (grace periods); console sessions outlast that.
  server = await startTestServer({ env: { CONSOLE_SESSION_IDLE: '604800', CONSOLE_SESSION_LIFETIME: '2592000' } });
  owner = await createPasswordAccount(server.ctx, { email: 'Ada@Example.org', name: 'Ada Lovelace' });
  session = await signIn(server.baseUrl, owner.email);
  const shopkeeper = await createPasswordAccount(server.ctx, { email: 'shop@example.org' });
  const shop = await signIn(server.baseUrl, shopkeeper.email);
  await shop.get('/console/websites');
  const created = await shop.submit('/console/websites', {
    name: WEBSITE_NAME,
    redirect_uris: 'http://localhost:8080/callback',
    approval: 'auto',
  });
  expect(created.status).toBe(200);
  website = {
    clientId: codeOf(created, 'client-id'),
    clientSecret: codeOf(created, 'client-secret'),
    redirectUri: 'http://localhost:8080/callback',
  };
});
afterAll(() => server.close());

/** The text of `<code id="…">` on a page. */
/** Creates an agent through the console and returns its credentials with the test website. */
async function createAgent(as: ConsoleSession = session, name = 'Research assistant'): Promise<Party & { page: Page }> {
  await as.get('/console/agents');
  const page = await as.submit('/console/agents', { name });
  expect(page.status).toBe(200);
  return { ...website, agentId: codeOf(page, 'agent-id'), agentSecret: codeOf(page, 'agent-secret'), page };
}

async function introspect(party: Party, token: string): Promise<boolean> {
  const response = await postForm(server, '/introspect', {
    token,
    client_id: party.clientId,
    client_secret: party.clientSecret,
  });
  return ((await response.json()) as { active: boolean }).active;
}

/** Whether the agent's secret is accepted at /api/agent/authenticate on a fresh request. */
async function authenticates(party: Party, secret = party.agentSecret): Promise<boolean> {
  const started = await startFlow(server, party);
  const response = await authenticate(server, { ...party, agentSecret: secret }, started.requestId);
  if (response.status !== 200 && response.status !== 401) throw new Error(`authenticate answered ${response.status}`);
  return response.status === 200;
}

const claimsOf = (jwt: string) =>
  JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;
const eventsOf = async (action: string, target: string) =>
  (await server.ctx.store.activity.list({ limit: 500 })).filter(
    (event) => event.action === action && event.target === target,
  );
const historyIds = (page: Page) => [...page.text.matchAll(/data-event="([^"]+)"/g)].map((match) => match[1]!);
const olderLink = (page: Page) =>
  /<a href="([^"#]+)#history" id="history-older">/.exec(page.text)?.[1]?.replaceAll('&amp;', '&');

describe('creating an agent', () => {
  it("lists no agents at first, then shows the new agent's secret once with its environment", async () => {
    const newcomer = await createPasswordAccount(server.ctx);
    const own = await signIn(server.baseUrl, newcomer.email);
    const empty = await own.get('/console/agents');
    expect(empty.status).toBe(200);
    expect(empty.text).toContain('You have no agents yet');

    const created = await own.submit('/console/agents', { name: '  Research assistant  ' });
    expect(created.status).toBe(200);
    expect(created.headers.get('cache-control')).toBe('no-store');
    const agentId = codeOf(created, 'agent-id');
    const secret = codeOf(created, 'agent-secret');
    expect(agentId).toMatch(/^agt_/);
    expect(secret).toMatch(/^aas_/);
    expect(created.text).toContain('shown only now');
    expect(created.text).toContain(
      `AGENTAUTH_ISSUER=${server.baseUrl}\nAGENTAUTH_AGENT_ID=${agentId}\nAGENTAUTH_AGENT_SECRET=${secret}`,
    );
    expect(created.text).toContain('data-copy="agent-secret"');
    expect(created.text).toContain(`href="/console/agents/${agentId}"`);

    const agent = await server.ctx.store.agents.find(agentId);
    expect(agent).toMatchObject({
      name: 'Research assistant',
      account_id: newcomer.id,
      owner_email: newcomer.email,
      status: 'active',
    });
    expect(await eventsOf('agent.create', agentId)).toHaveLength(1);

    const list = await own.get('/console/agents');
    expect(list.text).toContain(agentId);
    expect(list.text).toContain('Research assistant');
    expect(list.text).not.toContain('You have no agents yet');
    const details = await own.get(`/console/agents/${agentId}`);
    expect(details.status).toBe(200);
    expect(details.text).toContain(agentId);
    expect(details.text).toContain(newcomer.email);
    for (const page of [list, details]) expect(page.text).not.toContain(secret);
  });

  it('refuses an empty name and a name over 200 characters, and creates nothing', async () => {
    const before = (await server.ctx.store.agents.list({ accountId: owner.id })).length;
    await session.get('/console/agents');
    const empty = await session.post('/console/agents', { name: '   ' });
    expect(empty.status).toBe(400);
    expect(empty.text).toContain('Give the agent a name');
    expect(empty.text).toContain('aria-invalid="true"');
    expect(noticeOf(empty)).toBe('Please correct the field marked below.');
    const long = await session.post('/console/agents', { name: 'x'.repeat(201) });
    expect(long.status).toBe(400);
    expect(long.text).toContain('A name can be at most 200 characters long.');
    expect(long.text).toContain(`value="${'x'.repeat(201)}"`);
    const missing = await session.post('/console/agents', {});
    expect(missing.status).toBe(400);
    expect((await server.ctx.store.agents.list({ accountId: owner.id })).length).toBe(before);
  });

  it('treats a repeated form field as no value rather than failing', async () => {
    const before = (await server.ctx.store.agents.list({ accountId: owner.id })).length;
    await session.get('/console/agents');
    const body = new URLSearchParams([
      ['_csrf', session.csrf],
      ['name', 'one'],
      ['name', 'two'],
    ]);
    const response = await fetch(`${server.baseUrl}/console/agents`, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        cookie: [...session.cookies].map(([name, value]) => `${name}=${value}`).join('; '),
        'sec-fetch-site': 'same-origin',
        'content-type': 'application/x-www-form-urlencoded',
      },
      body,
    });
    expect(response.status).toBe(400);
    expect((await server.ctx.store.agents.list({ accountId: owner.id })).length).toBe(before);
  });

  it('escapes a name that looks like markup on every page', async () => {
    const party = await createAgent(session, '<script>alert(1)</script>');
    const pages = [
      party.page,
      await session.get('/console/agents'),
      await session.get(`/console/agents/${party.agentId}`),
    ];
    for (const page of pages) {
      expect(page.text).not.toContain('<script>alert(1)</script>');
      expect(page.text).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    }
  });
});

describe('an agent made in the console', () => {
  it('signs in for real as its account, and its page shows the sign-in, the chart and the connected site', async () => {
    const party = await createAgent(session, 'Shopping agent');
    const tokens = await obtainTokens(server, party);
    expect(claimsOf(tokens.id_token!)).toMatchObject({
      sub: party.agentId,
      email: owner.email,
      name: 'Ada Lovelace',
      email_verified: false,
    });
    const userinfo = await fetch(`${server.baseUrl}/userinfo`, {
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });
    expect(await userinfo.json()).toEqual({
      sub: party.agentId,
      email: owner.email,
      email_verified: false,
      name: 'Ada Lovelace',
    });

    const page = await session.get(`/console/agents/${party.agentId}`);
    expect(page.status).toBe(200);
    const history = /<table class="data" id="history-table">[\s\S]*?<\/table>/.exec(page.text)?.[0] ?? '';
    expect(history).toContain(WEBSITE_NAME);
    expect(history).toContain('test-model');
    expect(history).toContain('Signed in');
    expect(history).toContain('127.0.0.1');
    expect(page.text).toContain(
      'role="img" aria-label="Successful sign-ins per day over the last 30 days: 1 in total"',
    );
    expect(page.text).toMatch(/<title>\d{4}-\d{2}-\d{2}: 1 sign-in<\/title>/);
    const sites = /<table class="data" id="connected-sites">[\s\S]*?<\/table>/.exec(page.text)?.[0] ?? '';
    expect(sites).toContain(WEBSITE_NAME);
    expect(sites).toContain(`/console/agents/${party.agentId}/sites/${website.clientId}/revoke`);
    expect(page.text).not.toContain(party.agentSecret);

    // The website's owner sees the same sign-in among the website's.
    const shop = await signIn(server.baseUrl, 'shop@example.org');
    const clientPage = await shop.get(`/console/websites/${website.clientId}`);
    expect(clientPage.text).toContain(party.agentId);
    expect(clientPage.text).toContain('Signed in');

    // Disconnect: the website's tokens for this agent stop working.
    expect(await introspect(party, tokens.access_token)).toBe(true);
    const disconnected = await session.post(`/console/agents/${party.agentId}/sites/${website.clientId}/revoke`);
    expect(disconnected.status).toBe(303);
    expect(disconnected.location).toBe(`/console/agents/${party.agentId}?notice=site_revoked`);
    expect(await introspect(party, tokens.access_token)).toBe(false);
    expect(await introspect(party, tokens.refresh_token)).toBe(false);
    expect(await eventsOf('agent.revoke_site', party.agentId)).toMatchObject([
      { detail: website.clientId, actor_id: owner.id },
    ]);
    const after = await session.get(disconnected.location!);
    expect(noticeOf(after)).toContain('The website is disconnected');
    expect(after.text).not.toContain('id="connected-sites"');
    // A site that is not connected (any more) is not found.
    expect((await session.post(`/console/agents/${party.agentId}/sites/${website.clientId}/revoke`)).status).toBe(404);
  });

  it('rotates with a grace period: the old secret works until it ends, the new one from now on', async () => {
    const party = await createAgent();
    await session.get(`/console/agents/${party.agentId}`);
    const rotated = await session.submit(`/console/agents/${party.agentId}/rotate`, { grace: '3600' });
    expect(rotated.status).toBe(200);
    const secret = codeOf(rotated, 'agent-secret');
    expect(secret).not.toBe(party.agentSecret);
    expect(rotated.text).toContain('The old secret keeps working until');
    expect(rotated.text).toContain(new Date((server.clock() + 3600) * 1000).toISOString());
    expect(await eventsOf('agent.rotate_secret', party.agentId)).toMatchObject([{ detail: 'grace 3600 s' }]);
    expect(await authenticates(party)).toBe(true);
    expect(await authenticates(party, secret)).toBe(true);
    expect((await session.get(`/console/agents/${party.agentId}`)).text).not.toContain(secret);

    server.clock.advance(3601);
    expect(await authenticates(party)).toBe(false);
    expect(await authenticates(party, secret)).toBe(true);

    // Without grace the old secret stops at once.
    await session.get(`/console/agents/${party.agentId}`);
    const now = await session.submit(`/console/agents/${party.agentId}/rotate`, { grace: '0' });
    expect(now.text).toContain('The old secret stopped working now.');
    expect(await authenticates(party, secret)).toBe(false);
    expect(await authenticates(party, codeOf(now, 'agent-secret'))).toBe(true);
  });

  it('refuses a grace period that is not one of the choices', async () => {
    const party = await createAgent();
    const before = await server.ctx.store.agents.find(party.agentId);
    await session.get(`/console/agents/${party.agentId}`);
    for (const grace of ['60', 'abc', '-3600', '3600.5']) {
      const refused = await session.submit(`/console/agents/${party.agentId}/rotate`, { grace });
      expect(refused.status).toBe(400);
      expect(refused.text).toContain('Choose how long the old secret keeps working.');
      expect(refused.text).toContain('id="field-grace-error"');
    }
    expect(await server.ctx.store.agents.find(party.agentId)).toEqual(before);
  });

  it('renames, and refuses an empty name', async () => {
    const party = await createAgent();
    await session.get(`/console/agents/${party.agentId}`);
    const renamed = await session.post(`/console/agents/${party.agentId}/rename`, { name: 'Travel agent' });
    expect(renamed.status).toBe(303);
    expect(noticeOf(await session.get(renamed.location!))).toBe('The agent is renamed.');
    expect((await server.ctx.store.agents.find(party.agentId))?.name).toBe('Travel agent');
    expect(await eventsOf('agent.rename', party.agentId)).toHaveLength(1);
    for (const name of ['', 'y'.repeat(201)]) {
      const refused = await session.post(`/console/agents/${party.agentId}/rename`, { name });
      expect(refused.status).toBe(400);
      expect(refused.text).toContain('id="field-name-error"');
    }
    expect((await server.ctx.store.agents.find(party.agentId))?.name).toBe('Travel agent');
  });

  it('disables and enables: a disabled agent cannot authenticate and its tokens stop working', async () => {
    const party = await createAgent();
    const tokens = await obtainTokens(server, party);
    await session.get(`/console/agents/${party.agentId}`);
    const disabled = await session.post(`/console/agents/${party.agentId}/disable`);
    expect(disabled.location).toBe(`/console/agents/${party.agentId}?notice=agent_disabled`);
    expect((await server.ctx.store.agents.find(party.agentId))?.status).toBe('disabled');
    expect(await authenticates(party)).toBe(false);
    expect(await introspect(party, tokens.access_token)).toBe(false);
    const page = await session.get(disabled.location!);
    expect(page.text).toContain('<span class="badge off">disabled</span>');
    expect(page.text).toContain(`action="/console/agents/${party.agentId}/enable"`);

    const enabled = await session.post(`/console/agents/${party.agentId}/enable`);
    expect(enabled.location).toBe(`/console/agents/${party.agentId}?notice=agent_enabled`);
    expect(await authenticates(party)).toBe(true);
    expect(await introspect(party, tokens.access_token)).toBe(true);
    expect(await eventsOf('agent.disable', party.agentId)).toHaveLength(1);
    expect(await eventsOf('agent.enable', party.agentId)).toHaveLength(1);
  });

  it('revokes every grant for good, and the agent can sign in again', async () => {
    const party = await createAgent();
    const tokens = await obtainTokens(server, party);
    await session.get(`/console/agents/${party.agentId}`);
    const revoked = await session.post(`/console/agents/${party.agentId}/revoke-grants`);
    expect(revoked.location).toBe(`/console/agents/${party.agentId}?notice=grants_revoked`);
    expect(await introspect(party, tokens.access_token)).toBe(false);
    expect(await introspect(party, tokens.refresh_token)).toBe(false);
    expect(await eventsOf('agent.revoke_grants', party.agentId)).toMatchObject([
      { detail: 'grants 1, codes 0, requests 0' },
    ]);
    const fresh = await obtainTokens(server, party);
    expect(await introspect(party, fresh.access_token)).toBe(true);
  });

  it('deletes the agent and ends its tokens', async () => {
    const party = await createAgent();
    const tokens = await obtainTokens(server, party);
    await session.get(`/console/agents/${party.agentId}`);
    const deleted = await session.post(`/console/agents/${party.agentId}/delete`);
    expect(deleted.status).toBe(303);
    expect(deleted.location).toBe('/console/agents?notice=agent_deleted');
    expect(await server.ctx.store.agents.find(party.agentId)).toBeUndefined();
    expect(await introspect(party, tokens.access_token)).toBe(false);
    expect(await authenticates(party)).toBe(false);
    expect(noticeOf(await session.get(deleted.location!))).toBe(
      'The agent is deleted, and everything it held is revoked.',
    );
    expect((await session.get(`/console/agents/${party.agentId}`)).status).toBe(404);
    expect(await eventsOf('agent.delete', party.agentId)).toHaveLength(1);
  });

  it('pages its history, newest first, 20 a page, without overlap', async () => {
    const party = await createAgent();
    const now = server.clock();
    // 25 events: several share a second, so the page boundary falls inside a tie.
    for (let i = 0; i < 25; i++) {
      await server.ctx.store.signIns.record({
        at: now - Math.floor(i / 3),
        agent_id: party.agentId,
        request_id: null,
        client_id: website.clientId,
        model: `model-${i}`,
        ip: '192.0.2.1',
        user_agent: 'test',
        outcome: i % 5 === 4 ? 'invalid_credentials' : 'authenticated',
      });
    }
    const first = await session.get(`/console/agents/${party.agentId}`);
    const firstIds = historyIds(first);
    expect(firstIds).toHaveLength(20);
    expect(first.text).not.toContain('id="history-newest"');
    expect(first.text).toContain('Wrong secret');
    expect(first.text).toContain('aria-label="Successful sign-ins per day over the last 30 days: 20 in total"');
    const older = olderLink(first);
    expect(older).toMatch(new RegExp(`^/console/agents/${party.agentId}\\?before=\\d+\\.`));

    const second = await session.get(older!);
    expect(second.status).toBe(200);
    const secondIds = historyIds(second);
    expect(secondIds).toHaveLength(5);
    expect(secondIds.filter((id) => firstIds.includes(id))).toEqual([]);
    expect(new Set([...firstIds, ...secondIds]).size).toBe(25);
    expect(second.text).toContain(`<a href="/console/agents/${party.agentId}#history" id="history-newest">Newest</a>`);
    expect(olderLink(second)).toBeUndefined();
    // Newest first: the first page's first row is the latest event, the second page ends with the oldest.
    expect(first.text.indexOf('model-0<')).toBeLessThan(first.text.indexOf('model-3<'));
    expect(second.text).toContain('model-24<');
    // A malformed cursor reads as the first page.
    expect(historyIds(await session.get(`/console/agents/${party.agentId}?before=nonsense`))).toEqual(firstIds);
  });
});

describe('who reaches an agent', () => {
  it('another member gets 404 for every page and action, exactly as for a missing agent, and nothing changes', async () => {
    const party = await createAgent(session, 'Private agent');
    const tokens = await obtainTokens(server, party);
    const before = await server.ctx.store.agents.find(party.agentId);
    const stranger = await createPasswordAccount(server.ctx);
    const other = await signIn(server.baseUrl, stranger.email);
    await other.get('/console/agents');
    const paths = (id: string) =>
      [
        ['GET', `/console/agents/${id}`],
        ['POST', `/console/agents/${id}/rename`, { name: 'Mine now' }],
        ['POST', `/console/agents/${id}/rotate`, { grace: '0' }],
        ['POST', `/console/agents/${id}/disable`],
        ['POST', `/console/agents/${id}/enable`],
        ['POST', `/console/agents/${id}/revoke-grants`],
        ['POST', `/console/agents/${id}/sites/${website.clientId}/revoke`],
        ['POST', `/console/agents/${id}/delete`],
      ] as const;
    const ask = (method: string, path: string, form?: Record<string, string>) =>
      method === 'GET' ? other.get(path) : other.post(path, form ?? {});
    const missing = paths('agt_doesnotexist');
    for (const [i, [method, path, form]] of paths(party.agentId).entries()) {
      const foreign = await ask(method, path, form);
      const absent = await ask(missing[i]![0], missing[i]![1], missing[i]![2]);
      expect(foreign.status, path).toBe(404);
      expect(foreign.text, path).toBe(absent.text);
      expect(foreign.text).toContain('No such agent.');
    }
    expect(await server.ctx.store.agents.find(party.agentId)).toEqual(before);
    expect(await introspect(party, tokens.access_token)).toBe(true);
    expect((await other.get('/console/agents')).text).not.toContain(party.agentId);
    expect(await authenticates(party)).toBe(true);
  });

  it('an id of any shape is a 404 page, never a server error', async () => {
    const ids = [
      '%00',
      'agt_%00x',
      '%27%3B%20DROP%20TABLE%20agents%3B%20--',
      "'%3BDROP%2F**%2FTABLE%2F**%2Fagents%3B--",
      'agt_x%27%20OR%20%271%27%3D%271',
      '%E2%9C%93',
      'a'.repeat(90),
      '..%2F..%2Fadmin',
    ];
    await session.get('/console/agents');
    for (const id of ids) {
      const page = await session.get(`/console/agents/${id}`);
      expect(page.status, id).toBe(404);
      expect(page.headers.get('content-type'), id).toContain('text/html');
      expect(page.text, id).toContain('No such agent.');
      const posted = await session.post(`/console/agents/${id}/disable`);
      expect(posted.status, id).toBe(404);
    }
  });

  it("an admin reaches and acts on any member's agent", async () => {
    const party = await createAgent(session, 'Watched agent');
    const admin = await createPasswordAccount(server.ctx, { role: 'admin' });
    const adminSession = await signIn(server.baseUrl, admin.email);
    const page = await adminSession.get(`/console/agents/${party.agentId}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain(owner.email);
    const renamed = await adminSession.post(`/console/agents/${party.agentId}/rename`, { name: 'Renamed by admin' });
    expect(renamed.status).toBe(303);
    expect((await server.ctx.store.agents.find(party.agentId))?.name).toBe('Renamed by admin');
    expect((await adminSession.post(`/console/agents/${party.agentId}/disable`)).status).toBe(303);
    expect((await server.ctx.store.agents.find(party.agentId))?.status).toBe('disabled');
    expect(await eventsOf('agent.disable', party.agentId)).toMatchObject([{ actor_id: admin.id }]);
    // The admin's own list holds only the admin's agents.
    expect((await adminSession.get('/console/agents')).text).not.toContain(party.agentId);
  });

  it('without the CSRF token every action is refused and nothing changes', async () => {
    const party = await createAgent();
    const tokens = await obtainTokens(server, party);
    const before = await server.ctx.store.agents.find(party.agentId);
    const count = (await server.ctx.store.agents.list({ accountId: owner.id })).length;
    const actions: Array<[string, Record<string, string>]> = [
      ['/console/agents', { name: 'Sneaky' }],
      [`/console/agents/${party.agentId}/rename`, { name: 'Sneaky' }],
      [`/console/agents/${party.agentId}/rotate`, { grace: '0' }],
      [`/console/agents/${party.agentId}/disable`, {}],
      [`/console/agents/${party.agentId}/enable`, {}],
      [`/console/agents/${party.agentId}/revoke-grants`, {}],
      [`/console/agents/${party.agentId}/sites/${website.clientId}/revoke`, {}],
      [`/console/agents/${party.agentId}/delete`, {}],
    ];
    for (const [path, form] of actions) {
      expect((await session.post(path, { ...form, _csrf: null })).status, path).toBe(403);
      expect((await session.post(path, { ...form, _csrf: 'forged-token' })).status, path).toBe(403);
    }
    expect(await server.ctx.store.agents.find(party.agentId)).toEqual(before);
    expect((await server.ctx.store.agents.list({ accountId: owner.id })).length).toBe(count);
    expect(await introspect(party, tokens.access_token)).toBe(true);
  });

  it('sends someone without a session to sign in', async () => {
    const party = await createAgent();
    const anonymous = await fetch(`${server.baseUrl}/console/agents/${party.agentId}`, { redirect: 'manual' });
    expect(anonymous.status).toBe(303);
    expect(anonymous.headers.get('location')).toBe(
      `/console/sign-in?next=${encodeURIComponent(`/console/agents/${party.agentId}`)}`,
    );
  });
});
