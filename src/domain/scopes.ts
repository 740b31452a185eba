/**
 * Scope values (docs/design.md §13, "Scopes of resource servers"): the contract's three, OpenID
 * Connect's offline_access where OFFLINE_ACCESS is on, and the scopes resource servers register
 * for their resources (./resource-scopes.ts).
 */

/** Scopes of docs/contract.md: openid, email, profile. */
export const SUPPORTED_SCOPES = ['openid', 'email', 'profile'] as const;
export const DEFAULT_SCOPE = 'openid email profile';
/**
 * OpenID Connect Core §11: a refresh token. Every client gets one already (the contract's
 * refresh_token grant), so granting it changes nothing but the token's `scope`; accepted where
 * OFFLINE_ACCESS is on, since MCP clients ask for it.
 */
export const OFFLINE_ACCESS = 'offline_access';

/** The distinct scope values of a space-separated string, in the server's canonical order. */
export function scopeValues(scope: string): string[] {
  return scope.split(' ').filter(Boolean);
}

/** Values, if any, of a requested scope that are not the contract's. */
export function unknownScopes(scope: string): string[] {
  return scopeValues(scope).filter((value) => !(SUPPORTED_SCOPES as readonly string[]).includes(value));
}

/**
 * Canonical form: each value once, the contract's first in SUPPORTED_SCOPES order, then the rest
 * (offline_access, a resource's scopes) in the order asked. Callers refuse unknown values first.
 *
 * @example
 * normalizeScope('notes:read email openid notes:read'); // 'openid email notes:read'
 */
export function normalizeScope(scope: string): string {
  const values = new Set(scopeValues(scope));
  const standard = SUPPORTED_SCOPES.filter((value) => values.has(value));
  const rest = [...values].filter((value) => !(SUPPORTED_SCOPES as readonly string[]).includes(value));
  return [...standard, ...rest].join(' ');
}

export function hasScope(scope: string, value: string): boolean {
  return scopeValues(scope).includes(value);
}

/** True when every value of `requested` is in `granted`. */
export function isSubset(requested: string, granted: string): boolean {
  const allowed = new Set(scopeValues(granted));
  return scopeValues(requested).every((value) => allowed.has(value));
}

/** The scope without one value, in canonical form. */
export function withoutScope(scope: string, value: string): string {
  return scopeValues(scope)
    .filter((each) => each !== value)
    .join(' ');
}
