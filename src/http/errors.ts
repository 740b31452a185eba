/**
 * One error handler for every endpoint: OAuthErrors answer with their own status and body;
 * Fastify's own 4xx errors (validation, content type, size, malformed JSON) become
 * invalid_request in the documented shape, and so does an upload the client aborted (logged at
 * debug only); anything else is logged and answered 500 server_error, or 503
 * temporarily_unavailable when the database is unreachable. Never a stack trace.
 */
import type { Socket } from 'node:net';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { InvalidRequest, OAuthError, ServerError, TemporarilyUnavailable } from '../errors.ts';
import { isDataException, isDatabaseUnavailable } from '../store/errors.ts';
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
 * The client closed the connection while its request was being read (an aborted upload): the
 * request stream fails with ECONNRESET "aborted". The client's doing, not an outage, although
 * the code is one the database drivers use too.
 */
export function isClientAbort(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return code === 'ECONNRESET' && message === 'aborted';
}

/**
 * Translates any thrown value into a status, headers and the documented error body: an
 * OAuthError answers as itself, everything else as the member of the family it means.
 */
export function describeError(error: unknown): {
  status: number;
  headers: Record<string, string>;
  body: ErrorBody;
  unexpected: boolean;
} {
  const answer = (as: OAuthError, unexpected = false) => ({
    status: as.statusCode,
    headers: as.headers,
    body: as.toJSON(),
    unexpected,
  });
  if (error instanceof OAuthError) return answer(error);
  const fastifyError = error as FastifyError;
  if (fastifyError.validation) return answer(new InvalidRequest(fastifyError.message));
  const known = fastifyError.code ? FASTIFY_CLIENT_ERRORS[fastifyError.code] : undefined;
  if (known) return answer(new InvalidRequest(known.description, known.status));
  if (isClientAbort(error)) {
    // Nobody is left to read it; the answer only completes the request.
    return answer(new InvalidRequest('The client closed the connection before the request was complete.'));
  }
  if (isDataException(error)) return answer(new InvalidRequest('The request contains a value that cannot be stored.'));
  if (isDatabaseUnavailable(error))
    return answer(new TemporarilyUnavailable('The service is temporarily unavailable; retry shortly.', 5), true);
  if (typeof fastifyError.statusCode === 'number' && fastifyError.statusCode >= 400 && fastifyError.statusCode < 500)
    return answer(new InvalidRequest('The request is malformed.', fastifyError.statusCode));
  return answer(new ServerError('An unexpected error occurred.'), true);
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
  // A union of values (TypeBox's literals) fails each branch, then the union: name every value.
  const union = errors.find((error) => error.keyword === 'anyOf');
  const first = union ?? errors[0];
  if (!first) return 'The request is invalid.';
  const field = first.instancePath.replace(/^\//, '').replace(/\//g, '.');
  switch (first.keyword) {
    case 'anyOf': {
      const values = errors
        .filter((error) => error.instancePath === first.instancePath)
        .flatMap((error) =>
          error.keyword === 'const'
            ? [error.params.allowedValue]
            : error.keyword === 'enum'
              ? (error.params.allowedValues as unknown[])
              : [],
        );
      return values.length > 0 ? `${field} must be one of ${values.join(', ')}` : `${field} is invalid`;
    }
    case 'additionalProperties':
      return `${field ? `${field}.` : ''}${String(first.params.additionalProperty)} is not a field of this request`;
    case 'minProperties':
      return `${field || 'the request'} must have at least ${String(first.params.limit)} field(s)`;
    case 'minimum':
    case 'maximum':
      return `${field} must be ${first.keyword === 'minimum' ? 'at least' : 'at most'} ${String(first.params.limit)}`;
    case 'maxItems':
      return `${field} may have at most ${String(first.params.limit)} items`;
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
