/**
 * Passkeys need user verification (issue 19; docs/design.md §11): an assertion whose
 * authenticator did not verify the person (a found security key without its PIN) signs nobody
 * in, although its signature is good. The assertions are made here with a real P-256 key, as an
 * authenticator would, so the server's own check is what is tested (a browser would refuse to
 * produce such an answer once the options ask for verification).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConsoleSession, createPasswordAccount } from '../helpers/console.ts';
import { assertion as answer, passkeyOf as createPasskey, type TestPasskey } from '../helpers/passkey.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const passkeyOf = (accountId: string) => createPasskey(server, accountId);
const assertion = (key: TestPasskey, challenge: string, verified: boolean, counter: number) =>
  answer(server, key, challenge, verified, counter);

async function passkeySignIn(key: TestPasskey, verified: boolean, counter: number) {
  const person = new ConsoleSession(server.baseUrl);
  await person.get('/console/sign-in');
  const started = await person.postJson('/console/sign-in/passkey/options', {});
  const { challengeId, options } = started.body as {
    challengeId: string;
    options: { challenge: string; userVerification: string };
  };
  expect(options.userVerification).toBe('required');
  return person.postJson('/console/sign-in/passkey', {
    challengeId,
    response: assertion(key, options.challenge, verified, counter),
  });
}

describe('passkey sign-in requires user verification', () => {
  it('refuses a good signature without user verification, and accepts the same passkey with it', async () => {
    const account = await createPasswordAccount(server.ctx);
    const key = await passkeyOf(account.id);
    const unverified = await passkeySignIn(key, false, 1);
    expect(unverified).toEqual({
      status: 401,
      body: { error: 'invalid_credentials', error_description: 'That passkey could not sign you in.' },
    });
    expect(await server.ctx.store.sessions.list(account.id, server.clock())).toHaveLength(0);

    const verified = await passkeySignIn(key, true, 2);
    expect(verified).toEqual({ status: 200, body: { redirect: '/console' } });
    expect(await server.ctx.store.sessions.list(account.id, server.clock())).toHaveLength(1);
  });

  it("confirming it is you with a passkey requires it too, and only the account's own passkey", async () => {
    const account = await createPasswordAccount(server.ctx);
    const other = await createPasswordAccount(server.ctx);
    const key = await passkeyOf(account.id);
    const othersKey = await passkeyOf(other.id);
    const person = new ConsoleSession(server.baseUrl);
    await person.get('/console/sign-in');
    expect(
      (await person.post('/console/sign-in', { email: account.email, password: 'correct horse battery staple' }))
        .status,
    ).toBe(303);
    await person.get('/console/account');
    const confirm = async (which: typeof key, verified: boolean, counter: number) => {
      const started = await person.postJson('/console/account/confirm/passkey/options', {});
      const { challengeId, options } = started.body as {
        challengeId: string;
        options: { challenge: string; allowCredentials: Array<{ id: string }> };
      };
      expect(options.allowCredentials.map((credential) => credential.id)).toEqual([key.id]);
      return person.postJson('/console/account/confirm/passkey', {
        challengeId,
        response: assertion(which, options.challenge, verified, counter),
        next: '/console/account',
      });
    };
    expect((await confirm(key, false, 1)).status).toBe(400);
    expect((await confirm(othersKey, true, 1)).status).toBe(400);
    expect(await confirm(key, true, 2)).toEqual({ status: 200, body: { redirect: '/console/account' } });
  });
});
