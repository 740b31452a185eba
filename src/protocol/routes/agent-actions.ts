/**
 * GET /api/agent/actions (docs/design.md §21): the agent learns of its own action requests, what
 * websites asked its owner about it, in words, waiting or decided in the last ten minutes. It
 * authenticates as at /api/agent/authenticate, in the Authorization header since a GET has no
 * body: `Basic` with its agent_id and secret, or (a key-bound agent) `Bearer` with an assertion
 * whose request_id is "agent-actions". Wrong credentials are 401 invalid_credentials, counted
 * against the address and the agent_id as at authenticate. Mounted only while ACTION_APPROVALS is on.
 */
import { type Static, Type } from '@sinclair/typebox';
import { createDecoder } from 'fast-jwt';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Context } from '../../context.ts';
import { MAX_ASSERTION_LENGTH } from '../../domain/agent-keys.ts';
import { ACTIONS_ASSERTION_REQUEST_ID, listAgentActions } from '../../domain/agent-actions.ts';
import { POLL_INTERVAL } from '../../domain/action-requests/ask.ts';
import { verifyAgentCredentials } from '../../domain/agents.ts';
import { InvalidCredentials, InvalidRequest } from '../../errors.ts';

const Action = Type.Object({
  id: Type.String(),
  client_id: Type.String(),
  client_name: Type.String(),
  words: Type.Array(Type.String()),
  message: Type.String(),
  binding_message: Type.Union([Type.String(), Type.Null()]),
  authorization_details: Type.Array(Type.Object({ type: Type.String() }, { additionalProperties: true })),
  status: Type.Union([
    Type.Literal('pending'),
    Type.Literal('approved'),
    Type.Literal('denied'),
    Type.Literal('expired'),
  ]),
  answered_by: Type.Union([Type.Literal('owner'), Type.Literal('policy'), Type.Null()]),
  created_at: Type.Integer(),
  expires_at: Type.Integer(),
  expires_in: Type.Integer(),
  decided_at: Type.Union([Type.Integer(), Type.Null()]),
});

const ActionsResponse = Type.Object({
  actions: Type.Array(Action),
  /** How often (seconds) an agent waiting for a decision asks again. */
  interval: Type.Integer(),
});

const decode = createDecoder();
const MALFORMED =
  'Send Authorization: Basic with the agent_id and agent_secret, or Bearer with an agent assertion (request_id "agent-actions").';

/** The agent_id and the credential the Authorization header carries. */
function credentialsOf(
  request: FastifyRequest,
): { agentId: string; agent_secret?: string; agent_assertion?: string } | undefined {
  const header = request.headers.authorization ?? '';
  const [scheme = '', value = ''] = header.split(' ', 2);
  if (scheme.toLowerCase() === 'basic' && value !== '') {
    const text = Buffer.from(value, 'base64').toString('utf8');
    const colon = text.indexOf(':');
    if (colon < 1 || text.length > 1024) return undefined;
    return { agentId: text.slice(0, colon), agent_secret: text.slice(colon + 1) };
  }
  if (scheme.toLowerCase() === 'bearer' && value !== '' && value.length <= MAX_ASSERTION_LENGTH) {
    // Only to find the agent: verifyAgentCredentials checks the assertion with its key.
    let claims: { sub?: unknown };
    try {
      claims = decode(value) as { sub?: unknown };
    } catch {
      return undefined;
    }
    if (typeof claims.sub !== 'string' || claims.sub === '' || claims.sub.length > 128) return undefined;
    return { agentId: claims.sub, agent_assertion: value };
  }
  return undefined;
}

export async function agentActionRoutes(app: FastifyInstance, ctx: Context): Promise<void> {
  app.get(
    '/api/agent/actions',
    { schema: { response: { 200: ActionsResponse } } },
    async (request, reply): Promise<Static<typeof ActionsResponse>> => {
      reply.header('cache-control', 'no-store');
      await ctx.throttle.checkClient(request.ip);
      const presented = credentialsOf(request);
      if (!presented) throw new InvalidRequest(MALFORMED);
      const agent = await verifyAgentCredentials(ctx, await ctx.store.agents.find(presented.agentId), {
        request_id: ACTIONS_ASSERTION_REQUEST_ID,
        agent_secret: presented.agent_secret,
        agent_assertion: presented.agent_assertion,
      });
      if (!agent) {
        const throttled = await ctx.throttle.recordWrongCredentials(presented.agentId, request.ip);
        if (throttled) throw throttled;
        throw new InvalidCredentials('The agent credentials are invalid.');
      }
      return { actions: await listAgentActions(ctx, agent.id), interval: POLL_INTERVAL };
    },
  );
}
