/**
 * /agents: what an owner (or an admin's key, for everyone) does with agents and their policies:
 * a door onto the agent operations (src/management/agents.ts, policies.ts).
 */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { agentKeyOf } from '../../domain/agents.ts';
import { InvalidField } from '../../errors.ts';
import {
  createAgent,
  deleteAgent,
  getAgent,
  listAgents,
  renameAgent,
  revokeAgentGrants,
  rotateAgentKey,
  rotateAgentSecret,
  setAgentStatus,
} from '../../management/agents.ts';
import { getAgentPolicy, setAgentPolicy } from '../../management/policies.ts';
import { DEFAULT_POLICY, policyOf } from '../../domain/agent-policy.ts';
import type { AgentRecord } from '../../store/agents.ts';
import {
  AgentPolicyView,
  AgentView,
  agentPolicyView,
  agentView,
  Page,
  policyFromView,
  RevokedView,
} from '../../management/views.ts';
import { pageSize, timeCursor, pageOf } from '../conditions.ts';
import { callerOf, type ApiScope } from './caller.ts';
import {
  AccountIdQuery,
  answerCreation,
  answers,
  IdempotencyHeaders,
  IdParams,
  IfMatchHeaders,
  ifMatch,
  ListQuery,
  RotateBody,
  withTag,
} from './shared.ts';

const AgentRef = Type.Ref(AgentView);
const tags = ['Agents'];

/** A public JWK; its rules (Ed25519 or P-256, no private part) are the domain's, worded there. */
const publicKey = (description: string) =>
  Type.Object(
    {
      kty: Type.String({ maxLength: 16, examples: ['OKP'], description: '`OKP` (Ed25519) or `EC` (P-256).' }),
      crv: Type.Optional(Type.String({ maxLength: 16, examples: ['Ed25519'], description: '`Ed25519` or `P-256`.' })),
      x: Type.Optional(Type.String({ maxLength: 100 })),
      y: Type.Optional(Type.String({ maxLength: 100, description: 'P-256 only.' })),
    },
    { additionalProperties: true, maxProperties: 20, description },
  );
const KEY_DESCRIPTION =
  'The agent’s public key as a JWK: Ed25519 (`kty` OKP) or P-256 (`kty` EC, for ES256), without `d`. `agentauth-agent keygen` prints one.';

const NewAgentBody = Type.Object(
  {
    name: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description: 'Required for an account’s agent; for an `owner`’s, it defaults to the owner’s name or email.',
      }),
    ),
    account_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        pattern: '^[!-~]+$',
        description: 'The owning account; only a key reaching all accounts may name another.',
      }),
    ),
    owner: Type.Optional(
      Type.Object(
        {
          email: Type.String({ minLength: 1, maxLength: 320, description: 'The email claim.' }),
          name: Type.Optional(Type.String({ maxLength: 200, description: 'The name claim.' })),
          email_verified: Type.Optional(
            Type.Boolean({
              description: 'Whether the owner’s email was verified (the email_verified claim); default false.',
            }),
          ),
        },
        {
          additionalProperties: false,
          description:
            'Instead of an account: the owner by email, as `agentauth agent create --owner-email` names them. When a console account has this email (any case), the agent is that account’s, with its claims (name and email_verified here are then ignored); otherwise it is an agent of someone without a console account. Only an admin’s `all` key; not with `account_id`.',
        },
      ),
    ),
    public_key: Type.Optional(
      publicKey(
        `${KEY_DESCRIPTION} Makes a key-bound agent: it proves itself with assertions signed by the private half of this key, and gets no secret.`,
      ),
    ),
  },
  { additionalProperties: false },
);
type NewAgentBody = {
  name?: string;
  account_id?: string;
  owner?: { email: string; name?: string; email_verified?: boolean };
  public_key?: Record<string, unknown>;
};
const AgentChanges = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    status: Type.Optional(
      Type.Union([Type.Literal('active'), Type.Literal('disabled')], {
        description: 'disabled: its sign-ins and tokens are refused until it is active again.',
      }),
    ),
  },
  { additionalProperties: false, minProperties: 1 },
);
/** A whole policy: what is left out takes its default (no list, no ceiling, no expiry, no limit). */
const PolicyBody = Type.Object(
  {
    clients: AgentPolicyView.properties.clients,
    allowed_clients: Type.Optional(AgentPolicyView.properties.allowed_clients),
    scope_ceiling: Type.Optional(AgentPolicyView.properties.scope_ceiling),
    credentials_expire_at: Type.Optional(AgentPolicyView.properties.credentials_expire_at),
    max_sign_ins_per_hour: Type.Optional(AgentPolicyView.properties.max_sign_ins_per_hour),
    actions: Type.Optional(AgentPolicyView.properties.actions),
  },
  { additionalProperties: false },
);
type PolicyBody = Pick<AgentPolicyView, 'clients'> & Partial<AgentPolicyView>;
const PolicyRef = Type.Ref(AgentPolicyView);

const WithSecret = Type.Object({
  agent: AgentRef,
  agent_secret: Type.String({ description: 'Shown only in this answer (and its idempotent replays).' }),
});
const Created = Type.Object({
  agent: AgentRef,
  agent_secret: Type.Optional(
    Type.String({
      description: 'Shown only in this answer (and its idempotent replays); absent for a key-bound agent.',
    }),
  ),
});

export async function agentRoutes(api: FastifyInstance, { ctx }: ApiScope): Promise<void> {
  const view = (agent: AgentRecord) => agentView(agent, ctx.clock());
  const policyView = (agent: AgentRecord) => agentPolicyView(policyOf(agent));

  api.get<{ Querystring: { limit?: string; cursor?: string; account_id?: string } }>(
    '/agents',
    {
      schema: {
        operationId: 'listAgents',
        summary: 'List agents',
        description:
          'Oldest first. A key reaching its own account lists that account’s agents; an admin’s `all` key lists every agent, or one account’s with `account_id`.',
        tags,
        querystring: Type.Object({
          ...ListQuery,
          ...AccountIdQuery,
        }),
        response: answers({ 200: Page(AgentRef, 'AgentPage') }),
      },
    },
    async (request) => {
      const limit = pageSize(request.query.limit);
      const cursor = timeCursor(request.query.cursor);
      const rows = await listAgents(ctx, callerOf(request), {
        limit: limit + 1,
        accountId: request.query.account_id,
        after: cursor && { created_at: cursor.at, id: cursor.id },
      });
      return pageOf(rows, limit, view);
    },
  );

  api.post<{ Body: NewAgentBody }>(
    '/agents',
    {
      schema: {
        operationId: 'createAgent',
        summary: 'Create an agent',
        description:
          'Answers the agent and its secret, once; with `public_key`, a key-bound agent, which has no secret. Send an `Idempotency-Key` to retry safely.',
        tags,
        headers: IdempotencyHeaders,
        body: NewAgentBody,
        response: answers({ 201: Created }, 403, 404, 409, 422),
      },
    },
    async (request, reply) => {
      const caller = callerOf(request);
      return answerCreation(ctx, caller, request, reply, async () => {
        const { name, account_id, owner, public_key } = request.body;
        const key = public_key === undefined ? undefined : agentKeyOf(public_key);
        const { agent, secret } = await createAgent(ctx, caller, { name, accountId: account_id, owner, key });
        return {
          location: `agents/${agent.id}`,
          body: { agent: view(agent), ...(secret === null ? {} : { agent_secret: secret }) },
        };
      });
    },
  );

  api.get<{ Params: IdParams }>(
    '/agents/:id',
    {
      schema: {
        operationId: 'getAgent',
        summary: 'Read an agent',
        description: 'Answers its `ETag`, for `If-Match` on a change.',
        tags,
        params: IdParams,
        response: answers({ 200: AgentRef }, 404),
      },
    },
    async (request, reply) => withTag(reply, view(await getAgent(ctx, callerOf(request), request.params.id))),
  );

  api.patch<{ Params: IdParams; Body: { name?: string; status?: 'active' | 'disabled' } }>(
    '/agents/:id',
    {
      schema: {
        operationId: 'updateAgent',
        summary: 'Rename, disable or enable an agent',
        description: 'Disabling suspends its sign-ins and its tokens; enabling brings them back.',
        tags,
        params: IdParams,
        headers: IfMatchHeaders,
        body: AgentChanges,
        response: answers({ 200: AgentRef }, 403, 404, 412),
      },
    },
    async (request, reply) => {
      const caller = callerOf(request);
      const { name, status } = request.body;
      let agent = await getAgent(ctx, caller, request.params.id);
      const precondition = ifMatch(request, view);
      if (name !== undefined) agent = await renameAgent(ctx, caller, agent.id, name, precondition);
      if (status !== undefined)
        agent = await setAgentStatus(ctx, caller, agent.id, status, name === undefined ? precondition : undefined);
      return withTag(reply, view(agent));
    },
  );

  api.get<{ Params: IdParams }>(
    '/agents/:id/policy',
    {
      schema: {
        operationId: 'getAgentPolicy',
        summary: 'Read what an agent’s owner allows it',
        description:
          'Its policy: which clients (websites), which scopes at most, until when, how often. An agent nobody restricted has the default (`any`, no ceiling, no expiry, no limit). Answers its `ETag`, for `If-Match` on a change.',
        tags,
        params: IdParams,
        response: answers({ 200: PolicyRef }, 404),
      },
    },
    async (request, reply) =>
      withTag(reply, agentPolicyView(await getAgentPolicy(ctx, callerOf(request), request.params.id))),
  );

  api.put<{ Params: IdParams; Body: PolicyBody }>(
    '/agents/:id/policy',
    {
      schema: {
        operationId: 'setAgentPolicy',
        summary: 'Set what an agent’s owner allows it',
        description:
          'Replaces the policy; a field left out takes its default. Every listed client must be registered. Checked at each sign-in: a refusal is 403 `access_denied` in plain words, `ask` holds a new client for the owner (202 `approval_pending`). It reaches the grants the agent holds too: under `listed`, grants at a client not listed are revoked, and under a `scope_ceiling`, grants naming a scope above it (announced as `agent.grants_revoked`); `ask` keeps them; from `credentials_expire_at` on, its tokens are inactive at refresh, introspection and userinfo until the date is extended. `actions` answers websites’ action requests for the owner (`always`, up to an amount in a currency where set; `never`); a website without a rule asks the owner. `{"clients":"any"}` puts the agent back on the default.',
        tags,
        params: IdParams,
        headers: IfMatchHeaders,
        body: PolicyBody,
        response: answers({ 200: PolicyRef }, 403, 404, 412),
      },
    },
    async (request, reply) => {
      const policy = policyFromView({ ...agentPolicyView(DEFAULT_POLICY), ...request.body });
      if (!policy)
        throw new InvalidField('credentials_expire_at', 'credentials_expire_at is not an RFC 3339 date-time');
      const stored = await setAgentPolicy(
        ctx,
        callerOf(request),
        request.params.id,
        policy,
        ifMatch(request, policyView),
      );
      return withTag(reply, agentPolicyView(stored));
    },
  );

  api.delete<{ Params: IdParams }>(
    '/agents/:id',
    {
      schema: {
        operationId: 'deleteAgent',
        summary: 'Delete an agent',
        description: 'Revokes its grants first (their tokens stop working); answers what was revoked.',
        tags,
        params: IdParams,
        headers: IfMatchHeaders,
        response: answers({ 200: Type.Ref(RevokedView) }, 403, 404, 412),
      },
    },
    async (request) => deleteAgent(ctx, callerOf(request), request.params.id, ifMatch(request, view)),
  );

  api.post<{ Params: IdParams; Body: { grace_seconds?: number } | undefined }>(
    '/agents/:id/rotate-secret',
    {
      schema: {
        operationId: 'rotateAgentSecret',
        summary: 'Issue a new agent secret',
        description:
          'The old secret stops at once, or after `grace_seconds`. The new one is shown only in this answer.',
        tags,
        params: IdParams,
        headers: IfMatchHeaders,
        body: Type.Optional(RotateBody),
        response: answers({ 200: WithSecret }, 403, 404, 412),
      },
    },
    async (request, reply) => {
      const grace = request.body?.grace_seconds ?? 0;
      const rotated = await rotateAgentSecret(ctx, callerOf(request), request.params.id, grace, ifMatch(request, view));
      reply.header('cache-control', 'no-store');
      return { agent: view(rotated.agent), agent_secret: rotated.secret };
    },
  );

  api.post<{ Params: IdParams; Body: { public_key: Record<string, unknown> } }>(
    '/agents/:id/rotate-key',
    {
      schema: {
        operationId: 'rotateAgentKey',
        summary: 'Replace an agent’s public key',
        description:
          'The agent proves itself with the new key from now on; the old key (or, for an agent that had a secret, the secret) stops at once. Announced as `agent.key_rotated`.',
        tags,
        params: IdParams,
        headers: IfMatchHeaders,
        body: Type.Object({ public_key: publicKey(KEY_DESCRIPTION) }, { additionalProperties: false }),
        response: answers({ 200: AgentRef }, 403, 404, 412),
      },
    },
    async (request, reply) => {
      const key = agentKeyOf(request.body.public_key);
      return withTag(
        reply,
        view(await rotateAgentKey(ctx, callerOf(request), request.params.id, key, ifMatch(request, view))),
      );
    },
  );

  api.post<{ Params: IdParams }>(
    '/agents/:id/revoke-grants',
    {
      schema: {
        operationId: 'revokeAgentGrants',
        summary: 'Revoke every grant of an agent',
        description: 'Its refresh and access tokens stop working; codes not yet redeemed and sign-ins in progress end.',
        tags,
        params: IdParams,
        response: answers({ 200: Type.Ref(RevokedView) }, 403, 404),
      },
    },
    async (request) => revokeAgentGrants(ctx, callerOf(request), request.params.id),
  );
}
