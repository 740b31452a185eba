/**
 * The console's errors, in the documented { error, error_description } shape (docs/design.md
 * §11). Forms show InvalidField beside the field it names; the others are error pages.
 */
import { InvalidRequest, OAuthError } from '../errors.ts';

/** A form value that cannot be accepted (400): the form is shown again with the message. */
export class InvalidField extends InvalidRequest {
  constructor(
    readonly field: string,
    description: string,
  ) {
    super(description);
  }
}

/** No such page or record, or one that belongs to someone else: the two look alike (404). */
export class NotFound extends OAuthError {
  readonly error = 'not_found';
  override readonly statusCode = 404;
}

/** The account may not do this (403): a member on an admin page, a disabled account. */
export class Forbidden extends OAuthError {
  readonly error = 'access_denied';
  override readonly statusCode = 403;
}

/** The email and password do not match an active account (401); every cause answers alike. */
export class SignInFailed extends OAuthError {
  readonly error = 'invalid_credentials';
  override readonly statusCode = 401;
}

/**
 * A console page or action without a session (401 login_required, OpenID Connect's code for it).
 * Pages answer it with a redirect to the sign-in page; console.js's JSON calls get the error.
 */
export class SignInRequired extends OAuthError {
  readonly error = 'login_required';
  override readonly statusCode = 401;
}

/**
 * A change to how the account signs in, asked for without a recent proof of who is at the
 * keyboard (401 insufficient_user_authentication, RFC 9470's code for step-up). Pages answer it
 * with a redirect to the confirmation page; console.js's JSON calls get the error and go there.
 */
export class ReauthenticationRequired extends OAuthError {
  readonly error = 'insufficient_user_authentication';
  override readonly statusCode = 401;
}
