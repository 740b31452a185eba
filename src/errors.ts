/**
 * OAuth errors as classes named after their error codes (RFC 6749 §5.2, RFC 6750 §3.1 and
 * the codes docs/contract.md / docs/design.md add). Every error body has the shape
 * { error, error_description }.
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

export class InvalidRequest extends OAuthError {
  readonly error = 'invalid_request';
}

/** docs/contract.md: POST /api/agent/authenticate answers 404 invalid_request for an unknown request. */
export class RequestNotFound extends OAuthError {
  readonly error = 'invalid_request';
  override readonly statusCode = 404;
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

/** An error to retry after a while: it carries Retry-After (RFC 9110 §10.2.3), at least a second. */
abstract class RetryLater extends OAuthError {
  constructor(description: string, retryAfterSeconds: number) {
    super(description);
    this.headers['retry-after'] = String(Math.max(1, Math.ceil(retryAfterSeconds)));
  }
}

/** 429: too many requests from this caller (or for this key) in the window. */
export class SlowDown extends RetryLater {
  readonly error = 'too_many_requests';
  override readonly statusCode = 429;
}

/** 503: this node cannot take the request now (it is full); another node, or a later try, may. */
export class TemporarilyUnavailable extends RetryLater {
  readonly error = 'temporarily_unavailable';
  override readonly statusCode = 503;
}
