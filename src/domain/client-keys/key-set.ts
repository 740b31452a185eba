/**
 * The public keys a client signs its assertions with (RFC 7523 private_key_jwt, docs/design.md
 * §18): the rule for a key set (a JWKS, RFC 7517 §5) and a jwks_uri, once for every entry point
 * (CLI, console, management API, dynamic registration, metadata documents, a fetched jwks_uri).
 * Which algorithms are accepted is decided here, and only here.
 */
import { createPublicKey } from 'node:crypto';

/**
 * The algorithms a client assertion may be signed with: asymmetric only, never `none`, never a
 * shared-secret HS* (whose "secret" would be the public key everyone can read).
 */
export const CLIENT_ASSERTION_ALGORITHMS = ['RS256', 'PS256', 'ES256', 'EdDSA'] as const;
export type ClientAssertionAlgorithm = (typeof CLIENT_ASSERTION_ALGORITHMS)[number];

/** A usable public key of a client: what names it (kid), the algorithms it verifies, its PEM. */
export interface ClientKey {
  kid: string | null;
  algorithms: ClientAssertionAlgorithm[];
  /** SPKI PEM, as fast-jwt takes it. */
  pem: string;
}

/** A key set as read: its usable keys, and the public members kept of them as JSON text (what is stored). */
export interface KeySet {
  keys: ClientKey[];
  json: string;
}

/** The longest key set accepted as text: ten RSA-4096 public keys with their names fit. */
export const MAX_KEY_SET_LENGTH = 16_384;
/** Keys a set may hold. */
export const MAX_KEYS = 10;
/** The longest jwks_uri. */
export const MAX_KEY_SET_URI_LENGTH = 2048;
/** RSA keys shorter than this are refused (NIST SP 800-131A: 2048 bits since 2014). */
const MIN_RSA_BITS = 2048;
const MAX_KID_LENGTH = 256;
/** JWK members that exist only in private or symmetric keys (RFC 7518 §6.2.2, §6.3.2, §6.4.1). */
const PRIVATE_JWK_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];
const BASE64URL = /^[A-Za-z0-9_-]+$/;

/** Which algorithms each key type verifies here: the JWK's kty must match the assertion's alg. */
const ALGORITHMS_OF = {
  RSA: ['RS256', 'PS256'],
  EC: ['ES256'],
  OKP: ['EdDSA'],
} as const satisfies Record<string, readonly ClientAssertionAlgorithm[]>;

/**
 * The usable keys of `raw` (a JWKS as an object or as JSON text), or why it is refused, in words
 * whoever gave it can act on. Each key is an RSA key of at least 2048 bits (RS256, PS256), a
 * P-256 key (ES256) or an Ed25519 key (EdDSA); a key's `alg`, when given, must be one of those and
 * fit its type; `use`, when given, must be `sig`. A key with private or symmetric members refuses
 * the whole set. `lenient` (a set fetched from a jwks_uri, which may publish encryption keys or
 * other types beside the signing ones) skips keys it cannot use instead of refusing the set, but
 * still needs one usable key.
 *
 * @example
 * const read = readKeySet({ keys: [{ kty: 'OKP', crv: 'Ed25519', x: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo', kid: 'k1' }] });
 * if ('problem' in read) throw new InvalidClientMetadata(read.problem);
 * read.keys[0].algorithms; // ['EdDSA']
 */
export function readKeySet(raw: unknown, options: { lenient?: boolean } = {}): KeySet | { problem: string } {
  let value = raw;
  const text = typeof raw === 'string' ? raw : JSON.stringify(raw ?? null);
  if (text.length > MAX_KEY_SET_LENGTH)
    return { problem: `the key set is longer than ${MAX_KEY_SET_LENGTH} characters` };
  if (typeof raw === 'string') {
    try {
      value = JSON.parse(raw);
    } catch {
      return { problem: 'the key set is not JSON: give a JWKS, {"keys": [...]}' };
    }
  }
  const keys = (value as { keys?: unknown } | null)?.keys;
  if (value === null || typeof value !== 'object' || Array.isArray(value) || !Array.isArray(keys))
    return { problem: 'the key set must be a JWKS: a JSON object with a "keys" array' };
  if (keys.some((key) => isObject(key) && PRIVATE_JWK_MEMBERS.some((member) => Object.hasOwn(key, member))))
    return {
      problem: 'the key set contains private or symmetric key material: publish the public keys only',
    };
  if (!options.lenient && keys.length > MAX_KEYS) return { problem: `the key set has more than ${MAX_KEYS} keys` };
  const usable: ClientKey[] = [];
  const kept: Record<string, unknown>[] = [];
  for (const [index, key] of keys.entries()) {
    const read = readKey(key);
    if ('problem' in read) {
      if (options.lenient) continue;
      return { problem: `keys[${index}] ${read.problem}` };
    }
    usable.push(read.key);
    kept.push(read.publicMembers);
  }
  if (usable.length === 0) return { problem: 'the key set has no key for RS256, PS256, ES256 or EdDSA signatures' };
  if (usable.length > MAX_KEYS) return { problem: `the key set has more than ${MAX_KEYS} usable keys` };
  return { keys: usable, json: JSON.stringify({ keys: kept }) };
}

/** One JWK: the key it is, or why it cannot verify client assertions here. */
function readKey(key: unknown): { key: ClientKey; publicMembers: Record<string, unknown> } | { problem: string } {
  if (!isObject(key)) return { problem: 'is not a JSON object' };
  const { kty, kid, use, alg } = key;
  if (kid !== undefined && (typeof kid !== 'string' || kid.length === 0 || kid.length > MAX_KID_LENGTH))
    return { problem: `has a kid that is not a string of 1 to ${MAX_KID_LENGTH} characters` };
  if (use !== undefined && use !== 'sig') return { problem: 'is not for signatures (its "use" is not "sig")' };
  let members: Record<string, string>;
  if (kty === 'RSA') {
    if (!isBase64url(key.n) || !isBase64url(key.e))
      return { problem: 'is an RSA key without "n" and "e" in base64url' };
    members = { kty, n: key.n, e: key.e };
  } else if (kty === 'EC') {
    if (key.crv !== 'P-256') return { problem: 'is an EC key on a curve other than P-256 (ES256)' };
    if (!isBase64url(key.x) || !isBase64url(key.y))
      return { problem: 'is a P-256 key without "x" and "y" in base64url' };
    members = { kty, crv: key.crv, x: key.x, y: key.y };
  } else if (kty === 'OKP') {
    if (key.crv !== 'Ed25519') return { problem: 'is an OKP key other than Ed25519 (EdDSA)' };
    if (!isBase64url(key.x)) return { problem: 'is an Ed25519 key without "x" in base64url' };
    members = { kty, crv: key.crv, x: key.x };
  } else {
    return { problem: 'is not an RSA, EC (P-256) or OKP (Ed25519) public key' };
  }
  const algorithms: ClientAssertionAlgorithm[] = [...ALGORITHMS_OF[kty]];
  if (alg !== undefined && !algorithms.includes(alg as ClientAssertionAlgorithm))
    return {
      problem: `has "alg" ${typeof alg === 'string' ? alg.slice(0, 20) : 'that is not a string'}, which is not ${algorithms.join(' or ')} for a ${kty} key`,
    };
  let pem: string;
  try {
    const publicKey = createPublicKey({ key: members, format: 'jwk' });
    const bits = publicKey.asymmetricKeyDetails?.modulusLength;
    if (kty === 'RSA' && (bits === undefined || bits < MIN_RSA_BITS))
      return { problem: `is an RSA key shorter than ${MIN_RSA_BITS} bits` };
    pem = publicKey.export({ format: 'pem', type: 'spki' }) as string;
  } catch {
    return { problem: 'is not a valid public key of its type' };
  }
  const named = {
    ...(kid === undefined ? {} : { kid }),
    ...(alg === undefined ? {} : { alg }),
  };
  return {
    key: {
      kid: (kid as string | undefined) ?? null,
      algorithms: alg === undefined ? algorithms : [alg as ClientAssertionAlgorithm],
      pem,
    },
    publicMembers: { ...members, ...named },
  };
}

/**
 * Why `uri` cannot be a client's jwks_uri, or null when it can: an absolute https URL of at most
 * 2048 characters without user name, password or fragment. Which addresses are never fetched
 * from is the outbound fetcher's rule (special-use addresses, CLIENT_METADATA_ALLOWED_ADDRESSES),
 * judged at every fetch, as for metadata documents.
 *
 * @example
 * keySetUriProblem('https://chatgpt.com/oauth/jwks.json'); // null
 * keySetUriProblem('http://app.example/jwks.json');       // 'must be an https URL'
 */
export function keySetUriProblem(uri: unknown): string | null {
  if (typeof uri !== 'string' || uri.length === 0) return 'must be an https URL';
  if (uri.length > MAX_KEY_SET_URI_LENGTH) return `is longer than ${MAX_KEY_SET_URI_LENGTH} characters`;
  if (!/^https:\/\/[\x21-\x7e]+$/.test(uri)) return 'must be an https URL';
  const url = URL.parse(uri);
  if (url === null || url.protocol !== 'https:' || !url.hostname) return 'must be an https URL';
  if (url.username !== '' || url.password !== '') return 'must not contain a user name or password';
  if (uri.includes('#')) return 'must not contain a fragment';
  return null;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const isBase64url = (value: unknown): value is string =>
  typeof value === 'string' && value.length > 0 && value.length <= 1400 && BASE64URL.test(value);
