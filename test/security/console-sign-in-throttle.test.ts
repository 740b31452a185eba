/**
 * Console sign-in under bursts (issue 19, finding 1; docs/design.md §11): an attempt is paid
 * for before its password is checked, so concurrent guesses cannot all be checked while the
 * counter still has room; only a few argon2 checks run at once per address and per node, the
 * rest answered 429 at once; passkey challenges are bounded per address.
 */
import { describe, expect, it } from 'vitest';
import { ConsoleSession, createPasswordAccount, TEST_PASSWORD } from '../helpers/console.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

/** One signed-out browser that read the sign-in form, for posting many attempts at once. */
async function signInForm(server: TestServer): Promise<ConsoleSession> {
  const person = new ConsoleSession(server.baseUrl);
  await person.get('/console/sign-in');
  return person;
}

const tally = (statuses: number[]) => {
  const counts: Record<number, number> = {};
  for (const status of statuses) counts[status] = (counts[status] ?? 0) + 1;
  return counts;
};

async function withServer(env: Record<string, string>, test: (server: TestServer) => Promise<void>): Promise<void> {
  const server = await startTestServer({ env });
  try {
    await test(server);
  } finally {
    await server.close();
  }
}

describe('console sign-in throttle under concurrent attempts', () => {
  it('checks no more passwords than the account has failures left, however many arrive at once', () =>
    // The concurrency bound is off here, so that only the reservation is tested.
    withServer(
      {
        CONSOLE_SIGNIN_FAILURES_PER_ACCOUNT: '10',
        CONSOLE_SIGNIN_FAILURES_PER_IP: '1000',
        CONSOLE_PASSWORD_CHECKS_PER_IP: '0',
        CONSOLE_PASSWORD_CHECKS_MAX: '0',
      },
      async (server) => {
        const account = await createPasswordAccount(server.ctx);
        const person = await signInForm(server);
        const answers = await Promise.all(
          Array.from({ length: 60 }, (_, i) =>
            person.post('/console/sign-in', { email: account.email, password: `wrong guess number ${i}` }),
          ),
        );
        // Before the reservation: 60 × 401, every guess checked.
        expect(tally(answers.map((answer) => answer.status))).toEqual({ 401: 10, 429: 50 });
        for (const refused of answers.filter((answer) => answer.status === 429))
          expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
        // The account has used its failures: the right password waits for the window too.
        expect((await person.post('/console/sign-in', { email: account.email, password: TEST_PASSWORD })).status).toBe(
          429,
        );
        expect(await server.ctx.store.sessions.list(account.id, server.clock())).toHaveLength(0);
      },
    ));

  it('refunds a right password: successful sign-ins never use up the failures', () =>
    withServer({ CONSOLE_SIGNIN_FAILURES_PER_ACCOUNT: '3', CONSOLE_SIGNIN_FAILURES_PER_IP: '3' }, async (server) => {
      const account = await createPasswordAccount(server.ctx);
      for (let i = 0; i < 8; i++) {
        const person = await signInForm(server);
        expect((await person.post('/console/sign-in', { email: account.email, password: TEST_PASSWORD })).status).toBe(
          303,
        );
      }
      const person = await signInForm(server);
      for (let i = 0; i < 2; i++)
        expect((await person.post('/console/sign-in', { email: account.email, password: `wrong ${i}` })).status).toBe(
          401,
        );
      expect((await person.post('/console/sign-in', { email: account.email, password: TEST_PASSWORD })).status).toBe(
        303,
      );
    }));

  it('a burst from one address: few passwords are checked at once, the rest are answered 429 at once, and the right password last does not get in', () =>
    withServer({}, async (server) => {
      const account = await createPasswordAccount(server.ctx);
      const person = await signInForm(server);
      const attempts = Array.from({ length: 199 }, (_, i) => ({
        email: account.email,
        password: `wrong guess number ${i}`,
      }));
      const answers = await Promise.all(
        [...attempts, { email: account.email, password: TEST_PASSWORD }].map((form) =>
          person.post('/console/sign-in', form),
        ),
      );
      const counts = tally(answers.map((answer) => answer.status));
      // Before: 199 × 401 and 1 × 303 (the right password, checked after all the wrong ones).
      expect(counts[401] ?? 0).toBeLessThanOrEqual(10);
      expect((counts[401] ?? 0) + (counts[429] ?? 0) + (counts[303] ?? 0)).toBe(200);
      expect(counts[429]).toBeGreaterThanOrEqual(189);
      expect(answers.some((answer) => answer.status === 429 && answer.text.includes('being checked at once'))).toBe(
        true,
      );
    }));

  it('bounds the checks running at once on the node, whatever the addresses', () =>
    withServer(
      {
        TRUST_PROXY: '127.0.0.1',
        CONSOLE_PASSWORD_CHECKS_PER_IP: '0',
        CONSOLE_PASSWORD_CHECKS_MAX: '2',
        CONSOLE_SIGNIN_FAILURES_PER_ACCOUNT: '1000',
      },
      async (server) => {
        const account = await createPasswordAccount(server.ctx);
        const person = await signInForm(server);
        const answers = await Promise.all(
          Array.from({ length: 30 }, (_, i) =>
            person.post(
              '/console/sign-in',
              { email: account.email, password: `wrong ${i}` },
              { 'x-forwarded-for': `203.0.113.${i + 1}` },
            ),
          ),
        );
        const counts = tally(answers.map((answer) => answer.status));
        expect((counts[401] ?? 0) + (counts[429] ?? 0)).toBe(30);
        expect(counts[429]).toBeGreaterThan(0);
        for (const refused of answers.filter((answer) => answer.status === 429)) {
          expect(refused.text).toContain('being checked at once');
          expect(refused.headers.get('retry-after')).toBe('1');
        }
        // The places are given back: once the burst is over, a sign-in goes through.
        expect((await person.post('/console/sign-in', { email: account.email, password: TEST_PASSWORD })).status).toBe(
          303,
        );
      },
    ));
});

describe('passkey sign-in challenges', () => {
  it('are bounded per address: each one is a stored row', () =>
    withServer({}, async (server) => {
      const person = await signInForm(server);
      const statuses: number[] = [];
      for (let i = 0; i < 31; i++)
        statuses.push((await person.postJson('/console/sign-in/passkey/options', {})).status);
      expect(statuses.slice(0, 30).every((status) => status === 200)).toBe(true);
      const refused = await person.postJson('/console/sign-in/passkey/options', {});
      expect(refused.status).toBe(429);
      expect(refused.body.error).toBe('too_many_requests');
    }));
});
