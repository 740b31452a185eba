/**
 * What the console accepts (issue 19, finding 7): every field of every body type is one string
 * (an array or an object never reaches a rule), `next` is visible ASCII only (it becomes a
 * Location header), and whatever goes wrong is answered in the documented shape, never a 500.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConsoleSession, createPasswordAccount, signIn, TEST_PASSWORD } from '../helpers/console.ts';
import { captureLogs, startTestServer, type TestServer } from '../helpers/server.ts';
import { consolePostPaths, expectNoLeak } from './support.ts';

/** Posts a JSON body with the session's cookies and CSRF token; the answer as text (a page or JSON). */
async function postJsonText(
  person: ConsoleSession,
  path: string,
  json: unknown,
): Promise<{ status: number; text: string }> {
  const response = await fetch(`${server.baseUrl}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: {
      cookie: [...person.cookies].map(([name, value]) => `${name}=${value}`).join('; '),
      'sec-fetch-site': 'same-origin',
      'content-type': 'application/json',
      'x-csrf-token': person.csrf,
    },
    body: JSON.stringify(json),
  });
  return { status: response.status, text: await response.text() };
}

const logs = captureLogs();
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ env: { LOG_LEVEL: 'warn', CONSOLE_SIGNUP: 'open' }, logStream: logs.stream });
});
afterAll(() => server.close());

/** Every field a console form reads, as an array and as an object instead of a string. */
const FIELDS = [
  'email',
  'password',
  'current_password',
  'name',
  'next',
  'redirect_uris',
  'approval',
  'kind',
  'grace',
  'role',
  'challengeId',
  'response',
  'id',
  'notice',
];
const shapes: Array<[string, unknown]> = [
  ['arrays', ['a', 'b']],
  ['objects', { toString: 'x', length: 3 }],
  ['numbers', 12345],
];

describe('console bodies: one string per field, whatever the content type', () => {
  it.each(shapes)(
    'JSON bodies with %s for every field answer 4xx in the documented shape on every POST route, signed in or not',
    async (_name, value) => {
      const admin = await createPasswordAccount(server.ctx, { role: 'admin' });
      const signedIn = await signIn(server.baseUrl, admin.email);
      const anonymous = new ConsoleSession(server.baseUrl);
      await anonymous.get('/console/sign-in');
      const body = Object.fromEntries(FIELDS.map((field) => [field, value]));
      for (const person of [anonymous, signedIn]) {
        for (const path of consolePostPaths(server.app)) {
          const answer = await postJsonText(person, path, body);
          expect(answer.status, path).toBeLessThan(500);
          expectNoLeak(answer.text, path);
        }
      }
      expect(logs.text()).not.toMatch(/"level":50/);
    },
  );

  it('a password sent as an array signs nobody in', async () => {
    const account = await createPasswordAccount(server.ctx);
    const person = new ConsoleSession(server.baseUrl);
    await person.get('/console/sign-in');
    const answer = await postJsonText(person, '/console/sign-in', { email: account.email, password: [TEST_PASSWORD] });
    expect(answer.status).toBe(401);
    expect(await server.ctx.store.sessions.list(account.id, server.clock())).toHaveLength(0);
  });
});

describe('next is visible ASCII only', () => {
  it.each([
    ['CR LF', '/console/agents\r\nSet-Cookie: planted=1'],
    ['LF', '/console\nx'],
    ['NUL', '/console/agents\u0000'],
    ['U+2028', '/console/agents\u2028x'],
    ['a space', '/console/agents x'],
  ])('a next holding %s sends the person to /console after sign-in', async (_name, next) => {
    const account = await createPasswordAccount(server.ctx);
    const person = new ConsoleSession(server.baseUrl);
    await person.get('/console/sign-in');
    const answer = await person.post('/console/sign-in', { email: account.email, password: TEST_PASSWORD, next });
    expect(answer.status).toBe(303);
    expect(answer.location).toBe('/console');
    expect(answer.headers.get('set-cookie') ?? '').not.toContain('planted');
    // Signed in already, the sign-in page redirects to next as well.
    const again = await person.get(`/console/sign-in?next=${encodeURIComponent(next)}`);
    expect(again.status).toBe(303);
    expect(again.location).toBe('/console');
  });

  it('a plain console path is still where sign-in goes', async () => {
    const account = await createPasswordAccount(server.ctx);
    const person = new ConsoleSession(server.baseUrl);
    await person.get('/console/sign-in');
    const answer = await person.post('/console/sign-in', {
      email: account.email,
      password: TEST_PASSWORD,
      next: '/console/agents?page=2',
    });
    expect(answer.location).toBe('/console/agents?page=2');
  });
});
