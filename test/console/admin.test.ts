/**
 * The console's admin area (issue 10, item 5): every account with its actions, every agent and
 * website, the console's audit; only for admins, every action with its CSRF token.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOwnedAgent } from '../helpers/owned.ts';

import { recordConsoleEvent } from '../../src/console/events.ts';
import { registerClient } from '../../src/domain/clients.ts';
import type { AccountRecord } from '../../src/store/accounts.ts';
import {
  ConsoleSession,
  createPasswordAccount,
  noticeOf,
  type Page,
  signIn,
  TEST_PASSWORD,
} from '../helpers/console.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const ADMIN_PAGES = [
  '/console/admin',
  '/console/admin/links',
  '/console/admin/agents',
  '/console/admin/websites',
  '/console/admin/events',
  '/console/admin/signing-keys',
];
const ACTIONS: Array<[string, Record<string, string>]> = [
  ['disable', {}],
  ['enable', {}],
  ['role', { role: 'admin' }],
  ['verify-email', {}],
  ['setup-link', {}],
];

/** The error code of a console error page. */
const errorOf = (page: Page) => /<code id="error">([^<]*)<\/code>/.exec(page.text)?.[1];

async function admin(): Promise<{ account: AccountRecord; session: ConsoleSession }> {
  const account = await createPasswordAccount(server.ctx, { role: 'admin', name: 'Admin Ada' });
  const session = await signIn(server.baseUrl, account.email);
  await session.get('/console/admin');
  return { account, session };
}

async function member(input: { name?: string } = {}): Promise<{ account: AccountRecord; session: ConsoleSession }> {
  const account = await createPasswordAccount(server.ctx, input);
  const session = await signIn(server.baseUrl, account.email);
  return { account, session };
}

const stored = async (id: string) => (await server.ctx.store.accounts.find(id))!;
const adminEvents = async () =>
  (await server.ctx.store.activity.list({ limit: 1000 })).filter((event) => event.action.startsWith('admin.'));

describe('the admin area', () => {
  it('answers a member 403 on every admin page and action, and nothing changes', async () => {
    const { account: self, session } = await member();
    const { account: other } = await member();
    // As stored after their sign-ins, to compare with afterwards.
    const [selfBefore, otherBefore] = [await stored(self.id), await stored(other.id)];
    const before = await adminEvents();
    for (const path of ADMIN_PAGES) {
      const page = await session.get(path);
      expect(page.status, path).toBe(403);
      expect(errorOf(page), path).toBe('access_denied');
      expect(page.text, path).toContain('This page is for administrators.');
    }
    // A member's own pages give a valid CSRF token: what is refused is the role, not the form.
    await session.get('/console/account');
    for (const target of [self, other]) {
      for (const [action, form] of ACTIONS) {
        const answer = await session.post(`/console/admin/accounts/${target.id}/${action}`, form);
        expect(answer.status, `${action} ${target.email}`).toBe(403);
        expect(answer.text).not.toContain('/console/setup/');
      }
    }
    expect(await stored(self.id)).toEqual(selfBefore);
    expect(await stored(other.id)).toEqual(otherBefore);
    expect(await adminEvents()).toEqual(before);
  });

  it('sends someone not signed in to the sign-in page', async () => {
    const anonymous = new ConsoleSession(server.baseUrl);
    expect((await anonymous.get('/console/admin')).location).toBe('/console/sign-in?next=%2Fconsole%2Fadmin');
    await anonymous.get('/console/sign-in');
    const { account } = await member();
    expect((await anonymous.post(`/console/admin/accounts/${account.id}/disable`)).location).toBe('/console/sign-in');
    expect((await stored(account.id)).status).toBe('active');
  });

  it('lists every account with its counts, every agent and every website, with their owners', async () => {
    const { account: me, session } = await admin();
    const owner = await createPasswordAccount(server.ctx, { email: 'Owner.Olga@Example.com', name: 'Olga' });
    const { agent: owned } = await createOwnedAgent(server.ctx, owner, 'Olga’s research bot');
    await createOwnedAgent(server.ctx, owner, 'Second bot');
    const { client: site } = await registerClient(server.ctx, {
      name: 'Olga’s shop',
      redirectUris: ['https://shop.example/cb'],
      accountId: owner.id,
    });
    const cliAgent = await server.createAgent({ name: 'CLI bot', ownerEmail: 'cli-owner@example.com' });
    const cliClient = await server.createClient({ name: 'CLI site' });

    const accounts = await session.get('/console/admin');
    expect(accounts.status).toBe(200);
    const row = new RegExp(`<tr id="account-${owner.id}">([\\s\\S]*?)</tr>`).exec(accounts.text)?.[1] ?? '';
    expect(row).toContain('Owner.Olga@Example.com');
    expect(row).toContain('<span class="account-name">Olga</span>');
    expect(row).toContain('<td data-label="Role" class="narrow">member</td>');
    expect(row).toContain('not verified');
    expect(row).toContain('<span class="agents">2 agents</span>, <span class="websites">1 website</span>');
    expect(row).toContain(`/console/admin/accounts/${owner.id}/disable`);
    expect(row).toContain(`/console/admin/accounts/${owner.id}/setup-link`);
    // Every admin page is reachable from the others.
    for (const path of ADMIN_PAGES) expect(accounts.text).toContain(`href="${path}"`);
    // No button that would only answer 403: an admin cannot disable or demote themselves.
    const mine = new RegExp(`<tr id="account-${me.id}">([\\s\\S]*?)</tr>`).exec(accounts.text)?.[1] ?? '';
    expect(mine).toContain('(you)');
    expect(mine).not.toContain('/disable');
    expect(mine).not.toContain('/role');

    const agents = await session.get('/console/admin/agents');
    expect(agents.status).toBe(200);
    expect(agents.text).toContain(`href="/console/agents/${owned.id}"`);
    expect(agents.text).toContain('Olga’s research bot');
    expect(agents.text).toContain(`href="/console/agents/${cliAgent.agentId}"`);
    expect(agents.text).toMatch(/CLI<\/span> <span class="muted">\(cli-owner@example.com\)/);

    const websites = await session.get('/console/admin/websites');
    expect(websites.status).toBe(200);
    expect(websites.text).toContain(`href="/console/websites/${site.id}"`);
    expect(websites.text).toContain(`href="/console/websites/${cliClient.clientId}"`);
    expect(websites.text).toMatch(/Olga’s shop[\s\S]*?Owner\.Olga@Example\.com/);
  });

  it('disabling an account signs it out everywhere and keeps it out; enabling lets it back in', async () => {
    const { session: adminSession } = await admin();
    const { account: target, session: targetSession } = await member();
    expect((await targetSession.get('/console')).status).toBe(200);

    const disabled = await adminSession.post(`/console/admin/accounts/${target.id}/disable`);
    expect(disabled.status).toBe(303);
    expect(disabled.location).toBe('/console/admin?notice=account_disabled');
    expect(noticeOf(await adminSession.get(disabled.location!))).toContain('The account is disabled');
    expect((await stored(target.id)).status).toBe('disabled');
    expect(await server.ctx.store.sessions.list(target.id, server.clock())).toEqual([]);
    expect((await targetSession.get('/console')).location).toBe('/console/sign-in?next=%2Fconsole');
    const again = new ConsoleSession(server.baseUrl);
    await again.get('/console/sign-in');
    expect((await again.post('/console/sign-in', { email: target.email, password: TEST_PASSWORD })).status).toBe(401);

    const enabled = await adminSession.post(`/console/admin/accounts/${target.id}/enable`);
    expect(enabled.location).toBe('/console/admin?notice=account_enabled');
    expect((await stored(target.id)).status).toBe('active');
    const back = await signIn(server.baseUrl, target.email);
    expect((await back.get('/console')).status).toBe(200);
  });

  it('changes roles: a member made admin reaches the admin area, and loses it when made member again', async () => {
    const { session: adminSession } = await admin();
    const { account: target, session: targetSession } = await member();
    expect((await targetSession.get('/console/admin')).status).toBe(403);

    const promoted = await adminSession.post(`/console/admin/accounts/${target.id}/role`, { role: 'admin' });
    expect(promoted.location).toBe('/console/admin?notice=role_changed');
    expect((await stored(target.id)).role).toBe('admin');
    expect((await targetSession.get('/console/admin')).status).toBe(200);

    await adminSession.get('/console/admin');
    const demoted = await adminSession.post(`/console/admin/accounts/${target.id}/role`, { role: 'member' });
    expect(demoted.status).toBe(303);
    expect((await stored(target.id)).role).toBe('member');
    expect((await targetSession.get('/console/admin')).status).toBe(403);

    await adminSession.get('/console/admin');
    for (const role of ['owner', 'ADMIN', '']) {
      const refused = await adminSession.post(`/console/admin/accounts/${target.id}/role`, { role });
      expect(refused.status, role).toBe(400);
      expect(refused.text).toContain('Choose the role admin or member.');
    }
    const missing = await adminSession.post(`/console/admin/accounts/${target.id}/role`);
    expect(missing.status).toBe(400);
    expect((await stored(target.id)).role).toBe('member');
  });

  it('an admin cannot disable or demote themselves', async () => {
    const { account: me, session } = await admin();
    const disable = await session.post(`/console/admin/accounts/${me.id}/disable`);
    expect(disable.status).toBe(403);
    expect(disable.text).toContain('You cannot disable your own account.');
    await session.get('/console/admin');
    const demote = await session.post(`/console/admin/accounts/${me.id}/role`, { role: 'member' });
    expect(demote.status).toBe(403);
    expect(demote.text).toContain('You cannot take the admin role from yourself.');
    expect(await stored(me.id)).toMatchObject({ status: 'active', role: 'admin' });
    expect((await session.get('/console/admin')).status).toBe(200);
  });

  it('answers an unknown account 404 for every action', async () => {
    const { session } = await admin();
    for (const id of ['acc_nobody', 'x'.repeat(90), '%3Cscript%3E']) {
      for (const [action, form] of ACTIONS) {
        const answer = await session.post(`/console/admin/accounts/${id}/${action}`, form);
        expect(answer.status, `${action} ${id.slice(0, 20)}`).toBe(404);
        expect(errorOf(answer)).toBe('not_found');
      }
    }
  });

  it('refuses every action without the CSRF token, and changes nothing', async () => {
    const { session } = await admin();
    const { account: target } = await member();
    const before = await stored(target.id);
    for (const [action, form] of ACTIONS) {
      const answer = await session.post(`/console/admin/accounts/${target.id}/${action}`, { ...form, _csrf: null });
      expect(answer.status, action).toBe(403);
      const wrong = await session.post(`/console/admin/accounts/${target.id}/${action}`, { ...form, _csrf: 'forged' });
      expect(wrong.status, action).toBe(403);
    }
    expect(await stored(target.id)).toEqual(before);
    expect((await adminEvents()).filter((event) => event.target === target.id)).toEqual([]);
  });

  it('marks an email verified and shows a new setup link once, which signs the person in', async () => {
    const { session } = await admin();
    const { account: target } = await member();
    const verified = await session.post(`/console/admin/accounts/${target.id}/verify-email`);
    expect(verified.location).toBe('/console/admin?notice=email_verified');
    expect((await stored(target.id)).email_verified).toBe(true);

    await session.get('/console/admin');
    const shown = await session.submit(`/console/admin/accounts/${target.id}/setup-link`);
    expect(shown.status).toBe(200);
    const url = /<code id="setup-url">([^<]+)<\/code>/.exec(shown.text)?.[1];
    expect(url).toMatch(new RegExp(`^${server.baseUrl}/console/setup/lnk_`));
    expect(shown.text).toContain(`Setup link for ${target.email}`);
    // Shown once: the accounts page does not show it again.
    expect(await session.get('/console/admin').then((page) => page.text)).not.toContain(url);
    const person = new ConsoleSession(server.baseUrl);
    const landing = await person.get(url!.replace(server.baseUrl, ''));
    expect(landing.status).toBe(200);
    const used = await person.post(url!.replace(server.baseUrl, ''));
    // The member has a password: the link is a recovery, not a fresh authentication.
    expect(used.location).toBe('/console/account?notice=recovery');
    expect((await person.get('/console/account')).text).toContain(target.email);
  });

  it('escapes what people typed on the admin pages', async () => {
    const { session } = await admin();
    const mallory = await createPasswordAccount(server.ctx, { name: '<script>alert(1)</script>' });
    await createOwnedAgent(server.ctx, mallory, '<img src=x onerror=alert(2)>');
    const accounts = await session.get('/console/admin');
    expect(accounts.text).not.toContain('<script>alert(1)');
    expect(accounts.text).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    const agents = await session.get('/console/admin/agents');
    expect(agents.text).not.toContain('<img src=x');
    expect(agents.text).toContain('&lt;img src=x onerror=alert(2)&gt;');
  });

  it('shows the console activity newest first with the actor, and pages through it', async () => {
    const { account: me, session } = await admin();
    const { account: target } = await member();
    await session.post(`/console/admin/accounts/${target.id}/disable`);
    // Events of one second have no order among them: the role change comes a second later.
    server.clock.advance(1);
    await session.get('/console/admin');
    await session.post(`/console/admin/accounts/${target.id}/role`, { role: 'admin' });
    server.clock.advance(1);
    const events = await session.get('/console/admin/events');
    expect(events.status).toBe(200);
    const rows = events.text
      .split(/<tr[ >]/)
      .slice(2)
      .filter((row) => row.includes(target.id));
    const roleRow = rows.find((row) => row.includes('admin.set_role'))!;
    expect(roleRow).toContain(me.email);
    expect(roleRow).toContain(target.email);
    expect(roleRow).toContain('<td data-label="Detail" class="long">admin</td>');
    expect(roleRow).toContain('127.0.0.1');
    expect(rows.findIndex((row) => row.includes('admin.set_role'))).toBeLessThan(
      rows.findIndex((row) => row.includes('admin.disable_account')),
    );
    expect(rows.find((row) => row.includes('admin.disable_account'))).toContain(me.email);

    // 55 newer events: the first page holds 50 of them, "Older" leads to the rest.
    for (let i = 0; i < 55; i++) {
      server.clock.advance(1);
      await recordConsoleEvent(server.ctx, null, 'test.marker', null, null, `marker-${i}`);
    }
    const first = await session.get('/console/admin/events');
    expect(first.text.match(/<td data-label="Detail" class="long">marker-\d+<\/td>/g)).toHaveLength(50);
    expect(first.text).toContain('<td data-label="Detail" class="long">marker-54</td>');
    expect(first.text).toContain('<td data-label="Detail" class="long">marker-5</td>');
    expect(first.text).not.toContain('<td data-label="Detail" class="long">marker-4</td>');
    expect(first.text).toMatch(/<span class="muted">system<\/span>/);
    const older = /href="(\/console\/admin\/events\?before=[^"]+)"/.exec(first.text)?.[1];
    expect(older).toBeDefined();
    const second = await session.get(older!.replace(/&amp;/g, '&'));
    expect(second.status).toBe(200);
    expect(second.text.match(/<td data-label="Detail" class="long">marker-\d+<\/td>/g)).toEqual([
      '<td data-label="Detail" class="long">marker-4</td>',
      '<td data-label="Detail" class="long">marker-3</td>',
      '<td data-label="Detail" class="long">marker-2</td>',
      '<td data-label="Detail" class="long">marker-1</td>',
      '<td data-label="Detail" class="long">marker-0</td>',
    ]);
    expect(second.text).toContain('admin.set_role');
    // A malformed cursor reads as the first page.
    expect((await session.get('/console/admin/events?before=nonsense')).text).toContain(
      '<td data-label="Detail" class="long">marker-54</td>',
    );
  });
});
