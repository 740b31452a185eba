/**
 * The console's websites area over real HTTP (issue 10, item 4): registering a website that then
 * takes sign-ins for real, its sign-ins, rotation with grace at /token, disable, revocation, and
 * who may reach which website.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AccountRecord } from '../../src/store/accounts.ts';
import { type ConsoleSession, codeOf, createPasswordAccount, noticeOf, type Page, signIn } from '../helpers/console.ts';
import { authorizeUrl, obtainCode, obtainTokens, type Party, pkcePair, postForm, redeem } from '../helpers/flow.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let owner: AccountRecord;
let session: ConsoleSession;
/** An agent made in the console by another member, to sign in to the websites. */
let agent: { agentId: string; agentSecret: string };
const REDIRECT_URI = 'http://localhost:8080/callback';

beforeAll(async () => {
  // Tests move the clock by hours (grace periods); console sessions outlast that.
  server = await startTestServer({ env: { CONSOLE_SESSION_IDLE: '604800', CONSOLE_SESSION_LIFETIME: '2592000' } });
  owner = await createPasswordAccount(server.ctx, { email: 'webmaster@example.org', name: 'Web Master' });
  session = await signIn(server.baseUrl, owner.email);
  const agentOwner = await createPasswordAccount(server.ctx, { email: 'agents@example.org', name: 'Agent Owner' });
  const agents = await signIn(server.baseUrl, agentOwner.email);
  await agents.get('/console/agents');
  const created = await agents.submit('/console/agents', { name: 'Visitor' });
  agent = { agentId: codeOf(created, 'agent-id'), agentSecret: codeOf(created, 'agent-secret') };
});
afterAll(() => server.close());

/** Registers a website through the console; the party pairs it with the test agent. */
async function createWebsite(
  as: ConsoleSession = session,
  form: Record<string, string> = {},
): Promise<Party & { page: Page }> {
  await as.get('/console/websites');
  const page = await as.submit('/console/websites', {
    name: 'Bookshop',
    redirect_uris: REDIRECT_URI,
    approval: 'auto',
    ...form,
  });
  expect(page.status).toBe(200);
  return {
    clientId: codeOf(page, 'client-id'),
    clientSecret: codeOf(page, 'client-secret'),
    redirectUri: REDIRECT_URI,
    ...agent,
    page,
  };
}

async function introspect(party: Party, token: string): Promise<boolean> {
  const response = await postForm(server, '/introspect', {
    token,
    client_id: party.clientId,
    client_secret: party.clientSecret,
  });
  return ((await response.json()) as { active: boolean }).active;
}

/** Redeems a fresh code with this client secret: the /token status. */
async function redeemWith(party: Party, clientSecret: string): Promise<number> {
  const { code, verifier } = await obtainCode(server, party);
  return (await redeem(server, { ...party, clientSecret }, code, verifier)).status;
}

async function authorizeStatus(party: Party): Promise<number> {
  const response = await fetch(
    authorizeUrl(server, {
      client_id: party.clientId,
      redirect_uri: party.redirectUri,
      response_type: 'code',
      state: 's',
      code_challenge: pkcePair().challenge,
      code_challenge_method: 'S256',
    }),
    { redirect: 'manual' },
  );
  return response.status;
}

const eventsOf = async (action: string, target: string) =>
  (await server.ctx.store.activity.list({ limit: 500 })).filter(
    (event) => event.action === action && event.target === target,
  );
const historyIds = (page: Page) => [...page.text.matchAll(/data-event="([^"]+)"/g)].map((match) => match[1]!);
const olderLink = (page: Page) =>
  /<a href="([^"#]+)#history" id="history-older">/.exec(page.text)?.[1]?.replaceAll('&amp;', '&');

describe('registering a website', () => {
  it('lists no websites at first, then shows the client secret once with the issuer and discovery URL', async () => {
    const newcomer = await createPasswordAccount(server.ctx);
    const own = await signIn(server.baseUrl, newcomer.email);
    const empty = await own.get('/console/websites');
    expect(empty.status).toBe(200);
    expect(empty.text).toContain('You have no websites yet');
    expect(empty.text).toContain('<option value="manual">');

    const created = await own.submit('/console/websites', {
      name: 'Travel site',
      redirect_uris: 'https://travel.example/cb\r\n\r\n  http://127.0.0.1:3000/callback  \n',
      approval: 'manual',
    });
    expect(created.status).toBe(200);
    expect(created.headers.get('cache-control')).toBe('no-store');
    const clientId = codeOf(created, 'client-id');
    const secret = codeOf(created, 'client-secret');
    expect(clientId).toMatch(/^cli_/);
    expect(secret).toMatch(/^cls_/);
    expect(codeOf(created, 'issuer')).toBe(server.baseUrl);
    expect(codeOf(created, 'discovery-url')).toBe(`${server.baseUrl}/.well-known/openid-configuration`);
    expect(created.text).toContain('<code>https://travel.example/cb</code>');
    expect(created.text).toContain('<code>http://127.0.0.1:3000/callback</code>');
    expect(created.text).toContain('data-copy="client-secret"');

    const client = await server.ctx.store.clients.find(clientId);
    expect(client).toMatchObject({
      name: 'Travel site',
      account_id: newcomer.id,
      approval: 'manual',
      status: 'active',
      redirect_uris: ['https://travel.example/cb', 'http://127.0.0.1:3000/callback'],
    });
    expect(await eventsOf('website.create', clientId)).toHaveLength(1);

    const list = await own.get('/console/websites');
    expect(list.text).toContain(clientId);
    expect(list.text).toContain('https://travel.example/cb');
    expect(list.text).toContain('Manual');
    const details = await own.get(`/console/websites/${clientId}`);
    expect(details.status).toBe(200);
    expect(details.text).toContain(clientId);
    for (const page of [list, details]) expect(page.text).not.toContain(secret);
  });

  it('refuses bad input with a message beside the field, and registers nothing', async () => {
    const before = (await server.ctx.store.clients.list({ accountId: owner.id })).length;
    await session.get('/console/websites');
    const cases: Array<[Record<string, string>, string, string]> = [
      [{ name: '' }, 'name', 'Give the website a name'],
      [{ name: 'z'.repeat(201) }, 'name', 'A name can be at most 200 characters long.'],
      [{ redirect_uris: '' }, 'redirect_uris', 'Enter at least one redirect URI'],
      [
        { redirect_uris: 'http://example.com/cb' },
        'redirect_uris',
        'The redirect URI http://example.com/cb must use https',
      ],
      [
        { redirect_uris: 'https://a/cb#frag' },
        'redirect_uris',
        'The redirect URI https://a/cb#frag must not contain a fragment.',
      ],
      [{ redirect_uris: 'https://ok.example/cb\nnot a url' }, 'redirect_uris', 'is not an absolute URL'],
      [
        { redirect_uris: Array.from({ length: 11 }, (_, i) => `https://ok.example/${i}`).join('\n') },
        'redirect_uris',
        'Enter at most 10 redirect URIs.',
      ],
      [{ approval: 'sometimes' }, 'approval', 'Choose automatic or manual approval.'],
    ];
    for (const [form, field, message] of cases) {
      const refused = await session.post('/console/websites', {
        name: 'Bookshop',
        redirect_uris: REDIRECT_URI,
        approval: 'auto',
        ...form,
      });
      expect(refused.status, message).toBe(400);
      expect(refused.text, message).toMatch(
        new RegExp(
          `<p class="field-error" id="field-${field}-error">[^<]*${message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`,
        ),
      );
      expect(noticeOf(refused)).toBe('Please correct the field marked below.');
    }
    // What was typed is shown again.
    const again = await session.submit('/console/websites', {
      name: 'Kept name',
      redirect_uris: 'http://example.com/cb',
      approval: 'manual',
    });
    expect(again.text).toContain('value="Kept name"');
    expect(again.text).toContain('>http://example.com/cb</textarea>');
    expect(again.text).toContain('<option value="manual" selected>');
    expect((await server.ctx.store.clients.list({ accountId: owner.id })).length).toBe(before);
  });

  it('escapes a name and a redirect URI that look like markup', async () => {
    const party = await createWebsite(session, {
      name: '<script>alert(1)</script>',
      redirect_uris: 'https://shop.example/cb?next="><img>',
    });
    const pages = [
      party.page,
      await session.get('/console/websites'),
      await session.get(`/console/websites/${party.clientId}`),
    ];
    for (const page of pages) {
      expect(page.text).not.toContain('<script>alert(1)</script>');
      expect(page.text).not.toContain('"><img>');
      expect(page.text).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
      expect(page.text).toContain('https://shop.example/cb?next=&quot;&gt;&lt;img&gt;');
    }
  });
});

describe('a website registered in the console', () => {
  it('takes a real sign-in, and lists it among its sign-ins', async () => {
    const party = await createWebsite();
    const tokens = await obtainTokens(server, party);
    expect(await introspect(party, tokens.access_token)).toBe(true);
    const page = await session.get(`/console/websites/${party.clientId}`);
    const history = /<table class="data" id="history-table">[\s\S]*?<\/table>/.exec(page.text)?.[0] ?? '';
    // The agent is not the website owner's: its id is the sub the website was given, its model its owner's.
    expect(history).toContain(agent.agentId);
    expect(history).not.toContain('test-model');
    expect(history).toContain('Signed in');
    expect(page.text).not.toContain(party.clientSecret);
  });

  it('rotates with a grace period: the old secret works at /token until it ends', async () => {
    const party = await createWebsite();
    await session.get(`/console/websites/${party.clientId}`);
    const rotated = await session.submit(`/console/websites/${party.clientId}/rotate`, { grace: '3600' });
    expect(rotated.status).toBe(200);
    const secret = codeOf(rotated, 'client-secret');
    expect(secret).not.toBe(party.clientSecret);
    expect(rotated.text).toContain('The old secret keeps working until');
    expect(await eventsOf('website.rotate_secret', party.clientId)).toMatchObject([
      { detail: 'grace 3600 s', actor_id: owner.id },
    ]);
    expect(await redeemWith(party, party.clientSecret)).toBe(200);
    expect(await redeemWith(party, secret)).toBe(200);
    const page = await session.get(`/console/websites/${party.clientId}`);
    expect(page.text).toContain('The secret before the last rotation keeps working until');
    expect(page.text).not.toContain(secret);

    server.clock.advance(3601);
    expect(await redeemWith(party, party.clientSecret)).toBe(401);
    expect(await redeemWith(party, secret)).toBe(200);

    // Without grace the old secret stops at once.
    await session.get(`/console/websites/${party.clientId}`);
    const now = await session.submit(`/console/websites/${party.clientId}/rotate`, { grace: '0' });
    expect(now.text).toContain('The old secret stopped working now.');
    expect(await redeemWith(party, secret)).toBe(401);
    expect(await redeemWith(party, codeOf(now, 'client-secret'))).toBe(200);
  });

  it('refuses a grace period that is not one of the choices', async () => {
    const party = await createWebsite();
    const before = await server.ctx.store.clients.find(party.clientId);
    await session.get(`/console/websites/${party.clientId}`);
    for (const grace of ['7200', 'soon']) {
      const refused = await session.submit(`/console/websites/${party.clientId}/rotate`, { grace });
      expect(refused.status).toBe(400);
      expect(refused.text).toContain('Choose how long the old secret keeps working.');
    }
    expect(await server.ctx.store.clients.find(party.clientId)).toEqual(before);
  });

  it('disables and enables: a disabled website starts no sign-in and its tokens stop working', async () => {
    const party = await createWebsite();
    const tokens = await obtainTokens(server, party);
    await session.get(`/console/websites/${party.clientId}`);
    const disabled = await session.post(`/console/websites/${party.clientId}/disable`);
    expect(disabled.location).toBe(`/console/websites/${party.clientId}?notice=website_disabled`);
    expect((await server.ctx.store.clients.find(party.clientId))?.status).toBe('inactive');
    expect(await authorizeStatus(party)).not.toBe(200);
    expect(
      (await fetch(`${server.baseUrl}/userinfo`, { headers: { authorization: `Bearer ${tokens.access_token}` } }))
        .status,
    ).toBe(401);
    const page = await session.get(disabled.location!);
    expect(noticeOf(page)).toContain('The website is disabled');
    expect(page.text).toContain('<span class="badge off">disabled</span>');

    const enabled = await session.post(`/console/websites/${party.clientId}/enable`);
    expect(enabled.location).toBe(`/console/websites/${party.clientId}?notice=website_enabled`);
    expect(await authorizeStatus(party)).toBe(200);
    expect(await introspect(party, tokens.access_token)).toBe(true);
    expect(await eventsOf('website.disable', party.clientId)).toHaveLength(1);
    expect(await eventsOf('website.enable', party.clientId)).toHaveLength(1);
  });

  it('revokes every grant of the website', async () => {
    const party = await createWebsite();
    const tokens = await obtainTokens(server, party);
    await session.get(`/console/websites/${party.clientId}`);
    const revoked = await session.post(`/console/websites/${party.clientId}/revoke-grants`);
    expect(revoked.location).toBe(`/console/websites/${party.clientId}?notice=grants_revoked`);
    expect(await introspect(party, tokens.access_token)).toBe(false);
    expect(await introspect(party, tokens.refresh_token)).toBe(false);
    expect(await eventsOf('website.revoke_grants', party.clientId)).toMatchObject([
      { detail: 'grants 1, codes 0, requests 0' },
    ]);
  });

  it('pages its sign-ins, 20 a page, without overlap', async () => {
    const party = await createWebsite();
    const now = server.clock();
    for (let i = 0; i < 23; i++) {
      await server.ctx.store.signIns.record({
        at: now - Math.floor(i / 4),
        agent_id: agent.agentId,
        request_id: null,
        client_id: party.clientId,
        model: `model-${i}`,
        ip: '192.0.2.7',
        user_agent: 'test',
        outcome: 'authenticated',
      });
    }
    const first = await session.get(`/console/websites/${party.clientId}`);
    const firstIds = historyIds(first);
    expect(firstIds).toHaveLength(20);
    const older = olderLink(first);
    expect(older).toMatch(new RegExp(`^/console/websites/${party.clientId}\\?before=`));
    const second = await session.get(older!);
    const secondIds = historyIds(second);
    expect(secondIds).toHaveLength(3);
    expect(new Set([...firstIds, ...secondIds]).size).toBe(23);
    expect(second.text).toContain('id="history-newest">Newest</a>');
    expect(olderLink(second)).toBeUndefined();
  });
});

describe('who reaches a website', () => {
  it('another member gets 404 for every page and action, exactly as for a missing website, and nothing changes', async () => {
    const party = await createWebsite(session, { name: 'Private site' });
    const tokens = await obtainTokens(server, party);
    const before = await server.ctx.store.clients.find(party.clientId);
    const stranger = await createPasswordAccount(server.ctx);
    const other = await signIn(server.baseUrl, stranger.email);
    await other.get('/console/websites');
    const paths = (id: string) =>
      [
        ['GET', `/console/websites/${id}`],
        ['POST', `/console/websites/${id}/rotate`, { grace: '0' }],
        ['POST', `/console/websites/${id}/disable`],
        ['POST', `/console/websites/${id}/enable`],
        ['POST', `/console/websites/${id}/revoke-grants`],
      ] as const;
    const ask = (method: string, path: string, form?: Record<string, string>) =>
      method === 'GET' ? other.get(path) : other.post(path, form ?? {});
    const missing = paths('cli_doesnotexist');
    for (const [i, [method, path, form]] of paths(party.clientId).entries()) {
      const foreign = await ask(method, path, form);
      const absent = await ask(missing[i]![0], missing[i]![1], missing[i]![2]);
      expect(foreign.status, path).toBe(404);
      expect(foreign.text, path).toBe(absent.text);
      expect(foreign.text).toContain('No such website.');
    }
    for (const id of ['%00', "x'%20OR%20'1'%3D'1", 'cli_%E2%9C%93'])
      expect((await other.get(`/console/websites/${id}`)).status, id).toBe(404);
    expect(await server.ctx.store.clients.find(party.clientId)).toEqual(before);
    expect(await introspect(party, tokens.access_token)).toBe(true);
    expect((await other.get('/console/websites')).text).not.toContain(party.clientId);
  });

  it("an admin reaches and acts on any member's website", async () => {
    const party = await createWebsite(session, { name: 'Watched site' });
    const admin = await createPasswordAccount(server.ctx, { role: 'admin' });
    const adminSession = await signIn(server.baseUrl, admin.email);
    const page = await adminSession.get(`/console/websites/${party.clientId}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('Watched site');
    expect((await adminSession.post(`/console/websites/${party.clientId}/disable`)).status).toBe(303);
    expect((await server.ctx.store.clients.find(party.clientId))?.status).toBe('inactive');
    expect(await eventsOf('website.disable', party.clientId)).toMatchObject([{ actor_id: admin.id }]);
    expect((await adminSession.post(`/console/websites/${party.clientId}/enable`)).status).toBe(303);
    expect((await server.ctx.store.clients.find(party.clientId))?.status).toBe('active');
  });

  it('without the CSRF token every action is refused and nothing changes', async () => {
    const party = await createWebsite();
    const tokens = await obtainTokens(server, party);
    const before = await server.ctx.store.clients.find(party.clientId);
    const count = (await server.ctx.store.clients.list({ accountId: owner.id })).length;
    const actions: Array<[string, Record<string, string>]> = [
      ['/console/websites', { name: 'Sneaky', redirect_uris: REDIRECT_URI, approval: 'auto' }],
      [`/console/websites/${party.clientId}/rotate`, { grace: '0' }],
      [`/console/websites/${party.clientId}/disable`, {}],
      [`/console/websites/${party.clientId}/enable`, {}],
      [`/console/websites/${party.clientId}/revoke-grants`, {}],
    ];
    for (const [path, form] of actions) {
      expect((await session.post(path, { ...form, _csrf: null })).status, path).toBe(403);
      expect((await session.post(path, { ...form, _csrf: 'forged-token' })).status, path).toBe(403);
    }
    expect(await server.ctx.store.clients.find(party.clientId)).toEqual(before);
    expect((await server.ctx.store.clients.list({ accountId: owner.id })).length).toBe(count);
    expect(await introspect(party, tokens.access_token)).toBe(true);
  });
});

describe('public clients in the console', () => {
  it('are offered only while PUBLIC_CLIENTS is on; a public one has no secret and signs in with PKCE alone', async () => {
    // The server of this file runs with public clients off: no choice on the form, and a forged one is refused.
    expect((await session.get('/console/websites')).text).not.toContain('name="client_type"');
    const refused = await session.post('/console/websites', {
      name: 'Desktop app',
      redirect_uris: 'http://127.0.0.1/callback',
      approval: 'auto',
      client_type: 'public',
    });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('This server does not let public clients sign in.');

    const open = await startTestServer({ env: { PUBLIC_CLIENTS: 'true' } });
    try {
      const account = await createPasswordAccount(open.ctx, { email: 'apps@example.org', name: 'App Maker' });
      const maker = await signIn(open.baseUrl, account.email);
      const form = await maker.get('/console/websites');
      expect(form.text).toContain('name="client_type"');
      const created = await maker.submit('/console/websites', {
        name: 'Desktop app',
        redirect_uris: 'http://127.0.0.1/callback',
        approval: 'auto',
        client_type: 'public',
      });
      expect(created.status).toBe(200);
      expect(created.text).toContain('id="public-client-note"');
      expect(created.text).not.toContain('id="client-secret"');
      const clientId = codeOf(created, 'client-id');
      expect(await open.ctx.store.clients.find(clientId)).toMatchObject({
        token_endpoint_auth_method: 'none',
        secret_sealed: '',
        account_id: account.id,
      });
      // Its page offers no secret rotation.
      const page = await maker.get(`/console/websites/${clientId}`);
      expect(page.text).toContain('Public (no secret; PKCE only)');
      expect(page.text).not.toContain(`/console/websites/${clientId}/rotate`);

      const visitor = await open.createAgent();
      const party: Party = { clientId, clientSecret: '', redirectUri: 'http://127.0.0.1:41234/callback', ...visitor };
      const { code, verifier } = await obtainCode(open, party);
      const tokens = await postForm(open, '/token', {
        grant_type: 'authorization_code',
        code,
        code_verifier: verifier,
        client_id: clientId,
        redirect_uri: party.redirectUri,
      });
      expect(tokens.status).toBe(200);
      expect(await tokens.json()).not.toHaveProperty('id_token');
    } finally {
      await open.close();
    }
  });
});
