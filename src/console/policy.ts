/**
 * An agent's policy as the console's form carries it (docs/design.md §16): the form's strings
 * read into an AgentPolicy, which `setAgentPolicy` (src/domain/agent-policy.ts) then checks, the
 * one rule for the console, the CLI and the API. Only what a form cannot say as the policy's
 * types (a date, a number) is read here; every rule on the values stays there.
 */
import { policyOf, setAgentPolicy, WEBSITES_RULES } from '../domain/agent-policy.ts';
import { SUPPORTED_SCOPES } from '../domain/scopes.ts';
import { InvalidField } from '../errors.ts';
import type { Context } from '../context.ts';
import type { AgentPolicy, AgentRecord, WebsitesRule } from '../store/types.ts';

// What the Policy section shows, from the domain's rule (pages import the console, not the domain).
export { MAX_SIGN_INS_PER_HOUR, policyOf } from '../domain/agent-policy.ts';
export { SUPPORTED_SCOPES } from '../domain/scopes.ts';

/** The words of each field, as the console and the docs say them. */
export const POLICY_LABELS: Record<keyof AgentPolicy, string> = {
  websites: 'Websites',
  allowed_clients: 'Listed websites',
  scope_ceiling: 'Scope ceiling',
  credentials_expire_at: 'Credentials expire',
  max_sign_ins_per_hour: 'Sign-ins per hour',
};

export const WEBSITES_WORDS: Record<WebsitesRule, string> = {
  any: 'Any website',
  listed: 'Only listed websites',
  ask: 'Ask me for a new website',
};

/** The form field of a scope's checkbox. */
export const scopeField = (scope: string) => `scope.${scope}`;

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** "2027-01-31" as the epoch second that day begins (UTC); InvalidField for anything else. */
function dateOf(raw: string): number {
  const match = DATE.exec(raw);
  const at = match ? Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3])) : Number.NaN;
  if (!match || Number.isNaN(at) || new Date(at).toISOString().slice(0, 10) !== raw)
    throw new InvalidField('credentials_expire_at', 'Enter a date such as 2027-01-31, or leave it empty for never.');
  return at / 1000;
}

/** A whole number of sign-ins, or null for an empty field; InvalidField for anything else. */
function perHourOf(raw: string): number {
  if (!/^\d{1,15}$/.test(raw))
    throw new InvalidField('max_sign_ins_per_hour', 'Enter a whole number, or leave it empty for no limit.');
  return Number(raw);
}

/**
 * The policy the form's fields say, the listed websites kept as they are (they are added and
 * removed one by one).
 *
 * @example
 * policyFromForm({ websites: 'ask', 'scope.openid': 'on', expires: '', per_hour: '20' }, policyOf(agent));
 * // { websites: 'ask', allowed_clients: [...], scope_ceiling: ['openid'], credentials_expire_at: null, max_sign_ins_per_hour: 20 }
 */
export function policyFromForm(form: Record<string, string | undefined>, current: AgentPolicy): AgentPolicy {
  const websites = form.websites ?? '';
  if (!(WEBSITES_RULES as readonly string[]).includes(websites))
    throw new InvalidField('websites', 'Choose which websites the agent may sign in to.');
  const scopes = SUPPORTED_SCOPES.filter((scope) => form[scopeField(scope)] !== undefined);
  const expires = (form.expires ?? '').trim();
  const perHour = (form.per_hour ?? '').trim();
  return {
    websites: websites as WebsitesRule,
    allowed_clients: current.allowed_clients,
    scope_ceiling: scopes.length === 0 ? null : scopes,
    credentials_expire_at: expires === '' ? null : dateOf(expires),
    max_sign_ins_per_hour: perHour === '' ? null : perHourOf(perHour),
  };
}

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
 * Stores the policy through the one rule (setAgentPolicy), its refusal worded for the form:
 * the field's label instead of its API name. Returns what changed, for the audit.
 *
 * @example
 * const detail = await changePolicy(ctx, agent, { ...policyOf(agent), websites: 'ask' });
 */
export async function changePolicy(
  deps: Pick<Context, 'store'>,
  agent: AgentRecord,
  policy: AgentPolicy,
): Promise<string> {
  const before = policyOf(agent);
  try {
    const stored = await setAgentPolicy(deps, agent.id, policy);
    return policyChanges(before, stored);
  } catch (error) {
    if (!(error instanceof InvalidField)) throw error;
    const field = error.field as keyof AgentPolicy;
    const label = POLICY_LABELS[field];
    const description =
      label && error.description.startsWith(`${field} `)
        ? `${label} ${error.description.slice(field.length + 1)}.`
        : error.description;
    throw new InvalidField(error.field, description);
  }
}
