/**
 * Accounts and sessions in the console (issue 10, items 1 and 2): setup links, invitations and
 * open sign-up, the session list with sign-out per session and everywhere, idle and absolute
 * lifetimes, passwords, throttled sign-in, and the passkey endpoints' answers to bad input.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, issueLink } from '../../src/domain/accounts.ts';
import { ConsoleSession, createPasswordAccount, noticeOf, signIn, TEST_PASSWORD } from '../helpers/console.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { expectErrorPage, expectJsonError } from '../security/support.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ env: { CONSOLE_SESSION_IDLE: '600', CONSOLE_SESSION_LIFETIME: '3600' } });
});
afterAll(() => server.close());

const path = (url: string) => url.replace(server.baseUrl, '');

describe('one-time links', () => {
  it('a setup link shows a button, signs in once on POST, and then says it was used', async () => {
    // An account with no way to sign in yet, as `agentauth account create` makes it (a link to one
    // with a password is a recovery: reauthentication-links.test.ts).
    const account = await createAccount(server.ctx, { email: `new-admin-${Date.now()}@example.com`, role: 'admin' });
    const { url } = await issueLink(server.ctx, 'setup', { accountId: account.id });
    const person = new ConsoleSession(server.baseUrl);
    const landing = await person.get(path(url));
    expect(landing.status).toBe(200);
    expect(landing.text).toContain('Set up your account');
    // A GET (a mail scanner, a link preview) uses nothing: the link still works.
    expect((await new ConsoleSession(server.baseUrl).get(path(url))).status).toBe(200);
    const used = await person.post(path(url));
    expect(used.status).toBe(303);
    expect(used.location).toBe('/console/account?notice=welcome');
    const page = await person.get('/console/account?notice=welcome');
    expect(noticeOf(page)).toContain('Add a passkey or set a password');
    const again = await fetch(url);
    await expectErrorPage(again, 404, 'not_found');
  });

  it('an invitation creates a member account with a password; the link works once', async () => {
    const inviter = await createPasswordAccount(server.ctx, { name: 'Inviting Irene' });
    const { url } = await issueLink(server.ctx, 'invite', { role: 'member', createdBy: inviter.id });
    const person = new ConsoleSession(server.baseUrl);
    const form = await person.get(path(url));
    expect(form.text).toContain('Inviting Irene invited you');
    const short = await person.post(path(url), { email: 'new@example.com', name: 'New', password: 'too short' });
    expect(short.status).toBe(400);
    expect(short.text).toContain('Use at least 15 characters');
    expect(await server.ctx.store.accounts.findByEmail('new@example.com')).toBeUndefined();
    const created = await person.post(path(url), {
      email: 'New@Example.com',
      name: 'New Person',
      password: TEST_PASSWORD,
    });
    expect(created.status).toBe(303);
    const account = await server.ctx.store.accounts.findByEmail('new@example.com');
    expect(account).toMatchObject({
      email: 'New@Example.com',
      role: 'member',
      name: 'New Person',
      email_verified: false,
    });
    expect(account!.password_hash).toMatch(/^\$argon2id\$/);
    await expectErrorPage(await fetch(url), 404, 'not_found');
    // The email is unique whatever its case.
    const { url: second } = await issueLink(server.ctx, 'invite', { role: 'member', createdBy: inviter.id });
    const other = new ConsoleSession(server.baseUrl);
    await other.get(path(second));
    const taken = await other.post(path(second), { email: 'NEW@example.com', password: TEST_PASSWORD });
    expect(taken.status).toBe(400);
    expect(taken.text).toContain('An account with this email already exists.');
  });

  it('open sign-up is refused unless CONSOLE_SIGNUP=open', async () => {
    const page = await new ConsoleSession(server.baseUrl).get('/console/sign-up');
    expect(page.status).toBe(403);
    const open = await startTestServer({ env: { CONSOLE_SIGNUP: 'open' } });
    try {
      const person = new ConsoleSession(open.baseUrl);
      expect((await person.get('/console/sign-up')).status).toBe(200);
      expect(
        (await person.post('/console/sign-up', { email: 'anyone@example.com', password: TEST_PASSWORD })).status,
      ).toBe(303);
      expect(await open.ctx.store.accounts.findByEmail('anyone@example.com')).toMatchObject({ role: 'member' });
    } finally {
      await open.close();
    }
  });

  it('CONSOLE_SIGNUP=closed refuses invitations too', async () => {
    const closed = await startTestServer({ env: { CONSOLE_SIGNUP: 'closed' } });
    try {
      const { url } = await issueLink(closed.ctx, 'invite', { role: 'member' });
      const person = new ConsoleSession(closed.baseUrl);
      expect((await person.get(url.replace(closed.baseUrl, ''))).status).toBe(403);
    } finally {
      await closed.close();
    }
  });
});

describe('sessions', () => {
  it('lists the sessions, signs out one, and everywhere else', async () => {
    const account = await createPasswordAccount(server.ctx);
    const laptop = await signIn(server.baseUrl, account.email);
    const phone = await signIn(server.baseUrl, account.email);
    const tablet = await signIn(server.baseUrl, account.email);
    const page = await laptop.get('/console/account');
    expect(page.text.match(/<tr>\s*<td data-label="Signed in" class="title"><time/g)?.length).toBe(3);
    expect(page.text).toContain('This session');
    const sessions = await server.ctx.store.sessions.list(account.id, server.clock());
    const mine = (await server.ctx.store.sessions.find(
      (await import('../../src/crypto.ts')).digest(laptop.cookies.get('agentauth_console')!),
      server.clock(),
    ))!.session;
    const phoneSession = sessions.find((s) => s.id !== mine.id)!;
    expect((await laptop.post(`/console/account/sessions/${phoneSession.id}/end`)).location).toBe(
      '/console/account?notice=session_ended',
    );
    expect((await server.ctx.store.sessions.list(account.id, server.clock())).length).toBe(2);
    expect((await laptop.post('/console/account/sessions/end-others')).status).toBe(303);
    expect((await server.ctx.store.sessions.list(account.id, server.clock())).map((s) => s.id)).toEqual([mine.id]);
    expect((await phone.get('/console')).location).toMatch(/^\/console\/sign-in/);
    expect((await tablet.get('/console')).location).toMatch(/^\/console\/sign-in/);
    expect((await laptop.get('/console')).status).toBe(200);
    // Another account's session id is not this account's to end.
    const other = await createPasswordAccount(server.ctx);
    const otherSession = await signIn(server.baseUrl, other.email);
    await otherSession.post(`/console/account/sessions/${mine.id}/end`);
    expect((await laptop.get('/console')).status).toBe(200);
    // Everywhere: this one too, and the cookie is cleared.
    const out = await laptop.post('/console/account/sessions/end-all');
    expect(out.location).toBe('/console/sign-in');
    expect(await server.ctx.store.sessions.list(account.id, server.clock())).toEqual([]);
  });

  it('ends after CONSOLE_SESSION_IDLE without a request, and after CONSOLE_SESSION_LIFETIME whatever the activity', async () => {
    const account = await createPasswordAccount(server.ctx);
    const idle = await signIn(server.baseUrl, account.email);
    server.clock.advance(599);
    expect((await idle.get('/console')).status).toBe(200);
    server.clock.advance(599);
    expect((await idle.get('/console')).status).toBe(200);
    server.clock.advance(601);
    expect((await idle.get('/console')).location).toMatch(/^\/console\/sign-in/);

    const busy = await signIn(server.baseUrl, account.email);
    for (let elapsed = 0; elapsed < 3600 - 500; elapsed += 500) {
      server.clock.advance(500);
      expect((await busy.get('/console')).status).toBe(200);
    }
    server.clock.advance(500);
    expect((await busy.get('/console')).location).toMatch(/^\/console\/sign-in/);
  });

  it('after sign-in goes back to the console page asked for, never to another site', async () => {
    const account = await createPasswordAccount(server.ctx);
    for (const [next, expected] of [
      ['/console/account', '/console/account'],
      ['https://evil.example/', '/console'],
      ['//evil.example/', '/console'],
      ['/console//evil.example', '/console'],
      ['/console/\\evil.example', '/console'],
    ]) {
      const person = new ConsoleSession(server.baseUrl);
      await person.get(`/console/sign-in?next=${encodeURIComponent(next!)}`);
      const answer = await person.post('/console/sign-in', {
        email: account.email,
        password: TEST_PASSWORD,
        next: next!,
      });
      expect(answer.location, next).toBe(expected);
    }
  });

  it('names its cookies __Host- with Secure, HttpOnly and SameSite=Lax under https', async () => {
    const https = await startTestServer({ env: { BASE_URL: 'https://id.example' } });
    try {
      const account = await createPasswordAccount(https.ctx);
      const person = new ConsoleSession(https.url);
      const form = await fetch(`${https.url}/console/sign-in`);
      const csrfCookie = form.headers.getSetCookie().find((line) => line.startsWith('__Host-agentauth_csrf='));
      expect(csrfCookie).toMatch(/; Path=\/; HttpOnly; Secure; SameSite=Lax/i);
      person.cookies.set('__Host-agentauth_csrf', csrfCookie!.split(';')[0]!.split('=')[1]!);
      person.csrf = /name="_csrf" value="([^"]+)"/.exec(await form.text())![1]!;
      const answer = await fetch(`${https.url}/console/sign-in`, {
        method: 'POST',
        redirect: 'manual',
        headers: {
          cookie: `__Host-agentauth_csrf=${person.cookies.get('__Host-agentauth_csrf')}`,
          'content-type': 'application/x-www-form-urlencoded',
          origin: 'https://id.example',
        },
        body: new URLSearchParams({ _csrf: person.csrf, email: account.email, password: TEST_PASSWORD }),
      });
      expect(answer.status).toBe(303);
      const session = answer.headers.getSetCookie().find((line) => line.startsWith('__Host-agentauth_console='));
      expect(session).toMatch(/Max-Age=86400; Path=\/; HttpOnly; Secure; SameSite=Lax/i);
    } finally {
      await https.close();
    }
  });
});

describe('passwords', () => {
  it('changing a password needs the current one and at least 15 characters', async () => {
    const account = await createPasswordAccount(server.ctx);
    const person = await signIn(server.baseUrl, account.email);
    await person.get('/console/account');
    const wrong = await person.post('/console/account/password', {
      current_password: 'not it at all, no',
      password: 'a brand new passphrase here',
    });
    expect(wrong.status).toBe(400);
    expect(wrong.text).toContain('The current password is wrong.');
    const short = await person.post('/console/account/password', {
      current_password: TEST_PASSWORD,
      password: 'fourteen chars',
    });
    expect(short.status).toBe(400);
    expect(short.text).toMatch(/aria-invalid="true"/);
    const ok = await person.post('/console/account/password', {
      current_password: TEST_PASSWORD,
      password: 'a brand new passphrase here',
    });
    expect(ok.location).toBe('/console/account?notice=password_saved');
    await expect(signIn(server.baseUrl, account.email)).rejects.toThrow(/401/);
    await signIn(server.baseUrl, account.email, 'a brand new passphrase here');
  });

  it('a password cannot be removed while it is the only way to sign in', async () => {
    const account = await createPasswordAccount(server.ctx);
    const person = await signIn(server.baseUrl, account.email);
    await person.get('/console/account');
    const refused = await person.post('/console/account/password/remove');
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('Add a passkey before you remove your password');
    expect((await server.ctx.store.accounts.find(account.id))!.password_hash).not.toBeNull();
  });
});

describe('throttled sign-in', () => {
  it('refuses an email after its failures, known or not, even with the right password, with Retry-After', async () => {
    const throttled = await startTestServer({
      env: { CONSOLE_SIGNIN_FAILURES_PER_ACCOUNT: '3', CONSOLE_SIGNIN_FAILURES_PER_IP: '100' },
    });
    try {
      const account = await createPasswordAccount(throttled.ctx);
      const attempt = async (email: string, password: string) => {
        const person = new ConsoleSession(throttled.baseUrl);
        await person.get('/console/sign-in');
        return person.post('/console/sign-in', { email, password });
      };
      for (let i = 0; i < 3; i++) expect((await attempt(account.email, `wrong password number ${i}`)).status).toBe(401);
      const refused = await attempt(account.email, TEST_PASSWORD);
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(noticeOf(refused)).toContain('Too many failed sign-ins');
      // An email without an account is throttled the same way: the 429 tells nothing.
      for (let i = 0; i < 3; i++)
        expect((await attempt('ghost@example.com', `wrong password number ${i}`)).status).toBe(401);
      expect((await attempt('ghost@example.com', TEST_PASSWORD)).status).toBe(429);
      // Another account from the same address is not affected.
      const other = await createPasswordAccount(throttled.ctx);
      expect((await attempt(other.email, TEST_PASSWORD)).status).toBe(303);
    } finally {
      await throttled.close();
    }
  });

  it('refuses an address after its failures across many emails', async () => {
    const throttled = await startTestServer({
      env: { CONSOLE_SIGNIN_FAILURES_PER_ACCOUNT: '100', CONSOLE_SIGNIN_FAILURES_PER_IP: '4' },
    });
    try {
      const account = await createPasswordAccount(throttled.ctx);
      const person = new ConsoleSession(throttled.baseUrl);
      await person.get('/console/sign-in');
      for (let i = 0; i < 4; i++)
        expect(
          (await person.post('/console/sign-in', { email: `victim${i}@example.com`, password: 'credential stuffing' }))
            .status,
        ).toBe(401);
      expect((await person.post('/console/sign-in', { email: account.email, password: TEST_PASSWORD })).status).toBe(
        429,
      );
    } finally {
      await throttled.close();
    }
  });
});

describe('passkeys on the account page', () => {
  it('lists, renames and removes passkeys; the last way to sign in cannot be removed', async () => {
    const account = await createPasswordAccount(server.ctx);
    const add = (id: string, name: string) =>
      server.ctx.store.passkeys.insert({
        id,
        account_id: account.id,
        public_key: 'x',
        counter: 0,
        transports: null,
        name,
        created_at: server.clock(),
        last_used_at: null,
      });
    await add('cred-laptop', 'Laptop');
    await add('cred-phone', 'Phone');
    const person = await signIn(server.baseUrl, account.email);
    const page = await person.get('/console/account');
    expect(page.text).toContain('value="Laptop"');
    expect(page.text).toContain('value="Phone"');
    expect((await person.post('/console/account/passkeys/cred-laptop/rename', { name: 'Work laptop' })).location).toBe(
      '/console/account?notice=passkey_renamed',
    );
    expect((await server.ctx.store.passkeys.find('cred-laptop'))?.name).toBe('Work laptop');
    const tooLong = await person.post('/console/account/passkeys/cred-laptop/rename', { name: 'x'.repeat(101) });
    expect(tooLong.status).toBe(400);
    // Another account's passkey: 404, untouched.
    const other = await createPasswordAccount(server.ctx);
    const stranger = await signIn(server.baseUrl, other.email);
    await stranger.get('/console/account');
    expect((await stranger.post('/console/account/passkeys/cred-phone/remove')).status).toBe(404);
    expect(await server.ctx.store.passkeys.find('cred-phone')).toBeDefined();
    // Without a password, the last passkey stays.
    await person.get('/console/account');
    expect((await person.post('/console/account/passkeys/cred-phone/remove')).location).toBe(
      '/console/account?notice=passkey_removed',
    );
    expect((await person.post('/console/account/password/remove')).location).toBe(
      '/console/account?notice=password_removed',
    );
    const refused = await person.post('/console/account/passkeys/cred-laptop/remove');
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('This is your only way to sign in');
    expect((await server.ctx.store.passkeys.list(account.id)).map((passkey) => passkey.id)).toEqual(['cred-laptop']);
  });
});

describe('passkey endpoints', () => {
  it('answer bad input with the documented JSON error, never a 500', async () => {
    const person = new ConsoleSession(server.baseUrl);
    await person.get('/console/sign-in');
    const options = await person.postJson('/console/sign-in/passkey/options', {});
    expect(options.status).toBe(200);
    expect(options.body).toMatchObject({
      challengeId: expect.stringMatching(/^chl_/),
      options: { rpId: '127.0.0.1', userVerification: 'required' },
    });
    for (const body of [
      {},
      { challengeId: 'chl_nope', response: {} },
      {
        challengeId: options.body.challengeId,
        response: { id: 'AAAA', rawId: 'AAAA', type: 'public-key', response: {} },
      },
      { challengeId: 5, response: 'x' },
    ]) {
      const answer = await fetch(`${server.baseUrl}/console/sign-in/passkey`, {
        method: 'POST',
        headers: {
          cookie: [...person.cookies].map(([n, v]) => `${n}=${v}`).join('; '),
          'content-type': 'application/json',
          'x-csrf-token': person.csrf,
        },
        body: JSON.stringify(body),
      });
      await expectJsonError(answer, 401, 'invalid_credentials', JSON.stringify(body));
    }
    // Without the CSRF token: refused before anything else.
    const forged = await fetch(`${server.baseUrl}/console/sign-in/passkey/options`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(forged.status).toBe(403);
  });

  it('registration needs a session', async () => {
    const person = new ConsoleSession(server.baseUrl);
    await person.get('/console/sign-in');
    const answer = await person.postJson('/console/account/passkeys/options', {});
    expect(answer.status).toBe(401);
  });
});
