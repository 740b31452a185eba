/** Scopes of docs/contract.md: openid, email, profile. */
export const SUPPORTED_SCOPES = ['openid', 'email', 'profile'] as const;
export const DEFAULT_SCOPE = 'openid email profile';

/** The distinct scope values of a space-separated string, in the server's canonical order. */
export function scopeValues(scope: string): string[] {
  return scope.split(' ').filter(Boolean);
}

/** Unknown values, if any, of a requested scope. */
export function unknownScopes(scope: string): string[] {
  return scopeValues(scope).filter((value) => !(SUPPORTED_SCOPES as readonly string[]).includes(value));
}

/** Canonical form: known values, each once, in SUPPORTED_SCOPES order. */
export function normalizeScope(scope: string): string {
  const values = new Set(scopeValues(scope));
  return SUPPORTED_SCOPES.filter((value) => values.has(value)).join(' ');
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
