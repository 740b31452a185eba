/**
 * The console's agents area (docs/design.md §11): the list with the create form, the page that
 * shows a new secret once, and an agent's page with its actions, its sign-ins per day, the
 * websites it is connected to and its sign-in history.
 */
import { type Html, html } from '../../web/html.ts';
import type { AccountRecord, ConnectedSite } from '../../store/console-types.ts';
import type { AgentRecord } from '../../store/types.ts';
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
import {
  accessActions,
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
    : html`<table>
<caption class="visually-hidden">Your agents</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Agent ID</th><th scope="col">Status</th><th scope="col">Created</th><th scope="col">Last used</th></tr></thead>
<tbody>
${input.agents.map(
  (agent) => html`<tr>
<td><a href="${agentPath(agent.id)}">${agent.name}</a></td><td><code>${agent.id}</code></td><td>${agentBadge(agent)}</td><td>${when(agent.created_at)}</td><td>${when(agent.last_used_at)}</td>
</tr>`,
)}
</tbody>
</table>`
}
</section>
<section aria-labelledby="create-heading">
<h2 id="create-heading">Create an agent</h2>
<p>An agent gets an ID and a secret. It signs in to websites with your email and your name.</p>
<form method="post" action="/console/agents" class="stack">
${csrfField(csrf)}
${field({ label: 'Name', name: 'name', value: input.values?.name, required: true, maxlength: 200, error: errors.name, hint: 'For you and the websites it signs in to, such as "Research assistant".' })}
<button type="submit">Create agent</button>
</form>
</section>`,
  });
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

/** Sign-ins per day as an SVG bar chart, with a table for screen readers. */
export function signInChart(days: DailyCount[]): Html {
  const total = days.reduce((sum, day) => sum + day.count, 0);
  const max = Math.max(1, ...days.map((day) => day.count));
  const barWidth = 16;
  const step = 20;
  const top = 14;
  const height = 100;
  const width = days.length * step;
  const bars = days.map((day, i) => {
    const h = day.count === 0 ? 0 : Math.max(2, Math.round((day.count / max) * height));
    const label = `${day.day}: ${day.count} ${day.count === 1 ? 'sign-in' : 'sign-ins'}`;
    // A transparent column the full height carries the tooltip even on a day without sign-ins.
    return html`<g><title>${label}</title><rect x="${i * step}" y="${top}" width="${barWidth}" height="${height}" fill="transparent"/>${h > 0 ? html`<rect x="${i * step}" y="${top + height - h}" width="${barWidth}" height="${h}" fill="currentColor"/>` : ''}</g>`;
  });
  const summary = `Successful sign-ins per day over the last ${days.length} days: ${total} in total`;
  return html`<svg class="chart" viewBox="0 0 ${width} ${top + height + 16}" role="img" aria-label="${summary}" id="sign-in-chart">
<text x="0" y="10" font-size="10" fill="currentColor">${max} per day</text>
<line x1="0" y1="${top + height + 0.5}" x2="${width}" y2="${top + height + 0.5}" stroke="currentColor" stroke-width="1"/>
${bars}
<text x="0" y="${top + height + 13}" font-size="10" fill="currentColor">${days[0]?.day}</text>
<text x="${width}" y="${top + height + 13}" font-size="10" fill="currentColor" text-anchor="end">${days[days.length - 1]?.day}</text>
</svg>
<p id="chart-total">${total} successful ${total === 1 ? 'sign-in' : 'sign-ins'} in the last ${days.length} days.</p>
<table class="visually-hidden">
<caption>Successful sign-ins per day</caption>
<thead><tr><th scope="col">Day</th><th scope="col">Sign-ins</th></tr></thead>
<tbody>${days.map((day) => html`<tr><td>${day.day}</td><td>${day.count}</td></tr>`)}</tbody>
</table>`;
}

/** Older/Newest links of a history table. */
function connectedSites(csrf: string, agent: AgentRecord, sites: ConnectedSite[]): Html {
  return html`<section aria-labelledby="sites-heading">
<h2 id="sites-heading">Connected sites</h2>
${
  sites.length === 0
    ? html`<p>No website holds a working token of this agent.</p>`
    : html`<table id="connected-sites">
<caption class="visually-hidden">Websites holding tokens of this agent</caption>
<thead><tr><th scope="col">Website</th><th scope="col">Since</th><th scope="col">Last sign-in</th><th scope="col">Grants</th><th scope="col">Actions</th></tr></thead>
<tbody>
${sites.map(
  (site) => html`<tr>
<td>${site.client_name} <span class="muted"><code>${site.client_id}</code></span></td><td>${when(site.first_granted_at)}</td><td>${when(site.last_auth_at)}</td><td>${site.grants}</td>
<td class="actions">${actionButton(csrf, `${agentPath(agent.id)}/sites/${encodeURIComponent(site.client_id)}/revoke`, 'Disconnect', { confirm: `Disconnect ${site.client_name}? Its tokens for this agent stop working.` })}</td>
</tr>`,
)}
</tbody>
</table>`
}
</section>`;
}

export interface AgentPageInput extends OwnedPageInput {
  agent: AgentRecord;
  chart: DailyCount[];
  sites: ConnectedSite[];
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
<dt>Created</dt><dd>${when(agent.created_at)}</dd>
<dt>Last used</dt><dd>${when(agent.last_used_at)}</dd>`,
    previousSecret: { expiresAt: agent.previous_secret_expires_at, now: input.now },
    manage: html`<form method="post" action="${base}/rename" class="stack">
${csrfField(csrf)}
${field({ label: 'Name', name: 'name', value: input.values?.name ?? agent.name, required: true, maxlength: 200, error: errors.name })}
<button type="submit">Rename</button>
</form>
<h3>Secret</h3>
${rotateForm(csrf, `${base}/rotate`, errors.grace, 'this agent')}
${accessActions(csrf, base, {
  active: agent.status === 'active',
  disable: 'Disable this agent? It cannot sign in, and its tokens stop working until you enable it.',
  revoke: 'Revoke every grant of this agent? Every website it signed in to loses its tokens for good.',
  more: actionButton(csrf, `${base}/delete`, 'Delete agent', {
    danger: true,
    confirm: `Delete the agent ${agent.name}? Everything it holds is revoked; this cannot be undone.`,
  }),
})}`,
    after: html`<section aria-labelledby="chart-heading">
<h2 id="chart-heading">Sign-ins in the last 30 days</h2>
${signInChart(input.chart)}
</section>
${connectedSites(csrf, agent, input.sites)}
${historyTable(input.history, { heading: 'Website', cell: (row) => row.client_name ?? row.client_id ?? html`<span class="muted">none</span>` }, base, 'This agent has not signed in anywhere yet.')}`,
  });
}
