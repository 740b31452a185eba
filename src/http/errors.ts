/**
 * One error handler for every endpoint: OAuthErrors answer with their own status and body;
 * Fastify's own 4xx errors (validation, content type, size, malformed JSON) become
 * invalid_request in the documented shape, and so does an upload the client aborted (logged at
 * debug only); anything else is logged and answered 500 server_error, or 503
 * temporarily_unavailable when the database is unreachable. Never a stack trace.
 */
import type { Socket } from 'node:net';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { OAuthError } from '../errors.ts';
import { closeAfterLinger, isLingering } from './connections.ts';

interface ErrorBody {
  error: string;
  error_description: string;
}

const FASTIFY_CLIENT_ERRORS: Record<string, { status: number; description: string }> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { status: 415, description: 'Unsupported Content-Type for this endpoint.' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { status: 400, description: 'Content-Length does not match the body.' },
  FST_ERR_CTP_BODY_TOO_LARGE: { status: 413, description: 'The request body is too large (64 KiB at most).' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { status: 400, description: 'The request body is empty; a JSON object is expected.' },
  FST_ERR_CTP_INVALID_JSON_BODY: { status: 400, description: 'The request body is not valid JSON.' },
  FST_ERR_CTP_INVALID_CONTENT_TYPE: { status: 415, description: 'The Content-Type header is malformed.' },
  // @fastify/csrf-protection: a console form without its token, or with another session's.
  FST_CSRF_MISSING_SECRET: {
    status: 403,
    description: 'This form has expired or was not sent from this site; reload the page and try again.',
  },
  FST_CSRF_INVALID_TOKEN: {
    status: 403,
    description: 'This form has expired or was not sent from this site; reload the page and try again.',
  },
};

/**
 * Error codes of the database drivers that mean "the database cannot be reached right now".
 * EMFILE and ENFILE (this process, or the system, is out of file descriptors: a connection to
 * PostgreSQL cannot be opened) pass as soon as sockets close, so they are transient too.
 */
const UNAVAILABLE =
  /^(SQLITE_(BUSY|LOCKED|IOERR|CANTOPEN|FULL)|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENOTFOUND|ENOENT|EACCES|EPIPE|EHOSTUNREACH|ENETUNREACH|EAI_AGAIN|EMFILE|ENFILE|57P0[1-3]|57014|08\d{3}|53300)/;

export function isDatabaseUnavailable(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  const message = (error as { message?: unknown })?.message;
  return (
    (typeof code === 'string' && UNAVAILABLE.test(code)) ||
    (typeof message === 'string' &&
      /Connection terminated|database connection is not open|Cannot use a pool after calling end|not queryable|timeout exceeded when trying to connect/i.test(
        message,
      ))
  );
}

/**
 * The client closed the connection while its request was being read (an aborted upload): the
 * request stream fails with ECONNRESET "aborted". The client's doing, not an outage, although
 * the code is one the database drivers use too.
 */
export function isClientAbort(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return code === 'ECONNRESET' && message === 'aborted';
}

/** PostgreSQL's SQLSTATE class 22 (data exception): for example a NUL byte in a text value. */
function isDataException(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  return typeof code === 'string' && /^22[0-9A-Z]{3}$/.test(code);
}

/** Translates any thrown value into a status, headers and the documented error body. */
export function describeError(error: unknown): {
  status: number;
  headers: Record<string, string>;
  body: ErrorBody;
  unexpected: boolean;
} {
  if (error instanceof OAuthError)
    return { status: error.statusCode, headers: error.headers, body: error.toJSON(), unexpected: false };
  const fastifyError = error as FastifyError;
  if (fastifyError.validation) {
    return {
      status: 400,
      headers: {},
      body: { error: 'invalid_request', error_description: fastifyError.message },
      unexpected: false,
    };
  }
  const known = fastifyError.code ? FASTIFY_CLIENT_ERRORS[fastifyError.code] : undefined;
  if (known)
    return {
      status: known.status,
      headers: {},
      body: { error: 'invalid_request', error_description: known.description },
      unexpected: false,
    };
  if (isClientAbort(error)) {
    // Nobody is left to read it; the answer only completes the request.
    return {
      status: 400,
      headers: {},
      body: {
        error: 'invalid_request',
        error_description: 'The client closed the connection before the request was complete.',
      },
      unexpected: false,
    };
  }
  if (isDataException(error)) {
    return {
      status: 400,
      headers: {},
      body: { error: 'invalid_request', error_description: 'The request contains a value that cannot be stored.' },
      unexpected: false,
    };
  }
  if (isDatabaseUnavailable(error)) {
    return {
      status: 503,
      headers: { 'retry-after': '5' },
      body: {
        error: 'temporarily_unavailable',
        error_description: 'The service is temporarily unavailable; retry shortly.',
      },
      unexpected: true,
    };
  }
  if (typeof fastifyError.statusCode === 'number' && fastifyError.statusCode >= 400 && fastifyError.statusCode < 500) {
    return {
      status: fastifyError.statusCode,
      headers: {},
      body: { error: 'invalid_request', error_description: 'The request is malformed.' },
      unexpected: false,
    };
  }
  return {
    status: 500,
    headers: {},
    body: { error: 'server_error', error_description: 'An unexpected error occurred.' },
    unexpected: true,
  };
}

export function errorHandler(error: unknown, request: FastifyRequest, reply: FastifyReply): void {
  const { status, headers, body, unexpected } = describeError(error);
  if (unexpected) request.log.error({ err: error }, 'request failed');
  else if (isClientAbort(error)) request.log.debug('client aborted the request');
  else request.log.debug({ error: body.error, status }, 'request refused');
  void reply
    .code(status)
    .headers({ 'cache-control': 'no-store', ...headers })
    .send(body);
}

/**
 * AJV's first error as a sentence naming the field ("agent_id is required", "model must be a
 * string"), for error_description.
 */
export function schemaErrorMessage(
  errors: Array<{ keyword: string; instancePath: string; params: Record<string, unknown> }>,
): string {
  const first = errors[0];
  if (!first) return 'The request is invalid.';
  const field = first.instancePath.replace(/^\//, '').replace(/\//g, '.');
  switch (first.keyword) {
    case 'required':
      return `${String(first.params.missingProperty)} is required`;
    case 'type':
      return field
        ? `${field} must be a ${String(first.params.type)}`
        : `the request must be a JSON ${String(first.params.type)}`;
    case 'minLength':
      return `${field} must not be empty`;
    case 'maxLength':
      return `${field} is longer than ${String(first.params.limit)} characters`;
    case 'pattern':
      return `${field} contains characters that are not allowed`;
    case 'enum':
      return `${field} must be one of ${(first.params.allowedValues as unknown[]).join(', ')}`;
    default:
      return `${field || 'the request'} is invalid`;
  }
}

/**
 * Errors Node's HTTP parser raises before any route runs (a head over the header size limit,
 * a malformed request line or header, a request not received within HEADERS_TIMEOUT or
 * REQUEST_TIMEOUT) get the documented error shape too, and the connection is closed, as the
 * parser cannot go on with it: after a short linger, so that a client that never closes its
 * side cannot keep the socket.
 */
export function clientErrorHandler(error: Error & { code?: string }, socket: Socket): void {
  const inProgress = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (!socket.writable || inProgress?.headersSent) {
    // Nothing can be answered any more (a reset, or an answer already under way): just close,
    // unless the socket is already lingering after an answer.
    if (!isLingering(socket)) socket.destroy();
    return;
  }
  const [status, description] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? ['431 Request Header Fields Too Large', 'The request headers are too large.']
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? ['408 Request Timeout', 'The request was not received in time.']
        : ['400 Bad Request', 'The request is malformed.'];
  const body = JSON.stringify({ error: 'invalid_request', error_description: description });
  socket.write(
    `HTTP/1.1 ${status}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\ncache-control: no-store\r\nconnection: close\r\n\r\n${body}`,
  );
  closeAfterLinger(socket);
}
