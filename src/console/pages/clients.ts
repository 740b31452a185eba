/**
 * The console's websites area (docs/design.md §11): the list with the registration form, the
 * page that shows a new client secret once, and a website's page with its actions and sign-ins.
 */
import { type Html, html } from '../../web/html.ts';
import type { AccountRecord } from '../../store/accounts.ts';
import type { ClientRecord } from '../../store/clients.ts';
import { dataTable } from './table.ts';
import {
  enableAction,
  type OwnedPageInput,
  ownedPage,
  rotatedSecretPage,
  type FormState,
  agentDetail,
  historyTable,
  pageNotice,
  rotateForm,
} from './owned.ts';
import { actionTypesText, type ClientKinds, KEYS_KIND, scopesText } from '../clients.ts';
import { tokenDeliveryMode } from '../../management/views.ts';
import { hasClientSecret } from '../../domain/clients.ts';
import { readKeySet } from '../../domain/client-keys/key-set.ts';
import {
  type ConsolePage,
  consolePage,
  csrfField,
  field,
  type PageContext,
  secretOnce,
  when,
  copyable,
} from './shell.ts';

type SignedInPage = PageContext & { account: AccountRecord };

export const clientPath = (id: string) => `/console/websites/${encodeURIComponent(id)}`;

const clientBadge = (client: ClientRecord) =>
  client.status === 'active'
    ? html`<span class="badge ok">active</span>`
    : html`<span class="badge off">disabled</span>`;

const APPROVALS: Array<[string, string]> = [
  ['auto', 'Automatic'],
  ['manual', 'Manual'],
];
const approvalText = (approval: string) => (approval === 'manual' ? 'Manual' : 'Automatic');
/** The kinds the registration form offers: a confidential website always, the others where the server lets them sign in. */
function clientTypes(kinds: ClientKinds): Array<[string, string]> {
  return [
    ['confidential', 'Website with a server (it keeps a secret)'],
    ...(kinds.privateKeyJwt
      ? [
          [KEYS_KIND, 'Website with a server that signs with keys instead of a secret (private_key_jwt)'] as [
            string,
            string,
          ],
        ]
      : []),
    ...(kinds.publicClients
      ? [['public', 'App without a server: desktop, mobile or MCP client (public, no secret)'] as [string, string]]
      : []),
  ];
}
const clientTypeText = (client: ClientRecord) =>
  client.token_endpoint_auth_method === 'none'
    ? 'Public (no secret; PKCE only)'
    : client.token_endpoint_auth_method === 'private_key_jwt'
      ? 'Signs with keys (private_key_jwt; no secret)'
      : 'Confidential (client secret)';

const KEYS_HINT =
  'Paste its public keys as a JWKS, {"keys": [...]}: RSA of at least 2048 bits (RS256, PS256), P-256 (ES256) or Ed25519 (EdDSA), public members only. Or leave this empty and give the key set URL below.';
const KEY_SET_URI_HINT =
  'Or the https URL where the server publishes its public keys (jwks_uri); this server fetches them from there, and again when an assertion names a key it has not seen.';

/** The key fields of a client that signs with keys: its key set pasted, or its jwks_uri. */
const keyFields = (values: FormState['values'], errors: Record<string, string>, labels: { jwks: string }) =>
  html`${field({ label: labels.jwks, name: 'jwks', type: 'textarea', value: values?.jwks, error: errors.jwks, hint: KEYS_HINT })}
${field({ label: 'Key set URL (jwks_uri)', name: 'jwks_uri', type: 'url', value: values?.jwks_uri, error: errors.jwks_uri, maxlength: 2048, hint: KEY_SET_URI_HINT })}`;

/** One registered key as shown: what names it, its type, the algorithms it verifies. */
interface ShownKey {
  kid: string | null;
  type: string;
  algorithms: string;
}

/** A client's registered keys as people read them (kid, kty and curve, algorithms); none for a jwks_uri. */
function shownKeys(client: ClientRecord): ShownKey[] {
  if (client.jwks === null) return [];
  const read = readKeySet(client.jwks);
  const usable = 'problem' in read ? [] : read.keys;
  const { keys } = JSON.parse(client.jwks) as { keys: Array<{ kid?: string; kty: string; crv?: string }> };
  return keys.map((key, index) => ({
    kid: key.kid ?? null,
    type: key.crv ? `${key.kty} ${key.crv}` : key.kty,
    algorithms: usable[index]?.algorithms.join(', ') ?? '',
  }));
}

/**
 * The keys of a client that signs with keys: its jwks_uri or each registered key, and the form that
 * replaces them (not for a client that registered itself or a metadata document describes).
 */
function keySection(
  csrf: string,
  client: ClientRecord,
  values: FormState['values'],
  errors: Record<string, string>,
): Html {
  const keys = shownKeys(client);
  const replaceable = client.source === 'manual';
  return html`<section aria-labelledby="keys-heading" id="client-keys">
<h2 id="keys-heading">Keys</h2>
<p>The website proves itself at the token endpoint with an assertion (RFC 7523) signed by one of these keys; it has no secret.</p>
${
  client.jwks_uri !== null
    ? html`<dl><dt>Key set URL (jwks_uri)</dt><dd id="client-jwks-uri"><code>${client.jwks_uri}</code></dd></dl>`
    : dataTable({
        caption: 'Its public keys',
        id: 'client-key-list',
        rows: keys,
        columns: [
          {
            heading: 'Key ID (kid)',
            kind: 'title',
            cell: (key) => (key.kid === null ? html`<span class="muted">none</span>` : html`<code>${key.kid}</code>`),
          },
          { heading: 'Type', kind: 'narrow', cell: (key) => key.type },
          { heading: 'Algorithms', cell: (key) => key.algorithms },
        ],
      })
}
${
  replaceable
    ? html`<details${errors.jwks || errors.jwks_uri ? html` open` : ''}>
<summary>Replace the keys</summary>
<form method="post" action="${clientPath(client.id)}/keys" class="stack" id="keys-form">
${csrfField(csrf)}
${keyFields(values, errors, { jwks: 'New public keys (JWKS)' })}
<p class="hint">The new keys replace every key above at once: assertions signed with the old ones are refused from then on. To change keys without a gap, publish both and remove the old one later.</p>
<button type="submit">Replace keys</button>
</form>
</details>`
    : html`<p class="hint" id="keys-elsewhere">${client.source === 'dynamic' ? 'It registered itself: it replaces its keys at its registration endpoint (RFC 7592).' : 'Its metadata document names its keys: they change when the document does.'}</p>`
}
</section>`;
}

const ACTION_TYPES_HINT =
  'The actions this website may ask an agent’s owner to approve, as JSON: an array of {"type": "payment", "description": "Pay {amount} {currency} to {payee}", "fields": {"amount": {"type": "number", "required": true}, …}}. Fields are string, number, integer or boolean; the description names every one of them in braces and is what the owner reads. Optional: "amount_field" and "currency_field", which an owner’s “up to” limit compares. Empty: none.';
const TOKEN_DELIVERIES: Array<[string, string]> = [
  ['', 'None'],
  ['poll', 'Poll: the website asks the token endpoint'],
  ['ping', 'Ping: the website is told at its notification endpoint'],
];
const TOKEN_DELIVERY_HINT =
  'How the website learns the owner’s answer (OpenID CIBA). A website with action types and none chosen polls.';
const NOTIFICATION_ENDPOINT_HINT =
  'For ping only: the https URL this server calls when the owner has answered. Loopback and private addresses are refused unless WEBHOOK_ALLOWED_ADDRESSES lists them.';

/** The action fields of a form (registration or edit): the types as JSON, the token delivery and the ping endpoint. */
const actionFields = (
  values: {
    action_types?: string;
    backchannel_token_delivery_mode?: string;
    backchannel_client_notification_endpoint?: string;
  },
  errors: Record<string, string>,
) =>
  html`${field({ label: 'Action types (JSON)', name: 'action_types', type: 'textarea', value: values.action_types, error: errors.action_types, hint: ACTION_TYPES_HINT })}
${field({ label: 'Token delivery', name: 'backchannel_token_delivery_mode', type: 'select', choices: TOKEN_DELIVERIES, value: values.backchannel_token_delivery_mode ?? '', error: errors.backchannel_token_delivery_mode, hint: TOKEN_DELIVERY_HINT })}
${field({ label: 'Notification endpoint', name: 'backchannel_client_notification_endpoint', type: 'url', value: values.backchannel_client_notification_endpoint, error: errors.backchannel_client_notification_endpoint, maxlength: 2000, hint: NOTIFICATION_ENDPOINT_HINT })}`;

/** Whether a form shows a website's action fields: while ACTION_APPROVALS is on, or to show a refusal of them. */
const actionFieldsShown = (on: boolean | undefined, errors: Record<string, string>) =>
  Boolean(
    on ||
      errors.action_types ||
      errors.backchannel_token_delivery_mode ||
      errors.backchannel_client_notification_endpoint,
  );

/** A field's type in words: "number, required". */
const fieldKind = (declared: { type: string; required?: boolean }) =>
  declared.required ? `${declared.type}, required` : `${declared.type}, optional`;

/**
 * A website's action types as people read them: each type's name, how it reads (its fields in
 * braces marked as such), and its fields; its token delivery. Plain text, escaped by html``.
 */
function actionRows(client: ClientRecord): Html | '' {
  const mode = tokenDeliveryMode(client);
  if (client.action_types.length === 0 && mode === null) return '';
  return html`<dt>Action types</dt><dd id="client-action-types">${
    client.action_types.length === 0
      ? html`<span class="muted">none registered</span>`
      : html`<ul class="uris">${client.action_types.map(
          (
            type,
          ) => html`<li class="action-type"><code>${type.type}</code>: <q class="action-words">${readsAs(type.description)}</q>
<span class="hint">${Object.entries(type.fields)
            .map(([name, declared]) => `${name} (${fieldKind(declared)})`)
            .join(
              '; ',
            )}${type.amount_field ? `; amount: ${type.amount_field}${type.currency_field ? ` in ${type.currency_field}` : ''}` : ''}</span></li>`,
        )}</ul>`
  }</dd>
<dt>Token delivery</dt><dd id="client-token-delivery">${
    mode === 'ping'
      ? html`Ping to <code>${client.backchannel_client_notification_endpoint}</code>`
      : mode === 'poll'
        ? 'Poll'
        : html`<span class="muted">none</span>`
  }</dd>`;
}

/** A description template as it reads, each {field} shown as the field's name marked as a blank. */
function readsAs(template: string): Html {
  const parts = template.split(/(\{[a-z][a-z0-9_]*\})/);
  return html`${parts.map((part, index) => (index % 2 === 1 ? html`<var>${part.slice(1, -1)}</var>` : html`${part}`))}`;
}

const uriList = (uris: string[]) =>
  uris.length === 0
    ? html`<span class="muted">none</span>`
    : html`<ul class="uris">${uris.map((uri) => html`<li><code>${uri}</code></li>`)}</ul>`;

/** A resource server's resources and the scopes it serves there, in the words people read on the sign-in page. */
const resourceRows = (client: ClientRecord) =>
  client.resources.length === 0
    ? ''
    : html`<dt>Resources</dt><dd id="client-resources">${uriList(client.resources)}</dd>
<dt>Scopes</dt><dd id="client-scopes">${
        client.scopes.length === 0
          ? html`<span class="muted">none registered</span>`
          : html`<ul class="uris">${client.scopes.map((scope) => html`<li><code>${scope.name}</code> ${scope.description}</li>`)}</ul>`
      }</dd>`;

export function clientsPage(
  page: SignedInPage,
  input: { websites: ClientRecord[]; kinds: ClientKinds; notice?: ConsolePage['notice'] } & FormState,
): string {
  const { csrf } = page;
  const errors = input.errors ?? {};
  return consolePage(page, {
    title: 'Websites',
    section: 'websites',
    notice: pageNotice(input.notice, errors),
    body: html`<section aria-labelledby="websites-heading">
<h2 id="websites-heading">Your websites</h2>
${
  input.websites.length === 0
    ? html`<p id="no-websites">You have no websites yet. Register one below to let agents sign in to it.</p>`
    : dataTable({
        caption: 'Your websites',
        rows: input.websites,
        columns: [
          {
            heading: 'Name',
            kind: 'title',
            cell: (client) => html`<a href="${clientPath(client.id)}">${client.name}</a>`,
          },
          { heading: 'Client ID', kind: 'long', cell: (client) => html`<code>${client.id}</code>` },
          { heading: 'Status', kind: 'narrow', cell: clientBadge },
          { heading: 'Approval', kind: 'narrow', cell: (client) => approvalText(client.approval) },
          { heading: 'Redirect URIs', kind: 'long', cell: (client) => uriList(client.redirect_uris) },
        ],
      })
}
</section>
<section aria-labelledby="register-heading">
<h2 id="register-heading">Register a website</h2>
<p>A website gets a client ID and a secret, to send agents to this server to sign in (OpenID Connect, authorization code with PKCE).</p>
<form method="post" action="/console/websites" class="stack">
${csrfField(csrf)}
${field({ label: 'Name', name: 'name', value: input.values?.name, required: true, maxlength: 200, error: errors.name, hint: 'People see it on the sign-in page.' })}
${field({ label: 'Redirect URIs', name: 'redirect_uris', type: 'textarea', value: input.values?.redirect_uris, required: true, error: errors.redirect_uris, hint: 'One per line, exactly as your website sends them: https, or http for localhost, 127.0.0.1 and [::1] only; no fragment (#).' })}
${field({ label: 'Approval', name: 'approval', type: 'select', choices: APPROVALS, value: input.values?.approval ?? 'auto', error: errors.approval, hint: 'Automatic: the sign-in completes as soon as the agent has authenticated. Manual: the person in the browser first sees which agent authenticated, and for whom, and clicks Approve.' })}
${
  input.kinds.publicClients || input.kinds.privateKeyJwt || errors.client_type
    ? field({
        label: 'Kind',
        name: 'client_type',
        type: 'select',
        choices: clientTypes(input.kinds),
        value: input.values?.client_type ?? 'confidential',
        error: errors.client_type,
        hint: [
          input.kinds.privateKeyJwt
            ? 'A server that signs with keys proves itself with an assertion signed by its private key (private_key_jwt) instead of a secret: give its public keys below.'
            : '',
          input.kinds.publicClients
            ? 'An app that runs on people’s devices cannot keep a secret: register it as public. It signs in with PKCE alone, gets no ID token, and its loopback redirect URIs match on any port.'
            : '',
        ]
          .filter(Boolean)
          .join(' '),
      })
    : ''
}
${
  input.kinds.privateKeyJwt || errors.jwks || errors.jwks_uri
    ? html`<fieldset class="stack" id="register-keys">
<legend>Keys (only for a server that signs with keys)</legend>
${keyFields(input.values, errors, { jwks: 'Public keys (JWKS)' })}
</fieldset>`
    : ''
}
${
  actionFieldsShown(input.kinds.actionApprovals, errors)
    ? html`<fieldset class="stack" id="register-actions">
<legend>Actions an owner approves (optional)</legend>
${actionFields(input.values ?? {}, errors)}
</fieldset>`
    : ''
}
<button type="submit">Register website</button>
</form>
</section>`,
  });
}

function endpoints(issuer: string): Html {
  const discovery = `${issuer}/.well-known/openid-configuration`;
  return html`<dt>Issuer</dt><dd>${copyable('issuer', issuer)}</dd>
<dt>Discovery</dt><dd>${copyable('discovery-url', discovery)}</dd>`;
}

/** The new website's credentials, the secret shown this once. */
export function clientCreatedPage(
  page: SignedInPage,
  input: { client: ClientRecord; secret: string | null; issuer: string },
): string {
  const { client, secret } = input;
  return consolePage(page, {
    title: `Website ${client.name} is registered`,
    section: 'websites',
    notice: {
      kind: 'success',
      text:
        secret !== null
          ? 'The website is registered. Copy its secret now: it is shown only once.'
          : client.token_endpoint_auth_method === 'private_key_jwt'
            ? 'The website is registered. It signs with its keys: there is no secret to copy.'
            : 'The app is registered as a public client.',
    },
    body: html`<dl>
<dt>Client ID</dt><dd>${copyable('client-id', client.id)}</dd>
${endpoints(input.issuer)}
<dt>Redirect URIs</dt><dd>${uriList(client.redirect_uris)}</dd>
<dt>Approval</dt><dd>${approvalText(client.approval)}</dd>
<dt>Kind</dt><dd id="client-type">${clientTypeText(client)}</dd>
</dl>
${
  client.token_endpoint_auth_method === 'private_key_jwt'
    ? html`<p id="keys-client-note">Your website authenticates at the token endpoint with an assertion signed by one of its keys (<code>private_key_jwt</code>, RFC 7523): a JWT whose <code>iss</code> and <code>sub</code> are its client ID and whose <code>aud</code> is the issuer or the token endpoint, sent as <code>client_assertion</code>.</p>`
    : secret === null
      ? html`<p id="public-client-note">A public client has no secret: it sends its client ID and the PKCE code verifier to the token endpoint (token_endpoint_auth_method none).</p>`
      : html`${secretOnce('Client secret', 'client-secret', secret)}
<p>Your website authenticates at the token endpoint with the client ID and this secret, by HTTP Basic or in the form body (<code>client_secret_basic</code> or <code>client_secret_post</code>): most OpenID Connect libraries do either by default.</p>`
}
<p><a href="${clientPath(client.id)}">Go to the website's page</a></p>`,
  });
}

/** A new client secret after a rotation, shown once. */
export function clientSecretPage(
  page: SignedInPage,
  input: { client: ClientRecord; secret: string; until: number | null },
): string {
  return rotatedSecretPage(page, {
    name: input.client.name,
    section: 'websites',
    secret: { label: 'New client secret', id: 'client-secret', value: input.secret },
    until: input.until,
    back: { href: clientPath(input.client.id), label: "Back to the website's page" },
  });
}

export interface ClientPageInput extends OwnedPageInput {
  client: ClientRecord;
  issuer: string;
  /** Whether public clients may sign in here (a test sign-in of a public one needs it). */
  publicClients?: boolean;
  /** ACTION_APPROVALS: the edit form has the website's actions. */
  actionApprovals?: boolean;
}

/** The edit form: the registration's fields with the website's values, or the values just refused. */
function editForm(
  csrf: string,
  client: ClientRecord,
  values: FormState['values'],
  errors: Record<string, string>,
  actionApprovals: boolean | undefined,
): Html {
  const editing = values?.name !== undefined || values?.redirect_uris !== undefined;
  const value = (
    name:
      | 'name'
      | 'redirect_uris'
      | 'approval'
      | 'scopes'
      | 'action_types'
      | 'backchannel_token_delivery_mode'
      | 'backchannel_client_notification_endpoint',
    current: string,
  ) => (editing ? values?.[name] : current);
  // A website that registered actions keeps its fields even with the setting off, to remove them.
  const actionsShown = actionFieldsShown(actionApprovals, errors) || tokenDeliveryMode(client) !== null;
  return html`<section aria-labelledby="edit-heading">
<h2 id="edit-heading">Edit</h2>
<form method="post" action="${clientPath(client.id)}/edit" class="stack" id="edit-form">
${csrfField(csrf)}
${field({ label: 'Name', name: 'name', value: value('name', client.name), required: true, maxlength: 200, error: errors.name, hint: 'People see it on the sign-in page.' })}
${field({ label: 'Redirect URIs', name: 'redirect_uris', type: 'textarea', value: value('redirect_uris', client.redirect_uris.join('\n')), required: client.resources.length === 0, error: errors.redirect_uris, hint: 'One per line, exactly as your website sends them. A sign-in in progress to a URI you remove cannot complete.' })}
${field({ label: 'Approval', name: 'approval', type: 'select', choices: APPROVALS, value: value('approval', client.approval) ?? client.approval, error: errors.approval, hint: 'Manual: the person in the browser clicks Approve after the agent has authenticated.' })}
${client.resources.length > 0 ? field({ label: 'Scopes', name: 'scopes', type: 'textarea', value: value('scopes', scopesText(client.scopes)), error: errors.scopes, hint: 'The scopes this resource server serves, one per line: the scope, a space, and what it allows in words people read on the sign-in page (notes:read Read your notes). A website asks for them with this resource.' }) : ''}
${
  actionsShown
    ? actionFields(
        {
          action_types: value('action_types', actionTypesText(client.action_types)),
          backchannel_token_delivery_mode: value(
            'backchannel_token_delivery_mode',
            client.backchannel_token_delivery_mode ?? '',
          ),
          backchannel_client_notification_endpoint: value(
            'backchannel_client_notification_endpoint',
            client.backchannel_client_notification_endpoint ?? '',
          ),
        },
        errors,
      )
    : ''
}
<button type="submit">Save changes</button>
</form>
</section>`;
}

/**
 * Test sign-in (docs/design.md §11): a real authorization request for this website, started by
 * the console; the person hands it to their agent on the authorization page.
 */
function testSignIn(csrf: string, client: ClientRecord, error: string | undefined, publicClients: boolean): Html {
  const usable =
    client.status === 'active' &&
    client.redirect_uris.length > 0 &&
    (client.token_endpoint_auth_method !== 'none' || publicClients);
  return html`<section aria-labelledby="test-heading">
<h2 id="test-heading">Test sign-in</h2>
<p>Runs a real sign-in to this website: your browser opens the authorization page, you give the request to your agent, and when it has signed in your browser goes to the redirect URI with a code. The code cannot be redeemed (the console keeps no PKCE verifier), so your website will refuse it; the sign-in appears in the history below.</p>
${
  usable
    ? html`<form method="post" action="${clientPath(client.id)}/test-sign-in" class="stack" id="test-sign-in">
${csrfField(csrf)}
${client.redirect_uris.length > 1 ? field({ label: 'Redirect URI', name: 'redirect_uri', type: 'select', choices: client.redirect_uris.map((uri) => [uri, uri]), value: client.redirect_uris[0], error }) : error ? html`<p class="field-error" role="alert">${error}</p>` : ''}
<button type="submit">Test sign-in</button>
</form>`
    : html`${error ? html`<p class="field-error" role="alert">${error}</p>` : ''}<p class="hint" id="test-unavailable">${client.status !== 'active' ? 'Enable the website to test a sign-in.' : client.redirect_uris.length === 0 ? 'Add a redirect URI to test a sign-in.' : 'This server does not let public clients sign in.'}</p>`
}
</section>`;
}

/** Deleting the website, with what it ends (console-b moves it into the danger zone). */
/** What deleting a website ends, said beside the button and in its confirmation. */
const DELETE_CONSEQUENCES =
  'Its client ID and secret stop working at once; every grant it holds is revoked, so its access and refresh tokens stop working; its unredeemed codes expire and its sign-ins in progress end. This cannot be undone.';

export function clientPage(page: SignedInPage, input: ClientPageInput): string {
  const { csrf } = page;
  const { client } = input;
  const errors = input.errors ?? {};
  const base = clientPath(client.id);
  // A website without the keys form (a secret, a public app, keys it replaces elsewhere) hears
  // a refused replacement in the notice: there is no field to show it beside.
  const keysFormShown = client.token_endpoint_auth_method === 'private_key_jwt' && client.source === 'manual';
  const keysRefusal = keysFormShown ? undefined : (errors.jwks ?? errors.jwks_uri);
  return ownedPage(page, {
    title: client.name,
    section: 'websites',
    notice: input.notice ?? (keysRefusal ? { kind: 'error', text: keysRefusal } : undefined),
    errors,
    details: html`<dt>Client ID</dt><dd>${copyable('client-id', client.id)}</dd>
<dt>Status</dt><dd id="website-status">${clientBadge(client)}</dd>
<dt>Approval</dt><dd>${approvalText(client.approval)}</dd>
<dt>Kind</dt><dd id="client-type">${clientTypeText(client)}</dd>
<dt>Redirect URIs</dt><dd>${uriList(client.redirect_uris)}</dd>
${resourceRows(client)}
${actionRows(client)}
<dt>Registered</dt><dd>${when(client.created_at)}</dd>
${endpoints(input.issuer)}`,
    previousSecret: { expiresAt: client.previous_secret_expires_at, now: input.now },
    manage: html`${
      !hasClientSecret(client)
        ? ''
        : html`<h3>Secret</h3>
${rotateForm(csrf, `${base}/rotate`, errors.grace, 'this website')}`
    }
${client.status === 'active' ? '' : enableAction(csrf, base, 'website')}`,
    danger: [
      ...(client.status === 'active'
        ? [
            {
              action: `${base}/disable`,
              label: 'Disable website',
              consequence:
                'Disable: the website cannot start sign-ins, and every token it holds stops working until you enable it again.',
              confirm:
                'Disable this website? It cannot start sign-ins, and its tokens stop working until you enable it.',
            },
          ]
        : []),
      {
        action: `${base}/revoke-grants`,
        label: 'Revoke all grants',
        consequence:
          'Revoke all grants: every token the website holds stops working for good; agents must sign in to it again.',
        confirm: 'Revoke every grant of this website? Every token it holds stops working for good.',
      },
      {
        action: `${base}/delete`,
        label: 'Delete website',
        consequence: `Delete: the website is gone for good. ${DELETE_CONSEQUENCES}`,
        confirm: `Delete the website ${client.name}? ${DELETE_CONSEQUENCES}`,
      },
    ],
    after: html`${client.token_endpoint_auth_method === 'private_key_jwt' ? keySection(csrf, client, input.values, errors) : ''}
${testSignIn(csrf, client, errors.redirect_uri, input.publicClients ?? false)}
${client.source === 'metadata_document' ? '' : editForm(csrf, client, input.values, errors, input.actionApprovals)}
${historyTable(
  input.history,
  {
    param: 'agent',
    heading: 'Agent',
    any: 'Any agent',
    // Another owner's agent is named only by the sub of a sign-in (agentDetail: "not shown" otherwise).
    cell: (row) =>
      row.agent_id === null
        ? agentDetail(row, html`<span class="muted">none</span>`)
        : html`<code>${row.agent_id}</code>`,
  },
  base,
  'No agent has signed in to this website yet.',
)}`,
  });
}
