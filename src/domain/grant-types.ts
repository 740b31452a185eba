/**
 * The registry of grant types (RFC 6749 §4.1, §6): the token endpoint dispatches on it,
 * discovery publishes its names, and dynamic registration and metadata documents accept only
 * what it lists. A grant added here is served, published and registrable at once.
 */
import type { Context } from '../context.ts';
import {
  type ClientCredentials,
  type CodeExchange,
  exchangeCode,
  refreshTokens,
  type TokenResponse,
} from './tokens.ts';

/** What POST /token may carry, for any grant: each grant reads the fields it needs. */
export type TokenRequestBody = ClientCredentials &
  CodeExchange & { grant_type: string; refresh_token?: string; scope?: string };

/** A grant: issues tokens for the request, authenticating the client from the same read as its code or token. */
export type Grant = (ctx: Context, body: TokenRequestBody, log?: (message: string) => void) => Promise<TokenResponse>;

const GRANTS = {
  authorization_code: exchangeCode,
  refresh_token: refreshTokens,
} satisfies Record<string, Grant>;

export type GrantType = keyof typeof GRANTS;

/**
 * The grant types served, in the order they are published.
 *
 * @example
 * GRANT_TYPES; // ['authorization_code', 'refresh_token']
 */
export const GRANT_TYPES = Object.keys(GRANTS) as readonly GrantType[];

/**
 * Whether `name` is a grant type served here.
 *
 * @example
 * isGrantType('refresh_token'); // true
 * isGrantType('password');      // false
 */
export function isGrantType(name: string): name is GrantType {
  return Object.hasOwn(GRANTS, name);
}

/**
 * The grant for `name`, or undefined when none is served by that name.
 *
 * @example
 * const grant = grantFor(body.grant_type);
 * if (grant) return grant(ctx, body, log);
 */
export function grantFor(name: string): Grant | undefined {
  return isGrantType(name) ? GRANTS[name] : undefined;
}
