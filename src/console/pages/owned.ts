/**
 * What the pages of agents and clients (websites) share, as their routes share routes/owned.ts:
 * forms shown again with their errors, rotating a secret, disabling and revoking access, and the
 * sign-in history.
 */
import type { SignInCounterpart } from '../../store/history.ts';
import { type Html, html } from '../../web/html.ts';
import { GRACE_CHOICES } from '../agents.ts';
import {
  filterQuery,
  type HistoryFilters,
  OUTCOME_GROUPS,
  outcomeChoices,
  outcomeKind,
  outcomeText,
  PERIODS,
  type SignInEntry,
} from '../../management/history.ts';
import { dataTable, userAgentCell } from './table.ts';
import {
  actionButton,
  type ConsolePage,
  consolePage,
  csrfField,
  field,
  type PageContext,
  secretOnce,
  when,
} from './shell.ts';

/** What a form shows again after an InvalidField: the values typed and the message per field. */
export interface FormState {
  values?: Record<string, string | undefined>;
  errors?: Record<string, string>;
}

/** The notice of a page: a result, or the summary of field errors. */
export function pageNotice(
  notice: ConsolePage['notice'] | undefined,
  errors: Record<string, string> | undefined,
): ConsolePage['notice'] {
  return (
    notice ??
    (errors && Object.keys(errors).length > 0
      ? { kind: 'error', text: 'Please correct the field marked below.' }
      : null)
  );
}

const GRACE_LABELS: Record<number, string> = { 0: 'immediately', 3600: '1 hour', 86400: '1 day', 604800: '7 days' };

/** The rotate form's choices: how long the old secret keeps working. */
export const graceChoices = (): Array<[string, string]> =>
  GRACE_CHOICES.map((seconds) => [String(seconds), GRACE_LABELS[seconds] ?? `${seconds} seconds`]);

/** A rotate-secret form (agents and websites alike). */
export function rotateForm(csrf: string, action: string, error: string | undefined, what: string): Html {
  return html`<form method="post" action="${action}" class="stack" data-confirm="${`Issue a new secret for ${what}?`}">
${csrfField(csrf)}
${field({ label: 'The old secret stops working', name: 'grace', type: 'select', choices: graceChoices(), value: '0', error, hint: 'Choose immediately if the secret leaked; otherwise leave time to switch over to the new one.' })}
<button type="submit">Rotate secret</button>
</form>`;
}

/** After a rotation: until when the old secret works, or that it already stopped. */
export function graceText(until: number | null): Html {
  return until === null
    ? html`The old secret stopped working now.`
    : html`The old secret keeps working until ${when(until)}; switch over before then.`;
}

/** A pending rotation's end, if the previous secret still works. */
export function previousSecretNote(expiresAt: number | null, now: number): Html {
  return expiresAt !== null && Number(expiresAt) > now
    ? html`<p class="hint">The secret before the last rotation keeps working until ${when(expiresAt)}.</p>`
    : html``;
}

/** What an agent's or a client's page is shown with: a form's values and errors, the time, a page of history, a notice. */
export interface OwnedPageInput extends FormState {
  now: number;
  history: HistoryInput;
  notice?: ConsolePage['notice'];
}

/** A destructive action of a danger zone: what it does, in full, beside its button. */
export interface DangerAction {
  action: string;
  /** The button's words: "Delete agent". */
  label: string;
  /** What happens, for whom, and whether it can be undone. */
  consequence: string;
  /** The question console.js asks before posting. */
  confirm: string;
}

/**
 * The danger zone: destructive actions apart from the everyday ones, each with its consequences
 * spelled out. Adding an action is one more entry in `actions`.
 */
export function dangerZone(csrf: string, actions: DangerAction[]): Html {
  if (actions.length === 0) return html``;
  return html`<section aria-labelledby="danger-heading" class="danger-zone" id="danger-zone">
<h2 id="danger-heading">Danger zone</h2>
<ul>
${actions.map((entry, i) => {
  const id = `danger-${i}`;
  return html`<li>
<p id="${id}">${entry.consequence}</p>
<form method="post" action="${entry.action}" data-confirm="${entry.confirm}">${csrfField(csrf)}<button type="submit" class="danger" aria-describedby="${id}">${entry.label}</button></form>
</li>`;
})}
</ul>
</section>`;
}

/** Enable, when disabled: restoring access is not dangerous, so it stays with the everyday actions. */
export function enableAction(csrf: string, base: string, what: string): Html {
  return html`<h3>Status</h3>
<p>This ${what} is disabled.</p>
${actionButton(csrf, `${base}/enable`, `Enable ${what}`)}`;
}

/** A history page's URL: the filters, then the page. */
function historyUrl(path: string, filters: HistoryFilters, before?: string): string {
  const query = [filterQuery(filters), before ? `before=${encodeURIComponent(before)}` : ''].filter(Boolean).join('&');
  return query ? `${path}?${query}` : path;
}

export function pager(path: string, next: string | null, paged: boolean, filters: HistoryFilters = {}): Html {
  if (!next && !paged) return html``;
  return html`<nav class="pager" aria-label="Sign-in history pages">
${paged ? html`<a href="${historyUrl(path, filters)}#history" id="history-newest">Newest</a>` : ''}
${next ? html`<a href="${historyUrl(path, filters, next)}#history" id="history-older">Older sign-ins</a>` : ''}
</nav>`;
}

export interface HistoryInput {
  rows: SignInEntry[];
  next: string | null;
  /** True when this is not the first page. */
  paged: boolean;
  /** The filters applied, and a message per refused one. */
  filters: HistoryFilters;
  filterErrors: Record<string, string>;
  /** The choices of the other side's filter: the websites of an agent, the agents of a website. */
  counterparts: SignInCounterpart[];
}

/** An outcome in words, with an icon and a colour that tell a failure from a success. */
export function outcomeBadge(outcome: string): Html {
  const kind = outcomeKind(outcome);
  const icon = kind === 'success' ? '✓' : kind === 'failure' ? '✗' : '!';
  return html`<span class="outcome ${kind}"><span class="icon" aria-hidden="true">${icon}</span> ${outcomeText(outcome)}</span>`;
}

/** The other side of a history: its filter's parameter and words, and its cell. */
export interface Counterpart {
  param: 'website' | 'agent';
  heading: string;
  /** "Any website" */
  any: string;
  cell(row: SignInEntry): Html | string;
}

function historyFilters(history: HistoryInput, counterpart: Counterpart, path: string): Html {
  const { filters, filterErrors: errors } = history;
  const choices: Array<[string, string]> = [
    ['', counterpart.any],
    ...history.counterparts.map((party): [string, string] => [
      party.id,
      party.name ? `${party.name} (${party.id})` : party.id,
    ]),
  ];
  const outcomes: Array<[string, string]> = [['', 'Any outcome'], ...OUTCOME_GROUPS, ...outcomeChoices()];
  const periods: Array<[string, string]> = [
    ['', 'All time'],
    ...PERIODS.map((p): [string, string] => [p.value, p.label]),
  ];
  const filtered = Object.keys(filters).length > 0;
  const query = filterQuery(filters);
  return html`<form method="get" action="${path}#history" class="filters" aria-label="Filter the sign-in history">
${field({ label: counterpart.heading, name: counterpart.param, type: 'select', choices, value: filters[counterpart.param] ?? '', error: errors[counterpart.param] })}
${field({ label: 'Outcome', name: 'outcome', type: 'select', choices: outcomes, value: filters.outcome ?? '', error: errors.outcome })}
${field({ label: 'Period', name: 'period', type: 'select', choices: periods, value: filters.period ?? '', error: errors.period })}
<div class="filter-actions">
<button type="submit" class="secondary">Show</button>
${filtered ? html`<a href="${path}#history" id="history-clear">Clear filters</a>` : ''}
<a href="${`${path}/history.csv${query ? `?${query}` : ''}`}" id="history-csv" download>Download CSV</a>
</div>
</form>`;
}

/** What a website's owner is told of the rows of another owner's agent. */
const OTHERS_AGENTS =
  "Sign-ins of another owner's agent show what your website is told: when, and how it ended; the agent's id only for a sign-in, the sub your website was given. The agent's model, address and user agent are its owner's.";

/** A detail of the agent, or that it is not shown to this reader (another owner's agent). */
export function agentDetail(row: SignInEntry, shown: Html | string): Html | string {
  return row.seen_as === 'website' ? html`<span class="muted not-shown">not shown</span>` : shown;
}

/** A sign-in history with its filters; `counterpart` is the column naming the other side (website or agent). */
export function historyTable(history: HistoryInput, counterpart: Counterpart, path: string, empty: string): Html {
  const filtered = Object.keys(history.filters).length > 0;
  return html`<section aria-labelledby="history-heading" id="history">
<h2 id="history-heading">Sign-in history</h2>
${historyFilters(history, counterpart, path)}
${
  history.rows.length === 0
    ? html`<p id="history-empty">${history.paged ? 'No older sign-ins.' : filtered ? 'No sign-in matches these filters.' : empty}</p>`
    : dataTable({
        caption: 'Sign-ins, newest first',
        id: 'history-table',
        rows: history.rows,
        rowAttributes: (row) => html` data-event="${row.id}"`,
        columns: [
          { heading: 'Time', kind: 'title', cell: (row) => when(row.at) },
          { heading: counterpart.heading, kind: 'long', cell: counterpart.cell },
          { heading: 'Outcome', cell: (row) => outcomeBadge(row.outcome) },
          {
            heading: 'Model',
            kind: 'long',
            cell: (row) => agentDetail(row, row.model ?? html`<span class="muted">none</span>`),
          },
          { heading: 'IP address', kind: 'long', cell: (row) => agentDetail(row, row.ip ?? '') },
          { heading: 'User agent', kind: 'long', cell: (row) => agentDetail(row, userAgentCell(row.user_agent)) },
        ],
      })
}
${history.rows.some((row) => row.seen_as === 'website') ? html`<p class="hint" id="history-others">${OTHERS_AGENTS}</p>` : ''}
${pager(path, history.next, history.paged, history.filters)}
</section>`;
}

/**
 * The page of an agent or a client: its details (a `<dl>` of `details`, and the end of a pending
 * rotation), what the owner can do with it under Manage, and what the area shows after that.
 */
export function ownedPage(
  page: PageContext,
  input: {
    title: string;
    section: ConsolePage['section'];
    notice: ConsolePage['notice'] | undefined;
    errors: Record<string, string>;
    details: Html;
    previousSecret: { expiresAt: number | null; now: number };
    manage: Html;
    after: Html;
    /** What comes before the details (an agent's sign-ins waiting for approval). */
    before?: Html;
    /** The destructive actions, at the end of the page. */
    danger: DangerAction[];
  },
): string {
  return consolePage(page, {
    title: input.title,
    section: input.section,
    notice: pageNotice(input.notice, input.errors),
    body: html`${input.before ?? ''}<section aria-labelledby="details-heading">
<h2 id="details-heading">Details</h2>
<dl>
${input.details}
</dl>
${previousSecretNote(input.previousSecret.expiresAt, input.previousSecret.now)}
</section>
<section aria-labelledby="actions-heading">
<h2 id="actions-heading">Manage</h2>
${input.manage}
</section>
${input.after}
${dangerZone(page.csrf, input.danger)}`,
  });
}

/** The page after a rotation: the new secret of an agent or a client, shown once, and until when the old one works. */
export function rotatedSecretPage(
  page: PageContext,
  input: {
    name: string;
    section: ConsolePage['section'];
    secret: { label: string; id: string; value: string };
    until: number | null;
    /** What follows the secret (the agent's environment with the new secret). */
    more?: Html;
    back: { href: string; label: string };
  },
): string {
  return consolePage(page, {
    title: `New secret for ${input.name}`,
    section: input.section,
    notice: { kind: 'success', text: 'The secret is rotated. Copy the new one now: it is shown only once.' },
    body: html`${secretOnce(input.secret.label, input.secret.id, input.secret.value)}
<p id="grace">${graceText(input.until)}</p>
${input.more ?? ''}
<p><a href="${input.back.href}">${input.back.label}</a></p>`,
  });
}
