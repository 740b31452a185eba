/**
 * Configuration from the environment (docs/design.md §8). Every setting has a documented
 * default; an invalid value stops start-up with one clear line (ConfigError).
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
  production: boolean;
  requestTtl: number;
  codeTtl: number;
  accessTokenTtl: number;
  refreshTokenTtl: number;
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
  /** Registrations allowed per client address and node within the window. */
  registrationLimitPerIp: number;
  registrationLimitWindow: number;
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
}

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

function integer(env: Env, name: string, fallback: number, min = 1): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || !Number.isSafeInteger(Number(raw))) {
    throw new ConfigError(`${name} must be a whole number >= ${min} (got "${raw}")`);
  }
  return Number(raw);
}

/** An on/off setting: true, false, 1, 0, yes, no, on, off. */
function flag(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === '') return fallback;
  if (['true', '1', 'yes', 'on'].includes(raw)) return true;
  if (['false', '0', 'no', 'off'].includes(raw)) return false;
  throw new ConfigError(`${name} must be true or false (got "${env[name]}")`);
}

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
 * streams, epoll, the thread pool's pipes), PostgreSQL's LISTEN connection, SQLite's database,
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

export function loadConfig(env: Env = process.env): Config {
  const port = integer(env, 'PORT', 3000, 0);
  if (port > 65535) throw new ConfigError(`PORT must be at most 65535 (got "${port}")`);
  const production = env.NODE_ENV === 'production';

  const baseUrlRaw = env.BASE_URL || `http://localhost:${port}`;
  let baseUrl: URL;
  try {
    baseUrl = new URL(baseUrlRaw);
  } catch {
    throw new ConfigError(`BASE_URL must be an absolute URL (got "${baseUrlRaw}")`);
  }
  if (!['http:', 'https:'].includes(baseUrl.protocol) || baseUrl.search || baseUrl.hash) {
    throw new ConfigError(`BASE_URL must be an http(s) URL without query or fragment (got "${baseUrlRaw}")`);
  }

  const databaseUrl = env.DATABASE_URL || 'sqlite:./data/agentauth.db';
  if (!/^(sqlite:|postgres(ql)?:\/\/)/.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL must start with sqlite: or postgres://');
  }

  const jwtSecret = env.JWT_SECRET ? secret('JWT_SECRET', env.JWT_SECRET) : null;
  if (!jwtSecret && production) {
    throw new ConfigError('JWT_SECRET is required when NODE_ENV=production (at least 32 bytes)');
  }
  if (!jwtSecret && !databaseUrl.startsWith('sqlite:')) {
    throw new ConfigError(
      'JWT_SECRET is required with PostgreSQL: every node must sign and verify with the same secret (at least 32 bytes)',
    );
  }
  const jwtPreviousSecrets = (env.JWT_PREVIOUS_SECRETS ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((s) => secret('JWT_PREVIOUS_SECRETS', s));

  const logLevel = env.LOG_LEVEL || 'info';
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')} (got "${logLevel}")`);
  }

  const sqliteSynchronous = (env.SQLITE_SYNCHRONOUS || 'full').toLowerCase();
  if (sqliteSynchronous !== 'full' && sqliteSynchronous !== 'normal') {
    throw new ConfigError(`SQLITE_SYNCHRONOUS must be full or normal (got "${env.SQLITE_SYNCHRONOUS}")`);
  }

  const databasePoolSize = integer(env, 'DATABASE_POOL_SIZE', 10);
  const headersTimeout = integer(env, 'HEADERS_TIMEOUT', 10);
  const requestTimeout = integer(env, 'REQUEST_TIMEOUT', 30);
  if (headersTimeout > requestTimeout) {
    throw new ConfigError(
      `HEADERS_TIMEOUT must not exceed REQUEST_TIMEOUT (got ${headersTimeout} and ${requestTimeout})`,
    );
  }
  const metricsPort = env.METRICS_PORT ? integer(env, 'METRICS_PORT', 0) : null;
  if (metricsPort !== null && metricsPort > 65535)
    throw new ConfigError(`METRICS_PORT must be at most 65535 (got "${metricsPort}")`);
  if (metricsPort !== null && metricsPort === port)
    throw new ConfigError(`METRICS_PORT must differ from PORT (both ${port})`);
  const metricsToken = env.METRICS_TOKEN ? secret('METRICS_TOKEN', env.METRICS_TOKEN) : null;
  if (metricsToken !== null && !/^[\x21-\x7e]+$/.test(metricsToken)) {
    throw new ConfigError('METRICS_TOKEN must be printable ASCII without spaces (it is sent as a bearer token)');
  }

  const consoleSignup = (env.CONSOLE_SIGNUP || 'invite').toLowerCase();
  if (consoleSignup !== 'closed' && consoleSignup !== 'invite' && consoleSignup !== 'open') {
    throw new ConfigError(`CONSOLE_SIGNUP must be closed, invite or open (got "${env.CONSOLE_SIGNUP}")`);
  }
  const consoleSessionIdle = integer(env, 'CONSOLE_SESSION_IDLE', 3600);
  const consoleSessionLifetime = integer(env, 'CONSOLE_SESSION_LIFETIME', 86400);
  if (consoleSessionIdle > consoleSessionLifetime) {
    throw new ConfigError(
      `CONSOLE_SESSION_IDLE must not exceed CONSOLE_SESSION_LIFETIME (got ${consoleSessionIdle} and ${consoleSessionLifetime})`,
    );
  }
  const smtpUrl = env.SMTP_URL || null;
  if (smtpUrl !== null && !/^smtps?:\/\/[^/]/.test(smtpUrl))
    throw new ConfigError('SMTP_URL must be an smtp:// or smtps:// URL');

  // One switch for everything an MCP client needs; each feature may still be set on its own.
  const mcpAuthorization = flag(env, 'MCP_AUTHORIZATION', false);
  const publicClients = flag(env, 'PUBLIC_CLIENTS', mcpAuthorization);
  const clientIdMetadataDocuments = flag(env, 'CLIENT_ID_METADATA_DOCUMENTS', mcpAuthorization);
  if (clientIdMetadataDocuments && !publicClients) {
    throw new ConfigError(
      'CLIENT_ID_METADATA_DOCUMENTS=true needs PUBLIC_CLIENTS=true: a client known by its metadata document has no secret',
    );
  }
  // A client's use is written down at most once a day, so a shorter retention could purge one in use.
  const selfRegisteredClientRetention = integer(env, 'SELF_REGISTERED_CLIENT_RETENTION', 2592000, 0);
  if (selfRegisteredClientRetention !== 0 && selfRegisteredClientRetention < 86400) {
    throw new ConfigError(
      `SELF_REGISTERED_CLIENT_RETENTION must be 0 (never purge) or at least 86400 (got "${env.SELF_REGISTERED_CLIENT_RETENTION}")`,
    );
  }

  return {
    port,
    host: env.HOST || '0.0.0.0',
    baseUrl: baseUrl.href.replace(/\/+$/, ''),
    databaseUrl,
    jwtSecret,
    jwtPreviousSecrets,
    logLevel,
    production,
    requestTtl: integer(env, 'REQUEST_TTL', 600),
    codeTtl: integer(env, 'CODE_TTL', 600),
    accessTokenTtl: integer(env, 'ACCESS_TOKEN_TTL', 3600),
    refreshTokenTtl: integer(env, 'REFRESH_TOKEN_TTL', 2592000),
    purgeAfter: integer(env, 'PURGE_AFTER', 86400, 0),
    purgeInterval: integer(env, 'PURGE_INTERVAL', 300),
    auditRetention: integer(env, 'AUDIT_RETENTION', 7776000),
    authFailuresPerAgent: integer(env, 'AUTH_FAILURES_PER_AGENT', 10),
    authFailuresPerIp: integer(env, 'AUTH_FAILURES_PER_IP', 50),
    authFailureWindow: integer(env, 'AUTH_FAILURE_WINDOW', 300),
    authorizeLimitPerIp: integer(env, 'AUTHORIZE_LIMIT_PER_IP', 300, 0),
    authorizeLimitWindow: integer(env, 'AUTHORIZE_LIMIT_WINDOW', 60),
    purgeUnauthenticatedAfter: integer(env, 'PURGE_UNAUTHENTICATED_AFTER', 600, 0),
    statusStreamsPerIp: integer(env, 'STATUS_STREAMS_PER_IP', 100, 0),
    statusStreamsMax: integer(
      env,
      'STATUS_STREAMS_MAX',
      defaultStatusStreamsMax(openFilesLimit(), databasePoolSize),
      0,
    ),
    trustProxy: trustProxy(env.TRUST_PROXY),
    headersTimeout,
    requestTimeout,
    keepAliveTimeout: integer(env, 'KEEP_ALIVE_TIMEOUT', 5),
    shutdownTimeout: integer(env, 'SHUTDOWN_TIMEOUT', 10),
    metricsToken,
    metricsPort,
    metricsHost: env.METRICS_HOST || '127.0.0.1',
    databasePoolSize,
    sqliteSynchronous,
    consoleSignup,
    consoleSessionIdle,
    consoleSessionLifetime,
    consoleLinkTtl: integer(env, 'CONSOLE_LINK_TTL', 604800),
    consoleSigninFailuresPerAccount: integer(env, 'CONSOLE_SIGNIN_FAILURES_PER_ACCOUNT', 10),
    consoleSigninFailuresPerIp: integer(env, 'CONSOLE_SIGNIN_FAILURES_PER_IP', 50),
    consoleSigninWindow: integer(env, 'CONSOLE_SIGNIN_WINDOW', 900),
    consolePasswordChecksPerIp: integer(env, 'CONSOLE_PASSWORD_CHECKS_PER_IP', 2, 0),
    consolePasswordChecksMax: integer(env, 'CONSOLE_PASSWORD_CHECKS_MAX', 8, 0),
    consoleReauthWindow: integer(env, 'CONSOLE_REAUTH_WINDOW', 300),
    smtpUrl,
    smtpFrom: env.SMTP_FROM || `agentauth <no-reply@${baseUrl.hostname}>`,
    publicClients,
    clientIdMetadataDocuments,
    dynamicRegistration: flag(env, 'DYNAMIC_REGISTRATION', mcpAuthorization),
    registrationLimitPerIp: integer(env, 'REGISTRATION_LIMIT_PER_IP', 20, 0),
    registrationLimitWindow: integer(env, 'REGISTRATION_LIMIT_WINDOW', 3600),
    selfRegisteredClientRetention,
    allowedResources: allowedResources(env.ALLOWED_RESOURCES),
  };
}
