/**
 * What an owner allows an agent (docs/design.md §16): which websites, which scopes at most, until
 * when, how often. The policy is read with the agent in the authentication's one read, decided
 * here by a plain function, and written by the console, the CLI and the API through
 * {@link setAgentPolicy}. An agent without a policy (NULL) behaves exactly as SPEC.md says.
 */
import type { Context } from '../context.ts';
import { InvalidField, NotFound, PreconditionFailed } from '../errors.ts';
import type { ActionAnswer, ActionRule, AgentPolicy, AgentRecord, WebsitesRule } from '../store/agents.ts';
import type { GrantBounds, RevokedGrants } from '../store/rows.ts';
import type { ClientRecord } from '../store/clients.ts';
import type { AuthorizationRequestRecord } from '../store/requests.ts';
import type { ActionType, AuthorizationDetail } from './authorization-details.ts';
import type { Problem } from './rules/problem.ts';
import { registeredScopeNames } from './resource-scopes.ts';
import { OFFLINE_ACCESS, SUPPORTED_SCOPES, scopeValues } from './scopes.ts';
import { agentEvent } from './webhooks/events.ts';

/** The policy of an agent that has none: any website, any scope, no expiry, no limit. */
export const DEFAULT_POLICY: Readonly<AgentPolicy> = Object.freeze({
  websites: 'any',
  allowed_clients: [],
  scope_ceiling: null,
  credentials_expire_at: null,
  max_sign_ins_per_hour: null,
  actions: [],
});

export const WEBSITES_RULES: readonly WebsitesRule[] = ['any', 'listed', 'ask'];
/** The most websites a list may hold. */
export const MAX_ALLOWED_CLIENTS = 100;
/** The highest sign-ins-per-hour limit (beyond it, a limit limits nothing). */
export const MAX_SIGN_INS_PER_HOUR = 100_000;
export const ACTION_ANSWERS: readonly ActionAnswer[] = ['always', 'never', 'ask'];
/** The highest "up to" amount: a limit past it limits nothing a website would ask. */
export const MAX_ACTION_AMOUNT = 1_000_000_000_000;
/** An ISO 4217 currency code, as a policy's "up to" names it. */
export const CURRENCY_CODE = /^[A-Z]{3}$/;

/**
 * The agent's policy, or the default when it has none.
 *
 * @example
 * policyOf(agent).websites; // 'any' for an agent nobody restricted
 */
export function policyOf(agent: Pick<AgentRecord, 'policy'>): AgentPolicy {
  return agent.policy ?? { ...DEFAULT_POLICY, allowed_clients: [], actions: [] };
}

export type PolicyRule = 'invalid' | 'too_many' | 'unknown_client' | 'unknown_scope' | 'out_of_range';

/**
 * What is wrong with a policy, field by field (the client ids' existence is checked by
 * {@link setAgentPolicy}, which reads them). A scope ceiling names the contract's scopes and
 * `resourceScopes`, the scopes resource servers register (docs/design.md §16).
 *
 * @example
 * policyProblems({ ...DEFAULT_POLICY, websites: 'listed', allowed_clients: [] }); // []
 * policyProblems({ ...DEFAULT_POLICY, scope_ceiling: ['admin'] });
 * // [{ field: 'scope_ceiling', rule: 'unknown_scope', message: 'names admin, which is not a scope (openid, email, profile)' }]
 */
export function policyProblems(policy: AgentPolicy, resourceScopes: readonly string[] = []): Problem<PolicyRule>[] {
  const problems: Problem<PolicyRule>[] = [];
  if (!WEBSITES_RULES.includes(policy.websites))
    problems.push({ field: 'websites', rule: 'invalid', message: 'must be any, listed or ask' });
  if (policy.allowed_clients.length > MAX_ALLOWED_CLIENTS)
    problems.push({
      field: 'allowed_clients',
      rule: 'too_many',
      message: `holds more than ${MAX_ALLOWED_CLIENTS} websites`,
    });
  const known = [...SUPPORTED_SCOPES, ...resourceScopes];
  const unknown = (policy.scope_ceiling ?? []).filter((scope) => !known.includes(scope));
  if (unknown.length > 0)
    problems.push({
      field: 'scope_ceiling',
      rule: 'unknown_scope',
      message: `names ${unknown.join(', ')}, which ${unknown.length === 1 ? 'is not a scope' : 'are not scopes'} (${known.join(', ')})`,
    });
  const expiry = policy.credentials_expire_at;
  if (expiry !== null && (!Number.isSafeInteger(expiry) || expiry <= 0))
    problems.push({ field: 'credentials_expire_at', rule: 'invalid', message: 'must be a date (epoch seconds)' });
  const perHour = policy.max_sign_ins_per_hour;
  if (perHour !== null && (!Number.isSafeInteger(perHour) || perHour < 1 || perHour > MAX_SIGN_INS_PER_HOUR))
    problems.push({
      field: 'max_sign_ins_per_hour',
      rule: 'out_of_range',
      message: `must be a whole number from 1 to ${MAX_SIGN_INS_PER_HOUR}`,
    });
  const actionProblem =
    policy.actions.length > MAX_ALLOWED_CLIENTS
      ? `holds more than ${MAX_ALLOWED_CLIENTS} websites`
      : policy.actions.map(actionRuleProblem).find((message) => message !== undefined);
  if (actionProblem) problems.push({ field: 'actions', rule: 'invalid', message: actionProblem });
  return problems;
}

/** What is wrong with one website's rule for actions, in words after "actions", or undefined. */
function actionRuleProblem(rule: ActionRule): string | undefined {
  if (typeof rule.client_id !== 'string' || rule.client_id === '')
    return 'must name a website (client_id) in each rule';
  if (!ACTION_ANSWERS.includes(rule.answer)) return `for ${rule.client_id} must be always, never or ask`;
  if (rule.up_to === undefined) return undefined;
  if (rule.answer !== 'always') return `for ${rule.client_id} may say "up to" only with always`;
  const { amount, currency } = rule.up_to;
  if (typeof amount !== 'number' || !Number.isFinite(amount) || amount <= 0 || amount > MAX_ACTION_AMOUNT)
    return `for ${rule.client_id} must allow up to an amount above 0 and at most ${MAX_ACTION_AMOUNT}`;
  if (typeof currency !== 'string' || !CURRENCY_CODE.test(currency))
    return `for ${rule.client_id} must name its currency as a three-letter code such as EUR`;
  return undefined;
}

/** What a request ended by a policy change tells its browser and agent. */
const NO_LONGER_ALLOWED = "The agent's owner no longer allows this sign-in; start again.";

/**
 * Replaces an agent's policy after checking it (every listed website must exist), announcing
 * the change as `agent.updated`. A policy equal to the default is stored as NULL, so the agent
 * is back on SPEC.md's path exactly. The policy reaches what the agent already holds too: in the
 * same unit its grants beyond the new policy's bounds (grantBounds) are revoked, each website cut
 * off announced as `agent.grants_revoked` (reason `policy`). With `version`, only while the agent
 * still has it (PreconditionFailed otherwise: the caller reads again). Returns the policy as
 * stored and what was revoked.
 *
 * @example
 * await setAgentPolicy(ctx, 'agt_…', { ...policyOf(agent), websites: 'ask', allowed_clients: ['cli_notes'] });
 */
export async function setAgentPolicy(
  deps: Pick<Context, 'store' | 'clock'>,
  agentId: string,
  input: AgentPolicy,
  version?: number,
): Promise<{ policy: AgentPolicy; revoked: RevokedGrants }> {
  const agent = await deps.store.agents.find(agentId);
  if (!agent) throw new NotFound(`no agent ${agentId}`);
  const policy = normalizePolicy(input);
  // Only a ceiling reads the resource servers' scopes: it may name them, and the others are above it.
  const registered = policy.scope_ceiling === null ? [] : await registeredScopeNames(deps);
  const [problem] = policyProblems(policy, registered);
  if (problem) throw new InvalidField(problem.field, `${problem.field} ${problem.message}`);
  for (const clientId of policy.allowed_clients) {
    if (!(await deps.store.clients.find(clientId)))
      throw new InvalidField('allowed_clients', `allowed_clients names ${clientId}, which is not a registered website`);
  }
  for (const { client_id } of policy.actions) {
    if (!(await deps.store.clients.find(client_id)))
      throw new InvalidField('actions', `actions names ${client_id}, which is not a registered website`);
  }
  const granted =
    policy.websites === 'listed' || policy.scope_ceiling !== null ? await deps.store.grants.grantedScopes(agentId) : [];
  const bounds = grantBounds(policy, [...registered, ...granted.flatMap((grant) => scopeValues(grant.scope))]);
  const cutOff = websitesBeyond(granted, bounds);
  const announce = [
    agentEvent('agent.updated', agent, { policy }),
    ...cutOff.map((client) => agentEvent('agent.grants_revoked', agent, { client, reason: 'policy' })),
  ];
  const stored = isDefaultPolicy(policy) ? null : policy;
  const revoke = { bounds, now: deps.clock(), description: NO_LONGER_ALLOWED };
  const revoked = await deps.store.agents.setPolicy(agentId, stored, revoke, announce, version);
  if (!revoked) throw version === undefined ? new NotFound(`no agent ${agentId}`) : new PreconditionFailed();
  return { policy, revoked };
}

/**
 * What a policy allows an agent to keep holding (docs/design.md §16). Only listed websites:
 * grants at any other website end. A scope ceiling: grants naming a scope above it end (revoked,
 * not narrowed: a website asked for that scope, and its tokens already issued say it; it signs
 * in again within the ceiling). Above it is every scope it does not name, of the contract's and of
 * `scopesInUse` (the resource servers' registered scopes and those the agent's grants hold), but
 * offline_access, which shares nothing. 'ask' keeps existing grants (it asks about new websites), and an
 * expiry ends nothing here: the tokens stop at the date (agentCredentialsExpired), and come back
 * if the owner extends it, as a disabled agent's do.
 *
 * @example
 * grantBounds({ ...DEFAULT_POLICY, websites: 'listed', allowed_clients: ['cli_a'], scope_ceiling: ['openid'] });
 * // { websites: ['cli_a'], scopesAbove: ['email', 'profile'] }
 */
export function grantBounds(policy: AgentPolicy, scopesInUse: readonly string[] = []): GrantBounds {
  const ceiling = policy.scope_ceiling;
  const scopes = [...new Set([...SUPPORTED_SCOPES, ...scopesInUse])];
  return {
    ...(policy.websites === 'listed' ? { websites: policy.allowed_clients } : {}),
    scopesAbove: ceiling === null ? [] : scopes.filter((scope) => !ceiling.includes(scope) && scope !== OFFLINE_ACCESS),
  };
}

/** The websites where the agent holds a grant (of `granted`) beyond `bounds`, by id and name. */
function websitesBeyond(
  granted: ReadonlyArray<{ client_id: string; client_name: string | null; scope: string }>,
  bounds: GrantBounds,
): Array<{ id: string; name: string | null }> {
  if (bounds.websites === undefined && bounds.scopesAbove.length === 0) return [];
  const beyond = new Map<string, string | null>();
  for (const grant of granted) {
    const unlisted = bounds.websites !== undefined && !bounds.websites.includes(grant.client_id);
    if (unlisted || scopeValues(grant.scope).some((scope) => bounds.scopesAbove.includes(scope)))
      beyond.set(grant.client_id, grant.client_name);
  }
  return [...beyond].map(([id, name]) => ({ id, name }));
}

/**
 * Whether the agent's owner let its credentials expire by `now`: its sign-ins are refused
 * (decideSignIn) and its grants' tokens stop working (refresh, introspection, userinfo), read
 * from the policy that comes with the agent's row. An agent without a policy pays nothing.
 *
 * @example
 * if (agentCredentialsExpired(agent, ctx.clock())) throw new InvalidGrant('…');
 */
export function agentCredentialsExpired(agent: Pick<AgentRecord, 'policy'>, now: number): boolean {
  const expiry = agent.policy?.credentials_expire_at ?? null;
  return expiry !== null && now >= expiry;
}

/** Lists without repeats, in a stable order: what two equal policies store alike. */
function normalizePolicy(policy: AgentPolicy): AgentPolicy {
  return {
    websites: policy.websites,
    allowed_clients: [...new Set(policy.allowed_clients)],
    scope_ceiling:
      policy.scope_ceiling === null
        ? null
        : [...new Set(policy.scope_ceiling)].sort((a, b) => scopeRank(a) - scopeRank(b)),
    credentials_expire_at: policy.credentials_expire_at,
    max_sign_ins_per_hour: policy.max_sign_ins_per_hour,
    actions: normalizeActions(policy.actions ?? []),
  };
}

/**
 * One rule per website (the last given wins), 'ask' left out since it is what no rule says,
 * currencies in capitals, in the websites' order: what two equal policies store alike.
 */
function normalizeActions(rules: readonly ActionRule[]): ActionRule[] {
  const byWebsite = new Map<string, ActionRule>();
  for (const rule of rules) {
    const upTo = rule.up_to;
    byWebsite.set(rule.client_id, {
      client_id: rule.client_id,
      answer: rule.answer,
      ...(upTo === undefined
        ? {}
        : {
            up_to: {
              amount: upTo.amount,
              currency: typeof upTo.currency === 'string' ? upTo.currency.toUpperCase() : upTo.currency,
            },
          }),
    });
  }
  return [...byWebsite.values()]
    .filter((rule) => rule.answer !== 'ask' || rule.up_to !== undefined)
    .sort((a, b) => (a.client_id < b.client_id ? -1 : a.client_id > b.client_id ? 1 : 0));
}

/** Scopes in the order the server lists them; unknown ones (refused later) last. */
function scopeRank(scope: string): number {
  const rank = (SUPPORTED_SCOPES as readonly string[]).indexOf(scope);
  return rank === -1 ? SUPPORTED_SCOPES.length : rank;
}

function isDefaultPolicy(policy: AgentPolicy): boolean {
  return (
    policy.websites === 'any' &&
    policy.allowed_clients.length === 0 &&
    policy.scope_ceiling === null &&
    policy.credentials_expire_at === null &&
    policy.max_sign_ins_per_hour === null &&
    policy.actions.length === 0
  );
}

/** What the policy says of one sign-in: go on, refuse (with words for a person), or ask the owner. */
export type PolicyDecision = { kind: 'allow' } | { kind: 'refuse'; description: string } | { kind: 'ask' };

export interface SignInAttempt {
  request: Pick<AuthorizationRequestRecord, 'scope' | 'redirect_uri'>;
  client: Pick<ClientRecord, 'id' | 'name'>;
  now: number;
  /**
   * How many sign-ins the agent made in the hour before `now`; read only when the policy limits
   * them (it costs a query the default path must not pay).
   */
  signInsLastHour: () => Promise<number>;
}

/**
 * Decides a sign-in under the agent's policy, before any state changes. The refusals come first
 * (expired credentials, a scope above the ceiling, too many sign-ins), so an owner is never asked
 * about a sign-in the policy would refuse anyway; then the website: listed, or not (refused, or
 * asked about).
 *
 * @example
 * const decision = await decideSignIn(policy, { request, client, now, signInsLastHour });
 * if (decision.kind === 'refuse') throw new AccessDenied(decision.description);
 */
export async function decideSignIn(policy: AgentPolicy, attempt: SignInAttempt): Promise<PolicyDecision> {
  const { request, client, now } = attempt;
  const website = `${client.name} (${new URL(request.redirect_uri).host})`;
  if (policy.credentials_expire_at !== null && now >= policy.credentials_expire_at)
    return refuse(
      `This agent's credentials expired on ${dateOf(policy.credentials_expire_at)}; its owner can extend them in the console.`,
    );
  if (policy.scope_ceiling !== null) {
    const ceiling = policy.scope_ceiling;
    // offline_access shares nothing about the owner: every client gets a refresh token anyway.
    const above = scopeValues(request.scope).filter((scope) => !ceiling.includes(scope) && scope !== OFFLINE_ACCESS);
    if (above.length > 0)
      return refuse(`Your owner does not allow this agent to share ${above.join(', ')}, which ${website} asks for.`);
  }
  if (policy.max_sign_ins_per_hour !== null && (await attempt.signInsLastHour()) >= policy.max_sign_ins_per_hour)
    return refuse(tooManySignIns(policy.max_sign_ins_per_hour));
  if (policy.websites === 'any' || policy.allowed_clients.includes(client.id)) return { kind: 'allow' };
  if (policy.websites === 'ask') return { kind: 'ask' };
  return refuse(`Your owner has not allowed ${website} for this agent.`);
}

const refuse = (description: string): PolicyDecision => ({ kind: 'refuse', description });

/**
 * The refusal of a sign-in past the sign-ins-per-hour limit: decideSignIn's, and the sign-in's
 * own write's when sign-ins made at once used up the limit after the decision (the write counts
 * again, RequestStore.authenticate).
 *
 * @example
 * tooManySignIns(20); // 'This agent has signed in 20 times in the last hour, …'
 */
export const tooManySignIns = (perHour: number) =>
  `This agent has signed in ${perHour} times in the last hour, the most its owner allows; try again later.`;
const dateOf = (epochSeconds: number) => new Date(epochSeconds * 1000).toISOString().replace('.000Z', 'Z');

/** What an agent's policy answers a website's action request: the owner need not be asked, or must. */
export type ActionPolicyAnswer = 'allow' | 'deny' | 'ask';

/**
 * What the agent's policy answers for it when `clientId` asks whether the agent may do `details`
 * (docs/design.md §21). `never` denies. `always` without a limit allows. `always` up to an amount
 * allows only when every detail is of an action type (of `types`, the website's) that names an
 * amount field and a currency field, each detail's amount is a number at least 0 in the limit's
 * currency, and the details' amounts together are within the limit: two payments of 40 EUR
 * under "up to 50 EUR" are asked about, as one of 80 EUR is. Anything else asks the owner.
 *
 * @example
 * const types = [{ type: 'payment', amount_field: 'amount', currency_field: 'currency' }];
 * const policy = { ...DEFAULT_POLICY, actions: [{ client_id: 'cli_shop', answer: 'always', up_to: { amount: 50, currency: 'EUR' } }] };
 * actionAnswer(policy, 'cli_shop', [{ type: 'payment', amount: 20, currency: 'EUR', payee: 'Acme' }], types); // 'allow'
 * actionAnswer(policy, 'cli_shop', [{ type: 'payment', amount: 70, currency: 'EUR', payee: 'Acme' }], types); // 'ask'
 */
export function actionAnswer(
  policy: Pick<AgentPolicy, 'actions'>,
  clientId: string,
  details: readonly AuthorizationDetail[],
  types: ReadonlyArray<Pick<ActionType, 'type' | 'amount_field' | 'currency_field'>>,
): ActionPolicyAnswer {
  const rule = (policy.actions ?? []).find((candidate) => candidate.client_id === clientId);
  if (rule === undefined || rule.answer === 'ask') return 'ask';
  if (rule.answer === 'never') return 'deny';
  if (rule.up_to === undefined) return 'allow';
  if (details.length === 0) return 'ask';
  const limit = rule.up_to;
  let total = 0;
  for (const detail of details) {
    const type = types.find((candidate) => candidate.type === detail.type);
    if (type?.amount_field === undefined || type.currency_field === undefined) return 'ask';
    const amount = detail[type.amount_field];
    const currency = detail[type.currency_field];
    if (typeof amount !== 'number' || !Number.isFinite(amount) || amount < 0) return 'ask';
    if (typeof currency !== 'string' || currency.toUpperCase() !== limit.currency) return 'ask';
    total += amount;
  }
  // In millionths, so that 0.1 + 0.2 is within a limit of 0.3 as a person reads it.
  return Math.round(total * 1e6) <= Math.round(limit.amount * 1e6) ? 'allow' : 'ask';
}
