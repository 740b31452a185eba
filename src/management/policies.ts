/**
 * An agent's policy, through any door (docs/design.md §16, §17): read and replaced by whoever
 * reaches the agent, through the one rule (setAgentPolicy in src/domain/agent-policy.ts), each
 * change recorded with what it changed.
 */
import type { Context } from '../context.ts';
import { Conflict, PreconditionFailed } from '../errors.ts';
import { policyOf, setAgentPolicy as storePolicy } from '../domain/agent-policy.ts';
import type { ActionAnswer, ActionRule, AgentPolicy, AgentRecord, WebsitesRule } from '../store/agents.ts';
import type { ClientRecord } from '../store/clients.ts';
import { type Actor, requireWrite } from './actor.ts';
import { asActor, recordAct } from './audit.ts';
import { reachableAgent } from './reach.ts';
import { type Precondition, revokedDetail } from './shared.ts';

/** The words of each field, as the console and the docs say them. */
export const POLICY_LABELS: Record<keyof AgentPolicy, string> = {
  websites: 'Websites',
  allowed_clients: 'Listed websites',
  scope_ceiling: 'Scope ceiling',
  credentials_expire_at: 'Credentials expire',
  max_sign_ins_per_hour: 'Sign-ins per hour',
  actions: 'Actions',
};

/** How each standing answer to a website's action requests reads. */
export const ACTION_ANSWER_WORDS: Record<ActionAnswer, string> = {
  ask: 'Ask me',
  always: 'Always allow',
  never: 'Never',
};

/**
 * One website's rule for actions in words: "Always allow up to 50 EUR", "Never", "Ask me".
 *
 * @example
 * actionRuleWords({ client_id: 'cli_shop', answer: 'always', up_to: { amount: 50, currency: 'EUR' } }); // 'Always allow up to 50 EUR'
 */
export function actionRuleWords(rule: Pick<ActionRule, 'answer' | 'up_to'> | undefined): string {
  if (rule === undefined) return ACTION_ANSWER_WORDS.ask;
  const words = ACTION_ANSWER_WORDS[rule.answer];
  return rule.up_to ? `${words} up to ${rule.up_to.amount} ${rule.up_to.currency}` : words;
}

export const WEBSITES_WORDS: Record<WebsitesRule, string> = {
  any: 'Any website',
  listed: 'Only listed websites',
  ask: 'Ask me for a new website',
};

/** A policy's field as the console shows it. */
function shown(field: keyof AgentPolicy, policy: AgentPolicy): string {
  switch (field) {
    case 'websites':
      return WEBSITES_WORDS[policy.websites];
    case 'allowed_clients':
      return policy.allowed_clients.length === 0 ? 'none' : policy.allowed_clients.join(' ');
    case 'scope_ceiling':
      return policy.scope_ceiling === null ? 'any' : policy.scope_ceiling.join(' ');
    case 'credentials_expire_at':
      return policy.credentials_expire_at === null
        ? 'never'
        : new Date(policy.credentials_expire_at * 1000).toISOString().slice(0, 10);
    case 'max_sign_ins_per_hour':
      return policy.max_sign_ins_per_hour === null ? 'no limit' : String(policy.max_sign_ins_per_hour);
    case 'actions':
      return policy.actions.length === 0
        ? 'Ask me for every website'
        : policy.actions.map((rule) => `${rule.client_id}: ${actionRuleWords(rule)}`).join(', ');
  }
}

/**
 * What changed between two policies, for the console's audit: "Websites: Any website → Ask me
 * for a new website; Sign-ins per hour: no limit → 20", or "no change".
 *
 * @example
 * policyChanges(DEFAULT_POLICY, { ...DEFAULT_POLICY, max_sign_ins_per_hour: 20 }); // 'Sign-ins per hour: no limit → 20'
 */
export function policyChanges(before: AgentPolicy, after: AgentPolicy): string {
  const fields = Object.keys(POLICY_LABELS) as Array<keyof AgentPolicy>;
  const changed = fields
    .filter((field) => shown(field, before) !== shown(field, after))
    .map((field) => `${POLICY_LABELS[field]}: ${shown(field, before)} → ${shown(field, after)}`);
  return changed.length === 0 ? 'no change' : changed.join('; ');
}

/**
 * What the agent's owner allows it (the default when nobody restricted it).
 *
 * @example
 * const policy = await getAgentPolicy(ctx, actor, 'agt_…');
 */
export async function getAgentPolicy(deps: Pick<Context, 'store'>, actor: Actor, id: string): Promise<AgentPolicy> {
  return policyOf(await reachableAgent(deps, actor, id));
}

/**
 * How many times a change of the policy is tried on a fresh read when other changes of the agent
 * keep coming between its read and its write; past it, 409. Each round of concurrent changes
 * lets at least one through, so 20 changes at once always compose.
 */
const POLICY_ATTEMPTS = 20;

/**
 * Replaces the agent's policy with `next` (or what `next` makes of the current one); answers it
 * as stored. InvalidField names the field the rule refuses. The write compares and sets the
 * agent's version (docs/design.md §16, §17): with a `precondition` (If-Match) a change that came
 * between the read and the write is 412; without, `next` is applied again to the policy as it
 * now is, so concurrent changes (a website added, another removed) all take effect. Grants the
 * new policy no longer allows are revoked with it (setAgentPolicy in src/domain/agent-policy.ts).
 *
 * @example
 * await setAgentPolicy(ctx, actor, 'agt_…', (current) => ({ ...current, websites: 'ask' }));
 */
export async function setAgentPolicy(
  deps: Pick<Context, 'store' | 'clock'>,
  actor: Actor,
  id: string,
  next: AgentPolicy | ((current: AgentPolicy) => AgentPolicy),
  precondition?: Precondition<AgentRecord>,
): Promise<AgentPolicy> {
  requireWrite(actor);
  for (let attempt = 1; ; attempt++) {
    const agent = await reachableAgent(deps, actor, id);
    precondition?.(agent);
    const before = policyOf(agent);
    const policy = typeof next === 'function' ? next(before) : next;
    let changed: Awaited<ReturnType<typeof storePolicy>>;
    try {
      changed = await asActor(actor, () => storePolicy(deps, agent.id, policy, agent.version));
    } catch (error) {
      if (!(error instanceof PreconditionFailed) || precondition) throw error;
      if (attempt < POLICY_ATTEMPTS) continue;
      throw new Conflict('The agent’s policy kept changing while this change was made; try again.');
    }
    const revoked = changed.revoked.grants + changed.revoked.codes + changed.revoked.requests;
    const detail = policyChanges(before, changed.policy);
    await recordAct(
      deps,
      actor,
      'agent.policy',
      agent.id,
      revoked > 0 ? `${detail}; revoked ${revokedDetail(changed.revoked)}` : detail,
    );
    return changed.policy;
  }
}

/**
 * The websites a policy may list, by name: every registered one (the rule accepts any).
 *
 * @example
 * const choices = await listableWebsites(ctx);
 */
export async function listableWebsites(deps: Pick<Context, 'store'>): Promise<ClientRecord[]> {
  return [...(await deps.store.clients.list())].sort((a, b) => a.name.localeCompare(b.name));
}
