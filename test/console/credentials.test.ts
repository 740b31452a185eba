/**
 * A console session alone mints no credential that outlives it (issue 35, medium finding 1;
 * docs/design.md §11): an API key, a setup link and an invitation need a fresh authentication
 * (past CONSOLE_REAUTH_WINDOW the console asks to confirm, then brings the person back) and each
 * mails the account it lets in; no account makes a setup link for itself; a setup link to an
 * account that already has a password or a passkey is a recovery, not a fresh authentication;
 * "Sign out everywhere" may revoke the account's API keys, which the account page lists.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueLink } from '../../src/domain/accounts.ts';
import { operator } from '../../src/management/actor.ts';
import { createApiKey, revokeApiKey } from '../../src/management/api-keys.ts';
import type { AccountRecord } from '../../src/store/accounts.ts';
import { caller } from '../helpers/api.ts';
import {
  accountWithPasskey,
  ConsoleSession,
  createPasswordAccount,
  signIn,
  TEST_PASSWORD,
} from '../helpers/console.ts';
import { type Mail, startMailbox } from '../helpers/mailbox.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let mailbox: Awaited<ReturnType<typeof startMailbox>>;
beforeAll(async () => {
  mailbox = await startMailbox();
  server = await startTestServer({ env: { SMTP_URL: mailbox.url, CONSOLE_REAUTH_WINDOW: '300' } });
});
afterAll(async () => {
  await server.close();
  await mailbox.close();
});

const confirmFirst = (back: string) => `/console/account/confirm?next=${encodeURIComponent(back)}`;

/** Signs in now, then lets the sign-in grow older than the window: a session left open, or a stolen cookie. */
async function staleSession(account: AccountRecord): Promise<ConsoleSession> {
  const person = await signIn(server.baseUrl, account.email);
  server.clock.advance(301);
  await person.get('/console/account');
  return person;
}

/** The mail that arrives next for `to`, skipping others'. */
async function nextMailTo(to: string): Promise<Mail> {
  for (;;) {
    const mail = await mailbox.next();
    if (mail.to.includes(to)) return mail;
  }
}

/** A key of the account, made beside the server (the operator), with a caller of the API. */
async function keyOf(account: AccountRecord, name = 'deploy script') {
  const made = await createApiKey(server.ctx, operator(), {
    accountEmail: account.email,
    name,
    access: 'write',
    reach: 'own',
  });
  return { ...made, call: caller(server, made.secret) };
}

const keysOf = async (accountId: string) => server.ctx.store.apiKeys.list(accountId);
const linksMadeBy = async (accountId: string) =>
  (await server.ctx.store.links.listOutstanding(server.clock(), accountId)).length;

describe('making a credential past the re-authentication window', () => {
  it('an API key: refused until the person confirms, then made, shown once and mailed to the account', async () => {
    const account = await createPasswordAccount(server.ctx);
    const person = await staleSession(account);
    await person.get('/console/api-keys');
    const form = { name: 'Deploy', access: 'write', reach: 'own', expires_in_days: '365' };
    const refused = await person.post('/console/api-keys', form);
    expect(refused.status).toBe(303);
    expect(refused.location).toBe(confirmFirst('/console/api-keys'));
    expect(await keysOf(account.id)).toEqual([]);

    const confirmPage = await person.get(refused.location!);
    expect(confirmPage.text).toContain('make an API key or a one-time link');
    const confirmed = await person.post('/console/account/confirm', {
      password: TEST_PASSWORD,
      next: '/console/api-keys',
    });
    expect(confirmed.location).toBe('/console/api-keys');
    await person.get('/console/api-keys');
    const made = await person.submit('/console/api-keys', form);
    expect(made.posted.location).toMatch(/^\/console\/api-keys\/key_[\w-]+\/created$/);
    const secret = /<code id="api-key">(aak_[^<]+)<\/code>/.exec(made.text)?.[1];
    expect(secret).toBeDefined();
    const [key] = await keysOf(account.id);
    expect(key).toMatchObject({ name: 'Deploy', access: 'write', revoked_at: null });

    const mail = await nextMailTo(account.email);
    expect(mail.headers).toContain('A new way into your agentauth account');
    expect(mail.text).toContain('An API key named "Deploy" (read and write, own account');
    expect(mail.text).not.toContain(secret!);
    expect((await caller(server, secret!)('GET', '/agents')).status).toBe(200);
  });

  it('a setup link for another account: refused until the admin confirms, then made and mailed to that account', async () => {
    const admin = await createPasswordAccount(server.ctx, { role: 'admin' });
    const member = await createPasswordAccount(server.ctx);
    const person = await staleSession(admin);
    await person.get('/console/admin');
    const refused = await person.post(`/console/admin/accounts/${member.id}/setup-link`);
    expect(refused.location).toBe(confirmFirst('/console/admin'));
    expect(await linksMadeBy(admin.id)).toBe(0);

    await person.get(refused.location!);
    expect(
      (await person.post('/console/account/confirm', { password: TEST_PASSWORD, next: '/console/admin' })).location,
    ).toBe('/console/admin');
    await person.get('/console/admin');
    const shown = await person.submit(`/console/admin/accounts/${member.id}/setup-link`);
    const url = /<code id="setup-url">([^<]+)<\/code>/.exec(shown.text)?.[1];
    expect(url).toMatch(/\/console\/setup\/lnk_/);
    expect(await linksMadeBy(admin.id)).toBe(1);

    const mail = await nextMailTo(member.email);
    expect(mail.text).toContain('A one-time setup link');
    expect(mail.text).toContain(`by ${admin.email}`);
    expect(mail.text).not.toContain(url!.split('/').pop()!);
  });

  it('an invitation: refused until the person confirms, then made and mailed to its maker', async () => {
    const account = await createPasswordAccount(server.ctx);
    const person = await staleSession(account);
    await person.get('/console/account');
    const refused = await person.post('/console/account/invitations');
    expect(refused.location).toBe(confirmFirst('/console/account'));
    expect(await linksMadeBy(account.id)).toBe(0);

    await person.get(refused.location!);
    await person.post('/console/account/confirm', { password: TEST_PASSWORD, next: '/console/account' });
    await person.get('/console/account');
    const made = await person.submit('/console/account/invitations');
    expect(made.text).toMatch(/\/console\/invitation\/lnk_/);
    expect(await linksMadeBy(account.id)).toBe(1);
    expect((await nextMailTo(account.email)).text).toContain('An invitation link');
  });
});

describe('no account makes a setup link for itself', () => {
  it('an admin freshly signed in is refused a setup link for their own account (403), and none is made', async () => {
    const admin = await createPasswordAccount(server.ctx, { role: 'admin' });
    const person = await signIn(server.baseUrl, admin.email);
    await person.get('/console/admin');
    const refused = await person.post(`/console/admin/accounts/${admin.id}/setup-link`);
    expect(refused.status).toBe(403);
    expect(refused.text).toContain('You cannot make a setup link for your own account');
    expect(await linksMadeBy(admin.id)).toBe(0);
  });
});

describe('a setup link to an account that has a password or a passkey', () => {
  /** An account with a password and a passkey, signed in by a setup link the operator made. */
  async function recovered(): Promise<{ account: AccountRecord; person: ConsoleSession }> {
    const account = await accountWithPasskey(server.ctx);
    const { path } = await issueLink(server.ctx, 'setup', { accountId: account.id });
    const person = new ConsoleSession(server.baseUrl);
    await person.get(path);
    const used = await person.post(path);
    expect(used.location).toBe('/console/account?notice=recovery');
    return { account, person };
  }

  it('is not a fresh authentication: adding a passkey, removing the password or a key ask to confirm', async () => {
    const { account, person } = await recovered();
    const page = await person.get('/console/account?notice=recovery');
    expect(page.text).toContain('You signed in with a setup link');
    expect(page.text).toContain('(recovery)');
    const options = await person.postJson('/console/account/passkeys/options', {});
    expect(options.status).toBe(401);
    expect(options.body.error).toBe('insufficient_user_authentication');
    expect((await person.post('/console/account/password/remove')).location).toBe(confirmFirst('/console/account'));
    expect((await person.post(`/console/account/passkeys/cred-${account.id}/remove`)).location).toBe(
      confirmFirst('/console/account'),
    );
    await person.get('/console/api-keys');
    const key = await person.post('/console/api-keys', { name: 'x', access: 'write', expires_in_days: '30' });
    expect(key.location).toBe(confirmFirst('/console/api-keys'));
    expect((await server.ctx.store.accounts.find(account.id))!.password_hash).toBe(account.password_hash);
    expect(await server.ctx.store.passkeys.list(account.id)).toHaveLength(1);
    expect(await keysOf(account.id)).toEqual([]);
  });

  it('may set a new password without the old one, within the window only, and the owner is mailed', async () => {
    const { account, person } = await recovered();
    await person.get('/console/account');
    const set = await person.post('/console/account/password', { password: 'a new password after losing mine' });
    expect(set.location).toBe('/console/account?notice=password_saved');
    expect((await server.ctx.store.accounts.find(account.id))!.password_hash).not.toBe(account.password_hash);
    expect((await nextMailTo(account.email)).text).toContain(
      'Your password was changed after signing in with a setup link',
    );
    // The session is still not fresh: the new password must be given to confirm.
    expect((await person.post('/console/account/password/remove')).location).toBe(confirmFirst('/console/account'));

    server.clock.advance(301);
    await person.get('/console/account');
    const late = await person.post('/console/account/password', { password: 'yet another password of mine' });
    expect(late.status).toBe(400);
    expect(late.text).toContain('The current password is wrong.');
  });
});

describe('sign out everywhere, and the account’s API keys', () => {
  it('the account page lists the working keys beside the sessions, linked to where they are managed', async () => {
    const account = await createPasswordAccount(server.ctx);
    const working = await keyOf(account, 'Nightly export');
    expect((await working.call('GET', '/agents')).status).toBe(200);
    const old = await keyOf(account, 'Old script');
    await revokeApiKey(server.ctx, operator(), old.key.id);
    const person = await signIn(server.baseUrl, account.email);
    const page = await person.get('/console/account');
    const keys = /<table[^>]*id="account-api-keys"[\s\S]*?<\/table>/.exec(page.text)?.[0] ?? '';
    expect(keys).toContain('Nightly export');
    expect(keys).toContain(`href="/console/api-keys#key-${working.key.id}"`);
    expect(keys).toContain('Read and write, own account');
    expect(keys).toContain('127.0.0.1'); // its last use
    expect(keys).not.toContain('Old script');
    expect(page.text).toContain('Also revoke my API keys');
  });

  it('with "also revoke my API keys" the keys stop at once (401); without it they keep working', async () => {
    const account = await createPasswordAccount(server.ctx);
    const { call, key } = await keyOf(account);
    const elsewhere = await signIn(server.baseUrl, account.email);
    const person = await signIn(server.baseUrl, account.email);
    await person.get('/console/account');
    const kept = await person.post('/console/account/sessions/end-all');
    expect(kept.location).toBe('/console/sign-in');
    expect((await call('GET', '/agents')).status).toBe(200);
    expect((await elsewhere.get('/console/account')).status).toBe(303);

    const again = await signIn(server.baseUrl, account.email);
    await again.get('/console/account');
    const ended = await again.post('/console/account/sessions/end-all', { api_keys: 'revoke' });
    expect(ended.location).toBe('/console/sign-in');
    const refused = await call('GET', '/agents');
    expect(refused.status).toBe(401);
    expect(refused.json.error).toBe('invalid_token');
    expect((await server.ctx.store.apiKeys.find(key.id))!.revoked_at).not.toBeNull();
    expect(await server.ctx.store.sessions.list(account.id, server.clock())).toEqual([]);
  });
});
