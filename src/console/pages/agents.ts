/**
 * The console's agents area (docs/design.md §11): the list with the create form, the page that
 * shows a new secret once, and an agent's page with its actions, its sign-ins per day, the
 * websites it is connected to and its sign-in history.
 */
import { type Html, html } from '../../web/html.ts';
import type { AccountRecord } from '../../store/accounts.ts';
import type { ConnectedSite } from '../../store/tokens.ts';
import type { AgentRecord } from '../../store/agents.ts';
import type { ClientRecord } from '../../store/clients.ts';
import type { ApprovalView } from '../../store/approvals.ts';
import { waitingNotice } from './approvals.ts';
import { policySection } from './policy.ts';
import {
  actionButton,
  type ConsolePage,
  consolePage,
  csrfField,
  field,
  type PageContext,
  secretOnce,
  when,
  copyable,
} from './shell.ts';
import { dataTable } from './table.ts';
import {
  enableAction,
  type OwnedPageInput,
  ownedPage,
  rotatedSecretPage,
  type FormState,
  historyTable,
  pageNotice,
  rotateForm,
} from './owned.ts';

type SignedInPage = PageContext & { account: AccountRecord };

export const agentPath = (id: string) => `/console/agents/${encodeURIComponent(id)}`;

const agentBadge = (agent: AgentRecord) =>
  agent.status === 'active'
    ? html`<span class="badge ok">active</span>`
    : html`<span class="badge off">disabled</span>`;

export function agentsPage(
  page: SignedInPage,
  input: { agents: AgentRecord[]; notice?: ConsolePage['notice'] } & FormState,
): string {
  const { csrf } = page;
  const errors = input.errors ?? {};
  return consolePage(page, {
    title: 'Agents',
    section: 'agents',
    notice: pageNotice(input.notice, errors),
    body: html`<section aria-labelledby="agents-heading">
<h2 id="agents-heading">Your agents</h2>
${
  input.agents.length === 0
    ? html`<p id="no-agents">You have no agents yet. Create one below: it signs in to websites as you.</p>`
    : dataTable({
        caption: 'Your agents',
        rows: input.agents,
        columns: [
          { heading: 'Name', kind: 'title', cell: (agent) => html`<a href="${agentPath(agent.id)}">${agent.name}</a>` },
          { heading: 'Agent ID', kind: 'long', cell: (agent) => html`<code>${agent.id}</code>` },
          { heading: 'Status', kind: 'narrow', cell: agentBadge },
          { heading: 'Created', cell: (agent) => when(agent.created_at) },
          { heading: 'Last used', cell: (agent) => when(agent.last_used_at) },
        ],
      })
}
</section>
<section aria-labelledby="create-heading">
<h2 id="create-heading">Create an agent</h2>
<p>An agent gets an ID and a secret. It signs in to websites with your email and your name.</p>
<form method="post" action="/console/agents" class="stack">
${csrfField(csrf)}
${field({ label: 'Name', name: 'name', value: input.values?.name, required: true, maxlength: 200, error: errors.name, hint: 'For you and the websites it signs in to, such as "Research assistant".' })}
${publicKeyInput({ label: 'Public key (optional)', value: input.values?.public_key, error: errors.public_key, hint: PUBLIC_KEY_HINT })}
<button type="submit">Create agent</button>
</form>
</section>`,
  });
}

const PUBLIC_KEY_HINT =
  'Instead of a secret, the agent can prove itself with a key that never leaves it: run agentauth-agent keygen where it runs, and paste the public key it prints (a JWK, Ed25519 or P-256). Leave empty for a secret.';

/** The public key's textarea: a JWK pasted as text (the rules of src/domain/agent-keys.ts check it). */
function publicKeyInput(options: {
  label: string;
  value?: string;
  error?: string;
  hint: string;
  required?: boolean;
}): Html {
  return field({ name: 'public_key', type: 'textarea', ...options });
}

/** How a key-bound agent proves itself, and the form that replaces its key (or binds an agent with a secret to one). */
function keySection(
  csrf: string,
  agent: AgentRecord,
  issuer: string | undefined,
  errors: Record<string, string>,
  value?: string,
): Html {
  const base = agentPath(agent.id);
  if (agent.public_jwk == null)
    return html`<h3>Secret</h3>
<p id="agent-credential">Proves itself with a secret.</p>`;
  const environment = [
    ...(issuer ? [`AGENTAUTH_ISSUER=${issuer}`] : []),
    `AGENTAUTH_AGENT_ID=${agent.id}`,
    "# The private key file agentauth-agent keygen wrote (readable only by the agent's user):",
    'AGENTAUTH_AGENT_KEY_FILE=/path/to/agent-key.json',
    'AGENTAUTH_MODEL=my-model',
  ].join('\n');
  return html`<h3>Key</h3>
<p id="agent-credential">Proves itself with a key: each sign-in is signed by a private key that stays where the agent runs. There is no secret.</p>
<dl><dt>Key thumbprint</dt><dd>${copyable('key-thumbprint', agent.key_thumbprint ?? '')}</dd></dl>
<p>For the agent's environment (no secret in it):</p>
<pre class="snippet"><code id="agent-environment">${environment}</code></pre>
<form method="post" action="${base}/rotate-key" class="stack">
${csrfField(csrf)}
${publicKeyInput({ label: 'Replace the key', value, error: errors.public_key, required: true, hint: 'Paste the new public key (a JWK). The old key stops working at once.' })}
<button type="submit">Replace key</button>
</form>`;
}

/** For an agent with a secret: binding it to a key instead, behind a disclosure. */
function switchToKey(csrf: string, agent: AgentRecord, errors: Record<string, string>, value?: string): Html {
  if (agent.public_jwk != null) return html``;
  return html`<details${errors.public_key ? html` open` : ''}>
<summary>Use a key instead of the secret</summary>
<form method="post" action="${agentPath(agent.id)}/rotate-key" class="stack">
${csrfField(csrf)}
${publicKeyInput({ label: 'Public key', value, error: errors.public_key, required: true, hint: 'Paste the public key agentauth-agent keygen printed (a JWK). The secret stops working at once.' })}
<button type="submit" class="secondary">Use this key</button>
</form>
</details>`;
}

/**
 * What the agent needs where it runs, as environment variables the SDKs, `agentauth-agent` /
 * `agentauth sign-in` and the MCP server read: pasted as shown it works, with the example model
 * name to replace by the model that runs the agent (sign-in history shows it).
 */
function agentEnvironment(input: { issuer: string; agentId: string; secret: string }): Html {
  const environment = [
    `AGENTAUTH_ISSUER=${input.issuer}`,
    `AGENTAUTH_AGENT_ID=${input.agentId}`,
    `AGENTAUTH_AGENT_SECRET=${input.secret}`,
    '# The model that runs the agent, as websites and your sign-in history will see it:',
    'AGENTAUTH_MODEL=my-model',
  ].join('\n');
  return html`<section aria-labelledby="environment-heading">
<h2 id="environment-heading">For the agent's environment</h2>
<p>Set these variables where the agent runs, with the name of the model that runs it. They include the secret: keep them as safely.</p>
<pre class="snippet"><code id="agent-environment">${environment}</code></pre>
<button type="button" class="secondary copy" data-copy="agent-environment">Copy</button>
</section>`;
}

/** The new agent's credentials, the secret shown this once. */
export function agentCreatedPage(
  page: SignedInPage,
  input: { agent: AgentRecord; secret: string; issuer: string },
): string {
  const { agent, secret, issuer } = input;
  return consolePage(page, {
    title: `Agent ${agent.name} is created`,
    section: 'agents',
    notice: { kind: 'success', text: 'The agent is created. Copy its secret now: it is shown only once.' },
    body: html`<dl>
<dt>Agent ID</dt><dd>${copyable('agent-id', agent.id)}</dd>
</dl>
${secretOnce('Agent secret', 'agent-secret', secret)}
${agentEnvironment({ issuer, agentId: agent.id, secret })}
<p><a href="${agentPath(agent.id)}">Go to the agent's page</a></p>`,
  });
}

/** A new secret after a rotation, shown once. */
export function agentSecretPage(
  page: SignedInPage,
  input: { agent: AgentRecord; secret: string; until: number | null; issuer: string },
): string {
  return rotatedSecretPage(page, {
    name: input.agent.name,
    section: 'agents',
    secret: { label: 'New agent secret', id: 'agent-secret', value: input.secret },
    until: input.until,
    more: agentEnvironment({ issuer: input.issuer, agentId: input.agent.id, secret: input.secret }),
    back: { href: agentPath(input.agent.id), label: "Back to the agent's page" },
  });
}

export interface DailyCount {
  day: string;
  count: number;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
/** "2026-11-05" as "Nov 5", the same in every locale (the page says UTC). */
const shortDay = (day: string) => `${MONTHS[Number(day.slice(5, 7)) - 1]} ${Number(day.slice(8, 10))}`;

/** Gridline values: 0, the middle (when a whole number in between), the top. */
function ticks(max: number): number[] {
  const middle = max / 2;
  return max >= 2 && Number.isInteger(middle) ? [0, middle, max] : [0, max];
}

/**
 * Sign-ins per day as an SVG bar chart: a labelled count axis with gridlines, dates under the
 * bars, each bar's day and count as its tooltip (an SVG <title>: no script, so the CSP holds) and
 * highlighted on hover; the same numbers as a table for screen readers and on demand.
 */
export function signInChart(days: DailyCount[]): Html {
  const total = days.reduce((sum, day) => sum + day.count, 0);
  const max = Math.max(1, ...days.map((day) => day.count));
  // Units of the viewBox; the chart is at most 32rem wide, so 11 units are 10 to 14 px of text.
  const left = 34;
  const top = 8;
  const height = 110;
  const step = 12;
  const barWidth = 9;
  const width = left + days.length * step + 6;
  const bottom = top + height;
  const y = (value: number) => bottom - (value / max) * height;
  const gridlines = ticks(max).map(
    (value) =>
      html`<line class="grid" x1="${left}" y1="${y(value)}" x2="${width}" y2="${y(value)}"/><text x="${left - 4}" y="${y(value) + 4}" text-anchor="end">${value}</text>`,
  );
  const bars = days.map((day, i) => {
    const h = day.count === 0 ? 0 : Math.max(2, Math.round((day.count / max) * height));
    const x = left + i * step + 2;
    const label = `${day.day}: ${day.count} ${day.count === 1 ? 'sign-in' : 'sign-ins'}`;
    // A transparent column the full height carries the tooltip even on a day without sign-ins.
    return html`<g class="bar"><title>${label}</title><rect class="hit" x="${x - 1.5}" y="${top}" width="${step}" height="${height}"/>${h > 0 ? html`<rect class="fill" x="${x}" y="${bottom - h}" width="${barWidth}" height="${h}"/>` : ''}</g>`;
  });
  // A date under the first bar of each week, and under today's.
  const dates = days
    .map((day, i) => ({ day, i }))
    .filter(({ i }) => i % 7 === 0 || i === days.length - 1)
    .filter(({ i }) => i === days.length - 1 || days.length - 1 - i >= 4)
    .map(({ day, i }) =>
      // The last date ends at the last bar, so that it stays inside the picture.
      i === days.length - 1
        ? html`<text x="${left + i * step + 2 + barWidth}" y="${bottom + 14}" text-anchor="end">${shortDay(day.day)}</text>`
        : html`<text x="${left + i * step + 2 + barWidth / 2}" y="${bottom + 14}" text-anchor="middle">${shortDay(day.day)}</text>`,
    );
  const summary = `Successful sign-ins per day over the last ${days.length} days: ${total} in total`;
  return html`<figure class="chart-figure">
<svg class="chart" viewBox="0 0 ${width} ${bottom + 34}" role="img" aria-label="${summary}" id="sign-in-chart">
<text class="axis-title" x="10" y="${top + height / 2}" transform="rotate(-90 10 ${top + height / 2})" text-anchor="middle">Sign-ins</text>
${gridlines}
<line class="axis" x1="${left}" y1="${bottom + 0.5}" x2="${width}" y2="${bottom + 0.5}"/>
${bars}
${dates}
<text class="axis-title" x="${left + (days.length * step) / 2}" y="${bottom + 30}" text-anchor="middle">Day (UTC)</text>
</svg>
<figcaption id="chart-total">${total} successful ${total === 1 ? 'sign-in' : 'sign-ins'} in the last ${days.length} days. Point at a bar for its day and count, or open the numbers below.</figcaption>
</figure>
<details class="chart-table">
<summary>The numbers, day by day</summary>
<table>
<caption class="visually-hidden">Successful sign-ins per day</caption>
<thead><tr><th scope="col">Day (UTC)</th><th scope="col">Sign-ins</th></tr></thead>
<tbody>${days.map((day) => html`<tr><td>${day.day}</td><td>${day.count}</td></tr>`)}</tbody>
</table>
</details>`;
}

/** The websites holding live tokens of the agent, each with its Disconnect button. */
function connectedSites(csrf: string, agent: AgentRecord, sites: ConnectedSite[]): Html {
  return html`<section aria-labelledby="sites-heading">
<h2 id="sites-heading">Connected sites</h2>
${
  sites.length === 0
    ? html`<p>No website holds a working token of this agent.</p>`
    : dataTable({
        caption: 'Websites holding tokens of this agent',
        id: 'connected-sites',
        rows: sites,
        columns: [
          {
            heading: 'Website',
            kind: 'title',
            cell: (site) => html`${site.client_name} <code class="muted">${site.client_id}</code>`,
          },
          { heading: 'Since', cell: (site) => when(site.first_granted_at) },
          { heading: 'Last sign-in', cell: (site) => when(site.last_auth_at) },
          { heading: 'Grants', kind: 'narrow', cell: (site) => site.grants },
          {
            heading: 'Actions',
            kind: 'actions',
            cell: (site) =>
              actionButton(
                csrf,
                `${agentPath(agent.id)}/sites/${encodeURIComponent(site.client_id)}/revoke`,
                'Disconnect',
                { confirm: `Disconnect ${site.client_name}? Its tokens for this agent stop working.` },
              ),
          },
        ],
      })
}
</section>`;
}

export interface AgentPageInput extends OwnedPageInput {
  agent: AgentRecord;
  /** The issuer, for a key-bound agent's environment. */
  issuer?: string;
  chart: DailyCount[];
  sites: ConnectedSite[];
  /** The registered websites (the policy's list names them, and adds from them). */
  clients: ClientRecord[];
  /** This agent's sign-ins waiting for a decision. */
  waiting: ApprovalView[];
  /** Whether websites may ask about actions (ACTION_APPROVALS): the policy's actions form. */
  actionApprovals: boolean;
}

export function agentPage(page: SignedInPage, input: AgentPageInput): string {
  const { csrf } = page;
  const { agent } = input;
  const errors = input.errors ?? {};
  const base = agentPath(agent.id);
  return ownedPage(page, {
    title: agent.name,
    section: 'agents',
    notice: input.notice,
    errors,
    details: html`<dt>Agent ID</dt><dd>${copyable('agent-id', agent.id)}</dd>
<dt>Status</dt><dd id="agent-status">${agentBadge(agent)}</dd>
<dt>Owner</dt><dd id="agent-owner">${agent.owner_email}</dd>
<dt>Credential</dt><dd id="agent-credential-kind">${agent.public_jwk == null ? 'Secret' : html`Key <code class="muted">${agent.key_thumbprint}</code>`}</dd>
<dt>Created</dt><dd>${when(agent.created_at)}</dd>
<dt>Last used</dt><dd>${when(agent.last_used_at)}</dd>`,
    previousSecret: { expiresAt: agent.previous_secret_expires_at, now: input.now },
    manage: html`<form method="post" action="${base}/rename" class="stack">
${csrfField(csrf)}
${field({ label: 'Name', name: 'name', value: input.values?.name ?? agent.name, required: true, maxlength: 200, error: errors.name })}
<button type="submit">Rename</button>
</form>
${keySection(csrf, agent, input.issuer, errors, input.values?.public_key)}
${agent.public_jwk == null ? rotateForm(csrf, `${base}/rotate`, errors.grace, 'this agent') : ''}
${switchToKey(csrf, agent, errors, input.values?.public_key)}
${agent.status === 'active' ? '' : enableAction(csrf, base, 'agent')}`,
    danger: [
      ...(agent.status === 'active'
        ? [
            {
              action: `${base}/disable`,
              label: 'Disable agent',
              consequence:
                'Disable: the agent cannot sign in anywhere, and every token it holds stops working until you enable it again.',
              confirm: 'Disable this agent? It cannot sign in, and its tokens stop working until you enable it.',
            },
          ]
        : []),
      {
        action: `${base}/revoke-grants`,
        label: 'Revoke all grants',
        consequence:
          'Revoke all grants: every website it signed in to loses its tokens for good; the agent stays and can sign in again.',
        confirm: 'Revoke every grant of this agent? Every website it signed in to loses its tokens for good.',
      },
      {
        action: `${base}/delete`,
        label: 'Delete agent',
        consequence:
          'Delete: the agent, its ID and its secret are gone and everything it holds is revoked. This cannot be undone.',
        confirm: `Delete the agent ${agent.name}? Everything it holds is revoked; this cannot be undone.`,
      },
    ],
    before: waitingNotice(page.account, input.waiting, input.now, base),
    after: html`${policySection(csrf, agent, { clients: input.clients, sites: input.sites, actionApprovals: input.actionApprovals, values: input.values, errors })}
<section aria-labelledby="chart-heading">
<h2 id="chart-heading">Sign-ins in the last 30 days</h2>
${signInChart(input.chart)}
</section>
${connectedSites(csrf, agent, input.sites)}
${historyTable(
  input.history,
  {
    param: 'website',
    heading: 'Website',
    any: 'Any website',
    cell: (row) =>
      row.client_id === null
        ? html`<span class="muted">none</span>`
        : html`${row.client_name ?? ''} <code class="muted">${row.client_id}</code>`,
  },
  base,
  'This agent has not signed in anywhere yet.',
)}`,
  });
}
