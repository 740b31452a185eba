/** Schemas and answers every route group of the management API uses. */
import { type TSchema, Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Context } from '../../context.ts';
import { checkIfMatch, entityTag, idempotent } from '../conditions.ts';
import type { ApiCaller } from '../keys.ts';
import { ErrorView } from '../../management/views.ts';

/** What each error status of the API means, as the OpenAPI document describes it. */
const ERROR_MEANINGS: Record<number, string> = {
  400: 'A parameter or a field is malformed or refused: `invalid_request`, or a rule’s own code.',
  401: 'No API key, or one unknown, revoked or expired, or of a disabled account: `invalid_token`.',
  403: 'The key may not do this: a read key asked to change something, or a key without `all` reach (`insufficient_scope`); or a rule refuses it (`access_denied`).',
  404: 'No such record, or one of another account: `not_found`.',
  409: 'The record’s state refuses the change, or a creation with the same `Idempotency-Key` is still under way: `conflict`.',
  412: 'The record changed since the `If-Match` tag was read: `precondition_failed`.',
  422: 'The `Idempotency-Key` was used before for a different request: `idempotency_key_reused`.',
  429: 'Past the key’s rate limit, or past its address’s calls without a usable key; retry after `Retry-After` seconds: `too_many_requests`.',
};
/** Where @fastify/swagger reads a response's description (and leaves it out of the schema); a $ref's is its description. */
const RESPONSE_DESCRIPTION = 'x-response-description';
const SUCCESS_MEANINGS: Record<number, string> = { 200: 'Done.', 201: 'Created.', 202: 'Accepted.', 204: 'Done.' };

/**
 * The answers of an operation: its successes and the errors every call can meet (400 bad input,
 * 401 no key, 429 past the key's rate limit), plus `more` errors of its own; each described.
 *
 * @example
 * response: answers({ 200: Type.Ref(AgentView) }, 404)
 */
export function answers(success: Record<number, TSchema>, ...more: number[]): Record<number, TSchema> {
  const errors = [...new Set([400, 401, 429, ...more])].sort();
  return {
    ...Object.fromEntries(
      Object.entries(success).map(([status, schema]) => [
        status,
        {
          ...schema,
          [schema.$ref ? 'description' : RESPONSE_DESCRIPTION]: SUCCESS_MEANINGS[Number(status)] ?? 'Done.',
        },
      ]),
    ),
    ...Object.fromEntries(
      errors.map((status) => [status, Type.Ref(ErrorView, { description: ERROR_MEANINGS[status] ?? 'An error.' })]),
    ),
  };
}

/** The `{id}` of a record's path; any visible ASCII (an unknown one answers 404). */
export const IdParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 512, pattern: '^[!-~]+$', description: 'The record’s id.' }),
});
export type IdParams = { id: string };

/**
 * A filter naming a record by id: visible ASCII like every id (so no NUL reaches PostgreSQL).
 *
 * @example
 * querystring: Type.Object({ ...ListQuery, agent_id: IdFilter('Only this agent’s grants.') })
 */
export const IdFilter = (description: string, maxLength = 512) =>
  Type.Optional(Type.String({ minLength: 1, maxLength, pattern: '^[!-~]+$', description }));

/** `limit` (1–100, default 20) and `cursor` (next_cursor of the page before). */
export const ListQuery = {
  limit: Type.Optional(Type.String({ pattern: '^[0-9]{1,3}$', description: '1 to 100; default 20.' })),
  cursor: Type.Optional(Type.String({ maxLength: 512, description: 'next_cursor of the previous page.' })),
};

/** `account_id` of a list: one account's records, for an admin's `all` key. */
export const AccountIdQuery = {
  account_id: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 64,
      pattern: '^[!-~]+$',
      description: 'Only this account’s (an admin’s `all` key; others ignore it).',
    }),
  ),
};

export const IfMatchHeaders = Type.Object({
  'if-match': Type.Optional(
    Type.String({ description: 'The ETag of the record as read: the change is refused (412) if it changed since.' }),
  ),
});

export const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      maxLength: 255,
      description: 'A unique value per creation: a retry with the same key answers the first answer again.',
    }),
  ),
});

/** Answers a record with its ETag. */
export function withTag<T>(reply: FastifyReply, representation: T): T {
  reply.header('etag', entityTag(representation));
  return representation;
}

/**
 * The request's If-Match as an operation's precondition: the record, as represented by `view`,
 * must still have the tag the header names (412 otherwise); none without the header.
 *
 * @example
 * await renameAgent(ctx, caller, id, name, ifMatch(request, (agent) => agentView(agent, ctx.clock())));
 */
export function ifMatch<T>(request: FastifyRequest, view: (record: T) => unknown): ((record: T) => void) | undefined {
  const header = request.headers['if-match'];
  return header === undefined ? undefined : (record) => checkIfMatch(header, view(record));
}

/** The body of a secret's rotation. */
export const RotateBody = Type.Object(
  {
    grace_seconds: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 604800, description: 'How long the old secret keeps working; default 0.' }),
    ),
  },
  { additionalProperties: false },
);

/** What a creation made: the record's path (`agents/agt_…`, also the audit's target) and the answer's body. */
export interface Created {
  location: string;
  body: unknown;
}

/**
 * Runs a creation under the request's Idempotency-Key (src/api/conditions.ts) and answers 201
 * with its Location, `Cache-Control: no-store` (a creation may show a secret once) and, on a
 * replay, `Idempotent-Replayed: true`. The record's id goes to the console event of the call.
 *
 * @example
 * return answerCreation(ctx, caller, request, reply, async () => ({ location: `agents/${id}`, body }));
 */
export async function answerCreation(
  ctx: Context,
  caller: ApiCaller,
  request: FastifyRequest,
  reply: FastifyReply,
  create: () => Promise<Created>,
): Promise<FastifyReply> {
  const { answer, replayed } = await idempotent(
    ctx,
    caller,
    request.headers['idempotency-key'] as string | undefined,
    request,
    async () => ({ status: 201, ...(await create()) }),
  );
  if (replayed) reply.header('idempotent-replayed', 'true');
  const location = answer.location ?? '';
  reply.header('x-created-id', decodeURIComponent(location.slice(location.lastIndexOf('/') + 1)));
  reply.header('cache-control', 'no-store');
  return reply.code(answer.status).header('location', location).send(answer.body);
}
