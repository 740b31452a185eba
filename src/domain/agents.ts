/** Agent credentials (SPEC.md "Agent credentials", DESIGN.md §3, §7). */
import { digest, newAgentId, newAgentSecret, safeEqual } from '../crypto.ts';
import type { Context } from '../context.ts';
import type { AgentRecord, AgentStatus } from '../store/types.ts';

type Deps = Pick<Context, 'store' | 'clock'>;

const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,255}$/;

export interface NewAgent {
  ownerEmail: string;
  ownerName?: string;
  name?: string;
  emailVerified?: boolean;
}

export async function registerAgent(deps: Deps, input: NewAgent): Promise<{ agent: AgentRecord; secret: string }> {
  if (!EMAIL.test(input.ownerEmail)) throw new Error(`owner email ${input.ownerEmail} is not an email address`);
  const name = (input.name ?? input.ownerName ?? input.ownerEmail).trim();
  if (!name || name.length > 200) throw new Error('agent name must be 1 to 200 characters');
  const secret = newAgentSecret();
  const agent: AgentRecord = {
    id: newAgentId(),
    secret_digest: digest(secret),
    name,
    owner_email: input.ownerEmail,
    owner_name: input.ownerName?.trim() || null,
    owner_email_verified: input.emailVerified ?? false,
    status: 'active',
    created_at: deps.clock(),
    last_used_at: null,
  };
  await deps.store.insertAgent(agent);
  return { agent, secret };
}

export async function rotateAgentSecret(deps: Deps, agentId: string): Promise<string> {
  const secret = newAgentSecret();
  if (!(await deps.store.updateAgent(agentId, { secret_digest: digest(secret) }))) throw new Error(`no agent ${agentId}`);
  return secret;
}

export async function setAgentStatus(deps: Deps, agentId: string, status: AgentStatus): Promise<void> {
  if (!(await deps.store.updateAgent(agentId, { status }))) throw new Error(`no agent ${agentId}`);
}

/** A digest no secret has, compared against when the agent is unknown so both paths cost the same. */
const NO_AGENT_DIGEST = digest('agentauth: no such agent');

/** The active agent these credentials belong to, or null; unknown, wrong secret and disabled look alike. */
export async function verifyAgentCredentials(deps: Deps, agentId: string, secret: string): Promise<AgentRecord | null> {
  const agent = await deps.store.findAgent(agentId);
  const matches = safeEqual(digest(secret), agent?.secret_digest ?? NO_AGENT_DIGEST);
  return agent && matches && agent.status === 'active' ? agent : null;
}
