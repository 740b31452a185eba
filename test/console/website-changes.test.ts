/**
 * Issue 22 over real HTTP, on both engines: every console form post answers 303 and what it
 * showed once is shown once (a reload neither shows it again nor posts again); websites edited
 * and deleted under the rules of registration, with their audit rows; a redirect URI taken away
 * stops a request started before; Test sign-in runs a real authorization request; the overview.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AccountRecord } from '../../src/store/accounts.ts';
import { type ConsoleSession, codeOf, createPasswordAccount, noticeOf, type Page, signIn } from '../helpers/console.ts';
import {
  authenticate,
  checkStatus,
  continueFlow,
  obtainCode,
  obtainTokens,
  type Party,
  redeem,
  startFlow,
} from '../helpers/flow.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let owner: AccountRecord;
let session: ConsoleSession;
let admin: ConsoleSession;
let agent: { agentId: string; agentSecret: string };
const REDIRECT_URI = 'http://localhost:8080/callback';

beforeAll(async () => {
  server = await startTestServer();
  owner = await createPasswordAccount(server.ctx, { email: 'owner@example.org', name: 'Olga Owner' });
  session = await signIn(server.baseUrl, owner.email);
  const boss = await createPasswordAccount(server.ctx, { email: 'boss@example.org', role: 'admin' });
  admin = await signIn(server.baseUrl, boss.email);
  agent = await server.createAgent();
});
afterAll(() => server.close());

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
  expect(page.posted.status).toBe(303);
  return {
    clientId: codeOf(page, 'client-id'),
    clientSecret: codeOf(page, 'client-secret'),
    redirectUri: REDIRECT_URI,
    ...agent,
    page,
  };
}

const eventsOf = async (action: string, target: string) =>
  (await server.ctx.store.activity.list({ limit: 500 })).filter(
    (event) => event.action === action && event.target === target,
  );

/** Reads the page again, as a reload does, and again from the back button: neither shows `secret`. */
async function expectShownOnce(as: ConsoleSession, path: string, secret: string, backTo: string, notice: RegExp) {
  for (let i = 0; i < 2; i++) {
    const again = await as.get(path);
    expect(again.status).toBe(303);
    expect(again.location).toBe(backTo);
    expect(again.text).not.toContain(secret);
    const landed = await as.get(again.location!);
    expect(landed.status).toBe(200);
    expect(landed.text).not.toContain(secret);
    expect(noticeOf(landed)).toMatch(notice);
  }
}

describe('a form post answers 303, and what it showed is shown once', () => {
  it('registering a website: 303 to its page of credentials; a reload shows no secret and registers nothing', async () => {
    await session.get('/console/websites');
    const before = (await server.ctx.store.clients.list({ accountId: owner.id })).length;
    const posted = await session.post('/console/websites', { name: 'Once', redirect_uris: REDIRECT_URI });
    expect(posted.status).toBe(303);
    expect(posted.text).toBe('');
    expect(posted.headers.get('cache-control')).toBe('no-store');
    expect(posted.location).toMatch(/^\/console\/websites\/cli_[A-Za-z0-9_-]+\/created$/);
    // Nothing secret in the URL the browser keeps in its history.
    const clientId = /cli_[A-Za-z0-9_-]+/.exec(posted.location!)![0];

    // Another session of the same account (another tab signed in elsewhere) cannot take it.
    const elsewhere = await signIn(server.baseUrl, owner.email);
    const stolen = await elsewhere.get(posted.location!);
    expect(stolen.status).toBe(303);
    expect(stolen.location).toBe(`/console/websites/${clientId}?notice=shown_once`);

    // A HEAD (a link checker, a prefetch) does not spend the one showing.
    const head = await fetch(`${server.baseUrl}${posted.location}`, {
      method: 'HEAD',
      redirect: 'manual',
      headers: { cookie: [...session.cookies].map(([name, value]) => `${name}=${value}`).join('; ') },
    });
    expect(head.status).toBe(303);

    const shown = await session.get(posted.location!);
    expect(shown.status).toBe(200);
    expect(shown.headers.get('cache-control')).toBe('no-store');
    expect(codeOf(shown, 'client-id')).toBe(clientId);
    const secret = codeOf(shown, 'client-secret');
    expect(secret).toMatch(/^cls_/);
    // The flash row is gone, and what it held was never in clear in the database.
    await expectShownOnce(
      session,
      posted.location!,
      secret,
      `/console/websites/${clientId}?notice=shown_once`,
      /shown only once/,
    );
    expect((await server.ctx.store.clients.list({ accountId: owner.id })).length).toBe(before + 1);
  });

  it('creating an agent and rotating its secret: each secret (and the environment) once', async () => {
    await session.get('/console/agents');
    const created = await session.submit('/console/agents', { name: 'Reloaded' });
    expect(created.posted.status).toBe(303);
    const agentId = codeOf(created, 'agent-id');
    const secret = codeOf(created, 'agent-secret');
    expect(created.text).toContain(`AGENTAUTH_AGENT_SECRET=${secret}`);
    await expectShownOnce(
      session,
      created.posted.location!,
      secret,
      `/console/agents/${agentId}?notice=shown_once`,
      /rotate the secret/,
    );
    expect(
      (await server.ctx.store.agents.list({ accountId: owner.id })).filter((a) => a.name === 'Reloaded'),
    ).toHaveLength(1);

    const rotated = await session.submit(`/console/agents/${agentId}/rotate`, { grace: '0' });
    expect(rotated.posted.status).toBe(303);
    expect(rotated.posted.location).toBe(`/console/agents/${agentId}/new-secret`);
    const fresh = codeOf(rotated, 'agent-secret');
    expect(fresh).not.toBe(secret);
    await expectShownOnce(
      session,
      rotated.posted.location!,
      fresh,
      `/console/agents/${agentId}?notice=shown_once`,
      /shown only once/,
    );
    expect(await eventsOf('agent.rotate_secret', agentId)).toHaveLength(1);
  });

  it("rotating a website's secret: once, and the secret shown is the one that works", async () => {
    const party = await createWebsite();
    const rotated = await session.submit(`/console/websites/${party.clientId}/rotate`, { grace: '0' });
    expect(rotated.posted.location).toBe(`/console/websites/${party.clientId}/new-secret`);
    const fresh = codeOf(rotated, 'client-secret');
    await expectShownOnce(
      session,
      rotated.posted.location!,
      fresh,
      `/console/websites/${party.clientId}?notice=shown_once`,
      /shown only once/,
    );
    const { code, verifier } = await obtainCode(server, party);
    expect((await redeem(server, { ...party, clientSecret: fresh }, code, verifier)).status).toBe(200);
    expect(await eventsOf('website.rotate_secret', party.clientId)).toHaveLength(1);
  });

  it('an invitation link and an admin’s setup link: once each, and one link per post', async () => {
    await session.get('/console/account');
    const invited = await session.submit('/console/account/invitations');
    expect(invited.posted.status).toBe(303);
    expect(invited.posted.location).toBe('/console/account/invitation');
    expect(noticeOf(invited)).toMatch(/^The invitation link is made/);
    const url = codeOf(invited, 'invitation-url');
    expect(url).toContain('/console/invitation/');
    await expectShownOnce(
      session,
      '/console/account/invitation',
      url,
      '/console/account?notice=link_shown_once',
      /revoke it/,
    );
    const links = (await server.ctx.store.links.listOutstanding(server.clock(), owner.id)).length;
    expect(links).toBe(1);

    await admin.get('/console/admin');
    const setup = await admin.submit(`/console/admin/accounts/${owner.id}/setup-link`);
    expect(setup.posted.status).toBe(303);
    expect(setup.posted.location).toBe(`/console/admin/accounts/${owner.id}/setup-link`);
    const setupUrl = codeOf(setup, 'setup-url');
    await expectShownOnce(
      admin,
      setup.posted.location!,
      setupUrl,
      '/console/admin?notice=link_shown_once',
      /revoke it/,
    );
  });

  it('a flash lives five minutes: a redirect followed later shows nothing', async () => {
    await session.get('/console/agents');
    const posted = await session.post('/console/agents', { name: 'Slow browser' });
    server.clock.advance(301);
    const late = await session.get(posted.location!);
    expect(late.status).toBe(303);
    expect(late.location).toMatch(/\?notice=shown_once$/);
  });

  it('every other action answers 303 to a page, with the result in a notice', async () => {
    const party = await createWebsite();
    const base = `/console/websites/${party.clientId}`;
    await session.get(base);
    const cases: Array<[string, Record<string, string>, string]> = [
      [`${base}/disable`, {}, `${base}?notice=website_disabled`],
      [`${base}/enable`, {}, `${base}?notice=website_enabled`],
      [`${base}/revoke-grants`, {}, `${base}?notice=grants_revoked`],
      [
        `${base}/edit`,
        { name: 'Renamed', redirect_uris: REDIRECT_URI, approval: 'auto' },
        `${base}?notice=website_updated`,
      ],
      ['/console/account/name', { name: 'Olga O.' }, '/console/account?notice=name_saved'],
      [`${base}/delete`, {}, '/console/websites?notice=website_deleted'],
    ];
    for (const [path, form, location] of cases) {
      const answer = await session.post(path, form);
      expect([path, answer.status, answer.location]).toEqual([path, 303, location]);
    }
  });
});

describe('editing a website', () => {
  it('saves name, redirect URIs and approval, records who did it, and the new URIs take sign-ins', async () => {
    const party = await createWebsite();
    const base = `/console/websites/${party.clientId}`;
    const page = await session.get(base);
    expect(page.text).toContain(`action="${base}/edit"`);
    expect(page.text).toContain(`>${REDIRECT_URI}</textarea>`);

    const saved = await session.submit(`${base}/edit`, {
      name: '  Bookshop Two  ',
      redirect_uris: 'https://books.example/cb\r\nhttp://127.0.0.1:9000/cb\n',
      approval: 'manual',
    });
    expect(saved.posted.status).toBe(303);
    expect(saved.status).toBe(200);
    expect(noticeOf(saved)).toBe('The website is saved.');
    const client = await server.ctx.store.clients.find(party.clientId);
    expect(client).toMatchObject({
      name: 'Bookshop Two',
      redirect_uris: ['https://books.example/cb', 'http://127.0.0.1:9000/cb'],
      approval: 'manual',
    });
    const [event] = await eventsOf('website.update', party.clientId);
    expect(event).toMatchObject({
      actor_id: owner.id,
      detail: 'name Bookshop Two; redirect URIs https://books.example/cb http://127.0.0.1:9000/cb; approval manual',
    });
    // The admins' Activity page names who did it.
    const activity = await admin.get('/console/admin/events');
    expect(activity.text).toContain('website.update');

    // The old URI is refused at /authorize; the new one starts a sign-in.
    await expect(startFlow(server, party)).rejects.toThrow(/authorize answered 400/);
    const started = await startFlow(server, { ...party, redirectUri: 'https://books.example/cb' });
    expect(started.page).toContain('Bookshop Two');
  });

  it('refuses what registration refuses: the form again, 400, with the message and what was typed', async () => {
    const party = await createWebsite();
    const base = `/console/websites/${party.clientId}`;
    await session.get(base);
    const cases: Array<[Record<string, string>, string, string]> = [
      [
        { name: 'Shop', redirect_uris: 'https://shop.example/cb#frag', approval: 'auto' },
        'redirect_uris',
        'The redirect URI https://shop.example/cb#frag must not contain a fragment.',
      ],
      [{ name: 'Shop', redirect_uris: 'http://shop.example/cb', approval: 'auto' }, 'redirect_uris', 'must use https'],
      [{ name: 'Shop', redirect_uris: '  ', approval: 'auto' }, 'redirect_uris', 'Enter at least one redirect URI'],
      [{ name: '   ', redirect_uris: REDIRECT_URI, approval: 'auto' }, 'name', 'Give the website a name'],
      [{ name: 'x'.repeat(201), redirect_uris: REDIRECT_URI, approval: 'auto' }, 'name', 'at most 200 characters'],
      [{ name: 'Shop', redirect_uris: REDIRECT_URI, approval: 'sometimes' }, 'approval', 'Choose automatic or manual'],
      [
        {
          name: 'Shop',
          redirect_uris: Array.from({ length: 11 }, (_, i) => `https://s.example/${i}`).join('\n'),
          approval: 'auto',
        },
        'redirect_uris',
        'at most 10 redirect URIs',
      ],
    ];
    for (const [form, field, message] of cases) {
      const refused = await session.post(`${base}/edit`, form);
      expect(refused.status).toBe(400);
      expect(refused.text).toContain(`id="field-${field}-error"`);
      expect(refused.text).toContain(message.replaceAll('#', '#'));
      expect(noticeOf(refused)).toBe('Please correct the field marked below.');
    }
    // What was typed is shown again, escaped.
    const typed = await session.post(`${base}/edit`, {
      name: '<b>Shop</b>',
      redirect_uris: 'ftp://shop.example/cb',
      approval: 'manual',
    });
    expect(typed.text).toContain('value="&lt;b&gt;Shop&lt;/b&gt;"');
    expect(typed.text).toContain('>ftp://shop.example/cb</textarea>');
    // Nothing changed, and no audit row.
    expect(await server.ctx.store.clients.find(party.clientId)).toMatchObject({
      name: 'Bookshop',
      redirect_uris: [REDIRECT_URI],
      approval: 'auto',
    });
    expect(await eventsOf('website.update', party.clientId)).toHaveLength(0);
  });

  it('answers 404 for an unknown website and for another account’s, 403 without the CSRF token; nothing changes', async () => {
    const party = await createWebsite();
    const stranger = await signIn(server.baseUrl, (await createPasswordAccount(server.ctx)).email);
    await stranger.get('/console/websites');
    const form = { name: 'Mine now', redirect_uris: 'https://evil.example/cb', approval: 'auto' };
    for (const path of [`/console/websites/${party.clientId}`, '/console/websites/cli_doesnotexist']) {
      for (const action of ['edit', 'delete', 'test-sign-in']) {
        const answer = await stranger.post(`${path}/${action}`, form);
        expect([action, answer.status]).toEqual([action, 404]);
        expect(answer.text).toContain('No such website.');
      }
    }
    await session.get('/console/websites');
    for (const action of ['edit', 'delete', 'test-sign-in']) {
      const forged = await session.post(`/console/websites/${party.clientId}/${action}`, { ...form, _csrf: null });
      expect([action, forged.status]).toEqual([action, 403]);
      const crossSite = await session.post(`/console/websites/${party.clientId}/${action}`, form, {
        'sec-fetch-site': 'cross-site',
      });
      expect([action, crossSite.status]).toEqual([action, 403]);
    }
    expect(await server.ctx.store.clients.find(party.clientId)).toMatchObject({ name: 'Bookshop', status: 'active' });
    expect(await eventsOf('website.update', party.clientId)).toHaveLength(0);
  });

  it('an admin edits any website, and the audit names the admin', async () => {
    const party = await createWebsite();
    await admin.get(`/console/websites/${party.clientId}`);
    const saved = await admin.post(`/console/websites/${party.clientId}/edit`, {
      name: 'Renamed by admin',
      redirect_uris: REDIRECT_URI,
      approval: 'auto',
    });
    expect(saved.status).toBe(303);
    const [event] = await eventsOf('website.update', party.clientId);
    expect(event?.actor_id).not.toBe(owner.id);
    expect(event?.detail).toBe('name Renamed by admin');
  });
});

describe('a redirect URI taken away while a sign-in is in progress', () => {
  it('a pending request cannot be authenticated any more', async () => {
    const party = await createWebsite();
    const started = await startFlow(server, party);
    await session.get(`/console/websites/${party.clientId}`);
    await session.post(`/console/websites/${party.clientId}/edit`, {
      name: 'Bookshop',
      redirect_uris: 'https://new.example/cb',
      approval: 'auto',
    });
    const refused = await authenticate(server, party, started.requestId);
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({
      error: 'invalid_request',
      error_description: expect.stringContaining('no longer registers the redirect URI'),
    });
    expect((await checkStatus(server, started.requestId)).body.status).not.toBe('completed');
  });

  it('an authenticated request does not send the browser to the old URI, not even with an error', async () => {
    const party = await createWebsite();
    const started = await startFlow(server, party);
    expect((await authenticate(server, party, started.requestId)).status).toBe(200);
    await session.get(`/console/websites/${party.clientId}`);
    await session.post(`/console/websites/${party.clientId}/edit`, {
      name: 'Bookshop',
      redirect_uris: 'https://new.example/cb',
      approval: 'auto',
    });
    for (const fields of [{}, { action: 'cancel' }] as Array<Record<string, string>>) {
      const answer = await continueFlow(server, started, fields);
      expect(answer.status).toBe(400);
      expect(answer.headers.get('location')).toBeNull();
      expect(await answer.text()).toContain('no longer registers the redirect URI');
    }
    expect((await checkStatus(server, started.requestId)).body.status).toBe('authenticated');
  });

  it('a URI kept through the edit still completes', async () => {
    const party = await createWebsite();
    const started = await startFlow(server, party);
    await session.get(`/console/websites/${party.clientId}`);
    await session.post(`/console/websites/${party.clientId}/edit`, {
      name: 'Bookshop renamed',
      redirect_uris: `https://new.example/cb\n${REDIRECT_URI}`,
      approval: 'auto',
    });
    expect((await authenticate(server, party, started.requestId)).status).toBe(200);
    const redirect = await continueFlow(server, started);
    expect(redirect.status).toBe(302);
    expect(redirect.headers.get('location')).toMatch(new RegExp(`^${REDIRECT_URI}\\?code=`));
  });
});

describe('deleting a website', () => {
  it('revokes its grants, tokens, codes and sign-ins in progress in one step, records it, and the website is gone', async () => {
    const party = await createWebsite();
    const tokens = await obtainTokens(server, party);
    const unredeemed = await obtainCode(server, party);
    const inProgress = await startFlow(server, party);
    expect((await authenticate(server, party, inProgress.requestId)).status).toBe(200);
    const pending = await startFlow(server, party);

    const page = await session.get(`/console/websites/${party.clientId}`);
    expect(page.text).toContain(`action="/console/websites/${party.clientId}/delete"`);
    // The confirmation (console.js asks it) says what ends.
    expect(page.text).toMatch(
      /data-confirm="Delete the website Bookshop\? Its client ID and secret stop working at once; every grant it holds is revoked/,
    );
    // In the danger zone, with what it ends beside the button.
    expect(page.text).toMatch(
      /id="danger-zone"[\s\S]*Delete: the website is gone for good\. Its client ID and secret stop working/,
    );

    const deleted = await session.submit(`/console/websites/${party.clientId}/delete`);
    expect(deleted.posted.status).toBe(303);
    expect(deleted.posted.location).toBe('/console/websites?notice=website_deleted');
    expect(noticeOf(deleted)).toMatch(/^The website is deleted/);
    expect(await server.ctx.store.clients.find(party.clientId)).toBeUndefined();

    // Its tokens stop working, its code cannot be redeemed, its sign-ins in progress end.
    const userinfo = await fetch(`${server.baseUrl}/userinfo`, {
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });
    expect(userinfo.status).toBe(401);
    expect((await redeem(server, party, unredeemed.code, unredeemed.verifier)).status).toBe(401);
    expect((await checkStatus(server, inProgress.requestId)).body).toMatchObject({
      status: 'error',
      error: 'access_denied',
    });
    expect((await authenticate(server, party, pending.requestId)).status).toBe(400);

    const [event] = await eventsOf('website.delete', party.clientId);
    expect(event).toMatchObject({ actor_id: owner.id, detail: 'Bookshop: grants 1, codes 1, requests 1' });

    // A second delete, and the page, answer 404.
    expect((await session.get(`/console/websites/${party.clientId}`)).status).toBe(404);
    await session.get('/console/websites');
    expect((await session.post(`/console/websites/${party.clientId}/delete`)).status).toBe(404);
  });
});

describe('Test sign-in', () => {
  it('starts a real authorization request for the website, to its own redirect URI, that the agent completes', async () => {
    const party = await createWebsite(session, {
      name: 'Tested site',
      redirect_uris: `${REDIRECT_URI}\nhttps://tested.example/cb`,
      approval: 'manual',
    });
    const base = `/console/websites/${party.clientId}`;
    const page = await session.get(base);
    expect(page.text).toContain(`action="${base}/test-sign-in"`);
    expect(page.text).toContain('<option value="https://tested.example/cb">');

    const started = await session.post(`${base}/test-sign-in`, { redirect_uri: REDIRECT_URI });
    expect(started.status).toBe(303);
    const url = new URL(started.location!, server.baseUrl);
    expect(url.pathname).toBe('/authorize');
    expect(Object.fromEntries(url.searchParams)).toMatchObject({
      response_type: 'code',
      client_id: party.clientId,
      redirect_uri: REDIRECT_URI,
      scope: 'openid email profile',
      code_challenge_method: 'S256',
      state: expect.stringMatching(/^test_/),
      code_challenge: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
    });
    // No secret of the website's travels.
    expect(started.location).not.toContain(party.clientSecret);

    // The browser follows it: the real authorization page, which the agent completes (manual approval).
    const authorize = await fetch(url, { redirect: 'manual' });
    expect(authorize.status).toBe(200);
    const html = await authorize.text();
    expect(html).toContain('Tested site');
    const requestId = /<meta name="request-id" content="([^"]+)"/.exec(html)![1]!;
    const cookie = (authorize.headers.get('set-cookie') ?? '').split(';')[0]!;
    expect((await authenticate(server, party, requestId)).status).toBe(200);
    const confirm = await continueFlow(server, { requestId, cookie });
    expect(confirm.status).toBe(200);
    const done = await continueFlow(server, { requestId, cookie }, { confirmed: '1' });
    expect(done.status).toBe(302);
    const back = new URL(done.headers.get('location')!);
    expect(`${back.origin}${back.pathname}`).toBe(REDIRECT_URI);
    expect(back.searchParams.get('state')).toBe(url.searchParams.get('state'));
    // Nobody holds the verifier: the code cannot be redeemed, even with the website's secret.
    const code = back.searchParams.get('code')!;
    expect((await redeem(server, party, code, 'x'.repeat(43))).status).toBe(400);

    // The sign-in is in the website's history, and the audit has the test.
    const after = await session.get(base);
    expect(after.text).toContain(`<code>${party.agentId}</code>`);
    expect(await eventsOf('website.test_sign_in', party.clientId)).toMatchObject([
      { actor_id: owner.id, detail: REDIRECT_URI },
    ]);
  });

  it('refuses a URI not registered, and a disabled website, on the page again', async () => {
    const party = await createWebsite();
    const base = `/console/websites/${party.clientId}`;
    await session.get(base);
    const foreign = await session.post(`${base}/test-sign-in`, { redirect_uri: 'https://evil.example/cb' });
    expect(foreign.status).toBe(400);
    expect(foreign.text).toContain('Choose one of the website’s redirect URIs.');
    await session.post(`${base}/disable`);
    const page = await session.get(base);
    expect(page.text).not.toContain(`action="${base}/test-sign-in"`);
    expect(page.text).toContain('Enable the website to test a sign-in.');
    const disabled = await session.post(`${base}/test-sign-in`, {});
    expect(disabled.status).toBe(400);
    expect(disabled.text).toContain('Enable the website first');
  });
});

describe('the overview', () => {
  it('shows the issuer, the counts, and the next step of a new account until a sign-in is done', async () => {
    const fresh = await createPasswordAccount(server.ctx, { name: 'Newcomer' });
    const own = await signIn(server.baseUrl, fresh.email);
    const step = (page: Page) => /<li id="(step-[a-z-]+)" class="next"/.exec(page.text)?.[1];

    const first = await own.get('/console');
    expect(first.status).toBe(200);
    expect(codeOf(first, 'issuer')).toBe(server.baseUrl);
    expect(codeOf(first, 'discovery-url')).toBe(`${server.baseUrl}/.well-known/openid-configuration`);
    expect(first.text).toContain('>0 agents</a>');
    expect(first.text).toContain('>0 websites</a>');
    expect(step(first)).toBe('step-website');
    expect(first.text).toContain('href="/console/websites#register-heading"');

    const party = await createWebsite(own);
    const second = await own.get('/console');
    expect(step(second)).toBe('step-agent');
    expect(second.text).toContain('>1 website</a>');

    await own.get('/console/agents');
    const created = await own.submit('/console/agents', { name: 'First agent' });
    const mine = { ...party, agentId: codeOf(created, 'agent-id'), agentSecret: codeOf(created, 'agent-secret') };
    const third = await own.get('/console');
    expect(step(third)).toBe('step-sign-in');
    expect(third.text).toContain(`href="/console/websites/${party.clientId}#test-heading"`);

    await obtainCode(server, mine);
    const last = await own.get('/console');
    expect(step(last)).toBeUndefined();
    expect(last.text).not.toContain('Get started');
    expect(last.text).toContain('>1 agent</a>');
  });
});
