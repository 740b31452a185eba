/**
 * Setup and invitation links that outlive their maker (issue 19, finding 6): disabling an
 * account ends the links it made and the setup links made for it, for good; a link whose maker
 * is not active is refused even where its links were not ended; the maker sees their unused
 * links and revokes one, an admin sees and revokes every one, and nobody else can (404).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueLink } from '../../src/domain/accounts.ts';
import { linkId } from '../../src/domain/account-links.ts';
import { digest } from '../../src/crypto.ts';
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
import { expectErrorPage } from '../security/support.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const REVOKED = 'This link was revoked.';
const path = (url: string) => url.replace(server.baseUrl, '');
const tokenOf = (url: string) => url.split('/').pop()!;
/** The id the console names a link by in its URLs. */
const idOf = (url: string) => linkId({ digest: digest(tokenOf(url)) });
const errorOf = (page: Page) => /<code id="error">([^<]*)<\/code>/.exec(page.text)?.[1];

async function person(
  role: 'admin' | 'member' = 'member',
): Promise<{ account: AccountRecord; session: ConsoleSession }> {
  const account = await createPasswordAccount(server.ctx, { role });
  const session = await signIn(server.baseUrl, account.email);
  await session.get(role === 'admin' ? '/console/admin' : '/console/account');
  return { account, session };
}

/** An invitation made on the account page, as a person makes one: its URL, shown once. */
async function invite(session: ConsoleSession): Promise<string> {
  await session.get('/console/account');
  const page = await session.submit('/console/account/invitations');
  expect(page.status).toBe(200);
  const url = /<code id="invitation-url">([^<]+)<\/code>/.exec(page.text)?.[1];
  expect(url).toMatch(/\/console\/invitation\/lnk_/);
  return url!;
}

/** Tries to sign up with the invitation: the page it answers, and whether an account was created. */
async function trySignUp(url: string, email: string): Promise<{ form: Response; submitted: Page; created: boolean }> {
  const form = await fetch(url);
  const stranger = new ConsoleSession(server.baseUrl);
  await stranger.get('/console/sign-in');
  const submitted = await stranger.post(path(url), { email, password: TEST_PASSWORD });
  return {
    form,
    submitted,
    created: (await server.ctx.store.accounts.findByEmail(email.toLowerCase())) !== undefined,
  };
}

async function expectRevoked(url: string, email: string): Promise<void> {
  const { form, submitted, created } = await trySignUp(url, email);
  const { description } = await expectErrorPage(form, 404, 'not_found');
  expect(description).toContain(REVOKED);
  expect(submitted.status).toBe(404);
  expect(submitted.text).toContain(REVOKED);
  expect(created, `an account for ${email}`).toBe(false);
}

const linkRows = (page: Page) => [...page.text.matchAll(/<tr id="link-([0-9a-f]{16})">/g)].map((match) => match[1]);

describe('disabling an account ends its links', () => {
  it('a disabled member\'s invitation answers "revoked" and creates no account, and enabling the member does not bring it back', async () => {
    const { session: admin } = await person('admin');
    const { account: member, session } = await person();
    const url = await invite(session);
    const { url: setupForMember } = await issueLink(server.ctx, 'setup', { accountId: member.id });
    // The admin's setup link for the member, made in the admin area.
    const setupPage = await admin.submit(`/console/admin/accounts/${member.id}/setup-link`);
    const adminSetup = /<code id="setup-url">([^<]+)<\/code>/.exec(setupPage.text)![1]!;

    expect((await admin.post(`/console/admin/accounts/${member.id}/disable`)).location).toBe(
      '/console/admin?notice=account_disabled',
    );
    await expectRevoked(url, 'invited.while.disabled@example.com');
    const link = await server.ctx.store.links.find(digest(tokenOf(url)));
    expect(link).toMatchObject({ used_at: null, revoked_at: expect.any(Number) });
    // The setup links made for the disabled account are ended too, the CLI's included.
    for (const setup of [setupForMember, adminSetup])
      expect((await server.ctx.store.links.find(digest(tokenOf(setup))))?.revoked_at).toEqual(expect.any(Number));

    await admin.get('/console/admin');
    expect((await admin.post(`/console/admin/accounts/${member.id}/enable`)).location).toBe(
      '/console/admin?notice=account_enabled',
    );
    await expectRevoked(url, 'invited.after.enable@example.com');
    for (const setup of [setupForMember, adminSetup]) {
      const answer = await fetch(setup);
      expect((await expectErrorPage(answer, 404, 'not_found')).description).toContain(REVOKED);
    }
    // Enabled again, the member makes new links, and those work.
    const again = await signIn(server.baseUrl, member.email);
    const fresh = await invite(again);
    expect((await trySignUp(fresh, 'invited.anew@example.com')).created).toBe(true);
  });

  it('a link whose maker is disabled is refused even where its links were not ended (another node, another path)', async () => {
    const { account: member, session } = await person();
    const url = await invite(session);
    // Disabled behind setAccountStatus's back: the link itself is still unrevoked.
    await server.ctx.store.accounts.update(member.id, { status: 'disabled' });
    expect((await server.ctx.store.links.find(digest(tokenOf(url))))?.revoked_at ?? null).toBeNull();
    await expectRevoked(url, 'invited.by.disabled@example.com');
    // The use itself is guarded too, in the statement that uses the link.
    expect(await server.ctx.store.links.use(digest(tokenOf(url)), 'invite', server.clock())).toBe(false);
    expect((await server.ctx.store.links.find(digest(tokenOf(url))))?.used_at).toBeNull();
  });
});

describe('unused links on the account page', () => {
  it('the maker sees their unused links without their tokens, and revokes one, which then no longer works', async () => {
    const { account: member, session } = await person();
    const first = await invite(session);
    const second = await invite(session);
    const page = await session.get('/console/account');
    expect(page.text).toContain('Your unused links');
    // Oldest first; the two were made in the same second, whose order is arbitrary.
    expect(linkRows(page).sort()).toEqual([idOf(first), idOf(second)].sort());
    expect(page.text).toContain(`action="/console/account/links/${idOf(first)}/revoke"`);
    for (const url of [first, second]) {
      expect(page.text).not.toContain(tokenOf(url));
      expect(page.text).not.toContain(digest(tokenOf(url)));
    }

    const revoked = await session.post(`/console/account/links/${idOf(first)}/revoke`);
    expect(revoked.location).toBe('/console/account?notice=link_revoked');
    const after = await session.get('/console/account?notice=link_revoked');
    expect(noticeOf(after)).toBe('The link is revoked: it no longer works.');
    expect(linkRows(after)).toEqual([idOf(second)]);
    await expectRevoked(first, 'revoked.invitee@example.com');
    // Once revoked, it cannot be revoked again: it is no longer outstanding.
    expect((await session.post(`/console/account/links/${idOf(first)}/revoke`)).status).toBe(404);
    const events = (await server.ctx.store.activity.list({ limit: 1000 })).filter(
      (event) => event.action === 'account.revoke_link' && event.actor_id === member.id,
    );
    expect(events).toEqual([expect.objectContaining({ target: member.id, detail: `invite ${idOf(first)}` })]);

    // The other one still works, and once used it leaves the list.
    expect((await trySignUp(second, 'kept.invitee@example.com')).created).toBe(true);
    expect(linkRows(await session.get('/console/account'))).toEqual([]);
  });

  it("a member cannot revoke another member's link: 404 as for a missing one, and the link still works", async () => {
    const { session: owner } = await person();
    const url = await invite(owner);
    const { session: stranger } = await person();
    expect(linkRows(await stranger.get('/console/account'))).toEqual([]);
    for (const id of [idOf(url), '0123456789abcdef', 'not-a-link-id', digest(tokenOf(url))]) {
      const answer = await stranger.post(`/console/account/links/${encodeURIComponent(id)}/revoke`);
      expect(answer.status, id).toBe(404);
      expect(errorOf(answer), id).toBe('not_found');
    }
    // Nor through the admin area: that is for admins.
    expect((await stranger.post(`/console/admin/links/${idOf(url)}/revoke`)).status).toBe(403);
    expect((await stranger.get('/console/admin/links')).status).toBe(403);
    expect(linkRows(await owner.get('/console/account'))).toEqual([idOf(url)]);
    expect((await trySignUp(url, 'still.invited@example.com')).created).toBe(true);
  });

  it('the revoke routes refuse a post without its CSRF token (403), and the link stays', async () => {
    const { session: owner } = await person();
    const { session: admin } = await person('admin');
    const url = await invite(owner);
    await owner.get('/console/account');
    expect((await owner.post(`/console/account/links/${idOf(url)}/revoke`, { _csrf: null })).status).toBe(403);
    expect((await admin.post(`/console/admin/links/${idOf(url)}/revoke`, { _csrf: null })).status).toBe(403);
    expect(
      (await owner.post(`/console/account/links/${idOf(url)}/revoke`, {}, { 'sec-fetch-site': 'cross-site' })).status,
    ).toBe(403);
    expect(linkRows(await owner.get('/console/account'))).toEqual([idOf(url)]);
    expect((await server.ctx.store.links.find(digest(tokenOf(url))))?.revoked_at).toBeNull();
    // With the token it goes through.
    expect((await owner.post(`/console/account/links/${idOf(url)}/revoke`)).location).toBe(
      '/console/account?notice=link_revoked',
    );
  });
});

describe('unused links in the admin area', () => {
  it("an admin sees every unused link with its maker, revokes another member's, and it no longer works", async () => {
    const { account: me, session: admin } = await person('admin');
    const { account: member, session } = await person();
    const url = await invite(session);
    const target = await createPasswordAccount(server.ctx);
    const { url: cliSetup } = await issueLink(server.ctx, 'setup', { accountId: target.id });
    const { url: shortLived } = await issueLink(server.ctx, 'setup', { accountId: target.id, ttl: 60 });
    // Used, expired or revoked links are not listed.
    const used = await invite(session);
    expect((await trySignUp(used, 'used.invitee@example.com')).created).toBe(true);

    const page = await admin.get('/console/admin/links');
    expect(page.status).toBe(200);
    expect(page.text).toContain('aria-current="page">Unused links');
    const rows = linkRows(page);
    expect(rows).toEqual(expect.arrayContaining([idOf(url), idOf(cliSetup), idOf(shortLived)]));
    expect(rows).not.toContain(idOf(used));
    // A row's text, tags (such as the <wbr> in an email) left out.
    const row = (id: string) =>
      new RegExp(`<tr id="link-${id}">([\\s\\S]*?)</tr>`).exec(page.text)![1]!.replace(/<[^>]*>/g, '');
    expect(row(idOf(url))).toContain('Invitation');
    expect(row(idOf(url))).toContain(member.email);
    expect(row(idOf(cliSetup))).toContain('Setup link');
    expect(row(idOf(cliSetup))).toContain(target.email);
    expect(row(idOf(cliSetup))).toContain('CLI');
    expect(page.text).not.toContain(tokenOf(url));

    const revoked = await admin.post(`/console/admin/links/${idOf(url)}/revoke`);
    expect(revoked.location).toBe('/console/admin/links?notice=link_revoked');
    const after = await admin.get('/console/admin/links?notice=link_revoked');
    expect(noticeOf(after)).toBe('The link is revoked: it no longer works.');
    expect(linkRows(after)).not.toContain(idOf(url));
    await expectRevoked(url, 'admin.revoked.invitee@example.com');
    expect(linkRows(await session.get('/console/account'))).toEqual([]);
    const events = (await server.ctx.store.activity.list({ limit: 1000 })).filter(
      (event) => event.action === 'admin.revoke_link' && event.actor_id === me.id,
    );
    expect(events).toEqual([expect.objectContaining({ target: member.id, detail: `invite ${idOf(url)}` })]);

    // An expired link leaves the list too.
    server.clock.advance(60);
    const later = linkRows(await admin.get('/console/admin/links'));
    expect(later).toContain(idOf(cliSetup));
    expect(later).not.toContain(idOf(shortLived));
  });
});
