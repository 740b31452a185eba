/**
 * A console session alone cannot take an account over (issue 19, finding 5; docs/design.md §11):
 * adding or removing a passkey or a password needs a fresh authentication (a sign-in, the
 * password, or a passkey with user verification, within CONSOLE_REAUTH_WINDOW); the owner is
 * told by mail and each change is a console event. The passkey path in a real browser is in
 * browser-journey.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueLink } from '../../src/domain/accounts.ts';
import type { AccountRecord } from '../../src/store/accounts.ts';
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

const CONFIRM = '/console/account/confirm?next=%2Fconsole%2Faccount';

/** Signs in now, then lets the sign-in grow older than the window: a session left open, or a stolen cookie. */
async function staleSession(account: AccountRecord): Promise<ConsoleSession> {
  const person = await signIn(server.baseUrl, account.email);
  server.clock.advance(301);
  await person.get('/console/account');
  return person;
}

const eventsOf = async (accountId: string) =>
  (await server.ctx.store.activity.list({ limit: 500 }))
    .filter((event) => event.target === accountId)
    .map((event) => event.action);

/** The mail that arrives next for `to`, skipping others'. */
async function nextMailTo(to: string): Promise<Mail> {
  for (;;) {
    const mail = await mailbox.next();
    if (mail.to.includes(to)) return mail;
  }
}

describe('a stale session cannot change how the account signs in', () => {
  it('removing the password, removing a passkey and adding one all ask to confirm first, and change nothing', async () => {
    const account = await accountWithPasskey(server.ctx);
    const person = await staleSession(account);
    const remove = await person.post('/console/account/password/remove');
    expect(remove.status).toBe(303);
    expect(remove.location).toBe(CONFIRM);
    const removeKey = await person.post(`/console/account/passkeys/cred-${account.id}/remove`);
    expect(removeKey.location).toBe(CONFIRM);
    const options = await person.postJson('/console/account/passkeys/options', {});
    expect(options).toEqual({
      status: 401,
      body: {
        error: 'insufficient_user_authentication',
        error_description: expect.stringContaining('Confirm it is you'),
      },
    });
    const finish = await person.postJson('/console/account/passkeys', { challengeId: 'chl_x', response: {} });
    expect(finish.status).toBe(401);
    expect((await server.ctx.store.accounts.find(account.id))!.password_hash).not.toBeNull();
    expect(await server.ctx.store.passkeys.list(account.id)).toHaveLength(1);
  });

  it('setting a first password on a passkey-only account asks to confirm too', async () => {
    const account = await accountWithPasskey(server.ctx);
    const person = await staleSession(account);
    await server.ctx.store.accounts.update(account.id, { password_hash: null });
    const answer = await person.post('/console/account/password', { password: 'a brand new password of mine' });
    expect(answer.location).toBe(CONFIRM);
    expect((await server.ctx.store.accounts.find(account.id))!.password_hash).toBeNull();
  });

  it('changing the password still needs the current one, which also counts as confirming', async () => {
    const account = await accountWithPasskey(server.ctx);
    const person = await staleSession(account);
    const wrong = await person.post('/console/account/password', {
      current_password: 'not my password at all',
      password: 'a brand new password of mine',
    });
    expect(wrong.status).toBe(400);
    expect(wrong.text).toContain('The current password is wrong.');
    const right = await person.post('/console/account/password', {
      current_password: TEST_PASSWORD,
      password: 'a brand new password of mine',
    });
    expect(right.location).toBe('/console/account?notice=password_saved');
    const mail = await nextMailTo(account.email);
    expect(mail.headers).toContain('A sign-in method of your agentauth account changed');
    expect(mail.text).toContain('Your password was changed');
  });
});

describe('confirming with the password', () => {
  it('a wrong password is refused and recorded; the right one lets the change through, which is mailed and recorded', async () => {
    const account = await accountWithPasskey(server.ctx);
    const person = await staleSession(account);
    const page = await person.get(CONFIRM);
    expect(page.status).toBe(200);
    expect(page.text).toContain('Confirm it is you');
    expect(page.text).toContain('id="passkey-confirm"');
    const wrong = await person.post('/console/account/confirm', {
      password: 'not my password at all',
      next: '/console/account',
    });
    expect(wrong.status).toBe(401);
    expect(wrong.text).toContain('The password is wrong.');
    expect((await person.post('/console/account/password/remove')).location).toBe(CONFIRM);

    const right = await person.post('/console/account/confirm', { password: TEST_PASSWORD, next: '/console/account' });
    expect(right.status).toBe(303);
    expect(right.location).toBe('/console/account');
    expect((await person.post('/console/account/password/remove')).location).toBe(
      '/console/account?notice=password_removed',
    );
    expect((await server.ctx.store.accounts.find(account.id))!.password_hash).toBeNull();
    expect(await eventsOf(account.id)).toEqual(
      expect.arrayContaining(['account.reauthenticate_failed', 'account.reauthenticate', 'account.remove_password']),
    );
    const mail = await nextMailTo(account.email);
    expect(mail.text).toContain('Your password was removed');

    // The confirmation lasts the window, and no longer.
    server.clock.advance(301);
    expect((await person.post(`/console/account/passkeys/cred-${account.id}/remove`)).location).toBe(CONFIRM);
  });

  it('confirming is throttled like a sign-in: the failures count against the account', async () => {
    const throttled = await startTestServer({ env: { CONSOLE_SIGNIN_FAILURES_PER_ACCOUNT: '2' } });
    try {
      const account = await createPasswordAccount(throttled.ctx);
      const person = await signIn(throttled.baseUrl, account.email);
      await person.get(CONFIRM);
      for (let i = 0; i < 2; i++)
        expect((await person.post('/console/account/confirm', { password: `wrong ${i}` })).status).toBe(401);
      const refused = await person.post('/console/account/confirm', { password: TEST_PASSWORD });
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    } finally {
      await throttled.close();
    }
  });

  it('a next outside the console is not followed', async () => {
    const account = await accountWithPasskey(server.ctx);
    const person = await staleSession(account);
    await person.get(CONFIRM);
    const right = await person.post('/console/account/confirm', { password: TEST_PASSWORD, next: '//evil.example/' });
    expect(right.location).toBe('/console');
  });
});

describe('what counts as fresh', () => {
  it('signing in counts: right after it, a sign-in method can be removed without confirming', async () => {
    const account = await accountWithPasskey(server.ctx);
    const person = await signIn(server.baseUrl, account.email);
    await person.get('/console/account');
    expect((await person.post(`/console/account/passkeys/cred-${account.id}/remove`)).location).toBe(
      '/console/account?notice=passkey_removed',
    );
    const mail = await nextMailTo(account.email);
    expect(mail.text).toContain('The passkey named "Laptop" was removed');
  });

  it('CONSOLE_REAUTH_WINDOW sets the window', async () => {
    const short = await startTestServer({ env: { CONSOLE_REAUTH_WINDOW: '30' } });
    try {
      const account = await createPasswordAccount(short.ctx);
      await short.ctx.store.passkeys.insert({
        id: 'cred-short',
        account_id: account.id,
        public_key: 'x',
        counter: 0,
        transports: null,
        name: 'Key',
        created_at: short.clock(),
        last_used_at: null,
      });
      const person = await signIn(short.baseUrl, account.email);
      short.clock.advance(31);
      await person.get('/console/account');
      expect((await person.post('/console/account/password/remove')).location).toBe(CONFIRM);
    } finally {
      await short.close();
    }
  });

  it('an account with no way to sign in yet (just set up by a link) adds its first one without confirming', async () => {
    const account = await createPasswordAccount(server.ctx);
    await server.ctx.store.accounts.update(account.id, { password_hash: null });
    const { url } = await issueLink(server.ctx, 'setup', { accountId: account.id });
    const person = new ConsoleSession(server.baseUrl);
    const path = new URL(url).pathname;
    await person.get(path);
    expect((await person.post(path)).status).toBe(303);
    server.clock.advance(301);
    await person.get('/console/account');
    const answer = await person.post('/console/account/password', { password: 'a first password of my own' });
    expect(answer.location).toBe('/console/account?notice=password_saved');
  });
});
