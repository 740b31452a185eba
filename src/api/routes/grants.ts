/**
 * /grants: what agents were granted at websites, as their owners (or an admin's key, for
 * everyone) see them, and revoking one (src/console/access.ts decides who reaches a grant).
 */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { pageSize, timeCursor, pageOf } from '../conditions.ts';
import { getGrant, listGrants, revokeGrant } from '../../management/grants.ts';
import { GrantView, grantView, Page } from '../../management/views.ts';
import { type ApiScope, callerOf } from './caller.ts';
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
      const { agent_id, client_id, live } = request.query;
      const limit = pageSize(request.query.limit);
      const cursor = timeCursor(request.query.cursor);
      const rows = await listGrants(ctx, callerOf(request), {
        limit: limit + 1,
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
    async (request) => grantView(await getGrant(ctx, callerOf(request), request.params.id)),
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
    async (request) => grantView(await revokeGrant(ctx, callerOf(request), request.params.id)),
  );
}
