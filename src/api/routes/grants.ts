/**
 * /grants: what agents were granted at websites, as their owners (or an admin's key, for
 * everyone) see them, and revoking one (src/console/access.ts decides who reaches a grant).
 */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { reachableGrant } from '../../console/access.ts';
import { pageSize, timeCursor, pageOf } from '../conditions.ts';
import { requireWrite } from '../keys.ts';
import { GrantView, grantView, Page } from '../views.ts';
import { type ApiScope, callerOf } from './index.ts';
import { answers, IdFilter, IdParams, ListQuery } from './shared.ts';

const GrantRef = Type.Ref(GrantView);
const tags = ['Grants'];

type GrantQuery = { limit?: string; cursor?: string; agent_id?: string; client_id?: string; live?: 'true' | 'false' };

/**
 * Mounts /grants on the API's scope.
 *
 * @example
 * await api.register(async (routes) => grantRoutes(routes, { ctx }));
 */
export async function grantRoutes(api: FastifyInstance, { ctx }: ApiScope): Promise<void> {
  api.get<{ Querystring: GrantQuery }>(
    '/grants',
    {
      schema: {
        operationId: 'listGrants',
        summary: 'List grants',
        description:
          'Oldest first. A key reaching its own account lists the grants of its agents and of its clients; an admin’s `all` key lists every grant. Narrow with `agent_id`, `client_id` and `live`.',
        tags,
        querystring: Type.Object({
          ...ListQuery,
          agent_id: IdFilter('Only this agent’s grants.'),
          client_id: IdFilter('Only grants at this client.'),
          live: Type.Optional(
            Type.Union([Type.Literal('true'), Type.Literal('false')], {
              description: 'true: only grants not revoked; false: only revoked ones; left out: both.',
            }),
          ),
        }),
        response: answers({ 200: Page(GrantRef, 'GrantPage') }),
      },
    },
    async (request) => {
      const { actor } = callerOf(request);
      const { agent_id, client_id, live } = request.query;
      const limit = pageSize(request.query.limit);
      const cursor = timeCursor(request.query.cursor);
      const rows = await ctx.store.api.pageGrants({
        limit: limit + 1,
        accountId: actor.role === 'admin' ? undefined : actor.id,
        agentId: agent_id,
        clientId: client_id,
        live: live === undefined ? undefined : live === 'true',
        after: cursor && { created_at: cursor.at, id: cursor.id },
      });
      return pageOf(rows, limit, grantView);
    },
  );

  api.get<{ Params: IdParams }>(
    '/grants/:id',
    {
      schema: {
        operationId: 'getGrant',
        summary: 'Read a grant',
        tags,
        params: IdParams,
        response: answers({ 200: GrantRef }, 404),
      },
    },
    async (request) => grantView(await reachableGrant(ctx, callerOf(request).actor, request.params.id)),
  );

  api.post<{ Params: IdParams }>(
    '/grants/:id/revoke',
    {
      schema: {
        operationId: 'revokeGrant',
        summary: 'Revoke a grant',
        description:
          'Its refresh and access tokens stop working. Revoking a grant already revoked changes nothing and answers it as it is.',
        tags,
        params: IdParams,
        response: answers({ 200: GrantRef }, 403, 404),
      },
    },
    async (request) => {
      const caller = callerOf(request);
      requireWrite(caller);
      const grant = await reachableGrant(ctx, caller.actor, request.params.id);
      // The rule RFC 7009 revocation applies: the grant's tokens die with it.
      await ctx.store.revokeGrant(grant.id, ctx.clock());
      return grantView((await ctx.store.findGrant(grant.id)) ?? grant);
    },
  );
}
