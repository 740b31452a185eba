/**
 * Resource indicators (RFC 8707): the resource server a client wants its access tokens for.
 * A request names at most one; it is bound to the code and the grant and becomes the access
 * token's `aud` (docs/design.md §13). Without one, tokens are for the client itself, as before.
 */
import { InvalidTarget } from '../protocol/errors.ts';
import { VISIBLE_ASCII } from './clients.ts';

export const MAX_RESOURCE_LENGTH = 1000;

/**
 * Why a value cannot be a resource indicator, or null when it can: an absolute URI (RFC 3986
 * §4.3) without a fragment (RFC 8707 §2), spelled in visible ASCII.
 *
 * @example
 * resourceProblem('https://mcp.example.com/mcp'); // null
 * resourceProblem('/mcp'); // 'must be an absolute URI'
 */
export function resourceProblem(value: string): string | null {
  if (value.length > MAX_RESOURCE_LENGTH) return `must be at most ${MAX_RESOURCE_LENGTH} characters`;
  if (!VISIBLE_ASCII.test(value)) return 'must consist of visible ASCII characters';
  if (!/^[A-Za-z][A-Za-z0-9+.-]*:/.test(value) || !URL.canParse(value)) return 'must be an absolute URI';
  if (value.includes('#')) return 'must not contain a fragment';
  return null;
}

/**
 * Whether the operator lets tokens be issued for `resource`: any resource when ALLOWED_RESOURCES
 * is empty, otherwise one listed or below one listed (same origin, path under the listed path).
 *
 * @example
 * isAllowedResource('https://mcp.example.com/mcp', ['https://mcp.example.com']); // true
 * isAllowedResource('https://mcp.example.com.evil/mcp', ['https://mcp.example.com']); // false
 */
export function isAllowedResource(resource: string, allowed: readonly string[]): boolean {
  if (allowed.length === 0) return true;
  return allowed.some((entry) => {
    if (entry === resource) return true;
    const [base, candidate] = [URL.parse(entry), URL.parse(resource)];
    if (!base || !candidate || base.origin === 'null' || base.origin !== candidate.origin || base.search || candidate.search) return false;
    const prefix = base.pathname.endsWith('/') ? base.pathname : `${base.pathname}/`;
    return candidate.pathname === base.pathname || candidate.pathname.startsWith(prefix);
  });
}

/**
 * The `resource` parameter of an authorization or token request: null when absent, the URI
 * when valid and allowed; InvalidTarget otherwise. One resource per request: tokens have one
 * audience here (RFC 8707 §2 lets a server refuse more).
 *
 * @example
 * requestedResource(undefined, []); // null
 * requestedResource('https://mcp.example.com/mcp', []); // 'https://mcp.example.com/mcp'
 */
export function requestedResource(value: string | string[] | undefined, allowed: readonly string[]): string | null {
  if (value === undefined) return null;
  if (Array.isArray(value)) throw new InvalidTarget('Name one resource per request; tokens are issued for a single audience.');
  const problem = resourceProblem(value);
  if (problem) throw new InvalidTarget(`resource ${problem}.`);
  if (!isAllowedResource(value, allowed)) throw new InvalidTarget('Tokens are not issued for this resource on this server.');
  return value;
}
