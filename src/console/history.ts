/**
 * What an owner reads of an agent's or a website's use (docs/design.md §11): sign-in history
 * from the protocol's audit events (newest first, in pages), sign-ins per day over the last 30
 * days, and the websites holding live grants of an agent.
 */
import type { Context } from '../context.ts';
import type { HistoryCursor, SignInRecord } from '../store/console-types.ts';

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

/**
 * One page of sign-ins and the cursor of the next page (null on the last).
 *
 * @example
 * const { rows, next } = await signInPage(ctx, { agent_id: agent.id }, decodeCursor(query.before));
 */
export async function signInPage(
  deps: Deps,
  filter: { agent_id: string } | { client_id: string },
  before?: HistoryCursor,
): Promise<{ rows: SignInRecord[]; next: string | null }> {
  const rows = await deps.store.console.listSignIns(filter, HISTORY_PAGE + 1, before);
  const page = rows.slice(0, HISTORY_PAGE);
  const last = page[page.length - 1];
  return {
    rows: page,
    next: rows.length > HISTORY_PAGE && last ? encodeCursor({ at: Number(last.at), id: last.id }) : null,
  };
}

/** Successful sign-ins per UTC day, oldest first, for the last 30 days including today. */
export async function dailySignIns(deps: Deps, agentId: string): Promise<Array<{ day: string; count: number }>> {
  const today = Math.floor(deps.clock() / DAY);
  const first = today - CHART_DAYS + 1;
  const counts = await deps.store.console.countSignInsByDay(agentId, first * DAY);
  return Array.from({ length: CHART_DAYS }, (_, i) => ({
    day: new Date((first + i) * DAY * 1000).toISOString().slice(0, 10),
    count: counts.get(first + i) ?? 0,
  }));
}

/** Human words for an audit outcome. */
export function outcomeText(outcome: string): string {
  return OUTCOMES[outcome] ?? outcome.replace(/_/g, ' ');
}

const OUTCOMES: Record<string, string> = {
  authenticated: 'Signed in',
  invalid_credentials: 'Wrong secret',
  throttled: 'Throttled',
  request_mismatch: 'Refused: unexpected site',
  agent_mismatch: 'Refused: another agent was named',
  request_contested: 'Contested by another agent',
  request_expired: 'Request expired',
  request_already_used: 'Request already used',
  invalid_request: 'Unknown request',
  invalid_client: 'Website inactive',
};
