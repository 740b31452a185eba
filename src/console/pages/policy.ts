/**
 * The Policy section of an agent's page (docs/design.md §16): which websites, the scope ceiling,
 * when the credentials expire, sign-ins per hour, and the listed websites, each removable, with
 * a way to add one of the registered websites.
 */
import type { ActionAnswer, ActionRule, AgentRecord, WebsitesRule } from '../../store/agents.ts';
import type { ClientRecord } from '../../store/clients.ts';
import type { ConnectedSite } from '../../store/tokens.ts';
import { type Html, html } from '../../web/html.ts';
import { MAX_SIGN_INS_PER_HOUR, policyOf } from '../../domain/agent-policy.ts';
import { SUPPORTED_SCOPES } from '../../domain/scopes.ts';
import { actionFields, scopeField } from '../policy.ts';
import { ACTION_ANSWER_WORDS, WEBSITES_WORDS } from '../../management/policies.ts';
import type { FormState } from './owned.ts';
import { actionButton, csrfField, field } from './shell.ts';
import { dataTable } from './table.ts';

const WEBSITES_HINTS: Record<WebsitesRule, string> = {
  any: 'It signs in to any website that sends it a sign-in (as agents without a policy do).',
  listed: 'It signs in only to the websites listed below; any other is refused, and loses the grant it holds.',
  ask: 'A website not listed below waits for your approval here, by mail too where it is set up; websites it already signed in to keep their grants.',
};

const SCOPE_WORDS: Record<string, string> = {
  openid: 'that it is you (your account’s ID)',
  email: 'your email address',
  profile: 'your name',
};

/**
 * The scopes active resource servers serve, each once with its words (the first server's, and
 * the resources that serve it): what a ceiling may tick beside the contract's (docs/design.md §16).
 */
function resourceScopeWords(clients: readonly ClientRecord[]): Array<readonly [string, string]> {
  const words = new Map<string, string>();
  for (const client of clients) {
    if (client.status !== 'active') continue;
    const hosts = client.resources.map((resource) => URL.parse(resource)?.host ?? resource).join(', ');
    for (const scope of client.scopes)
      if (!words.has(scope.name)) words.set(scope.name, `${scope.description} (at ${hosts})`);
  }
  return [...words];
}

/** The fields the policy form posts (a re-shown form has them in its values). */
const POLICY_FIELDS = ['websites', 'expires', 'per_hour'];

const dayOf = (epochSeconds: number) => new Date(epochSeconds * 1000).toISOString().slice(0, 10);

/** The websites the agent may sign in to without asking. */
function listedWebsites(
  csrf: string,
  base: string,
  listed: Array<{ id: string; name: string | null }>,
  addable: ClientRecord[],
  error: string | undefined,
): Html {
  return html`<h3 id="listed-heading">Listed websites</h3>
<p class="hint">Under “Only listed websites” and “Ask me for a new website”, the agent signs in to these without asking.</p>
${
  listed.length === 0
    ? html`<p id="no-listed-websites">No website is listed.</p>`
    : dataTable({
        caption: 'Listed websites',
        id: 'listed-websites',
        rows: listed,
        columns: [
          {
            heading: 'Website',
            kind: 'title',
            cell: (site) =>
              site.name === null
                ? html`<code>${site.id}</code> <span class="muted">(no longer registered)</span>`
                : html`${site.name} <code class="muted">${site.id}</code>`,
          },
          {
            heading: 'Actions',
            kind: 'actions',
            cell: (site) =>
              actionButton(csrf, `${base}/policy/websites/remove`, 'Remove', {
                extra: html`<input type="hidden" name="client_id" value="${site.id}">`,
              }),
          },
        ],
      })
}
${
  addable.length === 0
    ? html`<p class="hint">Every registered website is listed.</p>`
    : html`<form method="post" action="${base}/policy/websites" class="stack" id="add-website">
${csrfField(csrf)}
${field({
  label: 'Add a website',
  name: 'client_id',
  type: 'select',
  choices: addable.map((client): [string, string] => [client.id, `${client.name} (${client.id})`]),
  error,
})}
<button type="submit" class="secondary">Add website</button>
</form>`
}`;
}

const ACTION_HINTS: Record<ActionAnswer, string> = {
  ask: 'Each action waits for your approval here, by mail too where it is set up.',
  always: 'Approved without asking; with an amount, only actions up to it in that currency (others are asked).',
  never: 'Refused without asking.',
};

/** One website's line of the actions form, as sent (a refused form) or as stored. */
interface ActionLine {
  clientId: string;
  name: string;
  answer: string;
  amount: string;
  currency: string;
}

/**
 * How the websites' action requests are answered (docs/design.md §21): one line per website the
 * agent signed in to that registered action types, and per website with a rule.
 */
function actionAnswers(csrf: string, base: string, lines: ActionLine[], error: string | undefined): Html {
  return html`<h3 id="action-answers-heading">Actions</h3>
<p class="hint">What a website may ask you to approve after the agent signed in to it (a payment, say). Ask me: you decide each one, with your passkey or password.</p>
${
  lines.length === 0
    ? html`<p id="no-action-websites">No website this agent signed in to asks about actions.</p>`
    : html`<form method="post" action="${base}/policy/actions" class="stack" id="actions-form"${error ? html` aria-describedby="actions-error"` : ''}>
${csrfField(csrf)}
${error ? html`<p class="field-error" id="actions-error">${error}</p>` : ''}
${lines.map((line, index) => {
  const names = actionFields(index);
  const id = `action-${index}`;
  const radio = (answer: ActionAnswer, extra: Html | string = '') =>
    html`<li><label class="check"><input type="radio" name="${names.answer}" value="${answer}"${line.answer === answer ? html` checked` : ''}> <span class="check-text"><strong>${ACTION_ANSWER_WORDS[answer]}</strong> <span class="muted">${ACTION_HINTS[answer]}</span></span></label>${extra}</li>`;
  return html`<fieldset class="field" id="${id}"${error ? html` aria-invalid="true"` : ''}>
<legend>Actions at ${line.name}</legend>
<input type="hidden" name="${names.client}" value="${line.clientId}">
<ul class="checks">
${radio('ask')}
${radio(
  'always',
  html`<div class="up-to"><label for="${id}-amount">up to</label> <input type="text" inputmode="decimal" id="${id}-amount" name="${names.amount}" value="${line.amount}" size="10" maxlength="20" aria-describedby="${id}-up-to-hint"> <label for="${id}-currency" class="visually-hidden">Currency</label><input type="text" id="${id}-currency" name="${names.currency}" value="${line.currency}" size="4" maxlength="3" placeholder="EUR" autocapitalize="characters"> <span class="hint" id="${id}-up-to-hint">Empty: any amount.</span></div>`,
)}
${radio('never')}
</ul>
</fieldset>`;
})}
<button type="submit">Save answers</button>
</form>`
}`;
}

/** The lines of the actions form: as sent when it was refused, else as the policy says. */
function actionLines(
  rules: readonly ActionRule[],
  clients: readonly ClientRecord[],
  sites: readonly ConnectedSite[],
  values: Record<string, string | undefined>,
): ActionLine[] {
  const names = new Map(clients.map((client) => [client.id, client.name]));
  const connected = new Set(sites.map((site) => site.client_id));
  const asking = clients.filter((client) => client.action_types.length > 0 && connected.has(client.id));
  const ids = [...new Set([...asking.map((client) => client.id), ...rules.map((rule) => rule.client_id)])];
  const sent = values[actionFields(0).client] !== undefined;
  return ids.map((clientId, index) => {
    const name = names.get(clientId) ?? clientId;
    const fields = actionFields(index);
    if (sent && values[fields.client] === clientId)
      return {
        clientId,
        name,
        answer: values[fields.answer] ?? '',
        amount: values[fields.amount] ?? '',
        currency: values[fields.currency] ?? '',
      };
    const rule = rules.find((candidate) => candidate.client_id === clientId);
    return {
      clientId,
      name,
      answer: rule?.answer ?? 'ask',
      amount: rule?.up_to === undefined ? '' : String(rule.up_to.amount),
      currency: rule?.up_to?.currency ?? '',
    };
  });
}

/**
 * @example
 * policySection(csrf, agent, { clients, sites, actionApprovals: true, values, errors });
 */
export function policySection(
  csrf: string,
  agent: AgentRecord,
  input: FormState & {
    clients: ClientRecord[];
    /** The websites holding the agent's tokens: those that may ask about actions. */
    sites: readonly ConnectedSite[];
    /** Whether websites may ask about actions (ACTION_APPROVALS): the actions form only then. */
    actionApprovals: boolean;
  },
): Html {
  const policy = policyOf(agent);
  const errors = input.errors ?? {};
  const values = input.values ?? {};
  // A refused policy form is shown as it was sent; otherwise as the policy is.
  const sent = POLICY_FIELDS.some((name) => values[name] !== undefined);
  const websites = sent ? (values.websites ?? '') : policy.websites;
  const ticked = (scope: string) =>
    sent ? values[scopeField(scope)] !== undefined : (policy.scope_ceiling ?? []).includes(scope);
  const expires = sent
    ? values.expires
    : policy.credentials_expire_at === null
      ? ''
      : dayOf(policy.credentials_expire_at);
  const perHour = sent
    ? values.per_hour
    : policy.max_sign_ins_per_hour === null
      ? ''
      : String(policy.max_sign_ins_per_hour);
  const base = `/console/agents/${encodeURIComponent(agent.id)}`;
  const names = new Map(input.clients.map((client) => [client.id, client.name]));
  const listed = policy.allowed_clients.map((id) => ({ id, name: names.get(id) ?? null }));
  const addable = input.clients.filter(
    (client) => client.status === 'active' && !policy.allowed_clients.includes(client.id),
  );
  const groupError = (id: string, error: string | undefined) =>
    error ? html` aria-describedby="${id}-error" aria-invalid="true"` : '';
  return html`<section aria-labelledby="policy-heading" id="policy">
<h2 id="policy-heading">Policy</h2>
<p>What you allow this agent, checked every time it signs in. A refusal tells the agent why in plain words and is in the sign-in history.</p>
<p id="policy-reach">A change also applies to what websites already hold: saving revokes their grants beyond it (a website not listed under “Only listed websites”, a scope above the ceiling), so they must sign in again; “Ask me for a new website” keeps them.</p>
<form method="post" action="${base}/policy" class="stack" id="policy-form">
${csrfField(csrf)}
<fieldset class="field" id="field-websites"${groupError('field-websites', errors.websites)}>
<legend>Websites</legend>
${errors.websites ? html`<p class="field-error" id="field-websites-error">${errors.websites}</p>` : ''}
<ul class="checks">
${(Object.keys(WEBSITES_WORDS) as WebsitesRule[]).map(
  (rule) =>
    html`<li><label class="check"><input type="radio" name="websites" value="${rule}"${websites === rule ? html` checked` : ''}> <span class="check-text"><strong>${WEBSITES_WORDS[rule]}</strong> <span class="muted">${WEBSITES_HINTS[rule]}</span></span></label></li>`,
)}
</ul>
</fieldset>
<fieldset class="field" id="field-scope_ceiling"${groupError('field-scope_ceiling', errors.scope_ceiling)}>
<legend>Scope ceiling</legend>
<p class="hint">What the agent may share with a website at most. None ticked: whatever the website asks for. A website already granted more loses its grant. A resource server’s scope not ticked is refused too.</p>
${errors.scope_ceiling ? html`<p class="field-error" id="field-scope_ceiling-error">${errors.scope_ceiling}</p>` : ''}
<ul class="checks">
${[...SUPPORTED_SCOPES.map((scope) => [scope, SCOPE_WORDS[scope]!] as const), ...resourceScopeWords(input.clients)].map(
  ([scope, words]) =>
    html`<li><label class="check"><input type="checkbox" name="${scopeField(scope)}" value="on"${ticked(scope) ? html` checked` : ''}> <span class="check-text"><code>${scope}</code> <span class="muted">${words}</span></span></label></li>`,
)}
</ul>
</fieldset>
${field({ label: 'Credentials expire', name: 'expires', type: 'date', value: expires, error: errors.credentials_expire_at, hint: 'From this day on (UTC) the agent can no longer sign in, and the tokens websites hold stop working until you extend it. Empty: never.' })}
${field({ label: 'Sign-ins per hour', name: 'per_hour', type: 'number', value: perHour, min: 1, max: MAX_SIGN_INS_PER_HOUR, error: errors.max_sign_ins_per_hour, hint: 'The most successful sign-ins in any hour. Empty: no limit.' })}
<button type="submit">Save policy</button>
</form>
${listedWebsites(csrf, base, listed, addable, errors.allowed_clients)}
${input.actionApprovals ? actionAnswers(csrf, base, actionLines(policy.actions, input.clients, input.sites, values), errors.actions) : ''}
</section>`;
}
