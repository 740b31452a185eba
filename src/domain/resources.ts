/**
 * Resource indicators (RFC 8707): the resource server a client wants its access tokens for.
 * A request names at most one; it is bound to the code and the grant and becomes the access
 * token's `aud` (docs/design.md §13). Without one, tokens are for the client itself, as before.
 */
import type { Context } from '../context.ts';
import { InvalidTarget } from '../errors.ts';
import { resourceProblem } from './rules/client.ts';

/**
 * A resource URI in its normal form, for comparing two spellings (RFC 3986 §6.2.2, §6.2.3): an
 * http(s) URI with its scheme and host in lower case, without its default port, and with an
 * empty path for a bare `/` (the WHATWG URL parser adds that slash to a host-only URI, so
 * clients built on it send one). Anything else is compared as it is written: another scheme,
 * a URI with user information, a path's trailing slash (`/mcp/` may differ from `/mcp`).
 *
 * @example
 * normalResource('HTTPS://MCP.Example.com:443/'); // 'https://mcp.example.com'
 * normalResource('https://mcp.example.com/mcp/'); // 'https://mcp.example.com/mcp/'
 */
export function normalResource(resource: string): string {
  const url = URL.parse(resource);
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:') || url.username || url.password) return resource;
  const path = url.pathname === '/' && !url.search ? '' : url.pathname;
  return `${url.protocol}//${url.host}${path}${url.search}`;
}

/**
 * Whether two resource URIs name the same resource: equal in their normal form.
 *
 * @example
 * sameResource('https://MCP.example.com/', 'https://mcp.example.com'); // true
 */
export const sameResource = (a: string, b: string): boolean => a === b || normalResource(a) === normalResource(b);

/**
 * Whether `resource` is, or lies below, one of `listed` (same origin, path under the listed
 * path at a segment boundary, no query on either).
 *
 * @example
 * isListedResource('https://mcp.example.com/mcp', ['https://mcp.example.com']); // true
 * isListedResource('https://mcp.example.com.evil/mcp', ['https://mcp.example.com']); // false
 */
export function isListedResource(resource: string, listed: readonly string[]): boolean {
  return listed.some((entry) => {
    if (sameResource(entry, resource)) return true;
    const [base, candidate] = [URL.parse(entry), URL.parse(resource)];
    if (
      !base ||
      !candidate ||
      base.origin === 'null' ||
      base.origin !== candidate.origin ||
      base.search ||
      candidate.search
    )
      return false;
    const prefix = base.pathname.endsWith('/') ? base.pathname : `${base.pathname}/`;
    return candidate.pathname === base.pathname || candidate.pathname.startsWith(prefix);
  });
}

/**
 * The `resource` parameter of an authorization or token request, checked for form only: null
 * when absent, the URI when it is one; InvalidTarget otherwise. One resource per request:
 * tokens have one audience here (RFC 8707 §2 lets a server refuse more).
 *
 * @example
 * resourceParameter(undefined); // null
 * resourceParameter('https://mcp.example.com/mcp'); // 'https://mcp.example.com/mcp'
 */
export function resourceParameter(value: string | string[] | undefined): string | null {
  if (value === undefined) return null;
  if (Array.isArray(value))
    throw new InvalidTarget('Name one resource per request; tokens are issued for a single audience.');
  const problem = resourceProblem(value);
  if (problem) throw new InvalidTarget(`resource ${problem}.`);
  return value;
}

/**
 * The resource an authorization request names, if tokens may be issued for it here
 * (docs/design.md §13): one an active resource-server client registered (the same URI in its
 * normal form: the token is then for the URI as registered, the audience its server checks),
 * one listed in ALLOWED_RESOURCES (or below one), or any with ALLOWED_RESOURCES=* (the token
 * is for the URI as asked). Otherwise
 * InvalidTarget: a website cannot make the agent's identity a token for a server that
 * nobody here vouched for.
 *
 * @example
 * await permittedResource(ctx, 'https://mcp.example.com/mcp'); // the URI, or InvalidTarget
 */
export async function permittedResource(
  ctx: Pick<Context, 'config' | 'store'>,
  value: string | string[] | undefined,
): Promise<string | null> {
  const resource = resourceParameter(value);
  if (resource === null) return null;
  const allowed = ctx.config.allowedResources;
  if (allowed === '*' || isListedResource(resource, allowed)) return resource;
  const registered = (await ctx.store.clients.listResources()).find((entry) => sameResource(entry, resource));
  if (registered !== undefined) return registered;
  throw new InvalidTarget(
    'Tokens are not issued for this resource on this server: its operator has not registered it.',
  );
}
