/**
 * The names of the grant types this server serves (RFC 6749 §4.1, §6), apart from the handlers
 * that serve them (src/domain/grant-types.ts) so that the rules of a client can name them
 * without importing the token endpoint. A name added here must get its handler there: the
 * registry is typed by this list, so the type check says so.
 */

/**
 * The grant types served, in the order they are published.
 *
 * @example
 * GRANT_TYPES; // ['authorization_code', 'refresh_token']
 */
export const GRANT_TYPES = ['authorization_code', 'refresh_token'] as const;

export type GrantType = (typeof GRANT_TYPES)[number];

/**
 * Whether `name` is a grant type served here.
 *
 * @example
 * isGrantType('refresh_token'); // true
 * isGrantType('password');      // false
 */
export function isGrantType(name: string): name is GrantType {
  return (GRANT_TYPES as readonly string[]).includes(name);
}
