/**
 * Scopes of resource servers (docs/design.md §13): a resource-server client registers the scopes
 * it serves, each with a description; a request may name them only together with the `resource`
 * that registered them. Scopes are per resource: `notes:read` of one resource and of another are
 * two scopes, each granted only with its own resource. Nothing here is read for a request that
 * asks only for the contract's scopes.
 */
import type { Context } from '../context.ts';
import { InvalidScope } from '../errors.ts';
import type { ResourceScope } from '../store/clients.ts';
import { resourceParameter, sameResource } from './resources.ts';
import { normalizeScope, OFFLINE_ACCESS, SUPPORTED_SCOPES, scopeValues } from './scopes.ts';

/**
 * The scopes active resource-server clients registered for `resource` (any spelling of it, as
 * resources are compared), in registration order, each once.
 *
 * @example
 * await scopesOfResource(ctx, 'https://notes.example/mcp'); // [{ name: 'notes:read', description: 'Read your notes' }]
 */
export async function scopesOfResource(ctx: Pick<Context, 'store'>, resource: string): Promise<ResourceScope[]> {
  const servers = await ctx.store.clients.listResourceScopes();
  const scopes = new Map<string, ResourceScope>();
  for (const server of servers) {
    if (!server.resources.some((each) => sameResource(each, resource))) continue;
    for (const scope of server.scopes) if (!scopes.has(scope.name)) scopes.set(scope.name, scope);
  }
  return [...scopes.values()];
}

/**
 * Every scope name some active resource server registers, whatever its resource: what an owner's
 * scope ceiling may name (docs/design.md §16).
 *
 * @example
 * await registeredScopeNames(ctx); // ['notes:read', 'notes:write']
 */
export async function registeredScopeNames(ctx: Pick<Context, 'store'>): Promise<string[]> {
  const servers = await ctx.store.clients.listResourceScopes();
  return [...new Set(servers.flatMap((server) => server.scopes.map((scope) => scope.name)))];
}

/**
 * The scope an authorization request asks for, checked and in canonical form: each value one of
 * the contract's, offline_access where OFFLINE_ACCESS is on, or a scope the request's `resource`
 * registered; InvalidScope otherwise, worded as before for a request that names no resource
 * scope. The registered scopes are read only when a value is none of the others.
 *
 * @example
 * await requestedScope(ctx, 'openid notes:read', 'https://notes.example/mcp'); // 'openid notes:read'
 * await requestedScope(ctx, 'openid notes:read', undefined); // InvalidScope
 */
export async function requestedScope(
  ctx: Pick<Context, 'store' | 'config'>,
  scope: string,
  resource: string | string[] | undefined,
): Promise<string> {
  const standard: readonly string[] = ctx.config.offlineAccess
    ? [...SUPPORTED_SCOPES, OFFLINE_ACCESS]
    : SUPPORTED_SCOPES;
  const unknown = scopeValues(scope).filter((value) => !standard.includes(value));
  if (unknown.length > 0) {
    const served = await servedScopes(ctx, resource);
    const notServed = unknown.filter((value) => !served.includes(value));
    if (notServed.length > 0)
      throw new InvalidScope(await unknownScopeDescription(ctx, notServed, standard, resource, served));
  }
  const normal = normalizeScope(scope);
  if (!normal) throw new InvalidScope(`scope must name at least one of ${SUPPORTED_SCOPES.join(', ')}.`);
  return normal;
}

/** The scope names the request's resource registered: none without one, or for a malformed one (its own error comes later). */
async function servedScopes(ctx: Pick<Context, 'store'>, resource: string | string[] | undefined): Promise<string[]> {
  let named: string | null;
  try {
    named = resourceParameter(resource);
  } catch {
    return [];
  }
  return named === null ? [] : (await scopesOfResource(ctx, named)).map((scope) => scope.name);
}

/** Why a scope was refused, in words that say where a resource server's scope comes from. */
async function unknownScopeDescription(
  ctx: Pick<Context, 'store'>,
  unknown: string[],
  standard: readonly string[],
  resource: string | string[] | undefined,
  served: string[],
): Promise<string> {
  const base = `Unknown scope ${unknown.join(', ')}; allowed values are ${[...standard, ...served].join(', ')}.`;
  // Only when the value is some resource server's does the answer say more: the request lacks its resource.
  const registered = await registeredScopeNames(ctx);
  if (!unknown.some((value) => registered.includes(value))) return base;
  return resource === undefined
    ? `${base} A resource server’s scope is granted only with its resource: name it in resource.`
    : `${base} A resource server’s scope is granted only with the resource that registered it.`;
}

/**
 * What each value of a granted scope allows, as its resource registered it: the descriptions the
 * authorization page shows beside the contract's wording (none for a request without a resource).
 *
 * @example
 * await scopeDescriptions(ctx, 'openid notes:read', 'https://notes.example/mcp'); // Map { 'notes:read' => 'Read your notes' }
 */
export async function scopeDescriptions(
  ctx: Pick<Context, 'store'>,
  scope: string,
  resource: string | null,
): Promise<Map<string, string>> {
  const values = scopeValues(scope);
  const standard: readonly string[] = [...SUPPORTED_SCOPES, OFFLINE_ACCESS];
  if (resource === null || values.every((value) => standard.includes(value))) return new Map();
  const scopes = await scopesOfResource(ctx, resource);
  return new Map(scopes.filter((scope) => values.includes(scope.name)).map((scope) => [scope.name, scope.description]));
}
