/** Console sign-in by password, sign-out, and what a session reaches (issue 10, item 2). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { digest } from '../../src/crypto.ts';
import { ConsoleSession, createPasswordAccount, signIn, TEST_PASSWORD } from '../helpers/console.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

describe('console sign-in with a password', () => {
  it('signs in, shows the overview, and signs out', async () => {
    const account = await createPasswordAccount(server.ctx, { email: 'Grace@Example.com', name: 'Grace Hopper' });
    const session = new ConsoleSession(server.baseUrl);
    const form = await session.get('/console/sign-in');
    expect(form.status).toBe(200);
    expect(form.headers.get('content-security-policy')).toContain("default-src 'none'");
    const answer = await session.post('/console/sign-in', { email: 'grace@example.com', password: TEST_PASSWORD });
    expect(answer.status).toBe(303);
    expect(answer.location).toBe('/console');
    const overview = await session.get('/console');
    expect(overview.status).toBe(200);
    expect(overview.text).toContain('Hello, Grace Hopper');
    expect((await server.ctx.store.sessions.list(account.id, server.clock())).length).toBe(1);
    const out = await session.post('/console/sign-out');
    expect(out.status).toBe(303);
    expect((await session.get('/console')).location).toBe('/console/sign-in?next=%2Fconsole');
  });

  it('answers a wrong password and an unknown email alike', async () => {
    await createPasswordAccount(server.ctx, { email: 'ada@example.org' });
    const wrongPassword = await (async () => {
      const s = new ConsoleSession(server.baseUrl);
      await s.get('/console/sign-in');
      return s.post('/console/sign-in', { email: 'ada@example.org', password: 'not the password at all' });
    })();
    const unknown = await (async () => {
      const s = new ConsoleSession(server.baseUrl);
      await s.get('/console/sign-in');
      return s.post('/console/sign-in', { email: 'nobody@example.org', password: 'not the password at all' });
    })();
    expect(wrongPassword.status).toBe(401);
    expect(unknown.status).toBe(401);
    const strip = (text: string) => text.replace(/(value|data-csrf)="[^"]*"/g, '');
    expect(strip(wrongPassword.text).replace('ada@example.org', 'X')).toBe(
      strip(unknown.text).replace('nobody@example.org', 'X'),
    );
  });

  it('refuses a form without the CSRF token', async () => {
    const account = await createPasswordAccount(server.ctx);
    const session = await signIn(server.baseUrl, account.email);
    const refused = await session.post('/console/account/name', { name: 'Mallory', _csrf: null });
    expect(refused.status).toBe(403);
    expect((await server.ctx.store.accounts.find(account.id))?.name).toBeNull();
  });

  it('replaces a session cookie planted before sign-in (fixation) and stores only its digest', async () => {
    const account = await createPasswordAccount(server.ctx);
    const session = new ConsoleSession(server.baseUrl);
    session.cookies.set('agentauth_console', 'planted-by-an-attacker');
    await session.get('/console/sign-in');
    expect((await session.post('/console/sign-in', { email: account.email, password: TEST_PASSWORD })).status).toBe(
      303,
    );
    const issued = session.cookies.get('agentauth_console')!;
    expect(issued).not.toBe('planted-by-an-attacker');
    expect(issued).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const [row] = await server.ctx.store.sessions.list(account.id, server.clock());
    expect(row!.digest).not.toBe(issued);
    expect(row!.digest).toBe(digest(issued));
    const attacker = new ConsoleSession(server.baseUrl);
    attacker.cookies.set('agentauth_console', 'planted-by-an-attacker');
    expect((await attacker.get('/console')).location).toMatch(/^\/console\/sign-in/);
  });
});
