/**
 * What every console page is built from (docs/design.md §11): the page with its navigation and
 * its live region for results, form fields with their labels, hints and errors, the CSRF field,
 * and one-button forms for actions. Everything is escaped by `html`.
 */
import { type Html, html } from '../../web/html.ts';
import { layout } from '../../web/layout.ts';
import type { AccountRecord } from '../../store/accounts.ts';

export interface PageContext {
  /** The signed-in account, or null on the sign-in pages. */
  account: AccountRecord | null;
  /** The CSRF token every form of the page carries. */
  csrf: string;
  /** How many sign-ins wait for this account's decision (the navigation's badge; live in console.js). */
  pendingApprovals?: { count: number; version: string };
}

export interface ConsolePage {
  title: string;
  /** A result to announce (aria-live): "Agent disabled.", or an error summary. */
  notice?: { kind: 'success' | 'error'; text: string } | null;
  body: Html;
  /** Navigation entry to mark as the current page. */
  section?: 'agents' | 'approvals' | 'websites' | 'account' | 'admin';
}

const SCRIPTS = html`<script src="/assets/simplewebauthn-browser.js" defer></script>
<script src="/assets/console.js" defer></script>`;

/**
 * The count of sign-ins waiting for a decision beside "Approvals": hidden at 0, kept in the page
 * so that console.js can show it when one arrives.
 */
function approvalsBadge({ count, version }: { count: number; version: string }): Html {
  return html` <span class="count-badge" id="approvals-badge" data-version="${version}"${count === 0 ? html` hidden` : ''}><span id="approvals-count">${count > 99 ? '99+' : count}</span><span class="visually-hidden"> waiting</span></span>`;
}

function navigation(page: PageContext, section: ConsolePage['section']): Html {
  if (!page.account)
    return html`<header class="console-header"><a class="brand" href="/console">agentauth<span class="brand-tail"> console</span></a></header>`;
  const link = (key: NonNullable<ConsolePage['section']>, href: string, label: string) =>
    html`<li><a href="${href}"${section === key ? html` aria-current="page"` : ''}>${label}</a></li>`;
  return html`<header class="console-header">
<a class="brand" href="/console">agentauth<span class="brand-tail"> console</span></a>
<nav aria-label="Console">
<ul>
${link('agents', '/console/agents', 'Agents')}
<li><a href="/console/approvals" id="approvals-link"${section === 'approvals' ? html` aria-current="page"` : ''}>Approvals${approvalsBadge(page.pendingApprovals ?? { count: 0, version: '' })}</a></li>
${link('websites', '/console/websites', 'Websites')}
${link('account', '/console/account', 'Account')}
${page.account.role === 'admin' ? link('admin', '/console/admin', 'Admin') : ''}
</ul>
</nav>
<form method="post" action="/console/sign-out" class="sign-out">${csrfField(page.csrf)}<span class="who">${page.account.name ?? page.account.email}</span> <button type="submit" class="secondary">Sign out</button></form>
</header>`;
}

/**
 * @example
 * reply.send(consolePage(context, { title: 'Agents', section: 'agents', body: html`…` }));
 */
export function consolePage(page: PageContext, content: ConsolePage): string {
  const notice = content.notice;
  return layout(
    `${content.title} · agentauth console`,
    SCRIPTS,
    html`<h1>${content.title}</h1>
<div id="notice" role="status" aria-live="polite" class="${notice ? `notice ${notice.kind}` : 'notice'}" tabindex="-1">${notice?.text}</div>
${content.body}`,
    { bodyClass: 'console', header: navigation(page, content.section) },
  );
}

export function csrfField(token: string): Html {
  return html`<input type="hidden" name="_csrf" value="${token}">`;
}

export interface FieldOptions {
  label: string;
  name: string;
  type?: 'text' | 'email' | 'password' | 'url' | 'textarea' | 'select' | 'date' | 'number';
  value?: string | null;
  /** The message of an InvalidField for this field. */
  error?: string | null;
  hint?: string;
  autocomplete?: string;
  required?: boolean;
  /** For type select: [value, label] pairs. */
  choices?: Array<[string, string]>;
  maxlength?: number;
  minlength?: number;
  /** For type number: the smallest and largest values the browser offers. */
  min?: number;
  max?: number;
}

/** A labelled input with its hint and error, tied together by aria-describedby. */
export function field(options: FieldOptions): Html {
  const id = `field-${options.name}`;
  const described = [options.hint ? `${id}-hint` : '', options.error ? `${id}-error` : ''].filter(Boolean).join(' ');
  const common = html` id="${id}" name="${options.name}"${options.required ? html` required` : ''}${described ? html` aria-describedby="${described}"` : ''}${options.error ? html` aria-invalid="true"` : ''}${options.autocomplete ? html` autocomplete="${options.autocomplete}"` : ''}`;
  const control =
    options.type === 'textarea'
      ? html`<textarea${common} rows="3">${options.value}</textarea>`
      : options.type === 'select'
        ? html`<select${common}>${(options.choices ?? []).map(([value, label]) => html`<option value="${value}"${value === options.value ? html` selected` : ''}>${label}</option>`)}</select>`
        : html`<input type="${options.type ?? 'text'}"${common}${options.value ? html` value="${options.value}"` : ''}${options.maxlength ? html` maxlength="${options.maxlength}"` : ''}${options.minlength ? html` minlength="${options.minlength}"` : ''}${options.min !== undefined ? html` min="${options.min}"` : ''}${options.max !== undefined ? html` max="${options.max}"` : ''}>`;
  return html`<div class="field">
<label for="${id}">${options.label}</label>
${options.hint ? html`<p class="hint" id="${id}-hint">${options.hint}</p>` : ''}
${control}
${options.error ? html`<p class="field-error" id="${id}-error">${options.error}</p>` : ''}
</div>`;
}

/** A form with one button that posts to `action` (disable, rotate, delete…). */
export function actionButton(
  csrf: string,
  action: string,
  label: string,
  options: { danger?: boolean; confirm?: string; extra?: Html } = {},
): Html {
  return html`<form method="post" action="${action}" class="inline"${options.confirm ? html` data-confirm="${options.confirm}"` : ''}>${csrfField(csrf)}${options.extra}<button type="submit"${options.danger ? html` class="danger"` : html` class="secondary"`}>${label}</button></form>`;
}

/**
 * A time as people read it, in UTC, with the machine-readable value beside; in a narrow column
 * the date and the time may go on two lines, never broken inside (agentauth.css).
 */
export function when(epochSeconds: number | null | undefined): Html {
  if (epochSeconds === null || epochSeconds === undefined) return html`never`;
  const iso = new Date(Number(epochSeconds) * 1000).toISOString();
  return html`<time datetime="${iso}"><span>${iso.slice(0, 10)}</span> <span>${iso.slice(11, 16)} UTC</span></time>`;
}

/** A value with its Copy button (console.js copies the element named `id`). */
export function copyable(id: string, value: string): Html {
  return html`<div class="copy-row"><code id="${id}">${value}</code> <button type="button" class="secondary copy" data-copy="${id}">Copy</button></div>`;
}

/** A secret (or a one-time link) shown once, with a copy button (console.js) and a warning. */
export function secretOnce(
  label: string,
  id: string,
  secret: string,
  note: Html | string = 'shown only now: copy it and store it safely; it cannot be shown again',
): Html {
  return html`<div class="secret">
<p><strong>${label}</strong> (${note})</p>
${copyable(id, secret)}
</div>`;
}

/** Results of actions, by the code a redirect carries in ?notice=; fixed texts, so nothing from the URL reaches the page. */
const NOTICES: Record<string, string> = {
  welcome: 'Welcome! Add a passkey or set a password now, so that you can sign in again.',
  recovery:
    'You signed in with a setup link. Set a new password below within a few minutes; to add a passkey or change anything else, you confirm it is you first.',
  name_saved: 'Your name is saved.',
  password_saved: 'Your password is saved.',
  password_removed: 'Your password is removed; you sign in with a passkey.',
  passkey_added: 'The passkey is added.',
  passkey_renamed: 'The passkey is renamed.',
  passkey_removed: 'The passkey is removed.',
  session_ended: 'That session is signed out.',
  sessions_ended: 'Every other session is signed out.',
  verification_sent: 'A verification link is on its way to your email.',
  agent_renamed: 'The agent is renamed.',
  agent_created_with_key:
    'The agent is created. It proves itself with its private key, which stays where it runs: there is no secret to copy.',
  agent_key_rotated: 'The agent proves itself with the new key from now on; the old one no longer works.',
  agent_disabled: 'The agent is disabled: it cannot sign in, and its tokens stop working until you enable it.',
  agent_enabled: 'The agent is enabled.',
  agent_deleted: 'The agent is deleted, and everything it held is revoked.',
  grants_revoked: 'Every grant is revoked: the tokens issued before stop working.',
  site_revoked: 'The website is disconnected: its tokens for this agent stop working.',
  website_disabled: 'The website is disabled: it cannot start sign-ins, and its tokens stop working.',
  website_enabled: 'The website is enabled.',
  account_disabled: 'The account is disabled and signed out everywhere; the links it made are revoked.',
  account_enabled: 'The account is enabled.',
  role_changed: 'The role is changed.',
  email_verified: 'The email is marked verified.',
  link_revoked: 'The link is revoked: it no longer works.',
  shown_once:
    'A secret is shown only once, and that page was already shown. If you did not copy it, rotate the secret to get a new one.',
  link_shown_once:
    'A link is shown only once, and that page was already shown. If you did not copy it, revoke it below and make a new one.',
  invitation_created: 'The invitation link is made: copy it under Invite someone below. It is shown only now.',
  setup_link_created: 'The setup link is made: copy it below. It is shown only now.',
  api_key_revoked: 'The API key is revoked: calls with it are refused from now on.',
  api_key_shown_once:
    'An API key is shown only once, and that page was already shown. If you did not copy it, revoke it below and create a new one.',
  webhook_saved: 'The webhook is saved.',
  webhook_disabled: 'The webhook is disabled: nothing is sent to it until it is enabled again.',
  webhook_enabled: 'The webhook is enabled: waiting deliveries go out now.',
  webhook_deleted: 'The webhook is deleted with its delivery log.',
  webhook_sent_again: 'The delivery is sent again now; its new attempt appears in the log.',
  webhook_test_sent: 'A test event (webhook.test) is sent now; its outcome appears in the log in a moment.',
  webhook_delivery_in_flight: 'That delivery is being sent right now; its answer appears in the log in a moment.',
  webhook_secret_shown_once:
    'A signing secret is shown only once, and that page was already shown. If you did not copy it, rotate the secret below.',
  website_updated: 'The website is saved.',
  website_keys_replaced:
    'The website’s keys are replaced: its assertions are checked with the new keys from now on, and those signed with the old ones are refused.',
  policy_saved: 'The policy is saved: it applies from the agent’s next sign-in.',
  action_answers_saved: 'The answers are saved: they apply to the next action a website asks about.',
  website_listed: 'The website is listed: the agent signs in to it without asking.',
  website_unlisted: 'The website is no longer listed.',
  approval_approved: 'Approved once: the sign-in goes ahead.',
  action_approved: 'Approved: the website may do this action, once.',
  action_denied: 'Denied: the website is told you refused this action.',
  approval_allowed: 'Allowed always: the sign-in goes ahead, and the website is now listed for the agent.',
  approval_denied: 'Denied: the sign-in ends, and the agent is told its owner denied it.',
  website_deleted: 'The website is deleted, and every grant, token and sign-in in progress it had is ended.',
};

export function noticeFor(code: string | undefined): ConsolePage['notice'] {
  const text = code === undefined ? undefined : NOTICES[code];
  return text ? { kind: 'success', text } : null;
}
