/**
 * What happened: /sign-ins (agents' sign-in attempts at websites, from the protocol's audit
 * events, as the console's histories read them: src/console/history.ts) and /activity (the
 * console's audit of people's and keys' actions, for an admin's `all` key).
 */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import {
  listActivity,
  listSignIns,
  OUTCOME_GROUPS,
  outcomeChoices,
  parseHistoryFilters,
} from '../../management/history.ts';
import { InvalidRequest } from '../../errors.ts';
import type { ActivityPageQuery } from '../../store/history.ts';
import { encodeCursor, timeCursor, pageSize, timeFilter } from '../conditions.ts';
import { ActivityView, activityView, Page, SignInView, signInView } from '../../management/views.ts';
import { type ApiScope, callerOf } from './caller.ts';
import { answers, IdFilter, ListQuery } from './shared.ts';

/** The outcomes `outcome` takes: the console's filter's choices. */
const OUTCOME_VALUES = [...OUTCOME_GROUPS.map(([value]) => value), ...outcomeChoices().map(([value]) => value)];

const TimeRange = {
  since: Type.Optional(Type.String({ maxLength: 64, description: 'RFC 3339: only records at or after this time.' })),
  until: Type.Optional(Type.String({ maxLength: 64, description: 'RFC 3339: only records before this time.' })),
};

type TimeQuery = { limit?: string; cursor?: string; since?: string; until?: string };
type SignInQuery = TimeQuery & { agent_id?: string; client_id?: string; outcome?: string };
type ActivityQuery = TimeQuery & { action?: string; actor_id?: string };

/** An action, or a prefix of actions ending in `*`: `api.*`. */
const ACTION = /^[A-Za-z0-9_.]{1,64}$/;

/**
 * Mounts /sign-ins and /activity on the API's scope.
 *
 * @example
 * await api.register(async (routes) => historyRoutes(routes, { ctx }));
 */
export async function historyRoutes(api: FastifyInstance, { ctx }: ApiScope): Promise<void> {
  /** The page and time range every history query shares, or InvalidRequest. */
  const range = (query: TimeQuery) => {
    const since = timeFilter('since', query.since);
    const until = timeFilter('until', query.until);
    if (since !== undefined && until !== undefined && since >= until)
      throw new InvalidRequest('since must be before until.');
    return { limit: pageSize(query.limit), before: timeCursor(query.cursor), since, until };
  };

  /** The page's records, and the cursor of the next (null on the last). */
  const paged = <R extends { at: number; id: string }, V>(rows: R[], limit: number, view: (row: R) => V) => {
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return {
      data: page.map(view),
      next_cursor: rows.length > limit && last ? encodeCursor({ after: Number(last.at), id: last.id }) : null,
    };
  };

  api.get<{ Querystring: SignInQuery }>(
    '/sign-ins',
    {
      schema: {
        operationId: 'listSignIns',
        summary: 'List sign-in attempts',
        description:
          'Newest first: every attempt of an agent to sign in at a client, successful or not. A key reaching its own account lists those of its agents, whole, and at its clients those of other owners’ agents as the client is told them (`seen_as: website`: a sign-in with its `sub`, the owner’s denial, a contest; never the agent’s model, address or user agent); an admin’s `all` key lists every one, whole.',
        tags: ['Sign-ins'],
        querystring: Type.Object({
          ...ListQuery,
          agent_id: IdFilter('Only this agent’s attempts.'),
          client_id: IdFilter('Only attempts at this client.'),
          outcome: Type.Optional(
            Type.String({
              maxLength: 64,
              description: `success, failure (any failed attempt), or one outcome: ${OUTCOME_VALUES.slice(2).join(', ')}.`,
            }),
          ),
          ...TimeRange,
        }),
        response: answers({ 200: Page(Type.Ref(SignInView), 'SignInPage') }),
      },
    },
    async (request) => {
      const { agent_id, client_id, outcome } = request.query;
      const page = range(request.query);
      // The console's outcome filter, its rule and its values.
      const filters = parseHistoryFilters({ outcome }, 'website', [], ctx.clock());
      if (filters.errors.outcome) throw new InvalidRequest(`outcome must be one of ${OUTCOME_VALUES.join(', ')}.`);
      const rows = await listSignIns(ctx, callerOf(request), {
        ...page,
        limit: page.limit + 1,
        agentId: agent_id,
        clientId: client_id,
        outcome: filters.query.outcome,
      });
      return paged(rows, page.limit, signInView);
    },
  );

  api.get<{ Querystring: ActivityQuery }>(
    '/activity',
    {
      schema: {
        operationId: 'listActivity',
        summary: 'List the console’s activity',
        description:
          'Newest first: what people did in the console, what the CLI did to accounts, and every other call of an API key (`api.<operationId>`: a read, or a refused change; a change is recorded by its act, as in the console). Only an admin’s `all` key.',
        tags: ['Activity'],
        querystring: Type.Object({
          ...ListQuery,
          action: Type.Optional(
            Type.String({
              maxLength: 65,
              description: 'Only this action (`agent.create`), or, ending in `*`, those it begins (`api.*`).',
            }),
          ),
          actor_id: IdFilter('Only this account’s actions.', 64),
          ...TimeRange,
        }),
        response: answers({ 200: Page(Type.Ref(ActivityView), 'ActivityPage') }, 403),
      },
    },
    async (request) => {
      const { action, actor_id } = request.query;
      const page = range(request.query);
      const rows = await listActivity(ctx, callerOf(request), {
        ...page,
        limit: page.limit + 1,
        actorId: actor_id,
        action: actionFilter(action),
      });
      return paged(rows, page.limit, activityView);
    },
  );
}

function actionFilter(raw: string | undefined): ActivityPageQuery['action'] {
  if (raw === undefined) return undefined;
  const prefix = raw.endsWith('*');
  const action = prefix ? raw.slice(0, -1) : raw;
  if (!ACTION.test(action))
    throw new InvalidRequest('action must be an action such as agent.create, or a prefix ending in *, such as api.*.');
  return prefix ? { prefix: action } : { is: action };
}
