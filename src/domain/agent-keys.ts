/**
 * Key-bound agents (docs/design.md §16): the public key an agent registers instead of a secret,
 * and the short-lived signed assertion it proves itself with at POST /api/agent/authenticate.
 * Signatures are checked by fast-jwt (node:crypto), never here; this module decides which key,
 * which algorithm and which claims.
 */
import { createHash, createPublicKey } from 'node:crypto';
import { createVerifier } from 'fast-jwt';

/** The public JWK of a key-bound agent: its members that name the key, nothing else. */
export type PublicJwk = { kty: 'OKP'; crv: 'Ed25519'; x: string } | { kty: 'EC'; crv: 'P-256'; x: string; y: string };

/** A registered key: the JWK kept, its JSON text as stored, its RFC 7638 thumbprint. */
export interface AgentKey {
  jwk: PublicJwk;
  json: string;
  thumbprint: string;
}

/** The longest public key accepted as text (a JWK with usual extras such as kid and use is about 200 characters). */
export const MAX_PUBLIC_KEY_LENGTH = 2048;
/** The longest assertion accepted (one with the claims of docs/design.md §16 is about 500 characters). */
export const MAX_ASSERTION_LENGTH = 2048;
/** An assertion lives at most this long (exp − iat, seconds). */
export const MAX_ASSERTION_LIFETIME = 60;
/**
 * How far the agent's clock may be from ours (seconds): an assertion is accepted until
 * exp + this, and an iat up to this far in the future. Its id is remembered as long.
 */
export const ASSERTION_CLOCK_SKEW = 30;

/** The JWS algorithm each key type signs with: never `none`, never a shared-secret HS*. */
const ALGORITHM = { OKP: 'EdDSA', EC: 'ES256' } as const;

const BASE64URL = /^[A-Za-z0-9_-]+$/;
/** base64url of 32 bytes, without padding: 43 characters, as an Ed25519 key and a P-256 coordinate are. */
const is32Bytes = (value: unknown): value is string =>
  typeof value === 'string' && value.length === 43 && BASE64URL.test(value);

/**
 * The key in `raw` (a JWK as an object or as JSON text), or why it is refused, in words a person
 * who pasted it can act on. Only Ed25519 (`kty: OKP`) and P-256 (`kty: EC`) public keys.
 *
 * @example
 * const read = readPublicKey('{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}');
 * if ('problem' in read) throw new InvalidRequest(read.problem);
 * read.key.thumbprint; // 'kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k'
 */
export function readPublicKey(raw: unknown): { key: AgentKey } | { problem: string } {
  let value = raw;
  if (typeof raw === 'string') {
    if (raw.length > MAX_PUBLIC_KEY_LENGTH)
      return {
        problem: `The public key is longer than ${MAX_PUBLIC_KEY_LENGTH} characters: give the public JWK only.`,
      };
    try {
      value = JSON.parse(raw);
    } catch {
      return {
        problem: 'The public key is not JSON: give the public key as a JWK, such as agentauth-agent keygen prints.',
      };
    }
  } else if (JSON.stringify(raw ?? null).length > MAX_PUBLIC_KEY_LENGTH) {
    return { problem: `The public key is longer than ${MAX_PUBLIC_KEY_LENGTH} characters: give the public JWK only.` };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return { problem: 'The public key must be a JWK: a JSON object with kty, crv and x.' };
  const jwk = value as Record<string, unknown>;
  if ('d' in jwk)
    return {
      problem:
        'This is a private key (it has "d"). Register the public key only, and keep the private key with the agent.',
    };
  let key: PublicJwk;
  if (jwk.kty === 'OKP' && jwk.crv === 'Ed25519') {
    if (!is32Bytes(jwk.x)) return { problem: 'The Ed25519 key\'s "x" must be 32 bytes in base64url.' };
    key = { kty: 'OKP', crv: 'Ed25519', x: jwk.x };
  } else if (jwk.kty === 'EC' && jwk.crv === 'P-256') {
    if (!is32Bytes(jwk.x) || !is32Bytes(jwk.y))
      return { problem: 'The P-256 key\'s "x" and "y" must each be 32 bytes in base64url.' };
    key = { kty: 'EC', crv: 'P-256', x: jwk.x, y: jwk.y };
  } else {
    return { problem: 'Only Ed25519 (kty OKP) and P-256 (kty EC, for ES256) public keys are accepted.' };
  }
  try {
    // A P-256 point off the curve, for one, is refused here rather than at the first sign-in.
    createPublicKey({ key, format: 'jwk' });
  } catch {
    return { problem: 'The public key is not a valid key of its curve.' };
  }
  return { key: { jwk: key, json: JSON.stringify(key), thumbprint: jwkThumbprint(key) } };
}

/**
 * The RFC 7638 SHA-256 thumbprint, base64url: the digest of the key's required members in
 * lexicographic order without whitespace (EC: crv, kty, x, y; OKP, RFC 8037 §2: crv, kty, x).
 *
 * @example
 * jwkThumbprint({ kty: 'OKP', crv: 'Ed25519', x: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo' });
 * // 'kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k' (RFC 8037 Appendix A.3)
 */
export function jwkThumbprint(jwk: PublicJwk): string {
  const members =
    jwk.kty === 'EC'
      ? `{"crv":"${jwk.crv}","kty":"${jwk.kty}","x":"${jwk.x}","y":"${jwk.y}"}`
      : `{"crv":"${jwk.crv}","kty":"${jwk.kty}","x":"${jwk.x}"}`;
  return createHash('sha256').update(members).digest('base64url');
}

/** What an assertion must say, besides being signed by the agent's key. */
export interface AssertionExpectations {
  agentId: string;
  /** Our issuer (BASE_URL): the only audience accepted, so an assertion made for a look-alike is worthless. */
  issuer: string;
  requestId: string;
  /** Epoch seconds. */
  now: number;
}

/** A verified assertion's id, and until when (epoch seconds) a replay of it must be refused. */
export interface VerifiedAssertion {
  jti: string;
  rememberUntil: number;
}

/**
 * The assertion's id if `assertion` is a JWT signed by the key in `publicJwk` (its stored JSON)
 * with the key's algorithm, with iss = sub = the agent, aud = our issuer, the request's id, a
 * jti, and iat/exp at most MAX_ASSERTION_LIFETIME apart and current within the clock skew; null
 * otherwise, whatever the reason (the caller answers 401 invalid_credentials for all alike).
 * Single use is the caller's: it records the jti (Store.assertions.use).
 *
 * @example
 * const verified = verifyAssertion(agent.public_jwk, body.agent_assertion, {
 *   agentId: agent.id, issuer: ctx.config.baseUrl, requestId: body.request_id, now: ctx.clock(),
 * });
 */
export function verifyAssertion(
  publicJwk: string,
  assertion: string,
  expected: AssertionExpectations,
): VerifiedAssertion | null {
  if (assertion.length > MAX_ASSERTION_LENGTH) return null;
  let claims: Record<string, unknown>;
  try {
    const jwk = JSON.parse(publicJwk) as PublicJwk;
    const verify = createVerifier({
      key: createPublicKey({ key: jwk, format: 'jwk' }).export({ format: 'pem', type: 'spki' }) as string,
      algorithms: [ALGORITHM[jwk.kty]],
      cache: false,
      // Times are checked below against the server's clock, with the documented skew.
      ignoreExpiration: true,
      ignoreNotBefore: true,
    });
    claims = verify(assertion) as Record<string, unknown>;
  } catch {
    return null;
  }
  const { iss, sub, aud, request_id, jti, iat, exp } = claims;
  const { now } = expected;
  const timesValid =
    Number.isInteger(iat) &&
    Number.isInteger(exp) &&
    (exp as number) > (iat as number) &&
    (exp as number) - (iat as number) <= MAX_ASSERTION_LIFETIME &&
    (iat as number) <= now + ASSERTION_CLOCK_SKEW &&
    now < (exp as number) + ASSERTION_CLOCK_SKEW &&
    (claims.nbf === undefined ||
      (Number.isInteger(claims.nbf) && (claims.nbf as number) <= now + ASSERTION_CLOCK_SKEW));
  const valid =
    timesValid &&
    iss === expected.agentId &&
    sub === expected.agentId &&
    (aud === expected.issuer || (Array.isArray(aud) && aud.length === 1 && aud[0] === expected.issuer)) &&
    request_id === expected.requestId &&
    typeof jti === 'string' &&
    jti.length >= 1 &&
    jti.length <= 128;
  return valid ? { jti: jti as string, rememberUntil: (exp as number) + ASSERTION_CLOCK_SKEW } : null;
}
