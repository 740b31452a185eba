/** Agent credentials (docs/contract.md "Agent credentials", docs/design.md §3, §7). */
import { digest, newAgentId, newAgentSecret, safeEqual } from '../crypto.ts';
import type { Context } from '../context.ts';
import { InvalidRequest, NotFound } from '../errors.ts';
import type { AgentRecord, AgentStatus } from '../store/types.ts';
import { agentNameProblems, MAX_AGENT_NAME_LENGTH, ownerEmailProblems } from './rules/agent.ts';
import { agentEvent } from './webhooks/events.ts';

type Deps = Pick<Context, 'store' | 'clock'>;

export interface NewAgent {
  ownerEmail: string;
  ownerName?: string;
  name?: string;
  emailVerified?: boolean;
  /** The console account that owns the agent (its owner_* fields are then the account's). */
  accountId?: string;
}

export async function registerAgent(deps: Deps, input: NewAgent): Promise<{ agent: AgentRecord; secret: string }> {
  // The agent rules (./rules/agent.ts), worded as the CLI has always printed them.
  const [emailProblem] = ownerEmailProblems(input.ownerEmail);
  if (emailProblem) throw new InvalidRequest(`owner email ${input.ownerEmail} ${emailProblem.message}`);
  const name = (input.name ?? input.ownerName ?? input.ownerEmail).trim();
  if (agentNameProblems(name).length > 0)
    throw new InvalidRequest(`agent name must be 1 to ${MAX_AGENT_NAME_LENGTH} characters`);
  const secret = newAgentSecret();
  const agent: AgentRecord = {
    id: newAgentId(),
    secret_digest: digest(secret),
    previous_secret_digest: null,
    previous_secret_expires_at: null,
    name,
    owner_email: input.ownerEmail,
    owner_name: input.ownerName?.trim() || null,
    owner_email_verified: input.emailVerified ?? false,
    status: 'active',
    created_at: deps.clock(),
    last_used_at: null,
    account_id: input.accountId ?? null,
    policy: null,
  };
  await deps.store.insertAgent(agent, [agentEvent('agent.created', agent)]);
  return { agent, secret };
}

/**
 * Issues a new secret. With `graceSeconds` > 0 the old secret keeps working that long, so the
 * agent can be switched over without downtime; with 0 (a compromised secret) it stops at once.
 */
export async function rotateAgentSecret(deps: Deps, agentId: string, graceSeconds = 0): Promise<string> {
  const agent = await deps.store.findAgent(agentId);
  if (!agent) throw new NotFound(`no agent ${agentId}`);
  const secret = newAgentSecret();
  const keepOld = graceSeconds > 0;
  await deps.store.updateAgent(
    agentId,
    {
      secret_digest: digest(secret),
      previous_secret_digest: keepOld ? agent.secret_digest : null,
      previous_secret_expires_at: keepOld ? deps.clock() + graceSeconds : null,
    },
    [agentEvent('agent.secret_rotated', agent, { grace_seconds: keepOld ? graceSeconds : 0 })],
  );
  return secret;
}

/** Enables or disables an agent; a change of status is announced (agent.enabled, agent.disabled). */
export async function setAgentStatus(deps: Deps, agentId: string, status: AgentStatus): Promise<void> {
  const agent = await deps.store.findAgent(agentId);
  const announce =
    agent && agent.status !== status
      ? [agentEvent(status === 'active' ? 'agent.enabled' : 'agent.disabled', { ...agent, status })]
      : [];
  if (!agent || !(await deps.store.updateAgent(agentId, { status }, announce)))
    throw new NotFound(`no agent ${agentId}`);
}

/** A digest no secret has, compared against when the agent is unknown so both paths cost the same. */
const NO_AGENT_DIGEST = digest('agentauth: no such agent');

/**
 * The agent, if `secret` is its secret (or its previous one, within the grace) and it is active;
 * null otherwise: unknown (undefined), wrong secret and disabled look alike. The caller reads
 * the agent's row, with whatever else the step needs (the store's findAgentAndRequest).
 */
export function verifyAgentCredentials(
  deps: Pick<Context, 'clock'>,
  agent: AgentRecord | undefined,
  secret: string,
): AgentRecord | null {
  const presented = digest(secret);
  // Both comparisons always run, so timing does not tell which secret (if any) matched.
  const current = safeEqual(presented, agent?.secret_digest ?? NO_AGENT_DIGEST);
  const previous = safeEqual(presented, agent?.previous_secret_digest ?? NO_AGENT_DIGEST);
  const previousValid =
    previous && agent?.previous_secret_expires_at != null && deps.clock() < agent.previous_secret_expires_at;
  return agent && (current || previousValid) && agent.status === 'active' ? agent : null;
}
