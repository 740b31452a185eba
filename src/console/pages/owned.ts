/**
 * What the pages of agents and clients (websites) share, as their routes share routes/owned.ts:
 * forms shown again with their errors, rotating a secret, disabling and revoking access, and the
 * sign-in history.
 */
import type { SignInRecord } from '../../store/console-types.ts';
import { type Html, html } from '../../web/html.ts';
import { GRACE_CHOICES } from '../agents.ts';
import { outcomeText } from '../history.ts';
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

/**
 * Disable (or Enable) and Revoke all grants, each asking for confirmation, and `more` buttons
 * beside them: what an owner does with the access of an agent or a client.
 */
export function accessActions(
  csrf: string,
  base: string,
  input: { active: boolean; disable: string; revoke: string; more?: Html },
): Html {
  return html`<h3>Access</h3>
<div class="row">
${input.active ? actionButton(csrf, `${base}/disable`, 'Disable', { confirm: input.disable }) : actionButton(csrf, `${base}/enable`, 'Enable')}
${actionButton(csrf, `${base}/revoke-grants`, 'Revoke all grants', { confirm: input.revoke })}
${input.more ?? ''}
</div>`;
}

export function pager(path: string, next: string | null, paged: boolean): Html {
  if (!next && !paged) return html``;
  return html`<nav class="pager" aria-label="Sign-in history pages">
${paged ? html`<a href="${path}#history" id="history-newest">Newest</a>` : ''}
${next ? html`<a href="${`${path}?before=${encodeURIComponent(next)}`}#history" id="history-older">Older sign-ins</a>` : ''}
</nav>`;
}

export interface HistoryInput {
  rows: SignInRecord[];
  next: string | null;
  /** True when this is not the first page. */
  paged: boolean;
}

/** A sign-in history table; `counterpart` is the column naming the other side (website or agent). */
export function historyTable(
  history: HistoryInput,
  counterpart: { heading: string; cell(row: SignInRecord): Html | string },
  path: string,
  empty: string,
): Html {
  return html`<section aria-labelledby="history-heading" id="history">
<h2 id="history-heading">Sign-in history</h2>
${
  history.rows.length === 0
    ? html`<p>${history.paged ? 'No older sign-ins.' : empty}</p>`
    : html`<table id="history-table">
<caption class="visually-hidden">Sign-ins, newest first</caption>
<thead><tr><th scope="col">Time</th><th scope="col">${counterpart.heading}</th><th scope="col">Model</th><th scope="col">IP address</th><th scope="col">User agent</th><th scope="col">Outcome</th></tr></thead>
<tbody>
${history.rows.map(
  (row) => html`<tr data-event="${row.id}">
<td>${when(row.at)}</td><td>${counterpart.cell(row)}</td><td>${row.model}</td><td>${row.ip}</td><td class="ua">${row.user_agent}</td><td>${outcomeText(row.outcome)}</td>
</tr>`,
)}
</tbody>
</table>`
}
${pager(path, history.next, history.paged)}
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
  },
): string {
  return consolePage(page, {
    title: input.title,
    section: input.section,
    notice: pageNotice(input.notice, input.errors),
    body: html`<section aria-labelledby="details-heading">
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
${input.after}`,
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
