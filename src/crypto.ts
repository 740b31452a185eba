/** Random identifiers, digests and the encryption of client secrets (docs/design.md §3). */
import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createHmac,
  hkdfSync,
  randomBytes,
  timingSafeEqual,
} from 'node:crypto';

/** Readable prefixes of everything the server generates. */
export const PREFIX = {
  account: 'acc_',
  consoleSession: 'ses_',
  consoleLink: 'lnk_',
  challenge: 'chl_',
  request: 'req_',
  agent: 'agt_',
  agentSecret: 'aas_',
  client: 'cli_',
  clientSecret: 'cls_',
  registrationAccessToken: 'rat_',
  code: 'cod_',
  refreshToken: 'rft_',
  grant: 'grt_',
  token: 'atk_',
  auditEvent: 'evt_',
  apiKey: 'aak_',
  apiKeyId: 'key_',
  webhook: 'whk_',
  webhookSecret: 'whsec_',
  webhookMessage: 'msg_',
  approval: 'apr_',
  actionRequest: 'act_',
} as const;

/** A prefixed random value of `bytes` bytes from crypto.randomBytes, base64url-encoded. */
export function randomId(prefix: string, bytes: number): string {
  return prefix + randomBytes(bytes).toString('base64url');
}

export const newRequestId = () => randomId(PREFIX.request, 24);
export const newAgentId = () => randomId(PREFIX.agent, 12);
export const newAgentSecret = () => randomId(PREFIX.agentSecret, 32);
export const newClientId = () => randomId(PREFIX.client, 12);
export const newClientSecret = () => randomId(PREFIX.clientSecret, 32);
/** RFC 7592: the bearer credential of a dynamically registered client's configuration endpoint. */
export const newRegistrationAccessToken = () => randomId(PREFIX.registrationAccessToken, 32);
export const newCode = () => randomId(PREFIX.code, 32);
export const newRefreshToken = () => randomId(PREFIX.refreshToken, 32);
export const newGrantId = () => randomId(PREFIX.grant, 16);
export const newTokenId = () => randomId(PREFIX.token, 16);
export const newAuditEventId = () => randomId(PREFIX.auditEvent, 15);
/** A management API key (docs/design.md §15): the prefix lets secret scanners recognise a leaked one. */
export const newApiKey = () => randomId(PREFIX.apiKey, 32);
export const newApiKeyId = () => randomId(PREFIX.apiKeyId, 12);
export const newWebhookId = () => randomId(PREFIX.webhook, 12);
/** An owner approval (docs/design.md §16): named to the agent and the owner, decided only in the console. */
export const newApprovalId = () => randomId(PREFIX.approval, 16);
/** An action request's own id (docs/design.md §21): names it in approvals, tokens and the history. */
export const newActionRequestId = () => randomId(PREFIX.actionRequest, 16);
/** CIBA's auth_req_id: 32 random bytes, base64url, with no prefix (the website holds it; only its digest is stored). */
export const newAuthReqId = () => randomBytes(32).toString('base64url');
/**
 * A webhook's signing secret as Standard Webhooks writes one: `whsec_` and the base64 (not
 * base64url) of 32 random bytes, which its libraries decode to the HMAC key.
 */
export const newWebhookSecret = () => PREFIX.webhookSecret + randomBytes(32).toString('base64');

let lastMessageMs = 0;
let messageSequence = 0;
/**
 * A webhook message id (`msg_…`) that sorts by creation: the epoch millisecond (13 digits), a
 * per-process sequence within that millisecond (3 digits), then 64 random bits in hex. Digits and
 * lowercase hex sort alike under every collation, so `ORDER BY message_id` is creation order (to
 * within a millisecond across nodes).
 *
 * @example
 * newWebhookMessageId(); // 'msg_1764292000123000' + '9f0c…' (16 hex)
 */
export function newWebhookMessageId(now = Date.now()): string {
  if (now <= lastMessageMs) messageSequence = Math.min(messageSequence + 1, 999);
  else {
    lastMessageMs = now;
    messageSequence = 0;
  }
  const time = String(Math.max(now, lastMessageMs)).padStart(13, '0');
  return `${PREFIX.webhookMessage}${time}${String(messageSequence).padStart(3, '0')}${randomBytes(8).toString('hex')}`;
}

/**
 * SHA-256 digest, base64url. Used to store high-entropy server-generated secrets (agent
 * secrets, codes, refresh tokens, browser bindings): non-recoverable and cheap to check.
 */
export function digest(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('base64url');
}

/** Constant-time comparison of two strings (length differences leak only the length). */
export function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
}

/** PKCE S256 (RFC 7636 §4.6): BASE64URL(SHA256(ASCII(code_verifier))) == code_challenge. */
export function pkceS256Matches(verifier: string, challenge: string): boolean {
  return safeEqual(createHash('sha256').update(verifier, 'ascii').digest('base64url'), challenge);
}

/** A short, public identifier of a server secret, used as `kid` and to tag ciphertexts. */
export function secretKeyId(secret: string): string {
  return createHash('sha256').update('agentauth-kid:').update(secret, 'utf8').digest('base64url').slice(0, 12);
}

/** A key for one purpose, derived (HKDF-SHA256) from a server secret. */
function derivedKey(secret: string, purpose: string): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, 'agentauth', purpose, 32));
}

/**
 * Issues and recognises browser binding values (the `agentauth_browser` cookie): a random value
 * and its HMAC under a key derived from the server secret. /authorize adopts a cookie the
 * browser already has only if this server issued it, so a value planted by someone else is
 * replaced rather than bound to the victim's request. Values issued under a previous secret are
 * still recognised during a rotation.
 *
 * @example
 * const bindings = new BrowserBindings(process.env.JWT_SECRET!);
 * const value = bindings.issue();   // 'k3…Q.Zt…8' (random . MAC)
 * bindings.issuedByUs(value);       // true
 * bindings.issuedByUs('planted');   // false
 */
export class BrowserBindings {
  private readonly keys: Buffer[];

  constructor(current: string, previous: string[] = []) {
    this.keys = [current, ...previous].map((secret) => derivedKey(secret, 'browser-binding'));
  }

  issue(): string {
    const value = randomBytes(32).toString('base64url');
    return `${value}.${this.mac(this.keys[0]!, value)}`;
  }

  issuedByUs(candidate: string): boolean {
    const [value, mac, extra] = candidate.split('.');
    if (extra !== undefined || !value || !mac || !/^[A-Za-z0-9_-]{43}$/.test(value)) return false;
    return this.keys.some((key) => safeEqual(this.mac(key, value), mac));
  }

  private mac(key: Buffer, value: string): string {
    return createHmac('sha256', key).update(value).digest('base64url');
  }
}

/**
 * Encrypts client secrets at rest with AES-256-GCM under a key derived (HKDF-SHA256) from the
 * server secret. Ciphertexts carry the key id, so after a JWT_SECRET rotation the secrets
 * encrypted under a previous one still decrypt while it is listed in JWT_PREVIOUS_SECRETS.
 */
export class SecretBox {
  private readonly keys = new Map<string, Buffer>();
  private readonly currentKid: string;

  /** `purpose` separates the keys of different uses (client secrets, error return tickets). */
  constructor(current: string, previous: string[] = [], purpose = 'client-secret-encryption') {
    this.currentKid = secretKeyId(current);
    for (const secret of [current, ...previous]) {
      this.keys.set(secretKeyId(secret), derivedKey(secret, purpose));
    }
  }

  seal(plaintext: string): string {
    return sealGcm(this.keys.get(this.currentKid)!, this.currentKid, plaintext);
  }

  /**
   * Opened secrets by their ciphertext: every client authentication opens one, and a
   * rotation or reseal changes the ciphertext, so an entry can never be stale. It holds
   * nothing the process could not open anyway with the secret it already has.
   */
  private readonly opened = new Map<string, string>();
  private static readonly MAX_OPENED = 10_000;

  open(sealed: string): string {
    let plaintext = this.opened.get(sealed);
    if (plaintext === undefined) {
      plaintext = this.decrypt(sealed);
      if (this.opened.size >= SecretBox.MAX_OPENED) this.opened.clear();
      this.opened.set(sealed, plaintext);
    }
    return plaintext;
  }

  /** Opens a value read only once (a console flash), keeping it out of the cache of opened secrets. */
  openOnce(sealed: string): string {
    return this.decrypt(sealed);
  }

  private decrypt(sealed: string): string {
    const parts = sealedParts(sealed);
    const key = parts && this.keys.get(parts.kid);
    if (!parts || !key) throw new Error('client secret was sealed under an unknown server secret');
    return openGcm(key, parts);
  }
}

/** The parts of a value sealed by sealGcm: v1.kid.iv.body.tag, or null when it is not one. */
function sealedParts(sealed: string): { kid: string; iv: string; body: string; tag: string } | null {
  const [version, kid, iv, body, tag, extra] = sealed.split('.');
  if (version !== 'v1' || !kid || !iv || body === undefined || !tag || extra !== undefined) return null;
  return { kid, iv, body, tag };
}

/** AES-256-GCM under `key`, written v1.kid.iv.body.tag so the key that opens it can be found again. */
function sealGcm(key: Buffer, kid: string, plaintext: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return [
    'v1',
    kid,
    iv.toString('base64url'),
    body.toString('base64url'),
    cipher.getAuthTag().toString('base64url'),
  ].join('.');
}

/** The plaintext of sealGcm's parts under `key`; throws when the tag does not verify. */
function openGcm(key: Buffer, parts: { iv: string; body: string; tag: string }): string {
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(parts.iv, 'base64url'));
  decipher.setAuthTag(Buffer.from(parts.tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(parts.body, 'base64url')), decipher.final()]).toString('utf8');
}

/**
 * Seals the successor pair of a rotated refresh token (docs/design.md §6, "Concurrent refresh")
 * with AES-256-GCM under a key derived (HKDF-SHA256) from the server secret AND the rotated
 * refresh token itself: the database holds only its digest, so a reader of the database cannot
 * open the pair, and neither can anyone without the server secret. A pair sealed under a
 * previous server secret still opens while that secret is listed in JWT_PREVIOUS_SECRETS.
 *
 * @example
 * const seal = new SuccessorSeal(process.env.JWT_SECRET!);
 * const sealed = seal.seal('rft_old…', '{"refresh_token":"rft_new…"}');
 * seal.open('rft_old…', sealed);   // '{"refresh_token":"rft_new…"}'
 * seal.open('rft_other…', sealed); // null
 */
export class SuccessorSeal {
  private readonly secrets = new Map<string, string>();
  private readonly currentKid: string;

  constructor(current: string, previous: string[] = []) {
    this.currentKid = secretKeyId(current);
    for (const secret of [current, ...previous]) this.secrets.set(secretKeyId(secret), secret);
  }

  seal(refreshToken: string, plaintext: string): string {
    return sealGcm(this.key(this.secrets.get(this.currentKid)!, refreshToken), this.currentKid, plaintext);
  }

  /** The plaintext, or null when `sealed` was not sealed for this token under a known secret. */
  open(refreshToken: string, sealed: string): string | null {
    const parts = sealedParts(sealed);
    const secret = parts && this.secrets.get(parts.kid);
    if (!parts || !secret) return null;
    try {
      return openGcm(this.key(secret, refreshToken), parts);
    } catch {
      return null;
    }
  }

  /** The token is HKDF's salt and the server secret its input keying material: both are needed. */
  private key(secret: string, refreshToken: string): Buffer {
    return Buffer.from(hkdfSync('sha256', secret, refreshToken, 'agentauth refresh-successor', 32));
  }
}
