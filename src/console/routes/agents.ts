/**
 * The agents area (docs/design.md §11): an owner's agents, creating one (its secret shown once),
 * and an agent's page with rename, rotation, disable/enable, revocation, deletion, its sign-ins
 * and the websites it is connected to. Another owner's agent answers exactly as a missing one.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Actor } from '../../management/actor.ts';
import {
  connectedSites,
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
import { dailySignIns } from '../../management/history.ts';
import { listableWebsites } from '../../management/policies.ts';
import type { AgentRecord } from '../../store/agents.ts';
import { publicKeyField } from '../agents.ts';
import { InvalidField } from '../../errors.ts';
import { agentCreatedPage, agentPage, agentPath, agentSecretPage, agentsPage } from '../pages/agents.ts';
import { noticeFor } from '../pages/shell.ts';
import type { ConsoleScope, Form } from './scope.ts';
import { pendingApprovals } from '../approvals.ts';
import { agentPolicyRoutes } from './agent-policy.ts';
import { actOn, loadHistory, ownedRoutes, REFUSED_FILTER, refusedForm, type ShownState } from './owned.ts';

type Params = { id: string };

/** Where a new agent's secret is shown, once. */
const createdPath = (id: string) => `${agentPath(id)}/created`;

export function agentRoutes(scope: FastifyInstance, area: ConsoleScope): void {
  const { ctx, guard } = area;
  /** The agent if the actor may reach it; NotFound otherwise, the same for a missing and a foreign one. */
  const reachable = (actor: Actor, id: string) => getAgent(ctx, actor, id);

  /** The list of the signed-in account's agents with the create form. */
  const list = async (request: FastifyRequest, reply: FastifyReply, state: ShownState, status = 200) => {
    const page = await area.page(request, reply);
    // The console lists the signed-in account's own agents, an admin's too (the admin's pages list everyone's).
    const agents = await listAgents(ctx, area.actor(request), { accountId: page.account.id });
    return area.send(reply, agentsPage(page, { agents, ...state }), status);
  };

  /** An agent's page: details, actions, chart, connected sites and one page of history. */
  const show = async (
    request: FastifyRequest,
    reply: FastifyReply,
    agent: AgentRecord,
    state: ShownState,
    status = 200,
  ) => {
    const page = await area.page(request, reply);
    const now = ctx.clock();
    const [chart, sites, { history, refused }, clients, pending] = await Promise.all([
      dailySignIns(ctx, agent.id),
      connectedSites(ctx, area.actor(request), agent.id),
      loadHistory(ctx, area.actor(request), { agent_id: agent.id }, state.query),
      listableWebsites(ctx),
      pendingApprovals(ctx, page.account),
    ]);
    return area.send(
      reply,
      agentPage(page, {
        agent,
        issuer: ctx.config.baseUrl,
        now,
        chart,
        sites,
        history,
        clients,
        waiting: pending.filter((approval) => approval.agent_id === agent.id),
        actionApprovals: ctx.config.actionApprovals,
        values: state.values,
        errors: state.errors,
        notice: state.notice ?? (refused ? REFUSED_FILTER : null),
      }),
      refused ? 400 : status,
    );
  };

  const act = actOn(area, { reachable, show, pageOf: (agent) => agentPath(agent.id) });

  scope.get<{ Querystring: Form }>('/agents', (request, reply) =>
    list(request, reply, { notice: noticeFor(request.query.notice) }),
  );

  scope.post<{ Body: Form }>('/agents', { preHandler: guard }, async (request, reply) => {
    try {
      // A public key pasted in the form makes a key-bound agent: nothing to show once, its page says it all.
      const key = publicKeyField(request.body?.public_key) ?? undefined;
      const { agent, secret } = await createAgent(ctx, area.actor(request), { name: request.body?.name, key });
      if (secret === null) return area.redirect(reply, `${agentPath(agent.id)}?notice=agent_created_with_key`);
      return area.redirectOnce(request, reply, createdPath(agent.id), { secret });
    } catch (error) {
      if (!(error instanceof InvalidField)) throw error;
      return list(request, reply, refusedForm(request.body, error), 400);
    }
  });

  // The new agent's secret and environment, once: a reload finds the agent's page instead.
  scope.get<{ Params: Params }>('/agents/:id/created', async (request, reply) => {
    const agent = await reachable(area.actor(request), request.params.id);
    const once = await area.takeOnce<{ secret: string }>(request, createdPath(agent.id));
    if (!once) return area.redirect(reply, `${agentPath(agent.id)}?notice=shown_once`);
    return area.send(
      reply,
      agentCreatedPage(await area.page(request, reply), { agent, secret: once.secret, issuer: ctx.config.baseUrl }),
    );
  });

  scope.get<{ Params: Params; Querystring: Form }>('/agents/:id', async (request, reply) => {
    const agent = await reachable(area.actor(request), request.params.id);
    return show(request, reply, agent, { notice: noticeFor(request.query.notice), query: request.query });
  });

  scope.post<{ Params: Params; Body: Form }>('/agents/:id/rename', { preHandler: guard }, (request, reply) =>
    act(request, reply, async (actor, agent) => {
      await renameAgent(ctx, actor, agent.id, request.body?.name);
      return 'agent_renamed';
    }),
  );

  // A new public key: a key-bound agent's replaced, or an agent with a secret bound to a key.
  scope.post<{ Params: Params; Body: Form }>('/agents/:id/rotate-key', { preHandler: guard }, (request, reply) =>
    act(request, reply, async (actor, agent) => {
      const key = publicKeyField(request.body?.public_key);
      if (!key) throw new InvalidField('public_key', 'Paste the new public key (a JWK).');
      await rotateAgentKey(ctx, actor, agent.id, key);
      return 'agent_key_rotated';
    }),
  );

  agentPolicyRoutes(scope, area, act);

  ownedRoutes(scope, area, {
    path: '/agents',
    kind: 'agent',
    reachable,
    show,
    act,
    pageOf: (agent) => agentPath(agent.id),
    rotate: rotateAgentSecret,
    secretPage: (page, { thing, secret, until }) =>
      agentSecretPage(page, { agent: thing, secret, until, issuer: ctx.config.baseUrl }),
    setActive: (deps, actor, id, active) => setAgentStatus(deps, actor, id, active ? 'active' : 'disabled'),
    revokeGrants: (deps, actor, id) => revokeAgentGrants(deps, actor, id),
    historyOf: (agent) => ({ agent_id: agent.id }),
  });

  scope.post<{ Params: Params; Body: Form }>('/agents/:id/delete', { preHandler: guard }, (request, reply) =>
    act(
      request,
      reply,
      async (actor, agent) => {
        await deleteAgent(ctx, actor, agent.id);
        return 'agent_deleted';
      },
      () => '/console/agents',
    ),
  );

  // Disconnecting one website: only a site the agent is connected to (else 404, as a missing one).
  scope.post<{ Params: Params & { clientId: string }; Body: Form }>(
    '/agents/:id/sites/:clientId/revoke',
    { preHandler: guard },
    (request, reply) =>
      act(request, reply, async (actor, agent) => {
        await revokeAgentGrants(ctx, actor, agent.id, request.params.clientId);
        return 'site_revoked';
      }),
  );
}
