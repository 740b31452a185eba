/**
 * Key pairs and assertions for key-bound agents (docs/design.md §16), made with jose: an
 * implementation independent of the server's and of the SDKs'.
 */
import { randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';

export interface TestKeyPair {
  alg: 'EdDSA' | 'ES256';
  privateKey: CryptoKey;
  publicJwk: JWK;
  /** The private key as a JWK, as agentauth-agent keygen writes it. */
  privateJwk: JWK;
}

export async function testKeyPair(alg: 'EdDSA' | 'ES256' = 'EdDSA'): Promise<TestKeyPair> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  return { alg, privateKey, publicJwk: await exportJWK(publicKey), privateJwk: await exportJWK(privateKey) };
}

/** A valid assertion of `agentId` for `requestId` at `issuer`, issued at `now` (epoch seconds). */
export function signAssertion(
  key: TestKeyPair,
  claims: { agentId: string; issuer: string; requestId: string; now: number },
): Promise<string> {
  return new SignJWT({ request_id: claims.requestId })
    .setProtectedHeader({ alg: key.alg, typ: 'JWT' })
    .setIssuer(claims.agentId)
    .setSubject(claims.agentId)
    .setAudience(claims.issuer)
    .setJti(randomUUID())
    .setIssuedAt(claims.now)
    .setExpirationTime(claims.now + 60)
    .sign(key.privateKey);
}
