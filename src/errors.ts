/**
 * Every error the server answers, as one family of classes named after their error codes
 * (RFC 6749 §5.2, RFC 6750 §3.1 and the codes docs/contract.md / docs/design.md add): the
 * protocol's, the agent endpoints' and the console's. Every error body has the shape
 * { error, error_description }. ERROR_CODES at the end lists the codes; docs/reference/errors.md is its
 * table in prose, and test/error-codes.test.ts keeps the two and the classes in agreement.
 */
export abstract class OAuthError extends Error {
  abstract readonly error: string;
  readonly statusCode: number = 400;
  /** Extra response headers (WWW-Authenticate, Retry-After). */
  headers: Record<string, string> = {};

  constructor(readonly description: string) {
    super(description);
  }

  override get name(): string {
    return this.constructor.name;
  }

  toJSON(): { error: string; error_description: string } {
    return { error: this.error, error_description: this.description };
  }
}

/**
 * 400 by default. Another 4xx where the request is refused for a reason the status says better:
 * docs/contract.md has POST /api/agent/authenticate answer 404 for an unknown request, and
 * describeError (src/http/errors.ts) answers Fastify's and the CSRF check's refusals with theirs.
 */
export class InvalidRequest extends OAuthError {
  readonly error = 'invalid_request';
  override readonly statusCode: number;
  constructor(description: string, statusCode = 400) {
    super(description);
    this.statusCode = statusCode;
  }
}

/**
 * A form value that cannot be accepted (400 invalid_request): the console shows the form again
 * with the message beside the field it names.
 */
export class InvalidField extends InvalidRequest {
  constructor(
    readonly field: string,
    description: string,
  ) {
    super(description);
  }
}

export class InvalidClient extends OAuthError {
  readonly error = 'invalid_client';
  override readonly statusCode: number;
  /** At /authorize an unknown client is a 400 page; at the token endpoint it is 401 (RFC 6749 §5.2). */
  constructor(description: string, statusCode = 401) {
    super(description);
    this.statusCode = statusCode;
  }
}

export class InvalidGrant extends OAuthError {
  readonly error = 'invalid_grant';
}

export class UnauthorizedClient extends OAuthError {
  readonly error = 'unauthorized_client';
}

export class UnsupportedGrantType extends OAuthError {
  readonly error = 'unsupported_grant_type';
}

export class UnsupportedResponseType extends OAuthError {
  readonly error = 'unsupported_response_type';
}

export class InvalidScope extends OAuthError {
  readonly error = 'invalid_scope';
}

/** RFC 8707 §2: a resource that is not an absolute URI, has a fragment, or is not one tokens are issued for. */
export class InvalidTarget extends OAuthError {
  readonly error = 'invalid_target';
}

/** RFC 7591 §3.2.2: a redirection URI given at dynamic client registration is invalid. */
export class InvalidRedirectUri extends OAuthError {
  readonly error = 'invalid_redirect_uri';
}

/** RFC 7591 §3.2.2: a client metadata field given at dynamic client registration is invalid. */
export class InvalidClientMetadata extends OAuthError {
  readonly error = 'invalid_client_metadata';
}

/**
 * RFC 9396 §5: a request's `authorization_details` are malformed, name a type the client did not
 * register, or a field or value its action type does not allow.
 */
export class InvalidAuthorizationDetails extends OAuthError {
  readonly error = 'invalid_authorization_details';
}

/**
 * OpenID CIBA Core §13: the hint of an action request (`login_hint`, `id_token_hint`) names no
 * agent this client may ask about: none, one that never signed in to it, revoked or disabled,
 * all in the same words (docs/design.md §21).
 */
export class UnknownUserId extends OAuthError {
  readonly error = 'unknown_user_id';
}

/** CIBA §11: the owner has not decided yet; poll again after the interval. */
export class AuthorizationPending extends OAuthError {
  readonly error = 'authorization_pending';
}

/** CIBA §11: polled sooner than the interval; the interval grows by 5 seconds for this request. */
export class SlowDown extends OAuthError {
  readonly error = 'slow_down';
}

/** CIBA §11: the action request (its auth_req_id) expired before it was decided or used. */
export class ExpiredToken extends OAuthError {
  readonly error = 'expired_token';
}

/** CIBA §13: a `binding_message` too long, or with characters the owner could be misled by. */
export class InvalidBindingMessage extends OAuthError {
  readonly error = 'invalid_binding_message';
}

/** 403 by default: the account may not do this (a member on an admin page, a disabled account). */
export class AccessDenied extends OAuthError {
  readonly error = 'access_denied';
  override readonly statusCode: number;
  constructor(description: string, statusCode = 403) {
    super(description);
    this.statusCode = statusCode;
  }
}

export class InvalidToken extends OAuthError {
  readonly error = 'invalid_token';
  override readonly statusCode = 401;
  constructor(description: string) {
    super(description);
    this.headers['www-authenticate'] =
      `Bearer error="invalid_token", error_description="${description.replace(/["\\]/g, '')}"`;
  }
}

/** The agent's credentials, or a console account's email and password (or passkey), do not match (401). */
export class InvalidCredentials extends OAuthError {
  readonly error = 'invalid_credentials';
  override readonly statusCode = 401;
}

/** RFC 6750 §3.1: the access token lacks a scope the resource needs. */
export class InsufficientScope extends OAuthError {
  readonly error = 'insufficient_scope';
  override readonly statusCode = 403;
  constructor(description: string, scope: string) {
    super(description);
    this.headers['www-authenticate'] = `Bearer error="insufficient_scope", scope="${scope}"`;
  }
}

/** No such request, record or console page, or one that belongs to someone else: the two look alike (404). */
export class NotFound extends OAuthError {
  readonly error = 'not_found';
  override readonly statusCode = 404;
}

export class RequestExpired extends OAuthError {
  readonly error = 'request_expired';
}

export class RequestAlreadyUsed extends OAuthError {
  readonly error = 'request_already_used';
  override readonly statusCode = 409;
}

/** The request is not for the site the agent said it expected (expected_client_id, expected_redirect_host). */
export class RequestMismatch extends OAuthError {
  readonly error = 'request_mismatch';
  override readonly statusCode = 412;
}

/** The request was started for another agent (login_hint). */
export class AgentMismatch extends OAuthError {
  readonly error = 'agent_mismatch';
  override readonly statusCode = 403;
}

/** Two different agents authenticated one request: it ends in error and releases no code. */
export class RequestContested extends OAuthError {
  readonly error = 'request_contested';
  override readonly statusCode = 409;
}

/**
 * A console page or action without a session (401 login_required, OpenID Connect's code for it).
 * Pages answer it with a redirect to the sign-in page; console.js's JSON calls get the error.
 */
export class LoginRequired extends OAuthError {
  readonly error = 'login_required';
  override readonly statusCode = 401;
}

/**
 * A change to how the account signs in, asked for without a recent proof of who is at the
 * keyboard (401 insufficient_user_authentication, RFC 9470's code for step-up). Pages answer it
 * with a redirect to the confirmation page; console.js's JSON calls get the error and go there.
 */
export class InsufficientUserAuthentication extends OAuthError {
  readonly error = 'insufficient_user_authentication';
  override readonly statusCode = 401;
}

/**
 * The management API: an `If-Match` that no longer names the record as it is (412, RFC 9110
 * §13.1.1), whether the tag differed when the record was read or the record changed between that
 * read and the write (the write compares the version the tag was checked on).
 */
export class PreconditionFailed extends OAuthError {
  readonly error = 'precondition_failed';
  override readonly statusCode = 412;
  constructor(description = 'The record changed since it was read (If-Match): read it again, then retry.') {
    super(description);
  }
}

/**
 * The management API: the record is in a state that refuses the change (an email already taken),
 * or a creation with the same `Idempotency-Key` is still under way (409).
 */
export class Conflict extends OAuthError {
  readonly error = 'conflict';
  override readonly statusCode = 409;
}

/** The management API: an `Idempotency-Key` used before for a different request (422). */
export class IdempotencyKeyReused extends OAuthError {
  readonly error = 'idempotency_key_reused';
  override readonly statusCode = 422;
}

/** An error to retry after a while: it carries Retry-After (RFC 9110 §10.2.3), at least a second. */
abstract class RetryLater extends OAuthError {
  constructor(description: string, retryAfterSeconds: number) {
    super(description);
    this.headers['retry-after'] = String(Math.max(1, Math.ceil(retryAfterSeconds)));
  }
}

/** 429: too many requests from this caller (or for this key) in the window. */
export class TooManyRequests extends RetryLater {
  readonly error = 'too_many_requests';
  override readonly statusCode = 429;
}

/** 503: this node cannot take the request now (it is full); another node, or a later try, may. */
export class TemporarilyUnavailable extends RetryLater {
  readonly error = 'temporarily_unavailable';
  override readonly statusCode = 503;
}

/** 500: an unexpected fault. describeError answers it for anything that is not an OAuthError, never with a stack trace. */
export class ServerError extends OAuthError {
  readonly error = 'server_error';
  override readonly statusCode = 500;
}

/**
 * Every `error` code the server answers, with the HTTP statuses it answers it with, and whether
 * an agent can meet it at the agent endpoints (/api/agent/*, /api/check-status*, including a
 * request's `error` status). scripts/error-codes.ts generates the SDKs' lists of server codes
 * from the agent's; test/error-codes.test.ts checks this list against the classes above and
 * docs/reference/errors.md.
 */
export const ERROR_CODES = [
  { code: 'invalid_request', statuses: [400, 403, 404, 408, 413, 415, 431], agent: true },
  { code: 'invalid_client', statuses: [400, 401], agent: true },
  { code: 'invalid_grant', statuses: [400], agent: false },
  { code: 'unauthorized_client', statuses: [400], agent: false },
  { code: 'unsupported_grant_type', statuses: [400], agent: false },
  { code: 'unsupported_response_type', statuses: [400], agent: false },
  { code: 'invalid_scope', statuses: [400], agent: false },
  { code: 'invalid_target', statuses: [400], agent: false },
  { code: 'invalid_redirect_uri', statuses: [400], agent: false },
  { code: 'invalid_client_metadata', statuses: [400], agent: false },
  { code: 'invalid_authorization_details', statuses: [400], agent: false },
  { code: 'unknown_user_id', statuses: [400], agent: false },
  { code: 'authorization_pending', statuses: [400], agent: false },
  { code: 'slow_down', statuses: [400], agent: false },
  { code: 'expired_token', statuses: [400], agent: false },
  { code: 'invalid_binding_message', statuses: [400], agent: false },
  { code: 'access_denied', statuses: [400, 403], agent: true },
  { code: 'invalid_token', statuses: [401], agent: false },
  { code: 'invalid_credentials', statuses: [401], agent: true },
  { code: 'insufficient_scope', statuses: [403], agent: false },
  { code: 'not_found', statuses: [404], agent: true },
  { code: 'request_expired', statuses: [400], agent: true },
  { code: 'request_already_used', statuses: [409], agent: true },
  { code: 'request_mismatch', statuses: [412], agent: true },
  { code: 'agent_mismatch', statuses: [403], agent: true },
  { code: 'request_contested', statuses: [409], agent: true },
  { code: 'login_required', statuses: [401], agent: false },
  { code: 'insufficient_user_authentication', statuses: [401], agent: false },
  { code: 'precondition_failed', statuses: [412], agent: false },
  { code: 'conflict', statuses: [409], agent: false },
  { code: 'idempotency_key_reused', statuses: [422], agent: false },
  { code: 'too_many_requests', statuses: [429], agent: true },
  { code: 'temporarily_unavailable', statuses: [503], agent: true },
  { code: 'server_error', statuses: [500], agent: true },
] as const satisfies readonly { code: string; statuses: readonly number[]; agent: boolean }[];

/** An `error` code the server answers. */
export type ErrorCode = (typeof ERROR_CODES)[number]['code'];
