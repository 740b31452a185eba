/** The agent back channel: POST /api/agent/authenticate and GET /api/check-status (docs/contract.md, docs/design.md §5). */
import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { Context } from '../../context.ts';
import { MAX_ASSERTION_LENGTH } from '../../domain/agent-keys.ts';
import { authenticateAgent } from '../../domain/authorization-request/agent-authentication.ts';
import { describeRequestForAgent, statusView } from '../../domain/authorization-request/status.ts';
import { MAX_CLIENT_ID_LENGTH, MAX_RESOURCE_LENGTH } from '../../domain/rules/client.ts';
import { InvalidRequest, NotFound } from '../../errors.ts';
import { Token } from '../../http/schemas.ts';

const AuthenticateBody = Type.Object({
  request_id: Token(128),
  agent_id: Token(128),
  // Exactly one of the two (checked below): a secret, or a key-bound agent's assertion (docs/design.md §16).
  agent_secret: Type.Optional(Token(512)),
  agent_assertion: Type.Optional(Token(MAX_ASSERTION_LENGTH)),
  model: Type.String({ minLength: 1, maxLength: 200, pattern: '^[^\\u0000-\\u001f\\u007f-\\u009f]*$' }),
  expected_client_id: Type.Optional(Token(MAX_CLIENT_ID_LENGTH)),
  expected_redirect_host: Type.Optional(Token(300)),
  expected_resource: Type.Optional(Token(MAX_RESOURCE_LENGTH)),
});

const AuthenticateResponse = Type.Object({ status: Type.Literal('authenticated'), message: Type.String() });

/** The agent's owner must approve first (docs/design.md §16): the agent waits as for the browser. */
const ApprovalPendingResponse = Type.Object({
  status: Type.Literal('approval_pending'),
  message: Type.String(),
  approval_id: Type.String(),
  expires_at: Type.Integer(),
  expires_in: Type.Integer(),
});

const StatusQuery = Type.Object({ request_id: Token(128) });

const Status = Type.Union([
  Type.Literal('pending'),
  Type.Literal('authenticated'),
  Type.Literal('completed'),
  Type.Literal('error'),
]);

const AgentRequestResponse = Type.Object({
  request_id: Type.String(),
  client_id: Type.String(),
  client_name: Type.String(),
  redirect_host: Type.String(),
  scope: Type.String(),
  resource: Type.Union([Type.String(), Type.Null()]),
  expires_at: Type.Integer(),
  expires_in: Type.Integer(),
  status: Status,
  approval_pending: Type.Optional(Type.Literal(true)),
  error: Type.Optional(Type.String()),
  error_description: Type.Optional(Type.String()),
});

const StatusResponse = Type.Object({
  status: Status,
  approval_pending: Type.Optional(Type.Literal(true)),
  error: Type.Optional(Type.String()),
  error_description: Type.Optional(Type.String()),
});

export async function agentRoutes(app: FastifyInstance, ctx: Context): Promise<void> {
  app.post<{ Body: Static<typeof AuthenticateBody> }>(
    '/api/agent/authenticate',
    {
      schema: { body: AuthenticateBody, response: { 200: AuthenticateResponse, 202: ApprovalPendingResponse } },
    },
    async (request, reply) => {
      // Exactly one; without either, the secret is what is missing, as before keys existed.
      const { agent_secret, agent_assertion } = request.body;
      if (agent_secret === undefined && agent_assertion === undefined)
        throw new InvalidRequest('agent_secret is required');
      if (agent_secret !== undefined && agent_assertion !== undefined)
        throw new InvalidRequest('Send agent_secret or agent_assertion, not both.');
      const outcome = await authenticateAgent(
        ctx,
        request.body,
        { ip: request.ip, userAgent: request.headers['user-agent'] ?? null },
        request.log,
      );
      reply.header('cache-control', 'no-store');
      if (outcome.kind === 'authenticated')
        return reply.send({
          status: 'authenticated',
          message: `Agent authenticated. The browser will now continue to ${outcome.client.name}.`,
        });
      // Held for the agent's owner; askOwner has mailed them where it may.
      const { agent, client, approval } = outcome;
      const expiresIn = Math.max(0, approval.expires_at - ctx.clock());
      return reply.code(202).send({
        status: 'approval_pending',
        message: `Waiting for ${agent.owner_name ?? agent.owner_email} to approve signing in to ${client.name}; the request expires in ${Math.ceil(expiresIn / 60)} minutes.`,
        approval_id: approval.id,
        expires_at: approval.expires_at,
        expires_in: expiresIn,
      });
    },
  );

  app.get<{ Querystring: Static<typeof StatusQuery> }>(
    '/api/check-status',
    {
      schema: { querystring: StatusQuery, response: { 200: StatusResponse } },
    },
    async (request, reply) => {
      const found = await ctx.store.requests.findStatus(request.query.request_id);
      if (!found) throw new NotFound('The authorization request does not exist.');
      return reply.header('cache-control', 'no-store').send(statusView(found, ctx.clock()));
    },
  );

  // What an agent handed only a request_id checks before it authenticates (docs/design.md §5).
  app.get<{ Querystring: Static<typeof StatusQuery> }>(
    '/api/agent/request',
    {
      schema: { querystring: StatusQuery, response: { 200: AgentRequestResponse } },
    },
    async (request, reply) => {
      const view = await describeRequestForAgent(ctx, request.query.request_id);
      if (!view) throw new NotFound('The authorization request does not exist.');
      return reply.header('cache-control', 'no-store').send(view);
    },
  );
}
