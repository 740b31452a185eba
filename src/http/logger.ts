/**
 * Logger options: JSON (pino), request lines without query strings (they carry state and
 * request ids) or link tokens, and every header or field that can hold a secret redacted (docs/design.md §10).
 */
import type { FastifyBaseLogger, FastifyRequest } from 'fastify';
import type { Bindings, ChildLoggerOptions, Level, Logger, LoggerOptions } from 'pino';

export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  '*.agent_secret',
  '*.agent_assertion',
  '*.client_secret',
  // RFC 7523: a client's signed assertion is a credential until it expires.
  '*.client_assertion',
  // Authorization codes: never in logs. (Not '*.code', which would hide every error's code.)
  'req.body.code',
  'req.query.code',
  '*.code_verifier',
  '*.refresh_token',
  '*.access_token',
  '*.id_token',
  '*.token',
  // Dynamic registration (RFC 7592): the credential of a client's configuration endpoint.
  '*.registration_access_token',
  // Console forms: passwords and CSRF tokens.
  '*.password',
  '*.current_password',
  '*._csrf',
];

/** The console's one-time links carry their token in the path (/console/setup/lnk_…). */
const LINK_TOKEN = /lnk_[\w-]+/g;

export function loggerOptions(level: string): LoggerOptions {
  return {
    level,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    serializers: {
      req(request: FastifyRequest) {
        return {
          method: request.method,
          path: request.url.split('?')[0]!.replace(LINK_TOKEN, 'lnk_[redacted]'),
          remoteAddress: request.ip,
          userAgent: request.headers['user-agent'],
        };
      },
    },
  };
}

/**
 * A request's logger, bound to its request id, whose pino child is made on the first line it
 * writes. Fastify makes a child per request, and with redaction on, pino's child() serialises
 * the bindings through the redactor: a tenth of the CPU of a status check, measured, on
 * requests that at the default level mostly write nothing (docs/design.md §9).
 *
 * @example
 * Fastify({ logger: loggerOptions('info'), childLoggerFactory: lazyRequestLogger });
 */
export function lazyRequestLogger(
  parent: FastifyBaseLogger,
  bindings: Bindings,
  options: ChildLoggerOptions,
): FastifyBaseLogger {
  return new LazyRequestLogger(parent as Logger, bindings, options);
}

class LazyRequestLogger implements FastifyBaseLogger {
  private logger: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: Logger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  get level(): string {
    return (this.logger ?? this.parent).level;
  }

  set level(level: string) {
    this.made().level = level;
  }

  fatal(...args: unknown[]): void {
    this.write('fatal', args);
  }

  error(...args: unknown[]): void {
    this.write('error', args);
  }

  warn(...args: unknown[]): void {
    this.write('warn', args);
  }

  info(...args: unknown[]): void {
    this.write('info', args);
  }

  debug(...args: unknown[]): void {
    this.write('debug', args);
  }

  trace(...args: unknown[]): void {
    this.write('trace', args);
  }

  silent(): void {}

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.made().child(bindings, options);
  }

  private made(): FastifyBaseLogger {
    return (this.logger ??= this.parent.child(this.bindings, this.options));
  }

  /** A line below the level is dropped without making the child, as pino would drop it. */
  private write(level: Level, args: unknown[]): void {
    if (!this.logger && !this.parent.isLevelEnabled(level)) return;
    const logger = this.made();
    (logger[level] as (...args: unknown[]) => void).apply(logger, args);
  }
}
