/**
 * Passkeys need user verification (issue 19; docs/design.md §11): an assertion whose
 * authenticator did not verify the person (a found security key without its PIN) signs nobody
 * in, although its signature is good. The assertions are made here with a real P-256 key, as an
 * authenticator would, so the server's own check is what is tested (a browser would refuse to
 * produce such an answer once the options ask for verification).
 */
import { createHash, generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import { isoCBOR } from '@simplewebauthn/server/helpers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConsoleSession, createPasswordAccount } from '../helpers/console.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const b64url = (bytes: Uint8Array | Buffer) => Buffer.from(bytes).toString('base64url');
const sha256 = (data: Uint8Array | string) => createHash('sha256').update(data).digest();

/** A passkey of an account: a P-256 key pair whose public half is stored as a COSE key. */
async function passkeyOf(accountId: string): Promise<{ id: string; privateKey: KeyObject }> {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = publicKey.export({ format: 'jwk' });
  const cose = new Map<number, number | Uint8Array>([
    [1, 2], // kty: EC2
    [3, -7], // alg: ES256
    [-1, 1], // crv: P-256
    [-2, Buffer.from(jwk.x!, 'base64url')],
    [-3, Buffer.from(jwk.y!, 'base64url')],
  ]);
  const id = b64url(sha256(`${accountId}-key`).subarray(0, 16));
  await server.ctx.store.console.insertPasskey({
    id,
    account_id: accountId,
    public_key: b64url(isoCBOR.encode(cose)),
    counter: 0,
    transports: null,
    name: 'Key',
    created_at: server.clock(),
    last_used_at: null,
  });
  return { id, privateKey };
}

/** The authenticator's answer to `challenge`: user present always, user verified when `verified`. */
function assertion(key: { id: string; privateKey: KeyObject }, challenge: string, verified: boolean, counter: number) {
  const origin = new URL(server.baseUrl).origin;
  const clientDataJSON = Buffer.from(JSON.stringify({ type: 'webauthn.get', challenge, origin, crossOrigin: false }));
  const flags = 0x01 | (verified ? 0x04 : 0);
  const authenticatorData = Buffer.concat([
    sha256(new URL(server.baseUrl).hostname),
    Buffer.from([flags]),
    Buffer.from([0, 0, 0, counter]),
  ]);
  const signature = sign('sha256', Buffer.concat([authenticatorData, sha256(clientDataJSON)]), key.privateKey);
  return {
    id: key.id,
    rawId: key.id,
    type: 'public-key',
    response: {
      clientDataJSON: b64url(clientDataJSON),
      authenticatorData: b64url(authenticatorData),
      signature: b64url(signature),
    },
    clientExtensionResults: {},
  };
}

async function passkeySignIn(key: { id: string; privateKey: KeyObject }, verified: boolean, counter: number) {
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
    expect(await server.ctx.store.console.listSessions(account.id, server.clock())).toHaveLength(0);

    const verified = await passkeySignIn(key, true, 2);
    expect(verified).toEqual({ status: 200, body: { redirect: '/console' } });
    expect(await server.ctx.store.console.listSessions(account.id, server.clock())).toHaveLength(1);
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
