/** The console's overview and the account page: profile, passkeys, password, sessions, invitations. */
import { type Html, html } from '../../web/html.ts';
import type { AccountRecord, PasskeyRecord } from '../../store/accounts.ts';
import type { ConsoleSessionRecord } from '../../store/sessions.ts';
import type { AgentRecord } from '../../store/agents.ts';
import type { ClientRecord } from '../../store/clients.ts';
import type { ApprovalView } from '../../store/approvals.ts';
import { waitingNotice } from './approvals.ts';
import { MIN_PASSWORD_LENGTH } from '../../domain/accounts.ts';
import type { OutstandingLink } from '../../domain/account-links.ts';
import { linkTable } from './links.ts';
import type { ApiKeyRecord } from '../../store/api-keys.ts';
import { workingKeysTable } from './api-keys.ts';
import { dataTable, userAgentCell } from './table.ts';
import {
  actionButton,
  type ConsolePage,
  consolePage,
  copyable,
  csrfField,
  field,
  type PageContext,
  secretOnce,
  when,
} from './shell.ts';

/** What the overview shows: the issuer, the counts, and how far the account has come. */
export interface OverviewInput {
  agents: AgentRecord[];
  websites: ClientRecord[];
  /** Whether any of the account's websites has had a sign-in (a test or a real one). */
  signedInOnce: boolean;
  hasCredential: boolean;
  issuer: string;
  notice: ConsolePage['notice'];
  /** Sign-ins waiting for this account's decision. */
  waiting: ApprovalView[];
  now: number;
}

interface Step {
  id: string;
  title: string;
  text: string;
  done: boolean;
  action: { href: string; label: string };
}

/**
 * The first steps of a new account, in order: register a website, create an agent, try a
 * sign-in (the website page's Test sign-in). The first not done is the next step.
 */
function gettingStarted(input: OverviewInput): Html {
  const [first] = input.websites;
  const steps: Step[] = [
    {
      id: 'step-website',
      title: 'Register a website',
      text: 'A website gets a client ID and a secret, to send agents here to sign in.',
      done: input.websites.length > 0,
      action: { href: '/console/websites#register-heading', label: 'Register a website' },
    },
    {
      id: 'step-agent',
      title: 'Create an agent',
      text: 'An agent gets an ID and a secret, to sign in to websites on your behalf.',
      done: input.agents.length > 0,
      action: { href: '/console/agents#create-heading', label: 'Create an agent' },
    },
    {
      id: 'step-sign-in',
      title: 'Try a sign-in',
      text: 'Test sign-in on a website’s page starts a real sign-in; you give it to your agent.',
      done: input.signedInOnce,
      action: {
        href: first ? `/console/websites/${encodeURIComponent(first.id)}#test-heading` : '/console/websites',
        label: 'Test a sign-in',
      },
    },
  ];
  const next = steps.find((step) => !step.done);
  if (!next) return html``;
  return html`<section aria-labelledby="start-heading" class="getting-started">
<h2 id="start-heading">Get started</h2>
<ol class="steps">
${steps.map(
  (
    step,
  ) => html`<li id="${step.id}" class="${step.done ? 'done' : step === next ? 'next' : 'todo'}"${step === next ? html` aria-current="step"` : ''}>
<span class="step-state">${step.done ? 'Done' : step === next ? 'Next' : 'Later'}</span>
<div><strong>${step.title}</strong><p>${step.text}</p>${step === next ? html`<a class="button" href="${step.action.href}">${step.action.label}</a>` : ''}</div>
</li>`,
)}
</ol>
</section>`;
}

export function overviewPage(page: PageContext & { account: AccountRecord }, input: OverviewInput): string {
  const { account } = page;
  const count = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;
  return consolePage(page, {
    title: `Hello, ${account.name ?? account.email}`,
    notice: input.notice,
    body: html`${waitingNotice(account, input.waiting, input.now, '/console')}
${input.hasCredential ? '' : html`<p class="warning">Your account has no passkey or password yet. <a href="/console/account">Add one now</a>, or you cannot sign in again once this session ends.</p>`}
${gettingStarted(input)}
<section aria-labelledby="server-heading">
<h2 id="server-heading">This server</h2>
<p>Websites and agents find everything else from the issuer: its discovery document lists the endpoints.</p>
<dl class="overview-facts">
<dt>Issuer</dt><dd>${copyable('issuer', input.issuer)}</dd>
<dt>Discovery</dt><dd>${copyable('discovery-url', `${input.issuer}/.well-known/openid-configuration`)}</dd>
</dl>
</section>
<section aria-labelledby="yours-heading">
<h2 id="yours-heading">Yours</h2>
<dl class="overview-facts">
<dt>Agents</dt><dd><a href="/console/agents" id="agents-count">${count(input.agents.length, 'agent', 'agents')}</a></dd>
<dt>Websites</dt><dd><a href="/console/websites" id="websites-count">${count(input.websites.length, 'website', 'websites')}</a></dd>
<dt>Account</dt><dd><a href="/console/account">Passkeys, password, sessions${account.email_verified ? '' : ', email verification'}</a></dd>
<dt>API keys</dt><dd><a href="/console/api-keys">Keys for scripts that use the management API</a></dd>
</dl>
</section>`,
  });
}

export interface AccountPageInput {
  passkeys: PasskeyRecord[];
  sessions: ConsoleSessionRecord[];
  currentSessionId: string;
  canMail: boolean;
  canInvite: boolean;
  notice: ConsolePage['notice'];
  errors?: Record<string, string>;
  /** A just-created invitation link, shown once. */
  invitation?: { url: string; expiresAt: number } | null;
  /** The setup and invitation links this person made that are still unused. */
  links?: OutstandingLink[];
  /** The account's own API keys (the working ones are listed beside the sessions). */
  apiKeys: ApiKeyRecord[];
  now: number;
}

function passkeyRows(csrf: string, passkeys: PasskeyRecord[], error: string | undefined): Html {
  if (passkeys.length === 0) return html`<p>You have no passkey yet.</p>`;
  const rows = passkeys.map((passkey, i) => ({ passkey, i }));
  return html`${dataTable({
    caption: 'Your passkeys',
    rows,
    columns: [
      { heading: 'Name', kind: 'title', cell: ({ passkey }) => passkey.name },
      { heading: 'Added', cell: ({ passkey }) => when(passkey.created_at) },
      { heading: 'Last used', cell: ({ passkey }) => when(passkey.last_used_at) },
      {
        heading: 'Actions',
        kind: 'actions',
        cell: ({ passkey, i }) =>
          html`<form method="post" action="/console/account/passkeys/${passkey.id}/rename" class="inline rename">${csrfField(csrf)}<label class="visually-hidden" for="rename-${i}">New name for ${passkey.name}</label><input id="rename-${i}" name="name" value="${passkey.name}" maxlength="100" required> <button type="submit" class="secondary">Rename</button></form>
${actionButton(csrf, `/console/account/passkeys/${passkey.id}/remove`, 'Remove', { danger: true, confirm: `Remove the passkey ${passkey.name}?` })}`,
      },
    ],
  })}${error ? html`<p class="field-error" role="alert">${error}</p>` : ''}`;
}

function sessionRows(csrf: string, sessions: ConsoleSessionRecord[], currentId: string): Html {
  return dataTable({
    caption: 'Where you are signed in',
    rows: sessions,
    columns: [
      {
        heading: 'Signed in',
        kind: 'title',
        cell: (session) => html`${when(session.created_at)} <span class="muted">(${session.method})</span>`,
      },
      { heading: 'Last active', cell: (session) => when(session.last_seen_at) },
      { heading: 'IP address', kind: 'long', cell: (session) => session.ip },
      { heading: 'Browser', kind: 'long', cell: (session) => userAgentCell(session.user_agent) },
      {
        heading: 'Actions',
        kind: 'actions',
        cell: (session) =>
          session.id === currentId
            ? html`<strong>This session</strong>`
            : actionButton(csrf, `/console/account/sessions/${session.id}/end`, 'Sign out'),
      },
    ],
  });
}

export function accountPage(page: PageContext & { account: AccountRecord }, input: AccountPageInput): string {
  const { account, csrf } = page;
  const errors = input.errors ?? {};
  return consolePage(page, {
    title: 'Your account',
    section: 'account',
    notice:
      input.notice ??
      (Object.keys(errors).length > 0 ? { kind: 'error', text: 'Please correct the field marked below.' } : null),
    body: html`<section aria-labelledby="profile-heading">
<h2 id="profile-heading">Profile</h2>
<dl>
<dt>Email</dt><dd id="account-email">${account.email} ${account.email_verified ? html`<span class="badge ok">verified</span>` : html`<span class="badge">not verified</span>`}</dd>
<dt>Role</dt><dd>${account.role}</dd>
</dl>
${
  account.email_verified
    ? ''
    : input.canMail
      ? actionButton(csrf, '/console/account/verify-email', 'Send me a verification link')
      : html`<p class="hint">Websites see your email as unverified until an administrator verifies it.</p>`
}
${errors.email ? html`<p class="field-error" role="alert">${errors.email}</p>` : ''}
<form method="post" action="/console/account/name" class="stack">
${csrfField(csrf)}
${field({ label: 'Name', name: 'name', value: account.name, autocomplete: 'name', maxlength: 200, error: errors.name, hint: 'Websites see this name when your agents sign in.' })}
<button type="submit">Save name</button>
</form>
</section>
<section aria-labelledby="passkeys-heading">
<h2 id="passkeys-heading">Passkeys</h2>
${passkeyRows(csrf, input.passkeys, errors.passkey)}
<div class="add-passkey">
<label for="passkey-name">Name of the new passkey</label>
<input id="passkey-name" name="passkey-name" maxlength="100" placeholder="For example: laptop, phone">
<button type="button" id="passkey-register" data-csrf="${csrf}">Add a passkey</button>
</div>
</section>
<section aria-labelledby="password-heading">
<h2 id="password-heading">Password</h2>
<p>${account.password_hash ? 'You can sign in with a password.' : 'You have no password.'}</p>
<form method="post" action="/console/account/password" class="stack">
${csrfField(csrf)}
${account.password_hash ? field({ label: 'Current password', name: 'current_password', type: 'password', autocomplete: 'current-password', required: true, error: errors.current_password }) : ''}
${field({ label: account.password_hash ? 'New password' : 'Password', name: 'password', type: 'password', autocomplete: 'new-password', required: true, minlength: MIN_PASSWORD_LENGTH, error: errors.password, hint: `At least ${MIN_PASSWORD_LENGTH} characters; a few unrelated words make a strong one.` })}
<button type="submit">${account.password_hash ? 'Change password' : 'Set password'}</button>
</form>
${account.password_hash && input.passkeys.length > 0 ? actionButton(csrf, '/console/account/password/remove', 'Remove my password', { danger: true, confirm: 'Remove your password? You will sign in with a passkey only.' }) : ''}
</section>
<section aria-labelledby="sessions-heading">
<h2 id="sessions-heading">Where you are signed in</h2>
${sessionRows(csrf, input.sessions, input.currentSessionId)}
<div class="row">
${input.sessions.length > 1 ? actionButton(csrf, '/console/account/sessions/end-others', 'Sign out everywhere else') : ''}
<form method="post" action="/console/account/sessions/end-all" class="inline" id="end-all">${csrfField(csrf)}
<label class="check"><input type="checkbox" name="api_keys" value="revoke"> <span class="check-text">Also revoke my API keys (scripts using them stop working)</span></label>
<button type="submit" class="danger">Sign out everywhere</button>
</form>
</div>
</section>
<section aria-labelledby="api-keys-heading">
<h2 id="api-keys-heading">API keys</h2>
<p>Scripts manage your agents and websites through the management API with a key of yours. A key keeps working after you sign out, until it expires or is revoked.</p>
${workingKeysTable(input.apiKeys, input.now)}
<p><a href="/console/api-keys" id="api-keys-link">${account.role === 'admin' ? 'Manage API keys, everyone’s included' : 'Manage your API keys'}</a></p>
</section>
${
  input.canInvite
    ? html`<section aria-labelledby="invite-heading">
<h2 id="invite-heading">Invite someone</h2>
<p>An invitation link lets one person create an account. Send it to them yourself.</p>
${input.invitation ? secretOnce('Invitation link', 'invitation-url', input.invitation.url, html`shown only now; it works once, until ${when(input.invitation.expiresAt)}`) : ''}
${actionButton(csrf, '/console/account/invitations', 'Create an invitation link')}
</section>`
    : ''
}
${
  input.links?.length
    ? html`<section aria-labelledby="links-heading">
<h2 id="links-heading">Your unused links</h2>
<p>Links you made that nobody has used yet. Revoke one you sent to the wrong person, or no longer want used; they also stop working if your account is disabled.</p>
${linkTable(csrf, input.links, { caption: 'Your unused setup and invitation links', revokeAction: (id) => `/console/account/links/${id}/revoke` })}
</section>`
    : ''
}`,
  });
}

export interface ConfirmPageInput {
  hasPassword: boolean;
  hasPasskey: boolean;
  /** Where to go once confirmed (a console path). */
  next: string;
  errors?: Record<string, string>;
  notice?: ConsolePage['notice'];
}

/** "Confirm it is you": a password or a passkey, before a change to how the account signs in. */
export function confirmPage(page: PageContext & { account: AccountRecord }, input: ConfirmPageInput): string {
  const { csrf } = page;
  const errors = input.errors ?? {};
  return consolePage(page, {
    title: 'Confirm it is you',
    section: 'account',
    notice:
      input.notice ??
      (Object.keys(errors).length > 0
        ? { kind: 'error', text: errors.password ?? errors.passkey ?? 'Please try again.' }
        : null),
    body: html`<p>You are about to change how you sign in, or to make an API key or a one-time link that lets someone in. Confirm it is you first; you will not be asked again for a few minutes.</p>
${input.hasPasskey || input.hasPassword ? '' : html`<p class="warning" id="nothing-to-confirm-with">Your account has no passkey or password yet. <a href="/console/account">Add one on your account page</a>, then confirm with it.</p>`}
${
  input.hasPasskey
    ? html`<section aria-labelledby="confirm-passkey-heading">
<h2 id="confirm-passkey-heading">With a passkey</h2>
<button type="button" id="passkey-confirm" data-csrf="${csrf}" data-next="${input.next}">Confirm with a passkey</button>
${errors.passkey ? html`<p class="field-error" role="alert">${errors.passkey}</p>` : ''}
</section>`
    : ''
}
${
  input.hasPassword
    ? html`<section aria-labelledby="confirm-password-heading">
<h2 id="confirm-password-heading">With your password</h2>
<form method="post" action="/console/account/confirm" class="stack">
${csrfField(csrf)}<input type="hidden" name="next" value="${input.next}">
<input type="text" name="username" value="${page.account.email}" autocomplete="username" hidden>
${field({ label: 'Password', name: 'password', type: 'password', autocomplete: 'current-password', required: true, error: errors.password })}
<button type="submit">Confirm</button>
</form>
</section>`
    : ''
}
<p><a href="${input.next}">Back</a></p>`,
  });
}
