/**
 * The console's API keys (docs/design.md §11, §15): the list (a member's own keys, or every key
 * with its account for an admin) with a Revoke button per working key, the create form, and the
 * page that shows a new key once with how to use it.
 */
import { type Html, html } from '../../web/html.ts';
import type { ApiKeyRecord } from '../../store/api-keys.ts';
import type { AccountRecord } from '../../store/accounts.ts';
import { KEY_LIFETIME_CHOICES, keyStatus, MAX_KEY_NAME_LENGTH } from '../../management/api-keys.ts';
import { type FormState, pageNotice } from './owned.ts';
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
import { dataTable } from './table.ts';

type SignedInPage = PageContext & { account: AccountRecord };

export const API_KEYS_PATH = '/console/api-keys';
/** Where a new key is shown, once. */
export const apiKeyCreatedPath = (id: string) => `${API_KEYS_PATH}/${encodeURIComponent(id)}/created`;
/** A key's line in the list (the activity links its keys there). */
export const apiKeyAnchor = (id: string) => `${API_KEYS_PATH}#key-${encodeURIComponent(id)}`;

const OPENAPI_PATH = '/api/admin/v1/openapi.json';

const ACCESS_WORDS = { read: 'Read only', write: 'Read and write' } as const;
const REACH_WORDS = { own: 'Own account', all: 'All accounts' } as const;

const STATUS_BADGES = {
  active: html`<span class="badge ok">active</span>`,
  expired: html`<span class="badge">expired</span>`,
  revoked: html`<span class="badge off">revoked</span>`,
} as const;

/** Last use: when and from which address, or never. */
function lastUsed(key: ApiKeyRecord): Html {
  if (key.last_used_at === null) return html`<span class="muted">never</span>`;
  return html`${when(key.last_used_at)}${key.last_used_ip ? html` <span class="muted">from</span> ${key.last_used_ip}` : ''}`;
}

/** The owner of a key, for an admin's list: the account's email. */
function accountCell(key: ApiKeyRecord, accounts: Map<string, AccountRecord>): Html {
  const owner = accounts.get(key.account_id);
  return owner ? html`${owner.email}` : html`<code>${key.account_id}</code>`;
}

export interface ApiKeysPageInput extends FormState {
  keys: ApiKeyRecord[];
  /** Every account by id when the viewer is an admin (the list then shows each key's account); null for a member. */
  accounts: Map<string, AccountRecord> | null;
  now: number;
  notice?: ConsolePage['notice'];
}

function keysTable(page: SignedInPage, input: ApiKeysPageInput): Html {
  const { csrf } = page;
  const { accounts, now } = input;
  return dataTable({
    caption: accounts ? 'Every API key' : 'Your API keys',
    id: 'api-keys',
    rows: input.keys,
    rowAttributes: (key) => html` id="key-${key.id}"`,
    columns: [
      // The key's last four characters tell a person's keys apart; the id is the activity's name for it.
      {
        heading: 'Name',
        kind: 'title',
        cell: (key) => html`${key.name} <code class="muted" title="${key.id}">…${key.hint}</code>`,
      },
      { heading: 'Access', cell: (key) => `${ACCESS_WORDS[key.access]}, ${REACH_WORDS[key.reach].toLowerCase()}` },
      accounts !== null && { heading: 'Account', kind: 'long', cell: (key) => accountCell(key, accounts) },
      { heading: 'Created', cell: (key) => when(key.created_at) },
      { heading: 'Expires', cell: (key) => when(key.expires_at) },
      { heading: 'Last used', cell: lastUsed },
      { heading: 'Status', kind: 'narrow', cell: (key) => STATUS_BADGES[keyStatus(key, now)] },
      {
        heading: 'Actions',
        kind: 'actions',
        cell: (key) =>
          keyStatus(key, now) === 'active'
            ? actionButton(csrf, `${API_KEYS_PATH}/${encodeURIComponent(key.id)}/revoke`, 'Revoke', {
                danger: true,
                confirm: `Revoke the API key ${key.name}? Scripts using it stop working at once; this cannot be undone.`,
              })
            : '',
      },
    ],
  });
}

/**
 * The account's working keys beside its sessions on the account page (name, access, created,
 * expires, last use), each linked to its line in the list where it is revoked.
 *
 * @example
 * html`${workingKeysTable(keys, ctx.clock())}`
 */
export function workingKeysTable(keys: ApiKeyRecord[], now: number): Html {
  const working = keys.filter((key) => keyStatus(key, now) === 'active');
  if (working.length === 0) return html`<p id="no-working-keys">You have no working API keys.</p>`;
  return dataTable({
    caption: 'Your working API keys',
    id: 'account-api-keys',
    rows: working,
    columns: [
      {
        heading: 'Name',
        kind: 'title',
        cell: (key) => html`<a href="${apiKeyAnchor(key.id)}">${key.name}</a> <code class="muted">…${key.hint}</code>`,
      },
      { heading: 'Access', cell: (key) => `${ACCESS_WORDS[key.access]}, ${REACH_WORDS[key.reach].toLowerCase()}` },
      { heading: 'Created', cell: (key) => when(key.created_at) },
      { heading: 'Expires', cell: (key) => when(key.expires_at) },
      { heading: 'Last used', cell: lastUsed },
    ],
  });
}

/** Reach: every account is a choice for an admin only; a member's keys reach their own account. */
function reachField(page: SignedInPage, input: ApiKeysPageInput): Html {
  const admin = page.account.role === 'admin';
  return field({
    label: 'Reach',
    name: 'reach',
    type: 'select',
    choices: [['own', 'Own account'], ...(admin ? [['all', 'All accounts'] as [string, string]] : [])],
    value: input.values?.reach ?? 'own',
    error: input.errors?.reach,
    hint: admin
      ? 'Own account: your agents and websites. All accounts: everyone’s, with the accounts and the activity.'
      : 'Your agents and websites; only an administrator’s key may reach every account.',
  });
}

export function apiKeysPage(page: SignedInPage, input: ApiKeysPageInput): string {
  const { csrf } = page;
  const errors = input.errors ?? {};
  const admin = input.accounts !== null;
  return consolePage(page, {
    title: 'API keys',
    section: 'account',
    notice: pageNotice(input.notice, errors),
    body: html`<p>Scripts manage agents and websites through the management API, sending a key as <code>Authorization: Bearer aak_…</code>. A key acts as its account, never as more; every call is recorded in the activity. The API is described by its <a href="${OPENAPI_PATH}">OpenAPI document</a>.</p>
<section aria-labelledby="keys-heading">
<h2 id="keys-heading">${admin ? 'Every API key' : 'Your API keys'}</h2>
${
  input.keys.length === 0
    ? html`<p id="no-keys">${admin ? 'Nobody has an API key yet.' : 'You have no API keys yet.'} Create one below.</p>`
    : keysTable(page, input)
}
</section>
<section aria-labelledby="create-heading">
<h2 id="create-heading">Create an API key</h2>
<p>The key is shown once, right after it is made; only a digest of it is kept.</p>
<form method="post" action="${API_KEYS_PATH}" class="stack">
${csrfField(csrf)}
${field({ label: 'Name', name: 'name', value: input.values?.name, required: true, maxlength: MAX_KEY_NAME_LENGTH, error: errors.name, hint: 'What uses it, such as "Deploy script".' })}
${field({
  label: 'Access',
  name: 'access',
  type: 'select',
  choices: [
    ['read', 'Read only'],
    ['write', 'Read and write'],
  ],
  value: input.values?.access ?? 'read',
  error: errors.access,
})}
${reachField(page, input)}
${field({
  label: 'Expires in',
  name: 'expires_in_days',
  type: 'select',
  choices: KEY_LIFETIME_CHOICES.map((days): [string, string] => [String(days), `${days} days`]),
  value: input.values?.expires_in_days ?? '90',
  error: errors.expires_in_days,
})}
<button type="submit">Create API key</button>
</form>
</section>`,
  });
}

/** The new key, shown this once, with how a script sends it. */
export function apiKeyCreatedPage(
  page: SignedInPage,
  input: { key: ApiKeyRecord; secret: string; issuer: string },
): string {
  const { key, secret, issuer } = input;
  const usage = `curl -H "Authorization: Bearer ${secret}" ${issuer}/api/admin/v1/agents`;
  return consolePage(page, {
    title: `API key ${key.name} is created`,
    section: 'account',
    notice: { kind: 'success', text: 'The API key is created. Copy it now: it is shown only once.' },
    body: html`${secretOnce('API key', 'api-key', secret, 'shown only now: copy it and store it safely; it will not be shown again')}
<dl>
<dt>Key ID</dt><dd>${copyable('api-key-id', key.id)}</dd>
<dt>Access</dt><dd>${ACCESS_WORDS[key.access]}</dd>
<dt>Reach</dt><dd>${REACH_WORDS[key.reach]}</dd>
<dt>Expires</dt><dd id="api-key-expires">${when(key.expires_at)}</dd>
</dl>
<section aria-labelledby="usage-heading">
<h2 id="usage-heading">Using it</h2>
<p>Send it in the <code>Authorization</code> header of every call, as a bearer token. For example, to list the agents:</p>
<pre class="snippet"><code id="api-key-usage">${usage}</code></pre>
<button type="button" class="secondary copy" data-copy="api-key-usage">Copy</button>
<p>Every operation is in the <a href="${OPENAPI_PATH}">OpenAPI document</a> and in the API reference (docs/reference/api.md).</p>
</section>
<p><a href="${apiKeyAnchor(key.id)}">Back to the API keys</a></p>`,
  });
}
