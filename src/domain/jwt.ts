/**
 * JWTs through fast-jwt (node:crypto): HS256 here, the key pairs' algorithms in signing-keys.ts.
 * jose, which docs/design.md names, signs and verifies through WebCrypto, which costs 85–140 µs per operation on Node 20 here against 6–8 µs
 * (measured with bench/; a flow signs twice and each userinfo or introspection verifies
 * once), so the server uses fast-jwt and the tests verify its tokens with jose.
 */
import { createSigner, createVerifier } from 'fast-jwt';
import { secretKeyId } from '../crypto.ts';

export type Claims = Record<string, unknown>;

export interface Header {
  alg?: unknown;
  typ?: unknown;
  kid?: unknown;
}

/**
 * The protected header of a compact JWS, or null when it is not one.
 *
 * @example
 * jwtHeader(accessToken); // { alg: 'ES256', typ: 'at+jwt', kid: '…' }
 */
export function jwtHeader(token: string): Header | null {
  const dot = token.indexOf('.');
  if (dot <= 0) return null;
  try {
    const header = JSON.parse(Buffer.from(token.slice(0, dot), 'base64url').toString('utf8')) as unknown;
    return header && typeof header === 'object' ? (header as Header) : null;
  } catch {
    return null;
  }
}

/**
 * Access tokens: signed with JWT_SECRET (its UTF-8 bytes exactly as configured, docs/design.md §3)
 * under its kid; verified with the current secret or one still listed as previous.
 */
export class AccessTokenKeys {
  readonly kid: string;
  private readonly signer: (payload: Claims) => string;
  private readonly verifiers = new Map<string, (token: string) => Claims>();

  constructor(current: string, previous: string[], issuer: string) {
    this.kid = secretKeyId(current);
    // Times come from the server's clock: iat and exp in the payload (fast-jwt keeps a given
    // iat), expiry checked in verify().
    this.signer = createSigner({
      key: current,
      algorithm: 'HS256',
      header: { alg: 'HS256', typ: 'at+jwt', kid: this.kid },
    });
    for (const secret of [current, ...previous]) {
      const verifier = createVerifier({
        key: secret,
        algorithms: ['HS256'],
        allowedIss: issuer,
        cache: false,
        ignoreExpiration: true,
        ignoreNotBefore: true,
      });
      this.verifiers.set(secretKeyId(secret), verifier as (token: string) => Claims);
    }
  }

  sign(payload: Claims): string {
    return this.signer(payload);
  }

  /** The claims of a valid access token at `now` (epoch seconds), or null. */
  verify(token: string, now: number): Claims | null {
    const header = jwtHeader(token);
    if (header?.typ !== 'at+jwt' || header.alg !== 'HS256' || typeof header.kid !== 'string') return null;
    const verifier = this.verifiers.get(header.kid);
    if (!verifier) return null;
    let claims: Claims;
    try {
      claims = verifier(token);
    } catch {
      return null;
    }
    return typeof claims.exp === 'number' && now < claims.exp ? claims : null;
  }
}

/** ID tokens are keyed with the client's secret (OIDC Core §10.1); signers are kept per secret. */
const idTokenSigners = new Map<string, (payload: Claims) => string>();
const MAX_ID_TOKEN_SIGNERS = 1000;

export function signIdToken(clientSecret: string, payload: Claims): string {
  let signer = idTokenSigners.get(clientSecret);
  if (!signer) {
    if (idTokenSigners.size >= MAX_ID_TOKEN_SIGNERS) idTokenSigners.clear();
    signer = createSigner({ key: clientSecret, algorithm: 'HS256', header: { alg: 'HS256', typ: 'JWT' } });
    idTokenSigners.set(clientSecret, signer);
  }
  return signer(payload);
}
