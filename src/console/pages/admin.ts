/**
 * The admin area: every account with its actions, the unused links, every agent, every website,
 * the console's audit, and the signing keys (read only).
 */
import { type Html, html } from '../../web/html.ts';
import type { AccountRecord } from '../../store/accounts.ts';
import type { ConsoleEventView, SignInRecord } from '../../store/history.ts';
import type { AgentRecord } from '../../store/agents.ts';
import type { ClientRecord } from '../../store/clients.ts';
import type { OutstandingLink } from '../../domain/account-links.ts';
import { type ActivityEntry, type ApiCall, apiCallOf } from '../../management/history.ts';
import type { SigningKeyView } from '../../management/views.ts';
import type { Static } from '@sinclair/typebox';
import { apiKeyAnchor } from './api-keys.ts';
import { linkTable } from './links.ts';
import { outcomeBadge } from './owned.ts';
import { actionButton, type ConsolePage, consolePage, field, type PageContext, secretOnce, when } from './shell.ts';
import { dataTable, userAgentCell } from './table.ts';

type AdminPage = PageContext & { account: AccountRecord };

/** The admin pages, with the current one marked. */
export function adminNavigation(
  current: 'accounts' | 'links' | 'agents' | 'websites' | 'events' | 'webhooks' | 'signing-keys',
): Html {
  const link = (key: typeof current, href: string, label: string) =>
    html`<li><a href="${href}"${key === current ? html` aria-current="page"` : ''}>${label}</a></li>`;
  return html`<nav aria-label="Admin" class="admin-nav">
<ul>
${link('accounts', '/console/admin', 'Accounts')}
${link('links', '/console/admin/links', 'Unused links')}
${link('agents', '/console/admin/agents', 'All agents')}
${link('websites', '/console/admin/websites', 'All websites')}
${link('events', '/console/admin/events', 'Activity')}
${link('webhooks', '/console/admin/webhooks', 'Webhooks')}
${link('signing-keys', '/console/admin/signing-keys', 'Signing keys')}
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
${dataTable({
  caption: 'Every account',
  rows: input.rows,
  rowAttributes: ({ account }) => html` id="account-${account.id}"`,
  columns: [
    {
      heading: 'Account',
      kind: 'title',
      cell: ({ account }) =>
        html`<span class="email">${account.email}</span> ${account.email_verified ? html`<span class="badge ok">verified</span>` : html`<span class="badge">not verified</span>`}${account.id === page.account.id ? html` <span class="muted">(you)</span>` : ''}${account.name ? html`<br><span class="account-name">${account.name}</span>` : ''}`,
    },
    { heading: 'Role', kind: 'narrow', cell: ({ account }) => account.role },
    {
      heading: 'Status',
      kind: 'narrow',
      cell: ({ account }) => statusBadge(account.status, account.status === 'active'),
    },
    { heading: 'Created', cell: ({ account }) => when(account.created_at) },
    { heading: 'Last sign-in', cell: ({ account }) => when(account.last_sign_in_at) },
    {
      heading: 'Owns',
      kind: 'narrow',
      cell: ({ agents, websites }) =>
        html`<span class="agents">${agents} ${agents === 1 ? 'agent' : 'agents'}</span>, <span class="websites">${websites} ${websites === 1 ? 'website' : 'websites'}</span>`,
    },
    { heading: 'Actions', kind: 'actions', cell: ({ account }) => accountActions(page, account) },
  ],
})}`,
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
    : dataTable({
        caption: 'Every agent',
        rows: input.agents,
        columns: [
          {
            heading: 'Agent',
            kind: 'title',
            cell: (agent) =>
              html`<a href="/console/agents/${agent.id}">${agent.name}</a> <code class="muted">${agent.id}</code>`,
          },
          {
            heading: 'Owner',
            kind: 'long',
            cell: (agent) =>
              html`${ownerCell(agent.account_id, input.owners)}${agent.account_id === null ? html` <span class="muted">(${agent.owner_email})</span>` : ''}`,
          },
          { heading: 'Status', kind: 'narrow', cell: (agent) => statusBadge(agent.status, agent.status === 'active') },
          { heading: 'Created', cell: (agent) => when(agent.created_at) },
          { heading: 'Last used', cell: (agent) => when(agent.last_used_at) },
        ],
      })
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
    : dataTable({
        caption: 'Every website',
        rows: input.clients,
        columns: [
          {
            heading: 'Website',
            kind: 'title',
            cell: (client) =>
              html`<a href="/console/websites/${client.id}">${client.name}</a> <code class="muted">${client.id}</code>`,
          },
          { heading: 'Owner', kind: 'long', cell: (client) => ownerCell(client.account_id, input.owners) },
          {
            heading: 'Status',
            kind: 'narrow',
            cell: (client) => statusBadge(client.status, client.status === 'active'),
          },
          { heading: 'Created', cell: (client) => when(client.created_at) },
        ],
      })
}`,
  });
}

/** An RFC 3339 time of a representation, shown as `when` shows epoch seconds. */
const whenIso = (iso: string | null) =>
  iso === null ? html`<span class="muted">—</span>` : when(Date.parse(iso) / 1000);

/**
 * The signing keys, read only (docs/design.md §19): what signs tokens now and every key of the
 * shared set with its state and times. Rotation is the CLI's and the API's.
 */
export function adminSigningKeysPage(
  page: AdminPage,
  input: { algorithm: string; keys: Static<typeof SigningKeyView>[] },
): string {
  const hs256 = input.algorithm === 'HS256';
  return consolePage(page, {
    title: 'Admin: signing keys',
    section: 'admin',
    body: html`${adminNavigation('signing-keys')}
<p>${
      hs256
        ? html`Tokens are signed with <code>HS256</code> and <code>JWT_SECRET</code> (<code>TOKEN_SIGNING_ALG=HS256</code>, the default), and ID tokens with each website's secret: the key set at <code>/.well-known/jwks.json</code> is empty${input.keys.length > 0 ? ', except for the keys below, kept until the last token they signed has expired' : ''}.`
        : html`Tokens are signed with <code>${input.algorithm}</code> key pairs the server made (<code>TOKEN_SIGNING_ALG</code>), published at <code>/.well-known/jwks.json</code>: the next key ahead of use, the current one, and retired ones until their last token has expired. Keys rotate on schedule (<code>SIGNING_KEY_ROTATION</code>), or with <code>agentauth signing-key rotate</code> or the management API.`
    }</p>
${
  input.keys.length === 0
    ? html`<p>There are no signing keys.</p>`
    : dataTable({
        caption: 'Every signing key, oldest first',
        rows: input.keys,
        columns: [
          { heading: 'Key id (kid)', kind: 'title', cell: (key) => html`<code>${key.kid}</code>` },
          { heading: 'Algorithm', kind: 'narrow', cell: (key) => html`${key.alg}` },
          {
            heading: 'State',
            kind: 'narrow',
            cell: (key) => statusBadge(key.state, key.state === 'current'),
          },
          { heading: 'Created', cell: (key) => whenIso(key.created_at) },
          { heading: 'Signing since', cell: (key) => whenIso(key.activated_at) },
          { heading: 'Retired', cell: (key) => whenIso(key.retired_at) },
          { heading: 'Published until', cell: (key) => whenIso(key.published_until) },
        ],
      })
}`,
  });
}

/** Who did it: the actor's email, "CLI" for the command line, "system" for what nobody signed in did (a failed sign-in). */
function actorCell(event: ConsoleEventView): Html {
  if (event.actor_id !== null) return html`${event.actor_email ?? event.actor_id}`;
  const byCli = event.detail === 'cli' || event.detail?.startsWith('cli: ');
  return byCli ? html`<span class="muted">CLI</span>` : html`<span class="muted">system</span>`;
}

/** The choices of the activity page's filter, by their value in the URL. */
export const ACTIVITY_KINDS: Array<[string, string]> = [
  ['', 'Everything'],
  ['console', 'Console actions'],
  ['sign-ins', 'Agent sign-ins'],
];

/** An agent's sign-in as a line of the activity: the agent, its outcome, the website, and how it called. */
function signInCells(row: SignInRecord) {
  return {
    who:
      row.agent_id === null
        ? html`<span class="muted">unknown agent</span>`
        : html`<a href="/console/agents/${row.agent_id}"><code>${row.agent_id}</code></a>`,
    action: html`Agent sign-in: ${outcomeBadge(row.outcome)}`,
    target:
      row.client_id === null
        ? html`<span class="muted">none</span>`
        : html`${row.client_name ?? ''} <code class="muted">${row.client_id}</code>`,
    detail: html`${row.model ? html`<span class="model">Model ${row.model}</span> ` : ''}${userAgentCell(row.user_agent)}`,
  };
}

/** Console actions that read better in words; the action's code stays beside them, for searching. */
const ACTION_WORDS: Record<string, string> = {
  'api_key.create': 'API key created',
  'api_key.revoke': 'API key revoked',
  'api_key.revoke_all': 'API keys revoked',
  'webhook.disabled': 'Webhook disabled for failing',
  'webhook.create': 'Webhook created',
  'webhook.update': 'Webhook changed',
  'webhook.disable': 'Webhook disabled',
  'webhook.enable': 'Webhook enabled',
  'webhook.delete': 'Webhook deleted',
  'webhook.rotate_secret': 'Webhook secret rotated',
  'webhook.redeliver': 'Webhook delivery sent again',
  'webhook.test': 'Webhook test event sent',
  'signing_key.rotate': 'Signing key rotated',
  'signing_key.rotate_now': 'Signing key replaced at once',
};

/** A key named in the activity, linked to its line in the API keys' list. */
const keyLink = (keyId: string) => html`<a href="${apiKeyAnchor(keyId)}"><code>${keyId}</code></a>`;

/** A call of the management API: "API: listAgents", and "via key key_… → 200 · GET /api/admin/v1/agents". */
function apiCallCells(call: ApiCall, event: ConsoleEventView) {
  const answered =
    call.status === null
      ? ''
      : html` → <span class="outcome ${call.status < 400 ? 'success' : 'failure'}">${call.status}</span>`;
  return {
    action: html`API: <code>${call.operation}</code>`,
    detail:
      call.keyId === null
        ? html`${event.detail}`
        : html`via key ${keyLink(call.keyId)}${answered} · ${call.method} ${call.path}`,
  };
}

function consoleCells(event: ConsoleEventView, accounts: Map<string, AccountRecord>) {
  const target = event.target === null ? undefined : accounts.get(event.target);
  const call = apiCallOf(event);
  const words = ACTION_WORDS[event.action];
  return {
    who: actorCell(event),
    action: words ? html`${words} <code class="muted">${event.action}</code>` : html`<code>${event.action}</code>`,
    target: target
      ? html`${target.email} <code class="muted">${event.target}</code>`
      : event.action.startsWith('api_key.') && event.target !== null
        ? keyLink(event.target)
        : html`<code>${event.target}</code>`,
    detail: html`${event.detail}`,
    ...(call ? apiCallCells(call, event) : {}),
  };
}

export function adminEventsPage(
  page: AdminPage,
  input: {
    entries: ActivityEntry[];
    accounts: Map<string, AccountRecord>;
    next: string | null;
    first: boolean;
    /** The kind shown ('' for everything) and the message when the URL's was refused. */
    show: string;
    error?: string;
  },
): string {
  const cells = (entry: ActivityEntry) =>
    entry.kind === 'sign-in' ? signInCells(entry.signIn) : consoleCells(entry.event, input.accounts);
  const showParam = input.show ? `&show=${encodeURIComponent(input.show)}` : '';
  return consolePage(page, {
    title: 'Admin: activity',
    section: 'admin',
    notice: input.error ? { kind: 'error', text: input.error } : null,
    body: html`${adminNavigation('events')}
<p>What people did in the console, and every agent's sign-in attempt, newest first.</p>
<form method="get" action="/console/admin/events" class="filters" aria-label="Filter the activity">
${field({ label: 'Show', name: 'show', type: 'select', choices: ACTIVITY_KINDS, value: input.show, error: input.error })}
<div class="filter-actions"><button type="submit" class="secondary">Show</button></div>
</form>
${
  input.entries.length === 0
    ? html`<p>${input.first ? 'Nothing has happened yet.' : 'There is nothing older.'}</p>`
    : dataTable({
        caption: 'Activity, newest first',
        id: 'activity',
        rows: input.entries.map((entry) => ({ entry, ...cells(entry) })),
        rowAttributes: ({ entry }) => html` class="${entry.kind}"`,
        columns: [
          { heading: 'Time', kind: 'title', cell: ({ entry }) => when(entry.at) },
          { heading: 'Who', kind: 'long', cell: (row) => row.who },
          { heading: 'Action', cell: (row) => row.action },
          { heading: 'Target', kind: 'long', cell: (row) => row.target },
          { heading: 'IP address', kind: 'long', cell: ({ entry }) => entry.ip },
          { heading: 'Detail', kind: 'long', cell: (row) => row.detail },
        ],
      })
}
<nav class="pager" aria-label="Pages">
${input.first ? '' : html`<a href="/console/admin/events${input.show ? `?show=${encodeURIComponent(input.show)}` : ''}">Newest</a>`}
${input.next ? html`<a href="/console/admin/events?before=${input.next}${showParam}" rel="next">Older</a>` : ''}
</nav>`,
  });
}
