/**
 * Logger options: JSON (pino), request lines without query strings (they carry state and
 * request ids) or link tokens, and every header or field that can hold a secret redacted (docs/design.md §10).
 */
import type { FastifyRequest } from 'fastify';
import type { LoggerOptions } from 'pino';

export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  '*.agent_secret',
  '*.client_secret',
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
