/**
 * An agent's policy in the console (docs/design.md §16): the Policy form of the agent's page and
 * the listed websites, added and removed one by one. Each change is the operation the CLI and the
 * API use too (setAgentPolicy, src/management/policies.ts), which records what changed. Who may
 * change it is who may reach the agent (its owner, an admin).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { InvalidField, NotFound } from '../../errors.ts';
import type { Actor } from '../../management/actor.ts';
import { setAgentPolicy } from '../../management/policies.ts';
import type { AgentPolicy, AgentRecord } from '../../store/agents.ts';
import { actionsFromForm, formWorded, policyFromForm } from '../policy.ts';
import type { ConsoleScope, Form } from './scope.ts';

type Request = FastifyRequest<{ Params: { id: string }; Body: Form }>;
/** The agents area's `act` (routes/owned.ts's actOn): reach the agent, run, redirect with a notice. */
type Act = (
  request: Request,
  reply: FastifyReply,
  action: (actor: Actor, agent: AgentRecord) => Promise<string>,
) => Promise<unknown>;

export function agentPolicyRoutes(scope: FastifyInstance, area: ConsoleScope, act: Act): void {
  const { ctx, guard } = area;

  /** Stores `next(current)` through the operation, its refusal in the form's words; the notice to show. */
  const change =
    (notice: string, next: (current: AgentPolicy) => AgentPolicy) => async (actor: Actor, agent: AgentRecord) => {
      try {
        await setAgentPolicy(ctx, actor, agent.id, next);
      } catch (error) {
        throw error instanceof InvalidField ? formWorded(error) : error;
      }
      return notice;
    };

  scope.post<{ Params: { id: string }; Body: Form }>('/agents/:id/policy', { preHandler: guard }, (request, reply) =>
    act(
      request,
      reply,
      change('policy_saved', (current) => policyFromForm(request.body ?? {}, current)),
    ),
  );

  scope.post<{ Params: { id: string }; Body: Form }>(
    '/agents/:id/policy/actions',
    { preHandler: guard },
    (request, reply) =>
      act(
        request,
        reply,
        change('action_answers_saved', (current) => {
          // Off, websites cannot ask, and the page shows no such form.
          if (!ctx.config.actionApprovals) throw new NotFound('Websites do not ask about actions on this server.');
          return actionsFromForm(request.body ?? {}, current);
        }),
      ),
  );

  scope.post<{ Params: { id: string }; Body: Form }>(
    '/agents/:id/policy/websites',
    { preHandler: guard },
    (request, reply) =>
      act(
        request,
        reply,
        change('website_listed', (current) => {
          const clientId = request.body?.client_id ?? '';
          if (clientId === '') throw new InvalidField('allowed_clients', 'Choose a website to add.');
          return { ...current, allowed_clients: [...current.allowed_clients, clientId] };
        }),
      ),
  );

  scope.post<{ Params: { id: string }; Body: Form }>(
    '/agents/:id/policy/websites/remove',
    { preHandler: guard },
    (request, reply) =>
      act(
        request,
        reply,
        change('website_unlisted', (current) => {
          const clientId = request.body?.client_id ?? '';
          if (!current.allowed_clients.includes(clientId))
            throw new NotFound('This website is not listed for the agent.');
          return { ...current, allowed_clients: current.allowed_clients.filter((id) => id !== clientId) };
        }),
      ),
  );
}
