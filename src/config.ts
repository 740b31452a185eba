/**
 * Configuration from the environment (docs/design.md §8). Every setting has a documented
 * default; an invalid value stops start-up with one clear line (ConfigError). One table
 * (SETTINGS, at the end) names each variable, its type, its default and its documentation:
 * loadConfig reads the environment by it, and docs/reference/configuration.md is made from it.
 * The file is longer than the house's 500 lines because of that table (530 of its lines): one
 * entry per setting with its documentation, kept whole so that a type (Unread below) proves
 * every field of Config has its setting.
 */
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';

export interface Config {
  port: number;
  host: string;
  /** The issuer: an absolute URL without a trailing slash. */
  baseUrl: string;
  databaseUrl: string;
  /** Current secret signing access tokens; null means "generate or load a development secret". */
  jwtSecret: string | null;
  /** Earlier secrets still accepted while a rotation is under way. */
  jwtPreviousSecrets: string[];
  logLevel: string;
  /** How log lines are written: JSON, readable lines, or readable on a terminal and JSON otherwise. */
  logFormat: 'auto' | 'json' | 'pretty';
  production: boolean;
  requestTtl: number;
  codeTtl: number;
  accessTokenTtl: number;
  refreshTokenTtl: number;
  /** What signs tokens: HS256 with JWT_SECRET (the contract), or the server's rotating key pairs. */
  tokenSigningAlg: TokenSigningAlg;
  /** Seconds a signing key signs before the next one takes over (0: only on demand). */
  signingKeyRotation: number;
  /** Seconds a rotated refresh token still answers its successor pair to its client (0: never). */
  refreshTokenReuseWindow: number;
  /** How long expired rows are kept (so expiry stays reportable) before the purge deletes them. */
  purgeAfter: number;
  purgeInterval: number;
  auditRetention: number;
  /** Failed agent authentications allowed per agent_id, and per client IP, within the window. */
  authFailuresPerAgent: number;
  authFailuresPerIp: number;
  authFailureWindow: number;
  /** GET /authorize requests allowed per client address and node within the window; 0 turns the limit off. */
  authorizeLimitPerIp: number;
  authorizeLimitWindow: number;
  /** Open status streams (GET /api/check-status/events) allowed per client address and node; 0: no limit. */
  statusStreamsPerIp: number;
  /** Open status streams allowed on this node in all; 0: no cap. Default derived from the descriptor limit. */
  statusStreamsMax: number;
  /** How long requests that never reached `authenticated` are kept after expiry (shorter than purgeAfter). */
  purgeUnauthenticatedAfter: number;
  /**
   * Which reverse proxies' X-Forwarded-* to believe (for the client IP and https): false (none),
   * the number of proxies nearest the server, or their addresses and CIDRs. Never "all".
   */
  trustProxy: false | number | string[];
  /** Seconds to receive a request's headers, and the whole request (docs/design.md §10). */
  headersTimeout: number;
  requestTimeout: number;
  /** Seconds an idle keep-alive connection is kept open. */
  keepAliveTimeout: number;
  /** Seconds a shutdown may take: in-flight requests finish, then remaining connections are closed. */
  shutdownTimeout: number;
  /** Bearer token that opens /metrics on the main listener; null: /metrics is not served there. */
  metricsToken: string | null;
  /** A separate listener serving only /metrics, without a token; null: none. */
  metricsPort: number | null;
  metricsHost: string;
  databasePoolSize: number;
  /**
   * SQLite durability: 'full' (default) puts every commit on disk before its answer; 'normal'
   * survives a crash of the process but may lose the last commits on power loss.
   */
  sqliteSynchronous: 'full' | 'normal';
  /** Who may get a console account: nobody but the CLI, people with an invitation link, or anyone. */
  consoleSignup: 'closed' | 'invite' | 'open';
  /** A console session ends after this many seconds without a request… */
  consoleSessionIdle: number;
  /** …and this many seconds after sign-in, whatever the activity. */
  consoleSessionLifetime: number;
  /** How long setup and invitation links stay usable. */
  consoleLinkTtl: number;
  /** Failed console sign-ins per account (email) and per client IP within the window. */
  consoleSigninFailuresPerAccount: number;
  consoleSigninFailuresPerIp: number;
  consoleSigninWindow: number;
  /** Password checks (argon2, 19 MiB and a thread each) running at once per client address, and on this node; 0: no bound. */
  consolePasswordChecksPerIp: number;
  consolePasswordChecksMax: number;
  /** Seconds a sign-in or re-authentication counts as fresh, for adding or removing a sign-in method. */
  consoleReauthWindow: number;
  /** smtp:// or smtps:// URL of the mail relay for email verification; null: no mail is sent. */
  smtpUrl: string | null;
  /** The From address of the console's mail. */
  smtpFrom: string;
  /**
   * Public clients (token_endpoint_auth_method none, RFC 6749 §2.1) may sign in. Off by
   * default; MCP_AUTHORIZATION turns it on (docs/design.md §13).
   */
  publicClients: boolean;
  /** An https client_id names a Client ID Metadata Document, fetched and used as the client's registration. */
  clientIdMetadataDocuments: boolean;
  /** POST /register (RFC 7591) and its management endpoint (RFC 7592) are served. */
  dynamicRegistration: boolean;
  /** CORS on what a browser app calls: discovery, the key set, /token, /revoke, /userinfo, /register (docs/design.md §13). */
  cors: boolean;
  /** The scope offline_access is accepted at /authorize and published (docs/design.md §13). */
  offlineAccess: boolean;
  /**
   * Clients may authenticate with an assertion signed by one of their keys (RFC 7523
   * private_key_jwt): registered, dynamic and metadata-document clients (docs/design.md §18).
   */
  privateKeyJwt: boolean;
  /**
   * Networks (CIDRs) whose special-use addresses metadata documents and key sets (jwks_uri) may
   * still be fetched from: MCP clients an operator runs on an internal network. Empty: none.
   */
  clientMetadataAllowedAddresses: string[];
  /** Registrations allowed per client address and node within the window. */
  registrationLimitPerIp: number;
  registrationLimitWindow: number;
  /** Management API calls allowed per API key within the window (counted for all nodes). */
  apiRateLimit: number;
  apiRateLimitWindow: number;
  /** Management API calls without a usable key allowed per client address within apiRateLimitWindow (all nodes). */
  apiAuthFailuresPerIp: number;
  /**
   * Seconds a self-registered client (metadata document, dynamic registration) without grants is
   * kept unused before the purge deletes it; 0: never (docs/design.md §9).
   */
  selfRegisteredClientRetention: number;
  /**
   * The resources (RFC 8707) tokens may be issued for besides those registered by resource-server
   * clients (a URI, or one that is a path prefix of it); '*': any resource at all.
   */
  allowedResources: string[] | '*';
  /**
   * Networks (CIDRs) whose special-use addresses webhooks may still be sent to: receivers an
   * operator runs on an internal network (docs/design.md §15). Empty: none.
   */
  webhookAllowedAddresses: string[];
  /** Seconds a node holds a claimed delivery before another node may take it over. */
  webhookLease: number;
  /** Seconds delivered and failed webhook deliveries (and their attempts) are kept for the log. */
  webhookRetention: number;
  /**
   * Websites may ask an agent's owner to approve an action (OpenID CIBA with RFC 9396
   * authorization details, docs/design.md §21): /bc-authorize, the CIBA grant, their metadata.
   */
  actionApprovals: boolean;
}

export class ConfigError extends Error {}

/** TOKEN_SIGNING_ALG's values: HS256 (the contract's default) and the key pairs' algorithms. */
export const TOKEN_SIGNING_ALGS = ['HS256', 'ES256', 'EdDSA', 'RS256'] as const;
export type TokenSigningAlg = (typeof TOKEN_SIGNING_ALGS)[number];

/**
 * Seconds the key set may be cached (JWKS `cache-control: max-age`) and a signing key is
 * published before it may sign; and seconds a node uses the key set it read before reading it
 * again, so a rotation on another node reaches it within that time (docs/design.md §19).
 */
export const JWKS_MAX_AGE = 3600;
export const SIGNING_KEYS_RELOAD = 30;

/** ALLOWED_RESOURCES: space- or comma-separated absolute http(s) URIs without fragment, or `*` alone for any. */
function allowedResources(raw: string | undefined): string[] | '*' {
  const entries = (raw ?? '').split(/[\s,]+/).filter(Boolean);
  if (entries.length === 1 && entries[0] === '*') return '*';
  for (const entry of entries) {
    let url: URL | undefined;
    try {
      url = new URL(entry);
    } catch {
      url = undefined;
    }
    if (!url || !['http:', 'https:'].includes(url.protocol) || entry.includes('#')) {
      throw new ConfigError(`ALLOWED_RESOURCES must list absolute http(s) URIs without fragment (got "${entry}")`);
    }
  }
  return entries;
}

/** Names proxy-addr (Fastify's trustProxy) knows for whole ranges. */
const PROXY_RANGE_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

/**
 * TRUST_PROXY: off (unset, false, 0, no), a number of proxies, or a comma-separated list of
 * proxy addresses and CIDRs. `true` would believe the left-most X-Forwarded-For entry, which
 * the client writes itself, so it is refused.
 */
function trustProxy(raw: string | undefined): false | number | string[] {
  const value = raw?.trim() ?? '';
  if (value === '' || /^(0|false|no)$/i.test(value)) return false;
  if (/^(true|yes)$/i.test(value)) {
    throw new ConfigError(
      'TRUST_PROXY=true would trust any X-Forwarded-For the client writes; set TRUST_PROXY to the number of proxies in front of the server (e.g. 1) or their addresses (e.g. 10.0.0.5,10.1.0.0/16)',
    );
  }
  if (/^\d+$/.test(value)) {
    if (!Number.isSafeInteger(Number(value)))
      throw new ConfigError(`TRUST_PROXY must be a number of proxies or a list of addresses (got "${raw}")`);
    return Number(value);
  }
  const entries = value.split(',').map((entry) => entry.trim());
  for (const entry of entries) {
    const [address, bits, extra] = entry.split('/');
    const family = isIP(address ?? '');
    const validBits = bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= (family === 6 ? 128 : 32));
    if (!(PROXY_RANGE_NAMES.includes(entry) || (family !== 0 && validBits && extra === undefined))) {
      throw new ConfigError(
        `TRUST_PROXY must be a number of proxies or a comma-separated list of proxy addresses or CIDRs (got "${entry}" in "${raw}")`,
      );
    }
  }
  return entries;
}

/** The most status streams a node holds by default, whatever its descriptors: about 13.5 KB each, so some 135 MB. */
export const STATUS_STREAMS_CEILING = 10_000;
/**
 * Descriptors kept for the process itself besides the database pool: Node's own (standard
 * streams, epoll, the thread pool's pipes), PostgreSQL's two LISTEN connections (status, webhooks), SQLite's database,
 * WAL and shared-memory files, the listeners and the odd file read.
 */
const RESERVED_DESCRIPTORS = 64;

/**
 * STATUS_STREAMS_MAX's default for a process that may open `openFiles` descriptors and keeps
 * `poolSize` database connections: half of what the pool and the process itself leave, so that
 * as many descriptors stay for the short connections (polling, sign-ins, agents) that must
 * still be served when the streams are all taken; at least 1 (0 would turn the cap off) and at
 * most STATUS_STREAMS_CEILING, for memory.
 *
 * @example
 * defaultStatusStreamsMax(1024, 10); // 475
 * defaultStatusStreamsMax(1_048_576, 10); // 10000
 */
export function defaultStatusStreamsMax(openFiles: number, poolSize: number): number {
  const half = Math.floor((openFiles - poolSize - RESERVED_DESCRIPTORS) / 2);
  return Math.min(STATUS_STREAMS_CEILING, Math.max(1, half));
}

/**
 * The soft "Max open files" of a /proc/<pid>/limits text: Infinity for unlimited, undefined when
 * the line is missing.
 *
 * @example
 * parseOpenFilesLimit('Max open files            1024                 4096                 files\n'); // 1024
 */
export function parseOpenFilesLimit(limits: string): number | undefined {
  const match = /^Max open files\s+(\d+|unlimited)\s/m.exec(limits);
  if (!match) return undefined;
  return match[1] === 'unlimited' ? Infinity : Number(match[1]);
}

/**
 * This process's descriptor limit (soft RLIMIT_NOFILE; Node raises it to the hard limit at
 * start). Node has no API for it, so Linux's /proc; where that cannot be read, 1024, the usual
 * default.
 *
 * @example
 * const max = defaultStatusStreamsMax(openFilesLimit(), config.databasePoolSize);
 */
export function openFilesLimit(): number {
  try {
    return parseOpenFilesLimit(readFileSync('/proc/self/limits', 'utf8')) ?? 1024;
  } catch {
    return 1024;
  }
}

/** The least JWT_SECRET, each previous secret and the development secret file may hold. */
export const MIN_SECRET_BYTES = 32;

function secret(name: string, value: string): string {
  if (Buffer.byteLength(value, 'utf8') < MIN_SECRET_BYTES) {
    throw new ConfigError(`${name} must be at least ${MIN_SECRET_BYTES} bytes long`);
  }
  return value;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

type Env = Record<string, string | undefined>;

/** What a variable takes: how a set value is read, and how the reference describes it. */
interface Type<T> {
  /** What the variable takes, for the reference. */
  readonly takes: string;
  /** The value of a set, non-empty variable (undefined: as if unset); a bad one throws ConfigError naming it. */
  parse(raw: string, name: string): T | undefined;
  /** A default as the reference shows it. */
  show?(value: T): string;
}

function wholeNumber(raw: string, name: string, min: number): number {
  if (!/^\d+$/.test(raw) || Number(raw) < min || !Number.isSafeInteger(Number(raw))) {
    throw new ConfigError(`${name} must be a whole number >= ${min} (got "${raw}")`);
  }
  return Number(raw);
}

/** A count (of failures, streams, connections…); 0, where allowed, usually turns a limit off. */
const count = (min = 1): Type<number> => ({
  takes: `whole number ≥ ${min}`,
  parse: (raw, name) => wholeNumber(raw, name, min),
});

const DURATION_UNITS = [
  [86_400, 'day'],
  [3_600, 'hour'],
  [60, 'minute'],
] as const;

/** A duration in whole seconds; the reference names a round default in days, hours or minutes. */
const seconds = (min = 1): Type<number> => ({
  takes: `seconds ≥ ${min}`,
  parse: (raw, name) => wholeNumber(raw, name, min),
  show: (value) => {
    const [unit, word] = DURATION_UNITS.find(([unit]) => value >= unit && value % unit === 0) ?? [0, ''];
    return unit ? `\`${value}\` (${value / unit} ${word}${value === unit ? '' : 's'})` : `\`${value}\``;
  },
});

/** A TCP port: PORT may be 0 (any free port), a second listener's may not. */
const port = (min: number): Type<number> => ({
  takes: `port, ${min} to 65535`,
  parse: (raw, name) => {
    const value = wholeNumber(raw, name, min);
    if (value > 65535) throw new ConfigError(`${name} must be at most 65535 (got "${value}")`);
    return value;
  },
});

/** An on/off setting: true, false, 1, 0, yes, no, on, off. */
const onOff: Type<boolean> = {
  takes: 'true or false (also 1/0, yes/no, on/off)',
  parse: (raw, name) => {
    const value = raw.trim().toLowerCase();
    if (value === '') return undefined;
    if (['true', '1', 'yes', 'on'].includes(value)) return true;
    if (['false', '0', 'no', 'off'].includes(value)) return false;
    throw new ConfigError(`${name} must be true or false (got "${raw}")`);
  },
};

const text: Type<string> = { takes: 'text', parse: (raw) => raw };
/** Networks as comma-separated CIDRs (the allow-lists of special-use addresses: webhooks, metadata documents). */
const cidrs: Type<string[]> = {
  takes: 'comma-separated CIDRs (`10.0.0.0/8`, `fd00::/8`, `127.0.0.1/32`)',
  parse: (raw, name) =>
    raw
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)
      .map((cidr) => {
        const [network, bits, extra] = cidr.split('/');
        const family = isIP(network ?? '');
        const max = family === 6 ? 128 : 32;
        if (family === 0 || extra !== undefined || !/^\d{1,3}$/.test(bits ?? '') || Number(bits) > max)
          throw new ConfigError(`${name} takes CIDRs such as 10.0.0.0/8 (got "${cidr}")`);
        return cidr;
      }),
};

/** "a, b or c". */
const either = (words: readonly string[]) =>
  words.length > 1 ? `${words.slice(0, -1).join(', ')} or ${words[words.length - 1]}` : (words[0] ?? '');
const quoted = (words: readonly string[]) => words.map((word) => `\`${word}\``);

/** One of a few words, in any case; the error lists them ("full or normal", "closed, invite or open"). */
const choice = <const T extends string>(values: readonly T[]): Type<T> => ({
  takes: either(quoted(values)),
  parse: (raw, name) => {
    const value = raw.toLowerCase();
    if (values.includes(value as T)) return value as T;
    throw new ConfigError(`${name} must be ${either(values)} (got "${raw}")`);
  },
});

/** A secret of at least MIN_SECRET_BYTES. */
const secretText: Type<string | null> = {
  takes: `secret, at least ${MIN_SECRET_BYTES} bytes`,
  parse: (raw, name) => secret(name, raw),
};

/** Shows a default: a value in code, none, empty, or the list. */
function showValue(value: unknown): string {
  if (value === null) return 'none';
  if (Array.isArray(value)) return value.length ? value.map((entry) => `\`${entry}\``).join(', ') : 'empty';
  return `\`${String(value)}\``;
}

/** The configuration as the table reads it: Config, and MCP_AUTHORIZATION, which only sets other defaults. */
type Read = Config & { mcpAuthorization: boolean };
type Key = keyof Read;

/**
 * One environment variable: its name, what it takes, its default and what it does. The table
 * below makes both loadConfig and docs/reference/configuration.md (`npm run docs:config`).
 */
export interface Setting<K extends Key = Key> {
  readonly name: string;
  /** Where its value goes. */
  readonly key: K;
  readonly type: Type<Read[K]>;
  /** Its value when unset or empty: a constant, or made from the settings above it in the table. */
  readonly default: Read[K] | ((read: Read) => Read[K]);
  /** The default as the reference states it, where the type cannot show it (a derived one). */
  readonly shownDefault?: string;
  /** What it does, for the reference (Markdown; paths relative to docs/reference/). */
  readonly doc: string;
  /**
   * A secret, or a value holding one: it may come instead from the file `NAME_FILE` names (a
   * Docker or Compose secret, a systemd credential), so that it need not sit in the environment.
   */
  readonly fromFile?: boolean;
  /** A rule tying it to the settings above it in the table; throws ConfigError. */
  check?(value: Read[K], read: Read): void;
}

const setting = <K extends Key>(entry: Setting<K>): Setting<K> => entry;

/** The default of a setting, as the reference shows it. */
export function shownDefault(entry: Setting): string {
  if (entry.shownDefault !== undefined) return entry.shownDefault;
  if (typeof entry.default === 'function') throw new Error(`${entry.name}: a derived default needs shownDefault`);
  return entry.type.show ? entry.type.show(entry.default) : showValue(entry.default);
}

function baseUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`BASE_URL must be an absolute URL (got "${raw}")`);
  }
  if (!['http:', 'https:'].includes(url.protocol) || url.search || url.hash) {
    throw new ConfigError(`BASE_URL must be an http(s) URL without query or fragment (got "${raw}")`);
  }
  return url.href.replace(/\/+$/, '');
}

/** Every environment variable, in the order they are read and documented. */
export const SETTINGS = [
  setting({
    name: 'PORT',
    key: 'port',
    type: port(0),
    default: 3000,
    doc: 'TCP port to listen on.',
  }),
  setting({
    name: 'HOST',
    key: 'host',
    type: text,
    default: '0.0.0.0',
    doc: 'Address to listen on (all IPv4 interfaces by default; `127.0.0.1` for local only).',
  }),
  setting({
    name: 'BASE_URL',
    key: 'baseUrl',
    type: { takes: 'absolute http(s) URL', parse: baseUrl },
    default: (read) => baseUrl(`http://localhost:${read.port}`),
    shownDefault: '`http://localhost:$PORT`',
    doc: "The issuer: absolute http(s) URL without query or fragment (a trailing slash is removed). Used as `iss`, in the metadata, the page's meta tags and the `iss` redirect parameter. When it starts with `https:` the binding cookie is `__Host-agentauth_browser` and `Secure`. Set it to the public URL in production. The CLI prints a whole setup link only where it is set (`account create`, `account setup-link`): without it, the path alone, since the server makes its default from a `PORT` the command may not share.",
  }),
  setting({
    name: 'DATABASE_URL',
    key: 'databaseUrl',
    type: {
      takes: '`sqlite:` or `postgres://` URL',
      parse: (raw) => {
        if (!/^(sqlite:|postgres(ql)?:\/\/)/.test(raw)) {
          throw new ConfigError('DATABASE_URL must start with sqlite: or postgres://');
        }
        return raw;
      },
    },
    default: 'sqlite:./data/agentauth.db',
    fromFile: true,
    doc: '`sqlite:PATH` (relative to the working directory), `sqlite:///absolute/path` or `sqlite::memory:`; or `postgres://user:password@host:5432/dbname` (also `postgresql://`, and any option of libpq-style URLs that `pg` understands, such as `?sslmode=require` or `?host=/run/postgresql` for a unix socket). With PostgreSQL, `JWT_SECRET` is required.',
  }),
  setting({
    name: 'DATABASE_POOL_SIZE',
    key: 'databasePoolSize',
    type: count(),
    default: 10,
    doc: 'PostgreSQL connections per node. Has no effect with SQLite.',
  }),
  setting({
    name: 'SQLITE_SYNCHRONOUS',
    key: 'sqliteSynchronous',
    type: choice(['full', 'normal']),
    default: 'full',
    doc: "`full`: every commit is on disk before its answer (survives `kill -9` and power loss; the WAL is synced off the event loop). `normal`: no fsync per commit; an answer survives a crash of the process but a power loss may lose the last ones. The server warns at start with `normal`. See Durability in the [operator's guide](../guides/operator.md#operations) and [performance](../performance.md). Has no effect with PostgreSQL.",
  }),
  setting({
    name: 'NODE_ENV',
    key: 'production',
    type: { takes: 'text', parse: (raw) => raw === 'production' },
    default: false,
    shownDefault: 'unset',
    doc: '`production` makes `JWT_SECRET` mandatory. No other effect.',
  }),
  setting({
    name: 'JWT_SECRET',
    key: 'jwtSecret',
    type: secretText,
    default: null,
    fromFile: true,
    doc: 'Server secret, at least 32 bytes. The HS256 key of access tokens is its UTF-8 bytes exactly as configured. It is also the source of the key that encrypts client secrets. Required when `NODE_ENV=production`. Without it, in development, a secret is generated once and kept in `jwt-secret` next to the SQLite file (`data/jwt-secret` by default, mode 0600); with `sqlite::memory:` a random per-process secret is used. A `jwt-secret` file holding less than 32 bytes (after trimming whitespace) stops start-up with a line naming the file.',
    check: (value, read) => {
      if (!value && read.production) {
        throw new ConfigError(
          'JWT_SECRET (or JWT_SECRET_FILE) is required when NODE_ENV=production (at least 32 bytes)',
        );
      }
      if (!value && !read.databaseUrl.startsWith('sqlite:')) {
        throw new ConfigError(
          'JWT_SECRET (or JWT_SECRET_FILE) is required with PostgreSQL: every node must sign and verify with the same secret (at least 32 bytes)',
        );
      }
    },
  }),
  setting({
    name: 'JWT_PREVIOUS_SECRETS',
    key: 'jwtPreviousSecrets',
    type: {
      takes: `comma-separated secrets, each at least ${MIN_SECRET_BYTES} bytes`,
      parse: (raw, name) =>
        raw
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean)
          .map((s) => secret(name, s)),
    },
    default: () => [],
    shownDefault: 'empty',
    fromFile: true,
    doc: 'Comma-separated earlier secrets (each at least 32 bytes), accepted during a rotation: access tokens signed with them still verify (selected by `kid`), and client secrets encrypted under them still decrypt.',
  }),
  setting({
    name: 'LOG_LEVEL',
    key: 'logLevel',
    type: {
      takes: either(quoted(LOG_LEVELS)),
      parse: (raw) => {
        if (!LOG_LEVELS.includes(raw)) {
          throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')} (got "${raw}")`);
        }
        return raw;
      },
    },
    default: 'info',
    doc: 'How much the server logs, from `fatal` only to `trace`; `silent`: nothing.',
  }),
  setting({
    name: 'LOG_FORMAT',
    key: 'logFormat',
    type: choice(['auto', 'json', 'pretty']),
    default: 'auto',
    doc: '`json`: one JSON object per line, for a log collector. `pretty`: one readable line per entry (time, level, message; for a request its method, path, status, milliseconds and request id; for an error its message, then its stack), other fields as `key=value`. `auto`: `pretty` when standard output is a terminal, `json` otherwise (a pipe, a file, a container runtime). Both formats hold the same redacted values: no secret, token, cookie or one-time link in either.',
  }),
  setting({
    name: 'REQUEST_TTL',
    key: 'requestTtl',
    type: seconds(),
    default: 600,
    doc: "Lifetime of an authorization request (also the binding cookie's Max-Age).",
  }),
  setting({
    name: 'CODE_TTL',
    key: 'codeTtl',
    type: seconds(),
    default: 600,
    doc: 'Lifetime of an authorization code.',
  }),
  setting({
    name: 'ACCESS_TOKEN_TTL',
    key: 'accessTokenTtl',
    type: seconds(),
    default: 3600,
    doc: 'Lifetime of access tokens and ID tokens (`expires_in`).',
  }),
  setting({
    name: 'REFRESH_TOKEN_TTL',
    key: 'refreshTokenTtl',
    type: seconds(),
    default: 2592000,
    doc: 'Lifetime of each refresh token, counted from its own issue. Every refresh issues a new one.',
  }),
  setting({
    name: 'TOKEN_SIGNING_ALG',
    key: 'tokenSigningAlg',
    type: {
      takes: either(quoted(TOKEN_SIGNING_ALGS)),
      parse: (raw, name) => {
        const alg = TOKEN_SIGNING_ALGS.find((value) => value.toLowerCase() === raw.trim().toLowerCase());
        if (!alg) throw new ConfigError(`${name} must be ${either(TOKEN_SIGNING_ALGS)} (got "${raw}")`);
        return alg;
      },
    },
    default: 'HS256',
    doc: "What signs access tokens and ID tokens. `HS256` (the contract): access tokens with `JWT_SECRET`, ID tokens with the client's secret, an empty key set, and no ID token for public clients. `ES256`, `EdDSA` (Ed25519) or `RS256` (2048-bit RSA): key pairs the server generates and keeps in the database (the private half sealed under `JWT_SECRET`), shared by every node and published at `/.well-known/jwks.json`; every token carries its key's `kid`, public clients may have ID tokens, and anyone can verify a token offline. Tokens signed before a switch, either way, stay valid until they expire ([operator guide](../guides/operator.md#signing-keys)).",
  }),
  setting({
    name: 'SIGNING_KEY_ROTATION',
    key: 'signingKeyRotation',
    type: {
      takes: `0, or seconds ≥ ${JWKS_MAX_AGE + SIGNING_KEYS_RELOAD}`,
      parse: (raw, name) => {
        const value = wholeNumber(raw, name, 0);
        if (value !== 0 && value < JWKS_MAX_AGE + SIGNING_KEYS_RELOAD)
          throw new ConfigError(
            `${name} must be 0 (only on demand) or at least ${JWKS_MAX_AGE + SIGNING_KEYS_RELOAD} seconds, so the next key is published a whole JWKS cache period before it signs (got "${raw}")`,
          );
        return value;
      },
      show: (value) => `\`${value}\` (${value / 86400} days)`,
    },
    default: 7776000,
    doc: `With a key pair (\`TOKEN_SIGNING_ALG\` other than \`HS256\`): how long the current signing key signs before the next one, published since the last rotation, takes over; the old one stays published until the last token it signed has expired. \`0\`: only \`agentauth signing-key rotate\`. At least ${JWKS_MAX_AGE + SIGNING_KEYS_RELOAD}: the next key is published one JWKS cache period (${JWKS_MAX_AGE} seconds) and one reload of the nodes (${SIGNING_KEYS_RELOAD} seconds) before it signs.`,
  }),
  setting({
    name: 'PURGE_AFTER',
    key: 'purgeAfter',
    type: seconds(0),
    default: 86400,
    doc: 'How long expired requests, codes and tokens are kept after they expire before the purge deletes them. During this time an expired request still answers `request_expired`; after it, 404.',
  }),
  setting({
    name: 'PURGE_UNAUTHENTICATED_AFTER',
    key: 'purgeUnauthenticatedAfter',
    type: seconds(0),
    default: 600,
    doc: 'How long requests that no agent ever authenticated (pending, or cancelled before it) are kept after they expire: sooner than `PURGE_AFTER` (which caps it), because they are what anyone can create in bulk. Until then they answer `request_expired`, after it 404.',
  }),
  setting({
    name: 'PURGE_INTERVAL',
    key: 'purgeInterval',
    type: seconds(),
    default: 300,
    doc: 'Time between purge runs.',
  }),
  setting({
    name: 'AUDIT_RETENTION',
    key: 'auditRetention',
    type: seconds(),
    default: 7776000,
    doc: 'Age after which audit events are deleted by the purge.',
  }),
  setting({
    name: 'AUTH_FAILURES_PER_AGENT',
    key: 'authFailuresPerAgent',
    type: count(),
    default: 10,
    doc: 'Wrong secrets allowed per `agent_id` within the window; after that, wrong secrets for it answer 429 instead of 401. The right secret is never refused because of them.',
  }),
  setting({
    name: 'AUTH_FAILURES_PER_IP',
    key: 'authFailuresPerIp',
    type: count(),
    default: 50,
    doc: 'Failed agent authentications allowed per client address (an IPv6 /64 counts as one) within the window; after that, every attempt from it answers 429.',
  }),
  setting({
    name: 'AUTH_FAILURE_WINDOW',
    key: 'authFailureWindow',
    type: seconds(),
    default: 300,
    doc: 'The throttling window of the two limits above.',
  }),
  setting({
    name: 'AUTHORIZE_LIMIT_PER_IP',
    key: 'authorizeLimitPerIp',
    type: count(0),
    default: 300,
    doc: "`GET /authorize` requests allowed per client address (IPv6 /64) and node within `AUTHORIZE_LIMIT_WINDOW`; more answer a 429 page. Generous because one address (a NAT, a company proxy) may hide many people; it guards against floods, not against one person. 0 turns it off. Counted in each node's memory.",
  }),
  setting({
    name: 'AUTHORIZE_LIMIT_WINDOW',
    key: 'authorizeLimitWindow',
    type: seconds(),
    default: 60,
    doc: 'The window of `AUTHORIZE_LIMIT_PER_IP`.',
  }),
  setting({
    name: 'STATUS_STREAMS_PER_IP',
    key: 'statusStreamsPerIp',
    type: count(0),
    default: 100,
    doc: 'Status streams (`GET /api/check-status/events`) one client address (IPv6 /64) may hold open on one node; more answer 429 with `Retry-After: 5`, and the page polls instead. Each open stream holds a socket and a few KB. 0 turns the limit off.',
  }),
  setting({
    name: 'STATUS_STREAMS_MAX',
    key: 'statusStreamsMax',
    type: count(0),
    default: (read) => defaultStatusStreamsMax(openFilesLimit(), read.databasePoolSize),
    shownDefault: `derived: (descriptor limit − \`DATABASE_POOL_SIZE\` − ${RESERVED_DESCRIPTORS}) / 2, at least 1, at most ${STATUS_STREAMS_CEILING.toLocaleString('en')}`,
    doc: 'Status streams one node holds open in all; more answer 503 `temporarily_unavailable` with `Retry-After: 5`, and the page and the SDKs poll instead. Each stream holds a file descriptor, so the default keeps half of what the pool and the process leave for other connections: with the default pool, 475 under the common limit of 1024 (`ulimit -n`; read from `/proc/self/limits`, 1024 where it cannot be), 10,000 from 20,074 up, since a stream holds about 13.5 KB (10,000 ≈ 135 MB). The value in use is in the start-up log line (`statusStreamsMax`). Raise the descriptor limit (systemd `LimitNOFILE=`, `docker run --ulimit nofile=`) rather than this. 0 turns the cap off.',
  }),
  setting({
    name: 'TRUST_PROXY',
    key: 'trustProxy',
    type: { takes: 'number of proxies, or their addresses and CIDRs', parse: trustProxy },
    default: false,
    shownDefault: 'off',
    doc: "Which reverse proxies' `X-Forwarded-For`/`-Proto`/`-Host` to believe, so that the client IP used for throttling and audit is the real one. Off: unset, `false` or `0`. A whole number N: the N proxies nearest the server (the client IP is the N-th address from the right of `X-Forwarded-For`); use it only when the server cannot be reached except through them. Or a comma-separated list of the proxies' addresses or CIDRs (`10.0.0.5,10.1.0.0/16`, IPv6 too; also `loopback`, `linklocal`, `uniquelocal`): addresses are believed only from those. `true`/`yes` is refused at start: it would take the left-most entry, which the client writes itself.",
  }),
  setting({
    name: 'HEADERS_TIMEOUT',
    key: 'headersTimeout',
    type: seconds(),
    default: 10,
    doc: 'A request whose headers have not all arrived within this time is answered 408 and its connection closed (against "slowloris" clients). At most `REQUEST_TIMEOUT`.',
  }),
  setting({
    name: 'REQUEST_TIMEOUT',
    key: 'requestTimeout',
    type: seconds(),
    default: 30,
    doc: 'The same for the whole request, headers and body.',
    check: (value, read) => {
      if (read.headersTimeout > value) {
        throw new ConfigError(
          `HEADERS_TIMEOUT must not exceed REQUEST_TIMEOUT (got ${read.headersTimeout} and ${value})`,
        );
      }
    },
  }),
  setting({
    name: 'KEEP_ALIVE_TIMEOUT',
    key: 'keepAliveTimeout',
    type: seconds(),
    default: 5,
    doc: 'An idle keep-alive connection is closed after this time (Node adds one second). A reverse proxy that keeps connections to agentauth open should close idle ones sooner.',
  }),
  setting({
    name: 'SHUTDOWN_TIMEOUT',
    key: 'shutdownTimeout',
    type: seconds(),
    default: 10,
    doc: 'On SIGTERM/SIGINT the process exits within this time: in-flight requests have until half a second before it to finish, then the connections still open are closed.',
  }),
  setting({
    name: 'METRICS_TOKEN',
    key: 'metricsToken',
    type: {
      takes: `secret, at least ${MIN_SECRET_BYTES} bytes of printable ASCII`,
      parse: (raw, name) => {
        const token = secret(name, raw);
        if (!/^[\x21-\x7e]+$/.test(token)) {
          throw new ConfigError('METRICS_TOKEN must be printable ASCII without spaces (it is sent as a bearer token)');
        }
        return token;
      },
    },
    default: null,
    fromFile: true,
    doc: 'When set (at least 32 bytes, printable ASCII without spaces), `GET /metrics` on the main port answers to `Authorization: Bearer <METRICS_TOKEN>`, and 401 otherwise. Unset: `/metrics` is 404 on the main port.',
  }),
  setting({
    name: 'METRICS_PORT',
    key: 'metricsPort',
    type: port(1),
    default: null,
    doc: 'When set, a second listener on this port serves `GET /metrics` without a token, and nothing else. It must differ from `PORT`.',
    check: (value, read) => {
      if (value !== null && value === read.port) {
        throw new ConfigError(`METRICS_PORT must differ from PORT (both ${read.port})`);
      }
    },
  }),
  setting({
    name: 'METRICS_HOST',
    key: 'metricsHost',
    type: text,
    default: '127.0.0.1',
    doc: 'Address of the `METRICS_PORT` listener. Open it wider (for example `0.0.0.0`) only on a network where anyone who can reach it may read the metrics.',
  }),
  setting({
    name: 'CONSOLE_SIGNUP',
    key: 'consoleSignup',
    type: choice(['closed', 'invite', 'open']),
    default: 'invite',
    doc: 'Who may get a console account: `closed` (only `agentauth account create` and admins), `invite` (people with an invitation link a signed-in person made) or `open` (anyone, at `/console/sign-up`; invitations work too).',
  }),
  setting({
    name: 'CONSOLE_SESSION_IDLE',
    key: 'consoleSessionIdle',
    type: seconds(),
    default: 3600,
    doc: 'A console session ends after this long without a request. At most `CONSOLE_SESSION_LIFETIME`.',
  }),
  setting({
    name: 'CONSOLE_SESSION_LIFETIME',
    key: 'consoleSessionLifetime',
    type: seconds(),
    default: 86400,
    doc: 'A console session ends this long after sign-in, whatever the activity.',
    check: (value, read) => {
      if (read.consoleSessionIdle > value) {
        throw new ConfigError(
          `CONSOLE_SESSION_IDLE must not exceed CONSOLE_SESSION_LIFETIME (got ${read.consoleSessionIdle} and ${value})`,
        );
      }
    },
  }),
  setting({
    name: 'CONSOLE_REAUTH_WINDOW',
    key: 'consoleReauthWindow',
    type: seconds(),
    default: 300,
    doc: 'Adding or removing a passkey or a password needs a sign-in, the password or a passkey within this time; otherwise the console asks "Confirm it is you" first.',
  }),
  setting({
    name: 'CONSOLE_LINK_TTL',
    key: 'consoleLinkTtl',
    type: seconds(),
    default: 604800,
    doc: 'How long setup and invitation links stay usable (each works once). Email verification links last a day.',
  }),
  setting({
    name: 'CONSOLE_SIGNIN_FAILURES_PER_ACCOUNT',
    key: 'consoleSigninFailuresPerAccount',
    type: count(),
    default: 10,
    doc: 'Failed password sign-ins allowed per email (with or without an account) within the window; after that even the right password answers 429 until the window ends. Passkeys are not affected.',
  }),
  setting({
    name: 'CONSOLE_SIGNIN_FAILURES_PER_IP',
    key: 'consoleSigninFailuresPerIp',
    type: count(),
    default: 50,
    doc: 'Failed password sign-ins allowed per client address (IPv6 /64) within the window.',
  }),
  setting({
    name: 'CONSOLE_SIGNIN_WINDOW',
    key: 'consoleSigninWindow',
    type: seconds(),
    default: 900,
    doc: 'The window of the two limits above. An attempt is counted before its password is checked and given back when it was right.',
  }),
  setting({
    name: 'CONSOLE_PASSWORD_CHECKS_PER_IP',
    key: 'consolePasswordChecksPerIp',
    type: count(0),
    default: 2,
    doc: 'Password checks (argon2, 19 MiB each) running at once per client address; more answer 429 at once. 0: no bound.',
  }),
  setting({
    name: 'CONSOLE_PASSWORD_CHECKS_MAX',
    key: 'consolePasswordChecksMax',
    type: count(0),
    default: 8,
    doc: 'Password checks running at once on this node; more answer 429 at once. 0: no bound.',
  }),
  setting({
    name: 'SMTP_URL',
    key: 'smtpUrl',
    type: {
      takes: '`smtp://` or `smtps://` URL',
      parse: (raw) => {
        if (!/^smtps?:\/\/[^/]/.test(raw)) throw new ConfigError('SMTP_URL must be an smtp:// or smtps:// URL');
        return raw;
      },
    },
    default: null,
    fromFile: true,
    doc: '`smtp://` or `smtps://` URL (user and password in it if the relay needs them) through which the console mails email verification links. Unset: no mail is sent, and admins verify emails in the console.',
  }),
  setting({
    name: 'SMTP_FROM',
    key: 'smtpFrom',
    type: text,
    default: (read) => `agentauth <no-reply@${new URL(read.baseUrl).hostname}>`,
    shownDefault: '`agentauth <no-reply@HOST>`',
    doc: "The From address of that mail (HOST is `BASE_URL`'s host name).",
  }),
  setting({
    name: 'MCP_AUTHORIZATION',
    key: 'mcpAuthorization',
    type: onOff,
    default: false,
    doc: '`true` turns on everything an MCP client needs at once: `PUBLIC_CLIENTS` (and with it `CORS`), `CLIENT_ID_METADATA_DOCUMENTS`, `PRIVATE_KEY_JWT`, `DYNAMIC_REGISTRATION` and `OFFLINE_ACCESS`, and a 30 s `REFRESH_TOKEN_REUSE_WINDOW` (each may still be set on its own beside it). See the [MCP servers guide](../guides/mcp-servers.md).',
  }),
  setting({
    name: 'REFRESH_TOKEN_REUSE_WINDOW',
    key: 'refreshTokenReuseWindow',
    type: seconds(0),
    default: (read) => (read.mcpAuthorization ? 30 : 0),
    shownDefault: '`30` with `MCP_AUTHORIZATION`, else `0`',
    doc: 'For how long after a refresh token was rotated its client may present it again and get the same successor pair (the same refresh and access token, `expires_in` what remains) instead of having its grant revoked: MCP hosts such as Claude Code refresh one shared credential from several processes at once. Another client, or a presentation after the window, is reuse: the grant is revoked. `0` is the strict rule: every reuse revokes. At most 300, and less than `ACCESS_TOKEN_TTL`.',
    check: (value, read) => {
      if (value > 300 || value >= read.accessTokenTtl) {
        throw new ConfigError('REFRESH_TOKEN_REUSE_WINDOW must be at most 300 seconds and less than ACCESS_TOKEN_TTL');
      }
    },
  }),
  setting({
    name: 'PUBLIC_CLIENTS',
    key: 'publicClients',
    type: onOff,
    default: (read) => read.mcpAuthorization,
    shownDefault: '`MCP_AUTHORIZATION`',
    doc: 'Public clients (`agentauth client create --public`, the console\'s "App without a server", metadata documents, `none` at registration) may sign in: `token_endpoint_auth_method` `none`, PKCE, rotating refresh tokens, no ID token unless `TOKEN_SIGNING_ALG` names a key pair, loopback redirect URIs on any port. Adds `none` to `token_endpoint_auth_methods_supported` and `revocation_endpoint_auth_methods_supported`. Off: a public client is `invalid_client`.',
  }),
  setting({
    name: 'CLIENT_ID_METADATA_DOCUMENTS',
    key: 'clientIdMetadataDocuments',
    type: onOff,
    default: (read) => read.mcpAuthorization,
    shownDefault: '`MCP_AUTHORIZATION`',
    doc: 'An `https://` `client_id` names a Client ID Metadata Document, fetched (no redirects, 200 only, at most 5 KiB and 2.5 s, never from special-use addresses) and cached per its HTTP headers between 1 minute and 1 day. Needs `PUBLIC_CLIENTS`. Adds `client_id_metadata_document_supported: true` to the metadata.',
    check: (value, read) => {
      if (value && !read.publicClients) {
        throw new ConfigError(
          'CLIENT_ID_METADATA_DOCUMENTS=true needs PUBLIC_CLIENTS=true: a client known by its metadata document has no secret',
        );
      }
    },
  }),
  setting({
    name: 'PRIVATE_KEY_JWT',
    key: 'privateKeyJwt',
    type: onOff,
    default: (read) => read.mcpAuthorization,
    shownDefault: '`MCP_AUTHORIZATION`',
    doc: 'Clients may authenticate at `/token`, `/introspect` and `/revoke` with an assertion signed by one of their keys (RFC 7523 `private_key_jwt`; RS256, PS256, ES256 or EdDSA; `jti` used once; at most 5 minutes ahead): clients registered with a key set (`agentauth client create --jwks`/`--jwks-uri`, the API), dynamic registration with `jwks` or `jwks_uri`, and metadata documents that declare it (ChatGPT). A `jwks_uri` is fetched as metadata documents are. Adds `client_secret_basic` and `private_key_jwt` to `token_endpoint_auth_methods_supported` and the introspection and revocation lists, and `token_endpoint_auth_signing_alg_values_supported`. Off: such a client is `invalid_client`.',
  }),
  setting({
    name: 'CLIENT_METADATA_ALLOWED_ADDRESSES',
    key: 'clientMetadataAllowedAddresses',
    type: cidrs,
    default: () => [],
    shownDefault: 'empty',
    doc: "Metadata documents and clients' key sets (`jwks_uri`) are never fetched from special-use addresses (loopback, private, link-local and the like), judged before connecting and again on the connected socket. An MCP client an operator runs on an internal network is let through when its address lies in one of these networks. Empty by default: only public addresses.",
  }),
  setting({
    name: 'DYNAMIC_REGISTRATION',
    key: 'dynamicRegistration',
    type: onOff,
    default: (read) => read.mcpAuthorization,
    shownDefault: '`MCP_AUTHORIZATION`',
    doc: 'Serves `POST /register` (RFC 7591) and `/register/{client_id}` (RFC 7592). Adds `registration_endpoint` to the metadata.',
  }),
  setting({
    name: 'CORS',
    key: 'cors',
    type: onOff,
    default: (read) => read.publicClients,
    shownDefault: '`PUBLIC_CLIENTS`',
    doc: 'Browser apps (single-page apps, the MCP Inspector) may call the server across origins: CORS on the metadata, the key set, `/userinfo` and `/register` for any origin, and on `/token` and `/revoke` for a public client from the origin of one of its redirect URIs (a loopback one on any port). A call to `/token` or `/revoke` from any other origin, or for a confidential client, is refused (401 `invalid_client`) before its code or token is used. Never on `/authorize`, `/introspect`, the agent back channel, the management API or the console; never with credentials (cookies). Needs `PUBLIC_CLIENTS`. See [browser apps](../guides/browser-apps.md).',
    check: (value, read) => {
      if (value && !read.publicClients) {
        throw new ConfigError(
          'CORS=true needs PUBLIC_CLIENTS=true: a browser app calls the token endpoint as a public client, with no secret',
        );
      }
    },
  }),
  setting({
    name: 'OFFLINE_ACCESS',
    key: 'offlineAccess',
    type: onOff,
    default: (read) => read.mcpAuthorization,
    shownDefault: '`MCP_AUTHORIZATION`',
    doc: '`/authorize` accepts the scope `offline_access` (OpenID Connect Core §11), which MCP clients ask for, and the metadata lists it in `scopes_supported`. It grants nothing more: every client gets a refresh token already. Off: it is `invalid_scope`, as any unknown scope.',
  }),
  setting({
    name: 'REGISTRATION_LIMIT_PER_IP',
    key: 'registrationLimitPerIp',
    type: count(0),
    default: 20,
    doc: 'Dynamic registrations allowed per client address (IPv6 /64) and node within `REGISTRATION_LIMIT_WINDOW`; more answer 429. 0 turns it off.',
  }),
  setting({
    name: 'REGISTRATION_LIMIT_WINDOW',
    key: 'registrationLimitWindow',
    type: seconds(),
    default: 3600,
    doc: 'The window of `REGISTRATION_LIMIT_PER_IP`.',
  }),
  setting({
    name: 'API_RATE_LIMIT',
    key: 'apiRateLimit',
    type: count(0),
    default: 600,
    doc: 'Management API calls (`/api/admin/v1`) allowed per API key within `API_RATE_LIMIT_WINDOW`, counted for every node together; more answer 429 with `Retry-After`. 0 turns it off.',
  }),
  setting({
    name: 'API_RATE_LIMIT_WINDOW',
    key: 'apiRateLimitWindow',
    type: seconds(),
    default: 60,
    doc: 'The window of `API_RATE_LIMIT` and `API_AUTH_FAILURES_PER_IP`.',
  }),
  setting({
    name: 'API_AUTH_FAILURES_PER_IP',
    key: 'apiAuthFailuresPerIp',
    type: count(0),
    default: 30,
    doc: 'Management API calls without a usable API key (none, a malformed `Authorization`, an unknown, revoked or expired key, a disabled account) allowed per client address (an IPv6 /64 counts as one) within `API_RATE_LIMIT_WINDOW`, counted for every node together; more answer 429 with `Retry-After`. A call with a usable key is never refused by it. 0 turns it off.',
  }),
  setting({
    name: 'SELF_REGISTERED_CLIENT_RETENTION',
    key: 'selfRegisteredClientRetention',
    type: {
      ...seconds(0),
      takes: '0, or seconds ≥ 86400',
      // A client's use is written down at most once a day, so a shorter retention could purge one in use.
      parse: (raw, name) => {
        const value = wholeNumber(raw, name, 0);
        if (value !== 0 && value < 86400) {
          throw new ConfigError(`${name} must be 0 (never purge) or at least 86400 (got "${raw}")`);
        }
        return value;
      },
    },
    default: 2592000,
    doc: 'The purge deletes a client made by a metadata document or by dynamic registration once it has gone unused this long (at `/authorize`, `/token` or its registration management) and has no grant and no unexpired request or code; disabled and manual clients are never purged. A metadata document client comes back from its document on its next use; a dynamically registered one is gone for good and must register again. 0 never purges; otherwise at least `86400`, since use is recorded once a day.',
  }),
  setting({
    name: 'WEBHOOK_ALLOWED_ADDRESSES',
    key: 'webhookAllowedAddresses',
    type: cidrs,
    default: () => [],
    shownDefault: 'empty',
    doc: 'Webhooks are never sent to special-use addresses (loopback, private, link-local and the like), judged when an endpoint is saved (its host name resolved), before connecting and again on the connected socket. A receiver an operator runs on an internal network is let through when its address lies in one of these networks. Empty by default: only public addresses. A receiver whose certificate a private CA signed needs that CA too: start the server with `NODE_EXTRA_CA_CERTS=/path/to/ca.pem`.',
  }),
  setting({
    name: 'WEBHOOK_LEASE',
    key: 'webhookLease',
    type: seconds(1),
    default: 60,
    doc: 'How long a node holds the webhook deliveries it claimed. Should the node die meanwhile, another node makes them once the lease has run out. Keep it above 10 seconds, the time one attempt may take: a shorter lease lets another node send a slow delivery a second time (receivers must tolerate a repeated `webhook-id` anyway: delivery is at least once).',
  }),
  setting({
    name: 'WEBHOOK_RETENTION',
    key: 'webhookRetention',
    type: seconds(3600),
    default: 604800,
    doc: "How long delivered and failed webhook deliveries, with their attempts, are kept for the endpoint's delivery log after their last attempt, before the purge deletes them. Pending ones are kept until they are delivered or given up on. The expiry of a request no agent authenticated (`authorization_request.expired`, `status_before: pending`) goes with its request instead, `PURGE_UNAUTHENTICATED_AFTER` after the expiry, delivered or not: anyone can make such requests.",
  }),
  setting({
    name: 'ACTION_APPROVALS',
    key: 'actionApprovals',
    type: onOff,
    default: false,
    doc: 'OpenID CIBA with RFC 9396 authorization details: a website an agent signed in to may ask the agent\'s owner to approve one action ("Pay 20 EUR to Acme") at `POST /bc-authorize`, and learns the answer at `/token` with the grant `urn:openid:params:grant-type:ciba` (poll) or by a notification to its endpoint (ping); the token carries the approved `authorization_details`. Websites register their action types and delivery mode. Adds `backchannel_authentication_endpoint`, the delivery modes, the grant and `authorization_details_types_supported` to the metadata. Off: none of it exists, and registering action types or a token delivery mode is refused. See [action approvals](../guides/action-approvals.md).',
  }),
  setting({
    name: 'ALLOWED_RESOURCES',
    key: 'allowedResources',
    type: { takes: 'http(s) URIs, or `*`', parse: allowedResources },
    default: () => [],
    shownDefault: 'empty',
    doc: 'Space- or comma-separated absolute http(s) URIs: RFC 8707 resources tokens are issued for (a listed URI, or one below it on the same origin), besides the resources registered by resource-server clients (`client create --resource URI`), which are always allowed. `*` alone allows any absolute URI. Others answer `invalid_target`.',
  }),
] as const;

// Every field of Config has its variable: a field without one fails to compile here.
type Unread = Exclude<Key, (typeof SETTINGS)[number]['key']>;
const everyFieldRead: [Unread] extends [never] ? true : Unread = true;
void everyFieldRead;

/** The name of an environment variable of the table. */
export type SettingName = (typeof SETTINGS)[number]['name'];

/** A variable's text as loadConfig reads it: undefined when unset or empty (an empty one counts as unset). */
const given = (env: Env, name: string): string | undefined => (env[name] === '' ? undefined : env[name]);

/**
 * Whether the environment sets this variable, rather than leaving it to its default. A command
 * run beside the server cannot know a default made from another variable of the server's own
 * environment: BASE_URL's, made from PORT, is the case.
 *
 * @example
 * const publicUrl = isSet('BASE_URL') ? loadConfig().baseUrl : null;
 */
export function isSet(name: SettingName, env: Env = process.env): boolean {
  const entry = (SETTINGS as readonly Setting[]).find((setting) => setting.name === name);
  return given(env, name) !== undefined || (entry?.fromFile === true && given(env, fileVariable(name)) !== undefined);
}

/**
 * The variable naming the file a secret setting (fromFile) may be read from instead.
 *
 * @example
 * fileVariable('JWT_SECRET'); // 'JWT_SECRET_FILE'
 */
export const fileVariable = (name: string): string => `${name}_FILE`;

/**
 * A setting's text and how its messages name it: its variable's, or for a secret (fromFile) the
 * text of the file NAME_FILE names, without its final line break; undefined when neither is set.
 * Both set, an unreadable or an empty file are refused: each is a mistake a secret must not
 * survive silently. The messages name the variables and the path, never the text.
 */
function settingText(env: Env, entry: Setting): { text: string; named: string } | undefined {
  const direct = given(env, entry.name);
  const path = entry.fromFile ? given(env, fileVariable(entry.name)) : undefined;
  if (path === undefined) return direct === undefined ? undefined : { text: direct, named: entry.name };
  const variable = fileVariable(entry.name);
  if (direct !== undefined) throw new ConfigError(`${entry.name} and ${variable} are both set: set only one of them`);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    const user = process.getuid ? ` by this user (uid ${process.getuid()})` : '';
    throw new ConfigError(`${variable} names ${path}, which cannot be read${user} (${code})`);
  }
  // A file written by echo or an editor ends with a line break that is no part of the secret.
  const value = text.replace(/\r?\n$/, '');
  if (value === '') throw new ConfigError(`${variable} names ${path}, which is empty`);
  return { text: value, named: `${entry.name} (from ${variable})` };
}

/** The configuration from the environment: each variable of the table, in its order, or its default. */
/**
 * DATABASE_URL alone (or DATABASE_URL_FILE, or the default), read and checked as loadConfig
 * reads it, for a command that needs no other setting: `agentauth database check` answers about
 * the database before the node's other settings (JWT_SECRET among them) are in place.
 *
 * @example
 * loadDatabaseUrl({ DATABASE_URL: 'postgres://agentauth@db/agentauth' }); // 'postgres://agentauth@db/agentauth'
 * loadDatabaseUrl({}); // 'sqlite:./data/agentauth.db'
 */
export function loadDatabaseUrl(env: Env = process.env): string {
  const entry = (SETTINGS as readonly Setting[]).find((each) => each.key === 'databaseUrl')!;
  const raw = settingText(env, entry);
  return raw === undefined ? (entry.default as string) : (entry.type.parse(raw.text, raw.named) as string);
}

export function loadConfig(env: Env = process.env): Config {
  const read = {} as Read;
  const record = read as Record<Key, unknown>;
  for (const entry of SETTINGS as readonly Setting[]) {
    const raw = settingText(env, entry);
    const value = raw === undefined ? undefined : entry.type.parse(raw.text, raw.named);
    record[entry.key] =
      value !== undefined ? value : typeof entry.default === 'function' ? entry.default(read) : entry.default;
    entry.check?.(read[entry.key], read);
  }
  const { mcpAuthorization: _switch, ...config } = read;
  return config;
}
