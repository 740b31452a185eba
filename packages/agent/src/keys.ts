/**
 * Key-bound agents (docs/design.md §16): the agent's private key, as a JWK, and the short-lived
 * assertion it signs for each authentication instead of sending a secret. WebCrypto only
 * (`globalThis.crypto.subtle`), so this runs wherever the SDK does: Node 20+, Deno, Bun, browsers.
 * ES256 signatures from WebCrypto are already JOSE's raw r||s.
 */
import { ConfigurationError } from './errors.ts';

/** An agent's private key as a JWK: Ed25519 (`kty` OKP) or P-256 (`kty` EC, for ES256). */
export interface AgentPrivateKey {
  kty: 'OKP' | 'EC';
  crv: 'Ed25519' | 'P-256';
  x: string;
  y?: string;
  d: string;
}

/** The public half of an agent's key: what its owner registers (`agentauth agent create --public-key`). */
export type AgentPublicKey = Omit<AgentPrivateKey, 'd'>;

/** An assertion lives this long (seconds): the server accepts at most 60. */
const ASSERTION_LIFETIME = 60;

const subtle = () => {
  const value = (globalThis as { crypto?: { subtle?: SubtleCrypto } }).crypto?.subtle;
  if (!value)
    throw new ConfigurationError('Signing with a key needs WebCrypto (crypto.subtle), which is missing here.');
  return value;
};

/** The WebCrypto algorithm and the JWS `alg` of a key. */
function algorithmOf(key: AgentPublicKey) {
  return key.kty === 'OKP'
    ? { jws: 'EdDSA', importAs: { name: 'Ed25519' }, signAs: { name: 'Ed25519' } }
    : { jws: 'ES256', importAs: { name: 'ECDSA', namedCurve: 'P-256' }, signAs: { name: 'ECDSA', hash: 'SHA-256' } };
}

/**
 * The private key in `raw` (a JWK object, or its JSON text as `agentauth-agent keygen` writes
 * it), with only the members that make the key; ConfigurationError otherwise, saying why.
 *
 * @example
 * const key = readPrivateKey(process.env.AGENTAUTH_AGENT_KEY);
 */
export function readPrivateKey(raw: unknown): AgentPrivateKey {
  let value = raw;
  if (typeof raw === 'string') {
    try {
      value = JSON.parse(raw);
    } catch {
      throw new ConfigurationError(
        'The private key is not JSON: give the private JWK that agentauth-agent keygen wrote.',
      );
    }
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new ConfigurationError('The private key must be a JWK: a JSON object with kty, crv, x and d.');
  const jwk = value as Record<string, unknown>;
  const text = (name: string) =>
    typeof jwk[name] === 'string' && jwk[name] !== '' ? (jwk[name] as string) : undefined;
  const [x, y, d] = [text('x'), text('y'), text('d')];
  if (d === undefined || x === undefined)
    throw new ConfigurationError(
      'The key has no private part ("d"): give the agent its private key; its owner registers the public one.',
    );
  if (jwk.kty === 'OKP' && jwk.crv === 'Ed25519') return { kty: 'OKP', crv: 'Ed25519', x, d };
  if (jwk.kty === 'EC' && jwk.crv === 'P-256' && y !== undefined) return { kty: 'EC', crv: 'P-256', x, y, d };
  throw new ConfigurationError('Only Ed25519 (kty OKP) and P-256 (kty EC) keys can sign in.');
}

/**
 * The public half of a private key, as its owner registers it.
 *
 * @example
 * const publicJwk = publicKeyOf(key); // { kty: 'OKP', crv: 'Ed25519', x: '…' }
 */
export function publicKeyOf(key: AgentPrivateKey): AgentPublicKey {
  return key.kty === 'EC'
    ? { kty: key.kty, crv: key.crv, x: key.x, y: key.y }
    : { kty: key.kty, crv: key.crv, x: key.x };
}

/**
 * The RFC 7638 SHA-256 thumbprint of the public key (base64url), as the server and the console
 * show it: the required members in lexicographic order (EC: crv, kty, x, y; OKP: crv, kty, x).
 *
 * @example
 * console.log(`registered key: ${await keyThumbprint(publicKeyOf(key))}`);
 */
export async function keyThumbprint(key: AgentPublicKey): Promise<string> {
  const members =
    key.kty === 'EC'
      ? `{"crv":"${key.crv}","kty":"${key.kty}","x":"${key.x}","y":"${key.y}"}`
      : `{"crv":"${key.crv}","kty":"${key.kty}","x":"${key.x}"}`;
  return base64url(new Uint8Array(await subtle().digest('SHA-256', new TextEncoder().encode(members))));
}

/**
 * A new key pair: the private key as a JWK (keep it where the agent runs, readable only by it)
 * and its public half (for the owner to register).
 *
 * @example
 * const { privateKey, publicKey } = await generateAgentKey('Ed25519');
 */
export async function generateAgentKey(
  alg: 'Ed25519' | 'ES256' = 'Ed25519',
): Promise<{ privateKey: AgentPrivateKey; publicKey: AgentPublicKey }> {
  const params = alg === 'Ed25519' ? { name: 'Ed25519' } : { name: 'ECDSA', namedCurve: 'P-256' };
  const pair = (await subtle().generateKey(params, true, ['sign', 'verify'])) as CryptoKeyPair;
  const privateKey = readPrivateKey(await subtle().exportKey('jwk', pair.privateKey));
  return { privateKey, publicKey: publicKeyOf(privateKey) };
}

/**
 * A fresh assertion (a JWT signed with the agent's key) for one authentication: `iss` = `sub` =
 * the agent, `aud` = the issuer, the request's id, a unique `jti`, and an expiry a minute after
 * `iat`. It is worthless at any other issuer and for any other request, and works once.
 *
 * @example
 * const agent_assertion = await signAssertion(key, { agentId, issuer, requestId });
 */
export async function signAssertion(
  key: AgentPrivateKey,
  claims: { agentId: string; issuer: string; requestId: string },
  nowMs = Date.now(),
): Promise<string> {
  const algorithm = algorithmOf(key);
  let signer: CryptoKey;
  try {
    signer = await subtle().importKey('jwk', { ...key }, algorithm.importAs, false, ['sign']);
  } catch (error) {
    throw new ConfigurationError(
      `The private key cannot be used: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  const iat = Math.floor(nowMs / 1000);
  const header = { alg: algorithm.jws, typ: 'JWT' };
  const payload = {
    iss: claims.agentId,
    sub: claims.agentId,
    aud: claims.issuer,
    request_id: claims.requestId,
    jti: randomId(),
    iat,
    exp: iat + ASSERTION_LIFETIME,
  };
  const input = `${base64url(json(header))}.${base64url(json(payload))}`;
  const signature = await subtle().sign(algorithm.signAs, signer, new TextEncoder().encode(input));
  return `${input}.${base64url(new Uint8Array(signature))}`;
}

const json = (value: object) => new TextEncoder().encode(JSON.stringify(value));

function base64url(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** 16 random bytes, base64url: the assertion's single-use id. */
function randomId(): string {
  const bytes = new Uint8Array(16);
  (globalThis as { crypto: Crypto }).crypto.getRandomValues(bytes);
  return base64url(bytes);
}
