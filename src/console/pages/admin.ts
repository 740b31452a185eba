/** The admin area: every account with its actions, the unused links, every agent, every website, the console's audit. */
import { type Html, html } from '../../web/html.ts';
import type { AccountRecord, ConsoleEventView } from '../../store/console-types.ts';
import type { AgentRecord, ClientRecord } from '../../store/types.ts';
import type { OutstandingLink } from '../links.ts';
import { linkTable } from './links.ts';
import { actionButton, type ConsolePage, consolePage, type PageContext, secretOnce, when } from './shell.ts';

type AdminPage = PageContext & { account: AccountRecord };

/** The admin pages, with the current one marked. */
function adminNavigation(current: 'accounts' | 'links' | 'agents' | 'websites' | 'events'): Html {
  const link = (key: typeof current, href: string, label: string) =>
    html`<li><a href="${href}"${key === current ? html` aria-current="page"` : ''}>${label}</a></li>`;
  return html`<nav aria-label="Admin" class="admin-nav">
<ul>
${link('accounts', '/console/admin', 'Accounts')}
${link('links', '/console/admin/links', 'Unused links')}
${link('agents', '/console/admin/agents', 'All agents')}
${link('websites', '/console/admin/websites', 'All websites')}
${link('events', '/console/admin/events', 'Console activity')}
</ul>
</nav>`;
}

const statusBadge = (status: string, active: boolean) =>
  html`<span class="badge${active ? ' ok' : ' off'}">${status}</span>`;

/** The owner of an agent or a website: its account's email, or "CLI" for one registered with the command line. */
function ownerCell(accountId: string | null, owners: Map<string, AccountRecord>): Html {
  if (accountId === null) return html`<span class="muted">CLI</span>`;
  const owner = owners.get(accountId);
  return owner ? html`${owner.email}` : html`<span class="muted">${accountId}</span>`;
}

export interface AccountRow {
  account: AccountRecord;
  agents: number;
  websites: number;
}

export interface AdminAccountsInput {
  rows: AccountRow[];
  notice: ConsolePage['notice'];
  /** A setup link just made for an account, shown once. */
  setupLink?: { email: string; url: string; expiresAt: number } | null;
}

function accountActions(page: AdminPage, target: AccountRecord): Html {
  const { csrf } = page;
  const self = target.id === page.account.id;
  const base = `/console/admin/accounts/${target.id}`;
  const who = target.name ?? target.email;
  return html`${
    self
      ? ''
      : target.status === 'active'
        ? actionButton(csrf, `${base}/disable`, 'Disable', {
            danger: true,
            confirm: `Disable the account of ${who}? It is signed out everywhere, and the links it made stop working.`,
          })
        : actionButton(csrf, `${base}/enable`, 'Enable')
  }
${
  self
    ? ''
    : target.role === 'admin'
      ? actionButton(csrf, `${base}/role`, 'Make member', {
          extra: html`<input type="hidden" name="role" value="member">`,
        })
      : actionButton(csrf, `${base}/role`, 'Make admin', {
          confirm: `Make ${who} an administrator?`,
          extra: html`<input type="hidden" name="role" value="admin">`,
        })
}
${target.email_verified ? '' : actionButton(csrf, `${base}/verify-email`, 'Mark email verified', { confirm: `Vouch that ${target.email} belongs to ${who}?` })}
${actionButton(csrf, `${base}/setup-link`, 'New setup link')}`;
}

export function adminAccountsPage(page: AdminPage, input: AdminAccountsInput): string {
  return consolePage(page, {
    title: 'Admin: accounts',
    section: 'admin',
    notice: input.notice,
    body: html`${adminNavigation('accounts')}
${input.setupLink ? secretOnce(`Setup link for ${input.setupLink.email}`, 'setup-url', input.setupLink.url, html`shown only now; it signs them in once, until ${when(input.setupLink.expiresAt)}; send it to them yourself`) : ''}
<p>A setup link signs a person in once, for example after they lost their passkey; they then add a passkey or a password.</p>
<table>
<caption class="visually-hidden">Every account</caption>
<thead><tr><th scope="col">Email</th><th scope="col">Name</th><th scope="col">Role</th><th scope="col">Status</th><th scope="col">Created</th><th scope="col">Last sign-in</th><th scope="col">Agents</th><th scope="col">Websites</th><th scope="col">Actions</th></tr></thead>
<tbody>
${input.rows.map(
  ({ account, agents, websites }) => html`<tr id="account-${account.id}">
<td>${account.email} ${account.email_verified ? html`<span class="badge ok">verified</span>` : html`<span class="badge">not verified</span>`}${account.id === page.account.id ? html` <span class="muted">(you)</span>` : ''}</td>
<td>${account.name}</td>
<td>${account.role}</td>
<td>${statusBadge(account.status, account.status === 'active')}</td>
<td>${when(account.created_at)}</td>
<td>${when(account.last_sign_in_at)}</td>
<td>${agents}</td>
<td>${websites}</td>
<td class="actions">${accountActions(page, account)}</td>
</tr>`,
)}
</tbody>
</table>`,
  });
}

export function adminLinksPage(
  page: AdminPage,
  input: { links: OutstandingLink[]; notice: ConsolePage['notice'] },
): string {
  return consolePage(page, {
    title: 'Admin: unused links',
    section: 'admin',
    notice: input.notice,
    body: html`${adminNavigation('links')}
<p>Every setup and invitation link that has not been used, revoked or expired, whoever made it. Disabling an account revokes the links it made and the setup links made for it.</p>
${input.links.length === 0 ? html`<p>There are no unused links.</p>` : linkTable(page.csrf, input.links, { caption: 'Every unused setup and invitation link', revokeAction: (id) => `/console/admin/links/${id}/revoke`, showCreator: true })}`,
  });
}

export function adminAgentsPage(
  page: AdminPage,
  input: { agents: AgentRecord[]; owners: Map<string, AccountRecord> },
): string {
  return consolePage(page, {
    title: 'Admin: all agents',
    section: 'admin',
    body: html`${adminNavigation('agents')}
${
  input.agents.length === 0
    ? html`<p>There are no agents yet.</p>`
    : html`<table>
<caption class="visually-hidden">Every agent</caption>
<thead><tr><th scope="col">Agent</th><th scope="col">Owner</th><th scope="col">Status</th><th scope="col">Created</th><th scope="col">Last used</th></tr></thead>
<tbody>
${input.agents.map(
  (agent) => html`<tr>
<td><a href="/console/agents/${agent.id}">${agent.name}</a> <code class="muted">${agent.id}</code></td>
<td>${ownerCell(agent.account_id, input.owners)}${agent.account_id === null ? html` <span class="muted">(${agent.owner_email})</span>` : ''}</td>
<td>${statusBadge(agent.status, agent.status === 'active')}</td>
<td>${when(agent.created_at)}</td>
<td>${when(agent.last_used_at)}</td>
</tr>`,
)}
</tbody>
</table>`
}`,
  });
}

export function adminClientsPage(
  page: AdminPage,
  input: { clients: ClientRecord[]; owners: Map<string, AccountRecord> },
): string {
  return consolePage(page, {
    title: 'Admin: all websites',
    section: 'admin',
    body: html`${adminNavigation('websites')}
${
  input.clients.length === 0
    ? html`<p>There are no websites yet.</p>`
    : html`<table>
<caption class="visually-hidden">Every website</caption>
<thead><tr><th scope="col">Website</th><th scope="col">Owner</th><th scope="col">Status</th><th scope="col">Created</th></tr></thead>
<tbody>
${input.clients.map(
  (client) => html`<tr>
<td><a href="/console/websites/${client.id}">${client.name}</a> <code class="muted">${client.id}</code></td>
<td>${ownerCell(client.account_id, input.owners)}</td>
<td>${statusBadge(client.status, client.status === 'active')}</td>
<td>${when(client.created_at)}</td>
</tr>`,
)}
</tbody>
</table>`
}`,
  });
}

/** Who did it: the actor's email, "CLI" for the command line, "system" for what nobody signed in did (a failed sign-in). */
function actorCell(event: ConsoleEventView): Html {
  if (event.actor_id !== null) return html`${event.actor_email ?? event.actor_id}`;
  const byCli = event.detail === 'cli' || event.detail?.startsWith('cli: ');
  return byCli ? html`<span class="muted">CLI</span>` : html`<span class="muted">system</span>`;
}

export function adminEventsPage(
  page: AdminPage,
  input: { events: ConsoleEventView[]; accounts: Map<string, AccountRecord>; next: string | null; first: boolean },
): string {
  return consolePage(page, {
    title: 'Admin: console activity',
    section: 'admin',
    body: html`${adminNavigation('events')}
${
  input.events.length === 0
    ? html`<p>${input.first ? 'Nothing has happened in the console yet.' : 'There is nothing older.'}</p>`
    : html`<table>
<caption class="visually-hidden">Console activity, newest first</caption>
<thead><tr><th scope="col">Time</th><th scope="col">Who</th><th scope="col">Action</th><th scope="col">Target</th><th scope="col">IP address</th><th scope="col">Detail</th></tr></thead>
<tbody>
${input.events.map((event) => {
  const target = event.target === null ? undefined : input.accounts.get(event.target);
  return html`<tr>
<td>${when(event.at)}</td>
<td>${actorCell(event)}</td>
<td><code>${event.action}</code></td>
<td>${target ? html`${target.email} <code class="muted">${event.target}</code>` : html`<code>${event.target}</code>`}</td>
<td>${event.ip}</td>
<td>${event.detail}</td>
</tr>`;
})}
</tbody>
</table>`
}
<nav class="pager" aria-label="Pages">
${input.first ? '' : html`<a href="/console/admin/events">Newest</a>`}
${input.next ? html`<a href="/console/admin/events?before=${input.next}" rel="next">Older</a>` : ''}
</nav>`,
  });
}
