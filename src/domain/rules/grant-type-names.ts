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

/**
 * OpenID CIBA's grant (docs/design.md §21): served, published and registrable only while
 * ACTION_APPROVALS is on, so it is kept apart from the contract's two.
 *
 * @example
 * CIBA_GRANT_TYPE; // 'urn:openid:params:grant-type:ciba'
 */
export const CIBA_GRANT_TYPE = 'urn:openid:params:grant-type:ciba';

export type GrantType = (typeof GRANT_TYPES)[number] | typeof CIBA_GRANT_TYPE;

/**
 * The grant types this server serves with its settings, in the order they are published.
 *
 * @example
 * servedGrantTypes({ actionApprovals: false }); // ['authorization_code', 'refresh_token']
 */
export function servedGrantTypes(config: { actionApprovals: boolean }): GrantType[] {
  return config.actionApprovals ? [...GRANT_TYPES, CIBA_GRANT_TYPE] : [...GRANT_TYPES];
}

/**
 * Whether `name` is a grant type served here (with ACTION_APPROVALS, `config` says, the CIBA grant too).
 *
 * @example
 * isGrantType('refresh_token'); // true
 * isGrantType('password');      // false
 */
export function isGrantType(
  name: string,
  config: { actionApprovals: boolean } = { actionApprovals: false },
): name is GrantType {
  // Every /token call asks: no list is built for it.
  return name === CIBA_GRANT_TYPE ? config.actionApprovals : (GRANT_TYPES as readonly string[]).includes(name);
}
