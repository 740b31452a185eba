/**
 * Signing keys (docs/design.md §19): with TOKEN_SIGNING_ALG ES256, EdDSA or RS256, key pairs
 * the server generates (node:crypto), keeps in the database with the private half sealed under
 * the server secret, and shares with every node. A key is `next` (published, not yet signing),
 * `current` (signs every token) or `retired` (published until the last token it signed has
 * expired). Each node reads the set again every SIGNING_KEYS_RELOAD seconds, and at once (at
 * most once a second) when a token names a kid it does not know; a rotation is one guarded unit
 * (store/signing-keys.ts), so of several nodes one wins and the others read its result.
 */
import { createHash, createPublicKey, generateKeyPair, type JsonWebKey, type KeyObject } from 'node:crypto';
import { createSigner, createVerifier } from 'fast-jwt';
import { JWKS_MAX_AGE, SIGNING_KEYS_RELOAD, type TokenSigningAlg } from '../config.ts';
import type { Clock } from '../context.ts';
import type { SecretBox } from '../crypto.ts';
import type { Config } from '../config.ts';
import { Conflict, InvalidRequest } from '../errors.ts';
import type { SigningKeyChange, SigningKeyRecord } from '../store/signing-keys.ts';
import type { Store } from '../store/types.ts';
import { type Claims, jwtHeader } from './jwt.ts';

/** The algorithms of key pairs: every TOKEN_SIGNING_ALG but HS256. */
export type KeyAlgorithm = Exclude<TokenSigningAlg, 'HS256'>;

/** A public key as the key set publishes it (RFC 7517), with the members that tie it to its use. */
export type PublishedKey = JsonWebKey & { kid: string; alg: string; use: 'sig' };

/** What signs this node's tokens now: the current key. */
export interface TokenSigner {
  kid: string;
  alg: KeyAlgorithm;
  /** An RFC 9068 access token (`typ: at+jwt`). */
  accessToken(claims: Claims): string;
  /** An ID token (`typ: JWT`). */
  idToken(claims: Claims): string;
}

/** A key of the set as a node holds it: its record, its published form, and what verifies with it. */
interface HeldKey {
  record: SigningKeyRecord;
  jwk: PublishedKey;
  verify: (token: string) => Claims;
}

/** How an on-demand rotation goes: at once (a key leaked), and whether earlier keys leave the set at once too. */
export interface RotateOptions {
  /** A new key pair signs at once, however young the next key is. */
  now?: boolean;
  /** With `now`: every earlier key leaves the key set at once, and the tokens it signed stop verifying. */
  revokePrevious?: boolean;
}

/** Whether a key is in the set at `now`: next and current always, retired until its publish_until. */
const publishedAt = (record: SigningKeyRecord, now: number) =>
  record.state !== 'retired' || (record.publish_until ?? 0) > now;

/** The least time between two reads of the set prompted by unknown kids (milliseconds). */
const UNKNOWN_KID_RELOAD_GAP_MS = 1000;

/**
 * The key pair of a new key, as node:crypto makes it: P-256, Ed25519 or 2048-bit RSA.
 * Asynchronous: RSA takes tens of milliseconds, which stay off the event loop.
 */
function generatePair(alg: KeyAlgorithm): Promise<{ publicKey: KeyObject; privateKey: KeyObject }> {
  return new Promise((resolve, reject) => {
    const done = (error: Error | null, publicKey: KeyObject, privateKey: KeyObject) =>
      error ? reject(error) : resolve({ publicKey, privateKey });
    if (alg === 'ES256') generateKeyPair('ec', { namedCurve: 'P-256' }, done);
    else if (alg === 'EdDSA') generateKeyPair('ed25519', undefined, done);
    else generateKeyPair('rsa', { modulusLength: 2048 }, done);
  });
}

/**
 * The RFC 7638 SHA-256 thumbprint of a public JWK, base64url: the digest of its required members
 * in lexicographic order (EC: crv, kty, x, y; OKP: crv, kty, x; RSA: e, kty, n).
 *
 * @example
 * keyThumbprint({ kty: 'OKP', crv: 'Ed25519', x: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo' });
 * // 'kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k' (RFC 8037 Appendix A.3)
 */
export function keyThumbprint(jwk: JsonWebKey): string {
  const members =
    jwk.kty === 'RSA'
      ? { e: jwk.e, kty: jwk.kty, n: jwk.n }
      : jwk.kty === 'EC'
        ? { crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y }
        : { crv: jwk.crv, kty: jwk.kty, x: jwk.x };
  return createHash('sha256').update(JSON.stringify(members)).digest('base64url');
}

/**
 * A new key of `alg` in `state`: its public JWK with kid, alg and use, and its private key as
 * PKCS #8 sealed with `box` (the only form the private key is ever stored or passed in).
 *
 * @example
 * const record = await newSigningKey('ES256', 'next', secrets.signingKeys, now); // { kid, state: 'next', … }
 */
export async function newSigningKey(
  alg: KeyAlgorithm,
  state: 'current' | 'next',
  box: SecretBox,
  now: number,
): Promise<SigningKeyRecord> {
  const { publicKey, privateKey } = await generatePair(alg);
  const jwk = publicKey.export({ format: 'jwk' });
  const kid = keyThumbprint(jwk);
  return {
    kid,
    alg,
    state,
    public_jwk: JSON.stringify({ ...jwk, kid, alg, use: 'sig' }),
    private_key_sealed: box.seal(privateKey.export({ type: 'pkcs8', format: 'pem' }) as string),
    created_at: now,
    activated_at: state === 'current' ? now : null,
    retired_at: null,
    publish_until: null,
  };
}

/**
 * The `at_hash` of an access token for an ID token signed with `alg` (OpenID Connect Core
 * §3.1.3.6): the left half of the digest of its ASCII text, base64url. The digest is the one of
 * the signing algorithm: SHA-256 for ES256 and RS256, SHA-512 for EdDSA with Ed25519 (as the
 * OpenID conformance suite and the libraries compute it).
 *
 * @example
 * accessTokenHash('ES256', 'eyJhbGciOiJFUzI1NiIs…'); // 22 base64url characters (16 bytes)
 */
export function accessTokenHash(alg: KeyAlgorithm, accessToken: string): string {
  const hash = createHash(alg === 'EdDSA' ? 'sha512' : 'sha256')
    .update(accessToken, 'ascii')
    .digest();
  return hash.subarray(0, hash.length / 2).toString('base64url');
}

/** When a next key may sign: once a key set that lacks it can no longer be cached anywhere. */
export const signsFrom = (next: Pick<SigningKeyRecord, 'created_at'>) =>
  next.created_at + JWKS_MAX_AGE + SIGNING_KEYS_RELOAD;

/**
 * The key set of this node: the keys it publishes and verifies with, the current one it signs
 * with, and the changes it makes to the shared set (a first key, a switch of algorithm, a
 * scheduled rotation). With TOKEN_SIGNING_ALG=HS256 it never signs; it still verifies with, and
 * publishes, keys a key mode left behind until their tokens have expired.
 *
 * @example
 * const keys = new SigningKeys({ config, store, clock, box: new SecretBox(secret, [], 'signing-key') });
 * await keys.start();                              // a first key pair in a key mode
 * const signer = await keys.signer();              // the current key
 * const claims = await keys.verify(token, 'at+jwt', clock());
 */
export class SigningKeys {
  private held = new Map<string, HeldKey>();
  private signerOf: { kid: string; signer: TokenSigner } | null = null;
  /** When the set was last read (the server's clock), and the read under way. */
  private readAt = Number.NEGATIVE_INFINITY;
  private reading: Promise<void> | null = null;
  private lastUnknownRead = 0;

  constructor(
    private readonly deps: {
      config: Pick<Config, 'tokenSigningAlg' | 'signingKeyRotation' | 'accessTokenTtl' | 'baseUrl'>;
      store: Store;
      clock: Clock;
      /** Seals and opens private keys (SecretBox with its own purpose). */
      box: SecretBox;
    },
  ) {}

  /** The algorithm of the key pairs, or null with HS256. */
  get algorithm(): KeyAlgorithm | null {
    const alg = this.deps.config.tokenSigningAlg;
    return alg === 'HS256' ? null : alg;
  }

  /** At start-up: reads the set and brings it to the configured mode (a first key, a switch). */
  async start(): Promise<void> {
    await this.refresh();
  }

  /** The current key's signer, the set read again first when it is older than SIGNING_KEYS_RELOAD. */
  async signer(): Promise<TokenSigner> {
    const now = this.deps.clock();
    if (now - this.readAt >= SIGNING_KEYS_RELOAD || !this.currentHeld() || this.rotationDue(now)) await this.refresh();
    const current = this.currentHeld();
    if (!current) throw new Error('no current signing key');
    if (this.signerOf?.kid !== current.record.kid)
      this.signerOf = { kid: current.record.kid, signer: this.makeSigner(current.record) };
    return this.signerOf.signer;
  }

  /**
   * The claims of a token of type `typ` signed by a key of the set, valid at `now`, or null. The
   * header's alg must be its key's (never HS256 or none with a public key); a kid this node does
   * not know makes it read the set again, at most once a second.
   */
  async verify(token: string, typ: string, now: number): Promise<Claims | null> {
    const header = jwtHeader(token);
    if (header?.typ !== typ || typeof header.kid !== 'string' || typeof header.alg !== 'string') return null;
    // A key withdrawn on another node (an emergency rotation) stops verifying here within a reload.
    if (this.held.size > 0 && now - this.readAt >= SIGNING_KEYS_RELOAD) await this.refresh();
    let key = this.held.get(header.kid);
    if (!key && Date.now() - this.lastUnknownRead >= UNKNOWN_KID_RELOAD_GAP_MS) {
      this.lastUnknownRead = Date.now();
      await this.refresh();
      key = this.held.get(header.kid);
    }
    if (!key || key.record.alg !== header.alg || !publishedAt(key.record, now)) return null;
    let claims: Claims;
    try {
      claims = key.verify(token);
    } catch {
      return null;
    }
    return typeof claims.exp === 'number' && now < claims.exp ? claims : null;
  }

  /** The key set to publish at `now`: next, current and the retired keys still published. */
  async published(now: number): Promise<PublishedKey[]> {
    // With HS256 and no key ever held (the contract's default) the set is never read here; with
    // keys left by a key mode it is, so that keys a node still in that mode made during a rolling
    // switch are retired and drain too.
    const reads = this.algorithm !== null || this.held.size > 0;
    if (reads && now - this.readAt >= SIGNING_KEYS_RELOAD) await this.refresh();
    return [...this.held.values()].filter(({ record }) => publishedAt(record, now)).map(({ jwk }) => jwk);
  }

  /** Every key of the shared set as the database has it now, oldest first (the private half never leaves). */
  async list(): Promise<SigningKeyRecord[]> {
    return this.deps.store.signingKeys.list();
  }

  /**
   * Rotation on demand: the next key signs from now, the current one retires (published until its
   * last token expires) and a new next key of the same algorithm is published. Refused
   * (Conflict) when no key signs, or while the next key is younger than one JWKS cache
   * period and a reload: a verifier may not have it yet. Acts on the database's set, whatever
   * this process's TOKEN_SIGNING_ALG. Returns the set after the rotation.
   *
   * `now` is the emergency path, for a key that leaked: a new key pair signs at once (the current
   * and next keys retire; the next may have leaked with it), whatever their age. With
   * `revokePrevious`, every earlier key also leaves the set at once, so the tokens they signed
   * stop verifying everywhere within a reload.
   */
  async rotate({ now: atOnce = false, revokePrevious = false }: RotateOptions = {}): Promise<SigningKeyRecord[]> {
    if (revokePrevious && !atOnce)
      throw new InvalidRequest(
        'Revoking the previous keys needs a rotation at once (now): otherwise the key that signs would be withdrawn while it still signs.',
      );
    const now = this.deps.clock();
    const records = await this.deps.store.signingKeys.list();
    const current = records.find((record) => record.state === 'current');
    const next = records.find((record) => record.state === 'next');
    if (!current)
      throw new Conflict(
        'No signing key signs tokens: TOKEN_SIGNING_ALG is HS256 (JWT_SECRET signs), so there is nothing to rotate.',
      );
    if (atOnce) return this.rotateAtOnce(records, revokePrevious, now);
    if (!next) {
      // Only a set changed by hand lacks one; publishing it is all a rotation can do now.
      await this.change({ retire: [], add: [await this.newKey(current.alg as KeyAlgorithm, 'next', now)] }, now);
      throw new Conflict(
        `There was no next key; one is published now and can sign from ${iso(signsFrom({ created_at: now }))}. Rotate again then.`,
      );
    }
    if (!this.opens(next))
      throw new Conflict(
        `The next key (${next.kid}) was sealed under a server secret this process does not have: run the command with the server's JWT_SECRET and JWT_PREVIOUS_SECRETS.`,
      );
    if (now < signsFrom(next))
      throw new Conflict(
        `The next key (${next.kid}) has been published only since ${iso(next.created_at)}; it can sign from ${iso(signsFrom(next))}, once no verifier can hold a cached key set without it (JWKS max-age ${JWKS_MAX_AGE} seconds, and ${SIGNING_KEYS_RELOAD} seconds for every node to read the set).`,
      );
    const won = await this.change(
      {
        retire: [{ kid: current.kid, state: 'current' }],
        promote: next.kid,
        add: [await this.newKey(next.alg as KeyAlgorithm, 'next', now)],
      },
      now,
    );
    if (!won) throw new Conflict('Another rotation changed the key set at the same moment; list the keys to see it.');
    await this.read();
    return this.deps.store.signingKeys.list();
  }

  /**
   * The emergency rotation: a new pair (current and next) of the current key's algorithm, the keys
   * that signed or would have signed retired; with `revokePrevious` every earlier key is withdrawn
   * (published until now). Verifiers holding a cached set meet the new kid and fetch it again.
   */
  private async rotateAtOnce(
    records: SigningKeyRecord[],
    revokePrevious: boolean,
    now: number,
  ): Promise<SigningKeyRecord[]> {
    const current = records.find((record) => record.state === 'current')!;
    const alg = current.alg as KeyAlgorithm;
    const retire = records
      .filter((record) => record.state !== 'retired')
      .map(({ kid, state }) => ({ kid, state: state as 'current' | 'next' }));
    const withdraw = revokePrevious
      ? records.filter((record) => record.state === 'retired' && publishedAt(record, now)).map(({ kid }) => kid)
      : [];
    const add = [await this.newKey(alg, 'current', now), await this.newKey(alg, 'next', now)];
    const won = await this.deps.store.signingKeys.change({
      retire,
      add,
      withdraw,
      now,
      publishUntil: revokePrevious ? now : now + this.deps.config.accessTokenTtl + SIGNING_KEYS_RELOAD,
    });
    if (!won) throw new Conflict('Another rotation changed the key set at the same moment; list the keys to see it.');
    await this.read();
    return this.deps.store.signingKeys.list();
  }

  /** Whether the schedule (SIGNING_KEY_ROTATION) has the next key sign from `now`, by the set as held. */
  private rotationDue(now: number): boolean {
    const rotation = this.deps.config.signingKeyRotation;
    const current = this.currentHeld()?.record;
    const next = [...this.held.values()].find(({ record }) => record.state === 'next')?.record;
    return (
      rotation > 0 &&
      current !== undefined &&
      next !== undefined &&
      now >= (current.activated_at ?? current.created_at) + rotation &&
      now >= signsFrom(next)
    );
  }

  private currentHeld(): HeldKey | undefined {
    for (const key of this.held.values()) if (key.record.state === 'current') return key;
    return undefined;
  }

  /** Reads the set and settles it, once at a time (concurrent callers share the one read). */
  private refresh(): Promise<void> {
    this.reading ??= (async () => {
      try {
        await this.read();
        if (await this.settle()) await this.read();
      } finally {
        this.reading = null;
      }
    })();
    return this.reading;
  }

  private async read(): Promise<void> {
    const now = this.deps.clock();
    const records = await this.deps.store.signingKeys.list();
    const held = new Map<string, HeldKey>();
    for (const record of records) {
      if (!publishedAt(record, now)) continue;
      const known = this.held.get(record.kid);
      held.set(record.kid, known ? { ...known, record } : this.hold(record));
    }
    this.held = held;
    this.readAt = now;
  }

  /**
   * Brings the set to the configured mode: HS256 retires what signs or would sign; a key mode
   * makes a first key pair (or a new one, when the current key is of another algorithm or
   * cannot be opened with this server secret), and rotates when the schedule says. True when it
   * changed the set (or another node did first).
   */
  private async settle(): Promise<boolean> {
    const now = this.deps.clock();
    const alg = this.algorithm;
    const keys = [...this.held.values()].map(({ record }) => record);
    const current = keys.find((record) => record.state === 'current');
    const next = keys.find((record) => record.state === 'next');
    const retire = [current, next]
      .filter((record) => record !== undefined)
      .map(({ kid, state }) => ({ kid, state: state as 'current' | 'next' }));
    if (alg === null) {
      if (retire.length === 0) return false;
      await this.change({ retire, add: [] }, now);
      return true;
    }
    if (!current || current.alg !== alg || !this.opens(current)) {
      // A switch of algorithm, or a key sealed under a server secret no longer configured. No
      // verifier can have cached a key made now: it signs at once, as the very first one does;
      // verifiers that meet its kid fetch the set again. Tokens of the keys retired here verify
      // until they expire.
      const add = [await this.newKey(alg, 'current', now), await this.newKey(alg, 'next', now)];
      await this.change({ retire, add }, now);
      return true;
    }
    if (!next || next.alg !== alg || !this.opens(next)) {
      const stale = next ? [{ kid: next.kid, state: 'next' as const }] : [];
      await this.change({ retire: stale, add: [await this.newKey(alg, 'next', now)] }, now);
      return true;
    }
    if (this.rotationDue(now)) {
      await this.change(
        {
          retire: [{ kid: current.kid, state: 'current' }],
          promote: next.kid,
          add: [await this.newKey(alg, 'next', now)],
        },
        now,
      );
      return true;
    }
    return false;
  }

  /** Applies a change; a retired key stays published for the longest token it signed plus a node's reload. */
  private change(change: Omit<SigningKeyChange, 'now' | 'publishUntil'>, now: number): Promise<boolean> {
    const publishUntil = now + this.deps.config.accessTokenTtl + SIGNING_KEYS_RELOAD;
    return this.deps.store.signingKeys.change({ ...change, now, publishUntil });
  }

  private newKey(alg: KeyAlgorithm, state: 'current' | 'next', now: number): Promise<SigningKeyRecord> {
    return newSigningKey(alg, state, this.deps.box, now);
  }

  /** Whether this server secret (or a previous one) opens the key's private half. */
  private opens(record: SigningKeyRecord): boolean {
    try {
      this.deps.box.openOnce(record.private_key_sealed);
      return true;
    } catch {
      return false;
    }
  }

  private hold(record: SigningKeyRecord): HeldKey {
    const jwk = JSON.parse(record.public_jwk) as PublishedKey;
    const { kid: _kid, alg: _alg, use: _use, ...material } = jwk;
    const publicPem = createPublicKey({ key: material, format: 'jwk' }).export({ type: 'spki', format: 'pem' });
    const verify = createVerifier({
      key: publicPem as string,
      algorithms: [record.alg as KeyAlgorithm],
      allowedIss: this.deps.config.baseUrl,
      cache: false,
      // Times come from the server's clock, checked in verify().
      ignoreExpiration: true,
      ignoreNotBefore: true,
    }) as (token: string) => Claims;
    return { record, jwk, verify };
  }

  private makeSigner(record: SigningKeyRecord): TokenSigner {
    const alg = record.alg as KeyAlgorithm;
    const key = this.deps.box.openOnce(record.private_key_sealed);
    const signer = (typ: string) =>
      createSigner({ key, algorithm: alg, header: { alg, typ, kid: record.kid } }) as (claims: Claims) => string;
    const access = signer('at+jwt');
    const id = signer('JWT');
    return { kid: record.kid, alg, accessToken: access, idToken: id };
  }
}

const iso = (seconds: number) => new Date(seconds * 1000).toISOString();
