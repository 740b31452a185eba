/**
 * Logger options: JSON (pino), request lines without query strings (they carry state and
 * request ids), and every header or field that can hold a secret redacted (docs/design.md §10).
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
];

export function loggerOptions(level: string): LoggerOptions {
  return {
    level,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    serializers: {
      req(request: FastifyRequest) {
        return {
          method: request.method,
          path: request.url.split('?')[0],
          remoteAddress: request.ip,
          userAgent: request.headers['user-agent'],
        };
      },
    },
  };
}
