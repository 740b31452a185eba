/**
 * A passkey made in the test, as an authenticator holds one: a P-256 key pair whose public half
 * is stored for the account, and its answers to a challenge (user present always, user verified
 * when asked), so that the server's own checks are what is tested.
 */
import { createHash, generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import { isoCBOR } from '@simplewebauthn/server/helpers';
import type { TestServer } from './server.ts';

const b64url = (bytes: Uint8Array | Buffer) => Buffer.from(bytes).toString('base64url');
const sha256 = (data: Uint8Array | string) => createHash('sha256').update(data).digest();

export interface TestPasskey {
  id: string;
  privateKey: KeyObject;
}

/** A passkey of an account, stored as registration would store it. */
export async function passkeyOf(server: TestServer, accountId: string): Promise<TestPasskey> {
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
  await server.ctx.store.passkeys.insert({
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
export function assertion(
  server: Pick<TestServer, 'baseUrl'>,
  key: TestPasskey,
  challenge: string,
  verified: boolean,
  counter: number,
) {
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
