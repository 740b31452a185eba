/**
 * What an owner reads of an agent's or a website's use (docs/design.md §11): sign-in history
 * from the protocol's audit events (newest first, in pages, narrowed by the filters of the URL),
 * sign-ins per day over the last 30 days, and the websites holding live grants of an agent.
 */
import type { Context } from '../context.ts';
import type {
  ActivityPageQuery,
  ConsoleEventView,
  HistoryCursor,
  SignInCounterpart,
  SignInPageQuery,
  SignInQuery,
  SignInRecord,
  SignInsSeenBy,
} from '../store/history.ts';

import { type Actor, requireAdmin } from './actor.ts';

type Deps = Pick<Context, 'store' | 'clock'>;

export const HISTORY_PAGE = 20;
const DAY = 86400;
export const CHART_DAYS = 30;

/** A page position as it travels in a URL: `<at>.<id>`. */
export function encodeCursor(cursor: HistoryCursor): string {
  return `${cursor.at}.${cursor.id}`;
}

/** The cursor of a URL, or undefined for the first page (a malformed one also reads as the first page). */
export function decodeCursor(raw: string | undefined): HistoryCursor | undefined {
  const match = raw === undefined ? null : /^(\d{1,15})\.([\w-]{1,40})$/.exec(raw);
  return match ? { at: Number(match[1]), id: match[2]! } : undefined;
}

// Who reads what of a sign-in (docs/design.md §11, issue 35): the agent's details (its id, model,
// address, user agent) are its owner's and the admins'; a website's owner is shown what the
// protocol tells the website, of an agent not theirs.

/**
 * The outcomes a website's owner reads of another owner's agent at their website: those the
 * protocol tells the website (a sign-in, the owner's denial, a contest that ended the request).
 * Every other attempt (a wrong secret, the agent's own policy refusing, a mismatch, a hold for
 * approval) changed nothing the website sees, and belongs to the agent's history alone.
 */
export const WEBSITE_OUTCOMES: readonly string[] = ['authenticated', 'approval_denied', 'request_contested'];
/** The outcome whose agent the website is told: the `sub` of the sign-in it was given. */
const AGENT_SHOWN_IN: readonly string[] = ['authenticated'];

/** A sign-in as one reader may read it: whole (`agent`: its agent's owner, an admin) or as its website is told (`website`). */
export type SignInEntry = SignInRecord & { seen_as: 'agent' | 'website' };

/** What `actor` may read of sign-ins it does not reach through the agent; undefined: everything (an admin). */
function seenBy(actor: Actor): SignInsSeenBy | undefined {
  if (actor.admin) return undefined;
  return { accountId: actor.account?.id ?? '', outcomes: WEBSITE_OUTCOMES, agentShownIn: AGENT_SHOWN_IN };
}

/**
 * A sign-in as `actor` may read it: whole when it reaches the agent (its owner, an admin); else
 * what the website was told: the time, the website, the outcome, and the agent's id only where
 * it was the `sub` the website was given. Every door reads sign-ins through this.
 *
 * @example
 * asSeenBy(websiteOwner, row); // { ...row, agent_id: null, model: null, ip: null, user_agent: null, seen_as: 'website' }
 */
export function asSeenBy(actor: Actor, record: SignInRecord): SignInEntry {
  if (actor.admin || (record.agent_account_id !== null && record.agent_account_id === actor.account?.id))
    return { ...record, seen_as: 'agent' };
  return {
    ...record,
    agent_id: AGENT_SHOWN_IN.includes(record.outcome) ? record.agent_id : null,
    agent_account_id: null,
    model: null,
    ip: null,
    user_agent: null,
    seen_as: 'website',
  };
}

/**
 * One page of the sign-ins of an agent or a website that `actor` reaches (its page checked that),
 * as `actor` may read them, and the cursor of the next page (null on the last).
 *
 * @example
 * const { rows, next } = await signInPage(ctx, actor, { agent_id: agent.id, ...filters.query }, decodeCursor(query.before));
 */
export async function signInPage(
  deps: Deps,
  actor: Actor,
  query: SignInQuery,
  before?: HistoryCursor,
  size = HISTORY_PAGE,
): Promise<{ rows: SignInEntry[]; next: string | null }> {
  const rows = await deps.store.signIns.list({ ...query, seenBy: seenBy(actor) }, size + 1, before);
  const page = rows.slice(0, size);
  const last = page[page.length - 1];
  return {
    rows: page.map((row) => asSeenBy(actor, row)),
    next: rows.length > size && last ? encodeCursor({ at: Number(last.at), id: last.id }) : null,
  };
}

/**
 * Every sign-in the query selects, newest first, as `actor` may read them, read a page at a time
 * (the CSV export streams them).
 *
 * @example
 * for await (const row of allSignIns(ctx, actor, { client_id: 'cli_…' })) write(row);
 */
export async function* allSignIns(deps: Deps, actor: Actor, query: SignInQuery): AsyncGenerator<SignInEntry> {
  let before: HistoryCursor | undefined;
  for (;;) {
    const { rows, next } = await signInPage(deps, actor, query, before, EXPORT_PAGE);
    yield* rows;
    if (next === null) return;
    before = decodeCursor(next);
  }
}

const EXPORT_PAGE = 500;

// The admin's activity: console actions and agents' sign-ins, in one newest-first list

/** A line of the admin's activity. */
export type ActivityEntry = { at: number; id: string; ip: string | null } & (
  | { kind: 'console'; event: ConsoleEventView }
  | { kind: 'sign-in'; signIn: SignInRecord }
);

/** What the activity shows: everything, console actions only, or agents' sign-ins only. */
export type ActivityKind = 'all' | 'console' | 'sign-ins';

/**
 * One page of the activity after `before`, for an admin: each source read by its own time index (`size + 1`
 * rows at most), merged by (at, id), so a page costs two short reads however large either grows.
 */
export async function activityPage(
  deps: Deps,
  actor: Actor,
  kind: ActivityKind,
  before: HistoryCursor | undefined,
  size: number,
): Promise<{ entries: ActivityEntry[]; next: string | null }> {
  requireAdmin(actor);
  const [events, signIns] = await Promise.all([
    kind === 'sign-ins' ? [] : deps.store.activity.list({ limit: size + 1, before }),
    kind === 'console' ? [] : deps.store.signIns.list({}, size + 1, before),
  ]);
  const merged: ActivityEntry[] = [
    ...events.map(
      (event): ActivityEntry => ({ kind: 'console', at: Number(event.at), id: event.id, ip: event.ip, event }),
    ),
    ...signIns.map(
      (signIn): ActivityEntry => ({ kind: 'sign-in', at: Number(signIn.at), id: signIn.id, ip: signIn.ip, signIn }),
    ),
  ].sort((a, b) => b.at - a.at || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
  const entries = merged.slice(0, size);
  const last = entries[entries.length - 1];
  return { entries, next: merged.length > size && last ? encodeCursor({ at: last.at, id: last.id }) : null };
}

/** A call of the management API as its console event records it (src/api/routes/index.ts). */
export interface ApiCall {
  /** The OpenAPI operationId: `listAgents`. */
  operation: string;
  /** What the detail says, when it has the API's shape; null for a detail of another shape. */
  method: string | null;
  path: string | null;
  status: number | null;
  keyId: string | null;
}

/**
 * The API call behind an `api.<operationId>` event, whose detail reads
 * `GET /api/admin/v1/agents → 200 (key key_…)`; null for every other event.
 *
 * @example
 * apiCallOf({ action: 'api.listAgents', detail: 'GET /api/admin/v1/agents → 200 (key key_1)' });
 * // { operation: 'listAgents', method: 'GET', path: '/api/admin/v1/agents', status: 200, keyId: 'key_1' }
 */
export function apiCallOf(event: { action: string; detail: string | null }): ApiCall | null {
  if (!event.action.startsWith('api.')) return null;
  const match = /^([A-Z]+) (\S+) → (\d{3}) \(key (\S+)\)$/.exec(event.detail ?? '');
  return {
    operation: event.action.slice('api.'.length),
    method: match?.[1] ?? null,
    path: match?.[2] ?? null,
    status: match ? Number(match[3]) : null,
    keyId: match?.[4] ?? null,
  };
}

// Filters

/** The periods a history can be narrowed to, by their value in the URL. */
export const PERIODS: ReadonlyArray<{ value: string; label: string; seconds: number }> = [
  { value: '24h', label: 'Last 24 hours', seconds: DAY },
  { value: '7d', label: 'Last 7 days', seconds: 7 * DAY },
  { value: '30d', label: 'Last 30 days', seconds: 30 * DAY },
  { value: '90d', label: 'Last 90 days', seconds: 90 * DAY },
];

/** The outcome filter: every successful sign-in, every failed one, or one outcome exactly. */
export const OUTCOME_GROUPS: ReadonlyArray<[string, string]> = [
  ['success', 'Successful'],
  ['failure', 'Failed (any reason)'],
];

/** The filters of a history as the URL carries them (the names of its query parameters). */
export interface HistoryFilters {
  /** On an agent's page: a website (client id) it signed in to. */
  website?: string;
  /** On a website's page: an agent that signed in to it. */
  agent?: string;
  outcome?: string;
  period?: string;
}

/** The filters understood, the query they make, and a message per refused one (by parameter name). */
export interface ParsedFilters {
  filters: HistoryFilters;
  query: SignInQuery;
  errors: Record<string, string>;
}

/**
 * Reads the filters of a history's URL. `side` names the other party's parameter ('website' on
 * an agent's page, 'agent' on a website's) and `counterparts` its known values. A value that is
 * not one of the choices is left out and explained, so the page still answers (400) without it.
 *
 * @example
 * parseHistoryFilters({ outcome: 'failure', period: '7d' }, 'website', sites, ctx.clock())
 * // { filters: {...}, query: { outcome: { not: 'authenticated' }, since: now - 604800 }, errors: {} }
 */
export function parseHistoryFilters(
  raw: Record<string, string | undefined>,
  side: 'website' | 'agent',
  counterparts: SignInCounterpart[],
  now: number,
): ParsedFilters {
  const filters: HistoryFilters = {};
  const query: SignInQuery = {};
  const errors: Record<string, string> = {};
  const given = (name: string) => {
    const value = raw[name];
    return value === undefined || value === '' ? undefined : value;
  };

  const other = given(side);
  if (other !== undefined) {
    if (counterparts.some((party) => party.id === other)) {
      filters[side] = other;
      query[side === 'website' ? 'client_id' : 'agent_id'] = other;
    } else errors[side] = side === 'website' ? 'Choose a website from the list.' : 'Choose an agent from the list.';
  }

  const outcome = given('outcome');
  if (outcome !== undefined) {
    if (outcome === 'success') query.outcome = { is: SUCCESS };
    else if (outcome === 'failure') query.outcome = { not: SUCCESS };
    else if (outcome !== SUCCESS && Object.hasOwn(OUTCOMES, outcome)) query.outcome = { is: outcome };
    else errors.outcome = 'Choose an outcome from the list.';
    if (!errors.outcome) filters.outcome = outcome;
  }

  const period = given('period');
  if (period !== undefined) {
    const known = PERIODS.find((choice) => choice.value === period);
    if (known) {
      filters.period = period;
      query.since = now - known.seconds;
    } else errors.period = 'Choose a period from the list.';
  }
  return { filters, query, errors };
}

/** The query string of the filters (with `&before=` pages kept apart), "" when there are none. */
export function filterQuery(filters: HistoryFilters): string {
  const params = new URLSearchParams(
    Object.entries(filters).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
  return params.size === 0 ? '' : params.toString();
}

/** Successful sign-ins per UTC day, oldest first, for the last 30 days including today. */
export async function dailySignIns(deps: Deps, agentId: string): Promise<Array<{ day: string; count: number }>> {
  const today = Math.floor(deps.clock() / DAY);
  const first = today - CHART_DAYS + 1;
  const counts = await deps.store.signIns.countByDay(agentId, first * DAY);
  return Array.from({ length: CHART_DAYS }, (_, i) => ({
    day: new Date((first + i) * DAY * 1000).toISOString().slice(0, 10),
    count: counts.get(first + i) ?? 0,
  }));
}

const SUCCESS = 'authenticated';

/** Human words for an audit outcome. */
export function outcomeText(outcome: string): string {
  return Object.hasOwn(OUTCOMES, outcome) ? OUTCOMES[outcome]!.text : outcome.replace(/_/g, ' ');
}

/**
 * How an outcome looks: a success, a failure that may be an attack or a leaked id (refused,
 * wrong secret, throttled), or a sign-in that did not happen for an ordinary reason (expired,
 * already used). Only a success may look like one.
 */
export function outcomeKind(outcome: string): 'success' | 'failure' | 'incomplete' {
  return Object.hasOwn(OUTCOMES, outcome) ? OUTCOMES[outcome]!.kind : 'failure';
}

/** The outcomes a history can be narrowed to, in the order of the filter's list. */
export const outcomeChoices = (): Array<[string, string]> =>
  Object.entries(OUTCOMES)
    .filter(([code]) => code !== SUCCESS)
    .map(([code, { text }]) => [code, text]);

const OUTCOMES: Record<string, { text: string; kind: 'success' | 'failure' | 'incomplete' }> = {
  authenticated: { text: 'Signed in', kind: 'success' },
  invalid_credentials: { text: 'Wrong secret', kind: 'failure' },
  throttled: { text: 'Throttled', kind: 'failure' },
  request_mismatch: { text: 'Refused: unexpected site', kind: 'failure' },
  agent_mismatch: { text: 'Refused: another agent was named', kind: 'failure' },
  request_contested: { text: 'Contested by another agent', kind: 'failure' },
  // Owners in control (docs/design.md §16): a refusal by the owner's policy, or the owner's denial.
  access_denied: { text: 'Refused by its owner', kind: 'failure' },
  approval_pending: { text: "Asked for its owner's approval", kind: 'incomplete' },
  approval_denied: { text: 'Denied by its owner', kind: 'failure' },
  request_expired: { text: 'Request expired', kind: 'incomplete' },
  request_already_used: { text: 'Request already used', kind: 'incomplete' },
  invalid_request: { text: 'Unknown request', kind: 'incomplete' },
  invalid_client: { text: 'Website inactive', kind: 'incomplete' },
  // A website's action request about the agent (docs/design.md §21), and who answered it.
  action_pending: { text: 'Action asked of its owner', kind: 'incomplete' },
  action_approved: { text: 'Action approved by its owner', kind: 'success' },
  action_denied: { text: 'Action denied by its owner', kind: 'failure' },
  action_allowed_by_policy: { text: "Action allowed by its owner's policy", kind: 'success' },
  action_denied_by_policy: { text: "Action refused by its owner's policy", kind: 'failure' },
  action_token_issued: { text: 'Action’s token issued', kind: 'success' },
  // A rotated refresh token presented again (docs/design.md §6): the grant was revoked.
  refresh_token_reused: { text: 'Refresh token reused: grant revoked', kind: 'failure' },
};

/**
 * A page of the sign-ins `actor` reaches, newest first, as it may read them: an admin's of
 * everyone, anyone else's of their own agents and, as their website is told, at their websites.
 *
 * @example
 * const rows = await listSignIns(ctx, actor, { limit: 21, agentId: 'agt_…' });
 */
export async function listSignIns(
  deps: Deps,
  actor: Actor,
  query: Omit<SignInPageQuery, 'seenBy'>,
): Promise<SignInEntry[]> {
  const rows = await deps.store.signIns.page({ ...query, seenBy: seenBy(actor) });
  return rows.map((row) => asSeenBy(actor, row));
}

/**
 * A page of the console's activity, newest first: what people did, through every door. Only an admin's.
 *
 * @example
 * const rows = await listActivity(ctx, actor, { limit: 21, action: { prefix: 'agent.' } });
 */
export function listActivity(deps: Deps, actor: Actor, query: ActivityPageQuery): Promise<ConsoleEventView[]> {
  requireAdmin(actor);
  return deps.store.activity.page(query);
}

/**
 * The agents a website's history names to `actor` (its own, and those its website was given as
 * a `sub`), or the websites an agent's does: its filter's choices.
 *
 * @example
 * const counterparts = await signInCounterparts(ctx, actor, { agent_id: 'agt_…' });
 */
export function signInCounterparts(
  deps: Pick<Context, 'store'>,
  actor: Actor,
  of: { agent_id: string } | { client_id: string },
): Promise<SignInCounterpart[]> {
  return deps.store.signIns.counterparts(of, seenBy(actor));
}

/**
 * Whether an agent has signed in to any of these websites, among each one's latest attempts:
 * the last step of getting started, asked only until it is done.
 *
 * @example
 * await anySignIn(ctx, websites);
 */
export async function anySignIn(deps: Pick<Context, 'store'>, websites: Array<{ id: string }>): Promise<boolean> {
  for (const website of websites) {
    const latest = await deps.store.signIns.list({ client_id: website.id }, 20);
    if (latest.some((row) => row.outcome === 'authenticated')) return true;
  }
  return false;
}
