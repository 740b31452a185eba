/**
 * An agent's policy as the console's form carries it (docs/design.md §16): the form's strings
 * read into an AgentPolicy, which `setAgentPolicy` (src/domain/agent-policy.ts) then checks, the
 * one rule for the console, the CLI and the API. Only what a form cannot say as the policy's
 * types (a date, a number) is read here; every rule on the values stays there.
 */
import { ACTION_ANSWERS, WEBSITES_RULES } from '../domain/agent-policy.ts';
import { SUPPORTED_SCOPES } from '../domain/scopes.ts';
import { InvalidField } from '../errors.ts';
import { POLICY_LABELS } from '../management/policies.ts';
import type { ActionAnswer, ActionRule, AgentPolicy, WebsitesRule } from '../store/agents.ts';

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
  // The contract's scopes in their order, then any resource server's the form ticked (setAgentPolicy
  // refuses one that no resource server registers).
  const ticked = Object.keys(form)
    .filter(
      (name) => name.length > scopeField('').length && name.startsWith(scopeField('')) && form[name] !== undefined,
    )
    .map((name) => name.slice(scopeField('').length));
  const scopes = [
    ...SUPPORTED_SCOPES.filter((scope) => ticked.includes(scope)),
    ...ticked.filter((scope) => !(SUPPORTED_SCOPES as readonly string[]).includes(scope)),
  ];
  const expires = (form.expires ?? '').trim();
  const perHour = (form.per_hour ?? '').trim();
  return {
    websites: websites as WebsitesRule,
    allowed_clients: current.allowed_clients,
    scope_ceiling: scopes.length === 0 ? null : scopes,
    credentials_expire_at: expires === '' ? null : dateOf(expires),
    max_sign_ins_per_hour: perHour === '' ? null : perHourOf(perHour),
    actions: current.actions,
  };
}

/** The fields of the actions form's line `index`: its website, answer, and "up to" amount and currency. */
export const actionFields = (index: number) => ({
  client: `action_client.${index}`,
  answer: `action.${index}`,
  amount: `up_to_amount.${index}`,
  currency: `up_to_currency.${index}`,
});

const AMOUNT = /^\d{1,13}(?:\.\d{1,6})?$/;

/**
 * The policy with the answers the actions form gives, one line per website (docs/design.md §21):
 * each line's website gets its answer, the others keep theirs. "Always allow" with an amount is
 * "up to" that amount in the line's currency; with the amount empty, any amount; the amount is
 * read only with "Always allow" (a line switched to Never keeps what was typed, unused). The
 * rules on the values (a currency's form, a registered website) are setAgentPolicy's.
 *
 * @example
 * actionsFromForm({ 'action_client.0': 'cli_shop', 'action.0': 'always', 'up_to_amount.0': '50', 'up_to_currency.0': 'eur' }, policyOf(agent));
 * // { ...policy, actions: [{ client_id: 'cli_shop', answer: 'always', up_to: { amount: 50, currency: 'EUR' } }] }
 */
export function actionsFromForm(form: Record<string, string | undefined>, current: AgentPolicy): AgentPolicy {
  const lines: ActionRule[] = [];
  for (let index = 0; form[actionFields(index).client] !== undefined; index++) {
    const names = actionFields(index);
    const clientId = form[names.client]!;
    const answer = form[names.answer] ?? '';
    if (!(ACTION_ANSWERS as readonly string[]).includes(answer))
      throw new InvalidField('actions', 'Choose how each website’s actions are answered.');
    const amount = (form[names.amount] ?? '').trim();
    const currency = (form[names.currency] ?? '').trim().toUpperCase();
    if (answer !== 'always' || amount === '') {
      lines.push({ client_id: clientId, answer: answer as ActionAnswer });
      continue;
    }
    if (!AMOUNT.test(amount))
      throw new InvalidField('actions', 'Enter an amount such as 50 or 19.99, or leave it empty for any amount.');
    if (currency === '') throw new InvalidField('actions', 'Enter the amount’s currency, such as EUR.');
    lines.push({ client_id: clientId, answer: 'always', up_to: { amount: Number(amount), currency } });
  }
  const given = new Set(lines.map((line) => line.client_id));
  return { ...current, actions: [...current.actions.filter((rule) => !given.has(rule.client_id)), ...lines] };
}

/**
 * A refusal of the policy's rule worded for the form: the field's label instead of its API name.
 *
 * @example
 * formWorded(new InvalidField('max_sign_ins_per_hour', 'max_sign_ins_per_hour must be at most 100000'));
 * // InvalidField: 'Sign-ins per hour must be at most 100000.'
 */
export function formWorded(error: InvalidField): InvalidField {
  const field = error.field as keyof AgentPolicy;
  const label = POLICY_LABELS[field];
  const description =
    label && error.description.startsWith(`${field} `)
      ? `${label} ${error.description.slice(field.length + 1)}.`
      : error.description;
  return new InvalidField(error.field, description);
}
