/**
 * RFC 7523 client assertions (private_key_jwt, OpenID Connect Core §9): the checks of one
 * assertion against a client's keys. Signatures are fast-jwt's (node:crypto); this module decides
 * which key, which algorithm and which claims, as src/domain/agent-keys.ts does for agents.
 */
import { createDecoder, createVerifier } from 'fast-jwt';
import { ASSERTION_CLOCK_SKEW } from '../agent-keys.ts';
import { CLIENT_ASSERTION_ALGORITHMS, type ClientAssertionAlgorithm, type ClientKey } from './key-set.ts';

/** The one client_assertion_type (RFC 7523 §2.2). */
export const CLIENT_ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
/** The longest assertion accepted (an RS256 one with the usual claims is about 700 characters). */
export const MAX_CLIENT_ASSERTION_LENGTH = 8192;
/**
 * How far ahead an assertion's exp may be (seconds from now, besides the clock skew): an assertion
 * is made for one request, so a long-lived one is a credential waiting to be stolen.
 */
export const MAX_CLIENT_ASSERTION_LIFETIME = 300;
/** The longest jti kept (the used-assertion store's column). */
const MAX_JTI_LENGTH = 128;

const decode = createDecoder({ complete: true });

/** An assertion's header and claims, read without checking anything. */
interface Decoded {
  header: Record<string, unknown>;
  payload: Record<string, unknown>;
}

function decoded(assertion: string): Decoded | null {
  if (assertion.length > MAX_CLIENT_ASSERTION_LENGTH) return null;
  try {
    const { header, payload } = decode(assertion) as { header: unknown; payload: unknown };
    if (!isObject(header) || !isObject(payload)) return null;
    return { header, payload };
  } catch {
    return null;
  }
}

/**
 * The client an assertion says it is for (its `sub`, else its `iss`), unverified: only to find
 * the client when the request names none (RFC 7523 §3 makes client_id optional). Undefined when
 * the assertion cannot be read.
 *
 * @example
 * assertionClientId(assertion); // 'https://chatgpt.com/oauth/abc/client.json'
 */
export function assertionClientId(assertion: string): string | undefined {
  const payload = decoded(assertion)?.payload;
  const named = payload?.sub ?? payload?.iss;
  return typeof named === 'string' ? named : undefined;
}

/**
 * The key id an assertion's header names, or null for none; undefined when it cannot be read.
 *
 * @example
 * assertionKeyId(assertion); // 'k1'
 */
export function assertionKeyId(assertion: string): string | null | undefined {
  const header = decoded(assertion)?.header;
  if (!header) return undefined;
  return typeof header.kid === 'string' ? header.kid : null;
}

/** What an assertion must say besides being signed by one of the client's keys. */
export interface ClientAssertionExpectations {
  clientId: string;
  /** The audiences accepted: our issuer and our token endpoint's URL. */
  audiences: readonly string[];
  /** Epoch seconds. */
  now: number;
}

/** A verified assertion's id, and until when (epoch seconds) a replay of it must be refused. */
export interface VerifiedClientAssertion {
  jti: string;
  rememberUntil: number;
}

/**
 * Why an assertion is refused, worded for the client's developer: nothing secret, nothing about
 * our network. `unknownKey` says the assertion names a key the client's set does not hold (a
 * fetched set may be stale: the caller may fetch it again, at a bounded rate).
 */
export interface AssertionProblem {
  problem: string;
  unknownKey?: boolean;
}

/**
 * Checks `assertion` against `keys` and what it must say: an allowed algorithm (RS256, PS256,
 * ES256, EdDSA; never none or HS*), the key its `kid` names (or the client's only key) of the
 * type that algorithm needs, a valid signature, `iss` = `sub` = the client, an `aud` that is our
 * issuer or token endpoint (or an array holding one), an `exp` not past (within the clock skew)
 * and at most MAX_CLIENT_ASSERTION_LIFETIME ahead, `iat` and `nbf` (if sent) not in the future,
 * and a `jti`. Single use is the caller's: it records the jti (Store.assertions.use).
 *
 * @example
 * const checked = verifyClientAssertion(keys, body.client_assertion, {
 *   clientId, audiences: [issuer, `${issuer}/token`], now: ctx.clock(),
 * });
 * if ('problem' in checked) throw new InvalidClient(`client authentication failed: ${checked.problem}`);
 */
export function verifyClientAssertion(
  keys: readonly ClientKey[],
  assertion: string,
  expected: ClientAssertionExpectations,
): VerifiedClientAssertion | AssertionProblem {
  const read = decoded(assertion);
  if (!read) return { problem: 'client_assertion is not a JWT (RFC 7523)' };
  const { alg, kid } = read.header;
  if (typeof alg !== 'string' || !(CLIENT_ASSERTION_ALGORITHMS as readonly string[]).includes(alg))
    return {
      problem: `the assertion's algorithm (alg) must be one of ${CLIENT_ASSERTION_ALGORITHMS.join(', ')}`,
    };
  const algorithm = alg as ClientAssertionAlgorithm;
  if (read.header.crit !== undefined)
    return { problem: 'the assertion has critical header parameters (crit), which are not understood here' };
  if (kid !== undefined && typeof kid !== 'string') return { problem: "the assertion's kid is not a string" };
  const named = kid === undefined ? keys : keys.filter((key) => key.kid === kid);
  if (named.length === 0)
    return {
      problem: `the client's key set has no key with kid ${JSON.stringify(kid).slice(0, 80)}`,
      unknownKey: true,
    };
  if (kid === undefined && keys.length > 1)
    return { problem: 'the assertion names no key (kid) and the client has several: put the kid in its header' };
  const key = named.find((candidate) => candidate.algorithms.includes(algorithm));
  if (!key)
    return {
      problem: `the client's key ${kid === undefined ? '' : `${kid} `}is not for ${algorithm}`.replace('  ', ' '),
    };

  let claims: Record<string, unknown>;
  try {
    const verify = createVerifier({
      key: key.pem,
      algorithms: [algorithm],
      cache: false,
      // Times are checked below against the server's clock, with the documented skew.
      ignoreExpiration: true,
      ignoreNotBefore: true,
    });
    claims = verify(assertion) as Record<string, unknown>;
  } catch {
    return { problem: "the assertion's signature does not verify with the client's key" };
  }
  const { iss, sub, aud, exp, iat, nbf, jti } = claims;
  const { now, clientId, audiences } = expected;
  if (iss !== clientId || sub !== clientId)
    return { problem: "the assertion's iss and sub must both be the client_id" };
  const audienceList = Array.isArray(aud) ? aud : [aud];
  if (!audienceList.some((value) => typeof value === 'string' && audiences.includes(value)))
    return {
      problem: `the assertion's aud must be this server's issuer or token endpoint (${audiences.join(' or ')})`,
    };
  if (!Number.isInteger(exp)) return { problem: 'the assertion has no exp (a whole number of seconds)' };
  if (now >= (exp as number) + ASSERTION_CLOCK_SKEW) return { problem: 'the assertion has expired' };
  if ((exp as number) > now + MAX_CLIENT_ASSERTION_LIFETIME + ASSERTION_CLOCK_SKEW)
    return {
      problem: `the assertion lives too long: its exp may be at most ${MAX_CLIENT_ASSERTION_LIFETIME} seconds ahead`,
    };
  if (iat !== undefined && (!Number.isInteger(iat) || (iat as number) > now + ASSERTION_CLOCK_SKEW))
    return { problem: "the assertion's iat is not a time in the past" };
  if (nbf !== undefined && (!Number.isInteger(nbf) || (nbf as number) > now + ASSERTION_CLOCK_SKEW))
    return { problem: 'the assertion is not valid yet (nbf)' };
  if (typeof jti !== 'string' || jti.length === 0 || jti.length > MAX_JTI_LENGTH)
    return { problem: `the assertion needs a jti of 1 to ${MAX_JTI_LENGTH} characters` };
  return { jti, rememberUntil: (exp as number) + ASSERTION_CLOCK_SKEW };
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
