/**
 * The agents area (docs/design.md §11): an owner's agents, creating one (its secret shown once),
 * and an agent's page with rename, rotation, disable/enable, revocation, deletion, its sign-ins
 * and the websites it is connected to. Another owner's agent answers exactly as a missing one.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { rotateAgentKey, rotateAgentSecret, setAgentStatus } from '../../domain/agents.ts';
import { revokeGrants } from '../../domain/revocation.ts';
import type { AccountRecord } from '../../store/console-types.ts';
import type { AgentRecord } from '../../store/types.ts';
import { reachableAgent } from '../access.ts';
import { createOwnedAgent, createOwnedKeyBoundAgent, deleteAgent, publicKeyField, renameAgent } from '../agents.ts';
import { InvalidField, NotFound } from '../../errors.ts';
import { recordConsoleEvent } from '../events.ts';
import { dailySignIns } from '../history.ts';
import { agentCreatedPage, agentPage, agentPath, agentSecretPage, agentsPage } from '../pages/agents.ts';
import { noticeFor } from '../pages/shell.ts';
import type { ConsoleScope, Form } from './scope.ts';
import { pendingApprovals } from '../approvals.ts';
import { agentPolicyRoutes } from './agent-policy.ts';
import {
  actOn,
  loadHistory,
  ownedRoutes,
  REFUSED_FILTER,
  refusedForm,
  revokedDetail,
  type ShownState,
} from './owned.ts';

type Params = { id: string };

/** Where a new agent's secret is shown, once. */
const createdPath = (id: string) => `${agentPath(id)}/created`;

export function agentRoutes(scope: FastifyInstance, area: ConsoleScope): void {
  const { ctx, guard } = area;
  /** The agent if the account may reach it; NotFound otherwise, the same for a missing and a foreign one. */
  const reachable = (account: AccountRecord, id: string) => reachableAgent(ctx, account, id);

  /** The list of the signed-in account's agents with the create form. */
  const list = async (request: FastifyRequest, reply: FastifyReply, state: ShownState, status = 200) => {
    const page = await area.page(request, reply);
    const agents = await ctx.store.console.listAgentsOf(page.account.id);
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
      ctx.store.console.listConnectedSites(agent.id, now),
      loadHistory(ctx, { agent_id: agent.id }, state.query),
      ctx.store.listClients(),
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
        clients: [...clients].sort((a, b) => a.name.localeCompare(b.name)),
        waiting: pending.filter((approval) => approval.agent_id === agent.id),
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
    const account = area.account(request);
    try {
      // A public key pasted in the form makes a key-bound agent: nothing to show once, its page says it all.
      const key = publicKeyField(request.body?.public_key);
      if (key) {
        const agent = await createOwnedKeyBoundAgent(ctx, account, request.body?.name, key);
        await recordConsoleEvent(ctx, account, 'agent.create', agent.id, request.ip, `${agent.name} (key)`);
        return area.redirect(reply, `${agentPath(agent.id)}?notice=agent_created_with_key`);
      }
      const { agent, secret } = await createOwnedAgent(ctx, account, request.body?.name);
      await recordConsoleEvent(ctx, account, 'agent.create', agent.id, request.ip, agent.name);
      return area.redirectOnce(request, reply, createdPath(agent.id), { secret });
    } catch (error) {
      if (!(error instanceof InvalidField)) throw error;
      return list(request, reply, refusedForm(request.body, error), 400);
    }
  });

  // The new agent's secret and environment, once: a reload finds the agent's page instead.
  scope.get<{ Params: Params }>('/agents/:id/created', async (request, reply) => {
    const agent = await reachable(area.account(request), request.params.id);
    const once = await area.takeOnce<{ secret: string }>(request, createdPath(agent.id));
    if (!once) return area.redirect(reply, `${agentPath(agent.id)}?notice=shown_once`);
    return area.send(
      reply,
      agentCreatedPage(await area.page(request, reply), { agent, secret: once.secret, issuer: ctx.config.baseUrl }),
    );
  });

  scope.get<{ Params: Params; Querystring: Form }>('/agents/:id', async (request, reply) => {
    const agent = await reachable(area.account(request), request.params.id);
    return show(request, reply, agent, { notice: noticeFor(request.query.notice), query: request.query });
  });

  scope.post<{ Params: Params; Body: Form }>('/agents/:id/rename', { preHandler: guard }, (request, reply) =>
    act(request, reply, async (account, agent) => {
      const { name } = await renameAgent(ctx, agent, request.body?.name);
      await recordConsoleEvent(ctx, account, 'agent.rename', agent.id, request.ip, name);
      return 'agent_renamed';
    }),
  );

  // A new public key: a key-bound agent's replaced, or an agent with a secret bound to a key.
  scope.post<{ Params: Params; Body: Form }>('/agents/:id/rotate-key', { preHandler: guard }, (request, reply) =>
    act(request, reply, async (account, agent) => {
      const key = publicKeyField(request.body?.public_key);
      if (!key) throw new InvalidField('public_key', 'Paste the new public key (a JWK).');
      await rotateAgentKey(ctx, agent.id, key);
      await recordConsoleEvent(ctx, account, 'agent.rotate_key', agent.id, request.ip, key.thumbprint);
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
    setActive: (deps, id, active) => setAgentStatus(deps, id, active ? 'active' : 'disabled'),
    grantsOf: (agent) => ({ agent_id: agent.id }),
    historyOf: (agent) => ({ agent_id: agent.id }),
  });

  scope.post<{ Params: Params; Body: Form }>('/agents/:id/delete', { preHandler: guard }, (request, reply) =>
    act(
      request,
      reply,
      async (account, agent) => {
        const revoked = await deleteAgent(ctx, agent);
        await recordConsoleEvent(
          ctx,
          account,
          'agent.delete',
          agent.id,
          request.ip,
          `${agent.name}: ${revokedDetail(revoked)}`,
        );
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
      act(request, reply, async (account, agent) => {
        const clientId = request.params.clientId;
        const sites = await ctx.store.console.listConnectedSites(agent.id, ctx.clock());
        if (!sites.some((site) => site.client_id === clientId))
          throw new NotFound('This website is not connected to the agent.');
        await revokeGrants(ctx, { agent_id: agent.id, client_id: clientId });
        await recordConsoleEvent(ctx, account, 'agent.revoke_site', agent.id, request.ip, clientId);
        return 'site_revoked';
      }),
  );
}
