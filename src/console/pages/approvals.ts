/**
 * The approvals pages (docs/design.md §16): the sign-ins waiting for their owner's decision and
 * the recent decisions, one approval with its three decisions (each confirmed with a passkey or
 * the password), and the notice the overview and an agent's page show while one waits. What
 * changes live (console.js refreshes it on the approvals stream) carries `data-live-approvals`.
 */
import type { AccountRecord } from '../../store/accounts.ts';
import type { ApprovalView } from '../../store/approvals.ts';
import { type Html, html } from '../../web/html.ts';
import { approvalActionWords, approvalState, hostOf, isWaiting, type ScopeWords, timeLeft } from '../approvals.ts';
import { type ConsolePage, consolePage, csrfField, field, type PageContext, when } from './shell.ts';
import { dataTable } from './table.ts';

type SignedInPage = PageContext & { account: AccountRecord };

export const approvalPath = (id: string) => `/console/approvals/${encodeURIComponent(id)}`;

/** Time left, kept current by console.js (data-expires-at), the end time beside it. */
function expiry(approval: ApprovalView, now: number): Html {
  return html`<span class="time-left" data-expires-at="${approval.expires_at}">${timeLeft(approval.expires_at, now)}</span>`;
}

function stateBadge(approval: ApprovalView, now: number): Html {
  const state = approvalState(approval, now);
  const kind =
    state === 'Waiting' ? 'wait' : ['Denied', 'Expired', 'Cancelled', 'Ended'].includes(state) ? 'off' : 'ok';
  return html`<span class="badge ${kind}">${state}</span>`;
}

/**
 * The scopes an approval asks for: each resource scope in the words its resource server
 * registered (as the authorization page says them), the scope beside; the others by name.
 */
const scopes = (approval: ApprovalView, words: ScopeWords = new Map()) =>
  html`${approval.scope.split(' ').map((scope) => {
    const described = words.get(scope);
    return described === undefined
      ? html`<code>${scope}</code> `
      : html`<span class="resource-scope" data-scope="${scope}">${described} (<code>${scope}</code>)</span> `;
  })}`;

/**
 * "Research assistant is waiting for your approval to sign in to Acme Notes (notes.example)", or
 * for an action "Acme Notes asks whether Research assistant may: Pay 20 EUR to Acme", as a link
 * to decide.
 */
function waitingSentence(approval: ApprovalView, viewer: AccountRecord): Html {
  const own = approval.agent_account_id === viewer.id;
  if (approval.kind === 'action')
    return html`<a href="${approvalPath(approval.id)}">${approval.client_name} asks whether ${approval.agent_name} may: ${approvalActionWords(approval).join('; ')}</a>${own ? '' : html` (its owner ${approval.owner_email} decides)`}`;
  const whose = own ? 'your approval' : html`the approval of its owner ${approval.owner_email}`;
  return html`<a href="${approvalPath(approval.id)}">${approval.agent_name} is waiting for ${whose} to sign in to ${approval.client_name} (${hostOf(approval.redirect_uri)})</a>`;
}

/**
 * The website's binding message, quoted and said to be the website's: it is text the website
 * chose, shown so the owner can match it with what they see there, never as agentauth's words.
 */
function bindingMessage(approval: ApprovalView, id?: string): Html | string {
  if (approval.binding_message === null) return '';
  return html`<span class="binding-message"${id ? html` id="${id}"` : ''}>${approval.client_name} says: <q>${approval.binding_message}</q></span>`;
}

/** What an approval asks: an action in words (and the website's message), or a sign-in's scopes. */
function asksFor(approval: ApprovalView, words?: ScopeWords): Html {
  if (approval.kind === 'action')
    return html`<span class="approval-action">${approvalActionWords(approval).join('; ')}</span> ${bindingMessage(approval)}`;
  return html`${scopes(approval, words)}${approval.resource ? html`<span class="muted approval-resource">for ${approval.resource}</span>` : ''}`;
}

/**
 * The notice of the overview and of an agent's page while sign-ins wait for a decision (empty
 * otherwise, and kept so that console.js can fill it when one arrives).
 *
 * @example
 * waitingNotice(account, pending, now, '/console'); // <div id="waiting-approvals" data-live-approvals …>…</div>
 */
export function waitingNotice(viewer: AccountRecord, pending: ApprovalView[], now: number, url: string): Html {
  return html`<div id="waiting-approvals" data-live-approvals data-live-url="${url}">${
    pending.length === 0
      ? ''
      : html`<section aria-labelledby="waiting-heading" class="warning waiting">
<h2 id="waiting-heading">Waiting for approval</h2>
<ul>
${pending.map((approval) => html`<li>${waitingSentence(approval, viewer)}: ${expiry(approval, now)}.</li>`)}
</ul>
</section>`
  }</div>`;
}

export interface ApprovalsPageInput {
  pending: ApprovalView[];
  recent: ApprovalView[];
  /** What each pending approval's resource scopes allow, by approval id (approvalScopeWords). */
  scopeWords?: ReadonlyMap<string, ScopeWords>;
  /** Whether websites may ask about actions (ACTION_APPROVALS): the page then says actions wait here too. */
  actionApprovals?: boolean;
  now: number;
  notice?: ConsolePage['notice'];
}

/** The list: what waits, newest first, then the recent decisions. */
export function approvalsPage(page: SignedInPage, input: ApprovalsPageInput): string {
  const { now } = input;
  const everyone = page.account.role === 'admin';
  const owner = everyone && { heading: 'Owner', kind: 'long' as const, cell: (a: ApprovalView) => a.owner_email };
  const website = {
    heading: 'Website',
    kind: 'long' as const,
    cell: (a: ApprovalView) => html`${a.client_name} <span class="muted">${hostOf(a.redirect_uri)}</span>`,
  };
  return consolePage(page, {
    title: 'Approvals',
    section: 'approvals',
    notice: input.notice,
    body: html`<p>When an agent whose policy says “Ask me for a new website” signs in to a website that is not listed, the sign-in waits here for ${everyone ? 'its owner (or an administrator)' : 'you'} to approve it once, allow the website always, or deny it.${input.actionApprovals ? html` When a website the agent signed in to asks whether it may do something (pay, delete, send), the action waits here too, to be approved or denied.` : ''} This page updates by itself.</p>
<div id="approvals-live" data-live-approvals data-live-url="/console/approvals">
<section aria-labelledby="pending-heading">
<h2 id="pending-heading">Waiting for a decision</h2>
${
  input.pending.length === 0
    ? html`<p id="no-pending">${input.actionApprovals ? 'Nothing is waiting for a decision.' : 'No sign-in is waiting for a decision.'}</p>`
    : dataTable({
        caption: input.actionApprovals
          ? 'Sign-ins and actions waiting for a decision, newest first'
          : 'Sign-ins waiting for a decision, newest first',
        id: 'pending-approvals',
        rows: input.pending,
        rowAttributes: (a) => html` data-approval="${a.id}"`,
        columns: [
          {
            heading: 'Agent and model',
            kind: 'title',
            cell: (a) =>
              html`<a href="${approvalPath(a.id)}">${a.agent_name}</a> <span class="muted approval-model">${a.kind === 'action' ? 'an action' : a.model}</span>`,
          },
          owner,
          website,
          { heading: 'Asks for', cell: (a) => asksFor(a, input.scopeWords?.get(a.id)) },
          { heading: 'Time left', kind: 'narrow', cell: (a) => expiry(a, now) },
          {
            heading: 'Actions',
            kind: 'actions',
            cell: (a) => html`<a class="button" href="${approvalPath(a.id)}">Decide</a>`,
          },
        ],
      })
}
</section>
<section aria-labelledby="recent-heading">
<h2 id="recent-heading">Recent decisions</h2>
${
  input.recent.length === 0
    ? html`<p id="no-recent">No decisions yet.</p>`
    : dataTable({
        caption: 'Recent decisions, newest first',
        id: 'recent-approvals',
        rows: input.recent,
        rowAttributes: (a) => html` data-approval="${a.id}"`,
        columns: [
          {
            heading: 'Agent',
            kind: 'title',
            cell: (a) =>
              html`<a href="${approvalPath(a.id)}">${a.agent_name}</a>${a.kind === 'action' ? html` <span class="muted approval-action">${approvalActionWords(a).join('; ')}</span>` : ''}`,
          },
          owner,
          website,
          { heading: 'Outcome', kind: 'narrow', cell: (a) => stateBadge(a, now) },
          { heading: 'Asked', cell: (a) => when(a.created_at) },
          {
            heading: 'Decided',
            cell: (a) => (a.decided_at === null ? html`<span class="muted">—</span>` : when(a.decided_at)),
          },
        ],
      })
}
</section>
</div>`,
  });
}

export interface ApprovalPageInput {
  approval: ApprovalView;
  now: number;
  /** Who decided it, as shown (null while undecided). */
  decidedBy: string | null;
  /** What its resource scopes allow, as their resource server registered them. */
  scopeWords?: ScopeWords;
  /** How the viewer can confirm a decision. */
  proof: { password: boolean; passkey: boolean };
  errors?: Record<string, string>;
  notice?: ConsolePage['notice'];
}

/** How the decision is confirmed, in words: the account's ways to prove it is them. */
function proofWords(proof: ApprovalPageInput['proof']): string {
  if (proof.passkey && proof.password) return 'Each decision is confirmed with your passkey or your password';
  if (proof.passkey) return 'Each decision is confirmed with your passkey';
  return 'Each decision is confirmed with your password';
}

/** A sign-in's three decisions. */
const signInButtons = (approval: ApprovalView) => html`<div class="decide-actions">
<button type="submit" name="decision" value="once" aria-describedby="decide-how">Approve once</button>
<button type="submit" name="decision" value="always" class="secondary" aria-describedby="decide-how">Always allow ${approval.client_name}</button>
<button type="submit" name="decision" value="deny" class="danger" aria-describedby="decide-how">Deny</button>
</div>
<p class="hint">Approve once: this sign-in only. Always allow: this one, and the website joins the agent’s listed websites. Deny: the sign-in ends, and the agent is told its owner denied it.</p>`;

/** An action's two decisions: standing answers are the policy's (the agent's page). */
const actionButtons = () => html`<div class="decide-actions">
<button type="submit" name="decision" value="once" aria-describedby="decide-how">Approve</button>
<button type="submit" name="decision" value="deny" class="danger" aria-describedby="decide-how">Deny</button>
</div>
<p class="hint">Approve: the website may do this, once. Deny: the website and the agent are told you refused. To answer a website’s actions without being asked, set the agent’s policy.</p>`;

/** The decisions the approval offers, with the proof they need. */
function decideForm(page: SignedInPage, input: ApprovalPageInput): Html {
  const { approval, proof } = input;
  const errors = input.errors ?? {};
  if (!proof.password && !proof.passkey)
    return html`<p class="warning" id="no-proof">Deciding needs a passkey or a password, and your account has neither yet. <a href="/console/account">Add one on your account page</a>, then come back.</p>`;
  return html`<form method="post" action="${approvalPath(approval.id)}/decide" class="stack" id="decide-form" data-approval="${approval.id}" data-csrf="${page.csrf}" data-passkey="${proof.passkey ? 'yes' : 'no'}">
${csrfField(page.csrf)}
<p id="decide-how">${proofWords(proof)}: a signed-in browser alone cannot decide. ${approval.kind === 'action' ? 'Nothing happens until you approve.' : 'Nothing is shared until you approve.'}</p>
${
  proof.password
    ? html`<input type="text" name="username" value="${page.account.email}" autocomplete="username" hidden>
${field({ label: 'Your password', name: 'password', type: 'password', autocomplete: 'current-password', required: !proof.passkey, error: errors.password, hint: proof.passkey ? 'Or leave it empty: the buttons then ask for your passkey.' : undefined })}`
    : ''
}
${errors.passkey ? html`<p class="field-error" id="passkey-error" role="alert">${errors.passkey}</p>` : ''}
${errors.decision ? html`<p class="field-error" id="decision-error" role="alert">${errors.decision}</p>` : ''}
${approval.kind === 'action' ? actionButtons() : signInButtons(approval)}
<p id="passkey-unsupported" class="hint" hidden>This browser cannot use passkeys here${proof.password ? '; enter your password instead' : ''}.</p>
</form>`;
}

/** What became of a decided or expired approval. */
function outcome(input: ApprovalPageInput): Html {
  const { approval, now } = input;
  const state = approvalState(approval, now);
  const by = input.decidedBy === null ? '' : html` by ${input.decidedBy}`;
  const at = approval.decided_at === null ? '' : html` on ${when(approval.decided_at)}`;
  if (approval.kind === 'action') return html`<p id="approval-outcome">${actionOutcome(state, html`${by}${at}`)}</p>`;
  const sentence =
    state === 'Expired'
      ? html`Nobody decided before the sign-in expired; the agent was told it expired.`
      : state === 'Cancelled'
        ? html`Cancelled at the browser${at} before anyone decided: nothing was shared, and the agent was told the sign-in ended.`
        : state === 'Ended'
          ? html`The sign-in ended before anyone decided: nothing was shared.`
          : state === 'Denied'
            ? html`Denied${by}${at}. The agent was told its owner denied this sign-in.`
            : state === 'Always allowed'
              ? html`Allowed always${by}${at}: the sign-in went ahead, and ${approval.client_name} is now a listed website of the agent.`
              : html`Approved once${by}${at}: the sign-in went ahead.`;
  return html`<p id="approval-outcome">${sentence}</p>`;
}

/** What became of an action, in words. */
function actionOutcome(state: string, byAt: Html): Html {
  switch (state) {
    case 'Expired':
      return html`Nobody decided before the request expired; the website was told it expired.`;
    case 'Ended':
      return html`The request ended before anyone decided: nothing happened.`;
    case 'Denied':
      return html`Denied${byAt}. The website was told you refused this action.`;
    default:
      return html`Approved${byAt}: the website may do this action, once.`;
  }
}

/** An action's facts: the question in words, the website's own message, the details as sent. */
function actionFacts(approval: ApprovalView, now: number, waiting: boolean): Html {
  const words = approvalActionWords(approval);
  return html`<p id="approval-question" class="approval-question">${approval.client_name} asks whether ${approval.agent_name} may:</p>
<ul id="approval-action" class="approval-action">${words.map((line) => html`<li><strong>${line}</strong></li>`)}</ul>
${approval.binding_message === null ? '' : html`<p>${bindingMessage(approval, 'approval-binding-message')}</p><p class="hint">The website’s own words: agentauth did not write or check them. Approve only if they match what you are doing there.</p>`}
<dl class="approval-facts">
<dt>State</dt><dd id="approval-state">${stateBadge(approval, now)}${waiting ? html` ${expiry(approval, now)}` : ''}</dd>
<dt>Agent</dt><dd id="approval-agent"><a href="/console/agents/${encodeURIComponent(approval.agent_id)}">${approval.agent_name}</a> <code class="muted">${approval.agent_id}</code></dd>
<dt>Owner</dt><dd>${approval.owner_email}</dd>
<dt>Website</dt><dd id="approval-website">${approval.client_name} <code class="muted">${approval.client_id}</code></dd>
<dt>Host</dt><dd id="approval-host">${hostOf(approval.redirect_uri)}</dd>
<dt>Asked</dt><dd>${when(approval.created_at)}${approval.ip ? html` from <code>${approval.ip}</code>` : ''}</dd>
</dl>
<details id="approval-details-json"><summary>The details as the website sent them</summary>
<pre class="snippet"><code>${JSON.stringify(approval.authorization_details, null, 2)}</code></pre>
</details>`;
}

export function approvalPage(page: SignedInPage, input: ApprovalPageInput): string {
  const { approval, now } = input;
  const waiting = isWaiting(approval, now);
  const errors = input.errors ?? {};
  const notice =
    input.notice ??
    (Object.keys(errors).length > 0
      ? { kind: 'error' as const, text: errors.password ?? errors.passkey ?? errors.decision ?? 'Please try again.' }
      : null);
  return consolePage(page, {
    title: `${approval.agent_name} → ${approval.client_name}`,
    section: 'approvals',
    notice,
    body: html`<div id="approval-live" data-live-approvals data-live-url="${approvalPath(approval.id)}" data-live-key="${approvalState(approval, now)}">
<section aria-labelledby="request-heading">
<h2 id="request-heading">${approval.kind === 'action' ? 'The action' : 'The sign-in'}</h2>
${
  approval.kind === 'action'
    ? actionFacts(approval, now, waiting)
    : html`<dl class="approval-facts">
<dt>State</dt><dd id="approval-state">${stateBadge(approval, now)}${waiting ? html` ${expiry(approval, now)}` : ''}</dd>
<dt>Agent</dt><dd id="approval-agent"><a href="/console/agents/${encodeURIComponent(approval.agent_id)}">${approval.agent_name}</a> <code class="muted">${approval.agent_id}</code></dd>
<dt>Owner</dt><dd>${approval.owner_email}</dd>
<dt>Model</dt><dd id="approval-model">${approval.model}</dd>
<dt>Website</dt><dd id="approval-website">${approval.client_name} <code class="muted">${approval.client_id}</code></dd>
<dt>Host</dt><dd id="approval-host">${hostOf(approval.redirect_uri)}</dd>
<dt>Scopes asked for</dt><dd id="approval-scopes">${scopes(approval, input.scopeWords)}</dd>
<dt>Resource</dt><dd id="approval-resource">${approval.resource ?? html`<span class="muted">none</span>`}</dd>
<dt>Asked</dt><dd>${when(approval.created_at)}${approval.ip ? html` from <code>${approval.ip}</code>` : ''}</dd>
</dl>`
}
</section>
<section aria-labelledby="decide-heading" id="decide">
<h2 id="decide-heading">${waiting ? 'Your decision' : 'Outcome'}</h2>
${waiting ? decideForm(page, input) : outcome(input)}
</section>
</div>
<p><a href="/console/approvals">All approvals</a></p>`,
  });
}
