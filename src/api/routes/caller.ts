/** The caller of each request of the API scope, and what every route group is given (index.ts sets both). */
import type { FastifyRequest } from 'fastify';
import type { Context } from '../../context.ts';
import type { ApiCaller } from '../keys.ts';

const callers = new WeakMap<FastifyRequest, ApiCaller>();

/**
 * Remembers the caller a request authenticated as (the scope's onRequest hook).
 *
 * @example
 * setCaller(request, await authenticateApiKey(ctx, request.headers.authorization, request.ip));
 */
export function setCaller(request: FastifyRequest, caller: ApiCaller): void {
  callers.set(request, caller);
}

/** The caller a request authenticated as, if any (none for the OpenAPI document or a refused key). */
export const callerIf = (request: FastifyRequest): ApiCaller | undefined => callers.get(request);

/**
 * The caller a request authenticated as (every route but the OpenAPI document has one).
 *
 * @example
 * const agents = await listAgents(ctx, callerOf(request));
 */
export function callerOf(request: FastifyRequest): ApiCaller {
  const caller = callers.get(request);
  if (!caller) throw new Error('no API caller: the route is outside the API scope');
  return caller;
}

/** What an API route group is given. */
export interface ApiScope {
  ctx: Context;
}
