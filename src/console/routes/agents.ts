/**
 * The agents area (docs/design.md §11): an owner's agents, creating one (its secret shown once),
 * and an agent's page with rename, rotation, disable/enable, revocation, deletion, its sign-ins
 * and the websites it is connected to. Another owner's agent answers exactly as a missing one.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { rotateAgentSecret, setAgentStatus } from '../../domain/agents.ts';
import { revokeGrants } from '../../domain/revocation.ts';
import type { AccountRecord } from '../../store/console-types.ts';
import type { AgentRecord, RevokedGrants } from '../../store/types.ts';
import { reachableAgent } from '../access.ts';
import { agentLabel, createOwnedAgent, deleteAgent, graceOf } from '../agents.ts';
import { InvalidField, NotFound } from '../errors.ts';
import { recordConsoleEvent } from '../events.ts';
import { dailySignIns, decodeCursor, signInPage } from '../history.ts';
import {
  agentCreatedPage,
  agentPage,
  agentPath,
  agentSecretPage,
  agentsPage,
  type FormState,
} from '../pages/agents.ts';
import { type ConsolePage, noticeFor } from '../pages/shell.ts';
import type { ConsoleScope, Form } from './scope.ts';

type Params = { id: string };

/** The string fields of a form, to show again beside an error. */
export const formValues = (form: Form | undefined): Record<string, string | undefined> =>
  Object.fromEntries(
    Object.entries(form ?? {})
      .filter(([name]) => name !== '_csrf')
      .map(([name, value]) => [name, value]),
  );

/** The counts of a revocation, for the console's audit. */
export const revokedDetail = (revoked: RevokedGrants) =>
  `grants ${revoked.grants}, codes ${revoked.codes}, requests ${revoked.requests}`;

export function agentRoutes(scope: FastifyInstance, area: ConsoleScope): void {
  const { ctx, guard } = area;
  /** The agent if the account may reach it; NotFound otherwise, the same for a missing and a foreign one. */
  const reachable = (account: AccountRecord, id: string) => reachableAgent(ctx, account, id);

  /** The list of the signed-in account's agents with the create form. */
  const list = async (
    request: FastifyRequest,
    reply: FastifyReply,
    state: FormState & { notice?: ConsolePage['notice'] },
    status = 200,
  ) => {
    const page = await area.page(request, reply);
    const agents = await ctx.store.console.listAgentsOf(page.account.id);
    return area.send(reply, agentsPage(page, { agents, ...state }), status);
  };

  /** An agent's page: details, actions, chart, connected sites and one page of history. */
  const show = async (
    request: FastifyRequest,
    reply: FastifyReply,
    agent: AgentRecord,
    state: FormState & { notice?: ConsolePage['notice']; before?: string },
    status = 200,
  ) => {
    const page = await area.page(request, reply);
    const before = decodeCursor(state.before);
    const now = ctx.clock();
    const [chart, sites, history] = await Promise.all([
      dailySignIns(ctx, agent.id),
      ctx.store.console.listConnectedSites(agent.id, now),
      signInPage(ctx, { agent_id: agent.id }, before),
    ]);
    return area.send(
      reply,
      agentPage(page, {
        agent,
        now,
        chart,
        sites,
        history: { ...history, paged: before !== undefined },
        values: state.values,
        errors: state.errors,
        notice: state.notice,
      }),
      status,
    );
  };

  /**
   * Runs an action on an agent the account may reach (else 404) and redirects to `where` with
   * the notice it returns; an InvalidField shows the agent's page again with the message.
   */
  const act = async (
    request: FastifyRequest<{ Params: Params; Body: Form }>,
    reply: FastifyReply,
    action: (account: AccountRecord, agent: AgentRecord) => Promise<string>,
    where: (agent: AgentRecord) => string = (agent) => agentPath(agent.id),
  ) => {
    const account = area.account(request);
    const agent = await reachable(account, request.params.id);
    try {
      return area.redirect(reply, `${where(agent)}?notice=${await action(account, agent)}`);
    } catch (error) {
      if (!(error instanceof InvalidField)) throw error;
      return show(
        request,
        reply,
        agent,
        { values: formValues(request.body), errors: { [error.field]: error.description } },
        400,
      );
    }
  };

  scope.get<{ Querystring: Form }>('/agents', (request, reply) =>
    list(request, reply, { notice: noticeFor(request.query.notice) }),
  );

  scope.post<{ Body: Form }>('/agents', { preHandler: guard }, async (request, reply) => {
    const account = area.account(request);
    try {
      const { agent, secret } = await createOwnedAgent(ctx, account, request.body?.name);
      await recordConsoleEvent(ctx, account, 'agent.create', agent.id, request.ip, agent.name);
      return area.send(
        reply,
        agentCreatedPage(await area.page(request, reply), { agent, secret, issuer: ctx.config.baseUrl }),
      );
    } catch (error) {
      if (!(error instanceof InvalidField)) throw error;
      return list(
        request,
        reply,
        { values: formValues(request.body), errors: { [error.field]: error.description } },
        400,
      );
    }
  });

  scope.get<{ Params: Params; Querystring: Form }>('/agents/:id', async (request, reply) => {
    const agent = await reachable(area.account(request), request.params.id);
    return show(request, reply, agent, { notice: noticeFor(request.query.notice), before: request.query.before });
  });

  scope.post<{ Params: Params; Body: Form }>('/agents/:id/rename', { preHandler: guard }, (request, reply) =>
    act(request, reply, async (account, agent) => {
      const name = agentLabel(request.body?.name);
      if (!(await ctx.store.console.updateAgentName(agent.id, name))) throw new NotFound('No such agent.');
      await recordConsoleEvent(ctx, account, 'agent.rename', agent.id, request.ip, name);
      return 'agent_renamed';
    }),
  );

  // A rotation answers with the new secret, once, rather than a redirect.
  scope.post<{ Params: Params; Body: Form }>('/agents/:id/rotate', { preHandler: guard }, async (request, reply) => {
    const account = area.account(request);
    const agent = await reachable(account, request.params.id);
    let grace: number;
    try {
      grace = graceOf(request.body?.grace);
    } catch (error) {
      if (!(error instanceof InvalidField)) throw error;
      return show(request, reply, agent, { errors: { [error.field]: error.description } }, 400);
    }
    const secret = await rotateAgentSecret(ctx, agent.id, grace);
    await recordConsoleEvent(ctx, account, 'agent.rotate_secret', agent.id, request.ip, `grace ${grace} s`);
    return area.send(
      reply,
      agentSecretPage(await area.page(request, reply), {
        agent,
        secret,
        until: grace > 0 ? ctx.clock() + grace : null,
      }),
    );
  });

  scope.post<{ Params: Params; Body: Form }>('/agents/:id/disable', { preHandler: guard }, (request, reply) =>
    act(request, reply, async (account, agent) => {
      await setAgentStatus(ctx, agent.id, 'disabled');
      await recordConsoleEvent(ctx, account, 'agent.disable', agent.id, request.ip);
      return 'agent_disabled';
    }),
  );

  scope.post<{ Params: Params; Body: Form }>('/agents/:id/enable', { preHandler: guard }, (request, reply) =>
    act(request, reply, async (account, agent) => {
      await setAgentStatus(ctx, agent.id, 'active');
      await recordConsoleEvent(ctx, account, 'agent.enable', agent.id, request.ip);
      return 'agent_enabled';
    }),
  );

  scope.post<{ Params: Params; Body: Form }>('/agents/:id/revoke-grants', { preHandler: guard }, (request, reply) =>
    act(request, reply, async (account, agent) => {
      const revoked = await revokeGrants(ctx, { agent_id: agent.id });
      await recordConsoleEvent(ctx, account, 'agent.revoke_grants', agent.id, request.ip, revokedDetail(revoked));
      return 'grants_revoked';
    }),
  );

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
