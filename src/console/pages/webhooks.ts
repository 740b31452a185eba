/**
 * The admin's webhooks (docs/design.md §11, §15): every endpoint with its status, the form that
 * registers one, the page that shows a new signing secret once, and an endpoint's page: its
 * settings, its signing secret's rotation, enable or disable, delete, "Send test event", and its
 * delivery log with each attempt's answer, the request it was sent as, and "Send again".
 */
import { type Html, html } from '../../web/html.ts';
import { eventTypeList } from '../../domain/webhooks/event-types.ts';
import {
  type DeliveryWithAttempts,
  MAX_WEBHOOK_DESCRIPTION_LENGTH,
  MAX_WEBHOOK_URL_LENGTH,
} from '../../domain/webhooks/endpoints.ts';
import { ALL_EVENTS_FIELD, eventField } from '../webhooks.ts';
import type { AccountRecord } from '../../store/accounts.ts';
import type { DeliveryRecord, WebhookWithEvents } from '../../store/webhooks.ts';
import { adminNavigation } from './admin.ts';
import { dangerZone, type FormState, pageNotice } from './owned.ts';
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

type AdminPage = PageContext & { account: AccountRecord };

export const WEBHOOKS_PATH = '/console/admin/webhooks';
export const webhookPath = (id: string) => `${WEBHOOKS_PATH}/${encodeURIComponent(id)}`;
/** Where a new or rotated signing secret is shown, once. */
export const webhookSecretPath = (id: string) => `${webhookPath(id)}/secret`;

const statusBadge = (webhook: WebhookWithEvents['webhook']) =>
  webhook.status === 'disabled'
    ? html`<span class="badge off">disabled</span>`
    : webhook.paused_until !== null
      ? html`<span class="badge wait">paused</span>`
      : html`<span class="badge ok">enabled</span>`;

/**
 * What the breaker says of an enabled endpoint (docs/design.md §15): paused until when and why,
 * or trying one delivery now; nothing while it is sent to normally.
 */
function pauseText(webhook: WebhookWithEvents['webhook']): Html | '' {
  if (webhook.status !== 'enabled' || webhook.paused_until === null) return '';
  const until = webhook.paused_until;
  return until > Date.now()
    ? html`Paused until ${whenMs(until)}: ${webhook.paused_reason ?? 'its attempts got no answer'}. Its deliveries wait; none is lost.`
    : html`Trying one delivery after a pause; once the receiver answers, the rest follow.`;
}

/** The subscribed events in words: "All events", or the list. */
function eventsText(events: string[]): Html {
  if (events.includes('*')) return html`All events`;
  // The comma stays with the name before it, so a wrapped list never starts a line with one.
  return html`${events.map((type, i) => html`<code>${type}</code>${i < events.length - 1 ? ', ' : ''}`)}`;
}

/** The event checkboxes: all, or any of the catalogue, ticked as `checked` says. */
function eventsFieldset(checked: (type: string) => boolean, all: boolean, error: string | undefined): Html {
  const id = 'field-events';
  return html`<fieldset class="field" id="${id}"${error ? html` aria-describedby="${id}-error" aria-invalid="true"` : ''}>
<legend>Events</legend>
<p class="hint">What the endpoint is sent. “All events” includes those added in later versions.</p>
${error ? html`<p class="field-error" id="${id}-error">${error}</p>` : ''}
<label class="check"><input type="checkbox" name="${ALL_EVENTS_FIELD}" value="on"${all ? html` checked` : ''}> <strong>All events</strong></label>
<ul class="checks">
${eventTypeList().map(
  ({ type, description }) =>
    html`<li><label class="check"><input type="checkbox" name="${eventField(type)}" value="on"${checked(type) ? html` checked` : ''}> <span class="check-text"><code>${type}</code> <span class="muted">${description}</span></span></label></li>`,
)}
</ul>
</fieldset>`;
}

/** The settings form, to register an endpoint (no `current`) or change one. */
function settingsForm(page: AdminPage, action: string, state: FormState, current?: WebhookWithEvents): Html {
  const values = state.values;
  const errors = state.errors ?? {};
  const typed = values !== undefined;
  const all = typed ? values[ALL_EVENTS_FIELD] === 'on' : (current?.events.includes('*') ?? false);
  const checked = (type: string) =>
    typed ? values[eventField(type)] === 'on' : (current?.events.includes(type) ?? false);
  return html`<form method="post" action="${action}" class="stack">
${csrfField(page.csrf)}
${field({ label: 'URL', name: 'url', type: 'url', value: values?.url ?? current?.webhook.url, required: true, maxlength: MAX_WEBHOOK_URL_LENGTH, error: errors.url, hint: 'An https address that accepts POST requests, such as https://hooks.example.com/agentauth.' })}
${field({ label: 'Description', name: 'description', value: values?.description ?? current?.webhook.description, maxlength: MAX_WEBHOOK_DESCRIPTION_LENGTH, error: errors.description, hint: 'Optional: what receives it, for whoever reads this list later.' })}
${eventsFieldset(checked, all, errors.events)}
<button type="submit">${current ? 'Save webhook' : 'Add webhook'}</button>
</form>`;
}

export interface WebhooksPageInput extends FormState {
  webhooks: WebhookWithEvents[];
  notice?: ConsolePage['notice'];
}

export function webhooksPage(page: AdminPage, input: WebhooksPageInput): string {
  return consolePage(page, {
    title: 'Webhooks',
    section: 'admin',
    notice: pageNotice(input.notice, input.errors),
    body: html`${adminNavigation('webhooks')}
<p>agentauth tells your systems what happens — sign-ins, agents and websites created or disabled, secrets rotated — by POSTing each event to the endpoints below, signed as the <a href="https://www.standardwebhooks.com/">Standard Webhooks</a> specification says. An event that cannot be delivered is tried again for about a day.</p>
<section aria-labelledby="webhooks-heading">
<h2 id="webhooks-heading">Endpoints</h2>
${
  input.webhooks.length === 0
    ? html`<p id="no-webhooks">No webhook is registered yet. Add one below.</p>`
    : dataTable({
        caption: 'Every webhook endpoint',
        id: 'webhooks',
        rows: input.webhooks,
        rowAttributes: ({ webhook }) => html` id="webhook-${webhook.id}"`,
        columns: [
          {
            heading: 'Endpoint',
            kind: 'title',
            cell: ({ webhook }) =>
              html`<a href="${webhookPath(webhook.id)}">${webhook.url}</a>${webhook.description ? html`<br><span class="muted">${webhook.description}</span>` : ''}`,
          },
          { heading: 'Events', kind: 'long', cell: ({ events }) => eventsText(events) },
          {
            heading: 'Status',
            cell: ({ webhook }) =>
              html`${statusBadge(webhook)}${webhook.disabled_reason ? html`<br><span class="muted">${webhook.disabled_reason}</span>` : ''}${webhook.paused_until !== null && webhook.status === 'enabled' ? html`<br><span class="muted">${pauseText(webhook)}</span>` : ''}`,
          },
          { heading: 'Created', cell: ({ webhook }) => when(webhook.created_at) },
        ],
      })
}
</section>
<section aria-labelledby="add-heading">
<h2 id="add-heading">Add a webhook</h2>
<p>Its signing secret is shown once, right after it is added.</p>
${settingsForm(page, WEBHOOKS_PATH, input)}
</section>`,
  });
}

/** A new or rotated signing secret, shown this once, with how a receiver verifies it. */
export function webhookSecretPage(
  page: AdminPage,
  input: { webhook: WebhookWithEvents; secret: string; rotated: boolean },
): string {
  const { webhook, secret } = input;
  const verify = `import { Webhook } from 'standardwebhooks';
const event = new Webhook(process.env.WEBHOOK_SECRET).verify(rawBody, request.headers);`;
  return consolePage(page, {
    title: input.rotated ? 'The webhook has a new signing secret' : 'The webhook is added',
    section: 'admin',
    notice: {
      kind: 'success',
      text: `${input.rotated ? 'A new signing secret is made; deliveries are signed with it from now on.' : 'The webhook is added.'} Copy the secret now: it is shown only once.`,
    },
    body: html`${adminNavigation('webhooks')}
${secretOnce('Signing secret', 'webhook-secret', secret, 'shown only now: give it to the receiver to verify signatures; it will not be shown again')}
<dl class="webhook">
<dt>Webhook ID</dt><dd>${copyable('webhook-id', webhook.webhook.id)}</dd>
<dt>URL</dt><dd>${webhook.webhook.url}</dd>
<dt>Events</dt><dd>${eventsText(webhook.events)}</dd>
</dl>
<section aria-labelledby="verify-heading">
<h2 id="verify-heading">Verifying a delivery</h2>
<p>Each request carries <code>webhook-id</code>, <code>webhook-timestamp</code> and <code>webhook-signature</code>. Any Standard Webhooks library checks them with this secret; in Node.js:</p>
<pre class="snippet"><code id="webhook-verify">${verify}</code></pre>
<p>The events and their fields are in docs/reference/webhooks.md.</p>
</section>
<p><a href="${webhookPath(webhook.webhook.id)}">Go to the webhook</a></p>`,
  });
}

const DELIVERY_BADGES: Record<DeliveryRecord['status'], Html> = {
  delivered: html`<span class="badge ok">delivered</span>`,
  pending: html`<span class="badge">waiting</span>`,
  delivering: html`<span class="badge">sending</span>`,
  failed: html`<span class="badge off">failed</span>`,
};

/** An epoch-milliseconds time (the deliveries' clock) as `when` shows seconds. */
const whenMs = (ms: number | null) => when(ms === null ? null : Math.floor(Number(ms) / 1000));

/** The last answer of a delivery: the receiver's status code, or what went wrong, in words. */
function lastAnswer({ delivery, attempts }: DeliveryWithAttempts): Html {
  const last = attempts.at(-1);
  if (!last) return html`<span class="muted">not tried yet</span>`;
  const outcome =
    last.status_code !== null
      ? html`<span class="outcome ${last.status_code < 300 ? 'success' : 'failure'}">HTTP ${last.status_code}</span>`
      : html`<span class="outcome failure">${last.error ?? 'no answer'}</span>`;
  const next =
    delivery.status === 'pending' && attempts.length > 0
      ? html`<br><span class="muted">next try ${whenMs(delivery.next_attempt_at)}</span>`
      : '';
  return html`${outcome} <span class="muted">in ${last.duration_ms} ms</span>${next}`;
}

/**
 * The signed request of the delivery's latest attempt, as sent: its headers and its body (the
 * signature is an HMAC of this body; the secret is never shown), folded away until asked for.
 */
function requestSent({ delivery, attempts }: DeliveryWithAttempts): Html {
  const last = [...attempts].reverse().find((attempt) => attempt.request_headers !== null);
  const headers = last
    ? Object.entries(JSON.parse(last.request_headers!) as Record<string, string>)
        .map(([name, value]) => `${name}: ${value}`)
        .join('\n')
    : null;
  const summary = last ? `Request sent (attempt ${last.attempt})` : 'Payload';
  return html`<details class="raw delivery-request" id="request-${delivery.message_id}"><summary>${summary}</summary>
<pre class="snippet"><code>${headers === null ? '' : `${headers}\n\n`}${delivery.payload}</code></pre>
</details>`;
}

export interface WebhookPageInput extends FormState {
  webhook: WebhookWithEvents;
  deliveries: DeliveryWithAttempts[];
  /** The cursor of the next (older) page of the delivery log, or null. */
  next: string | null;
  /** Whether this is a later page of the log (it then links back to the newest). */
  paged: boolean;
  notice?: ConsolePage['notice'];
}

function deliveryLog(page: AdminPage, input: WebhookPageInput): Html {
  const base = webhookPath(input.webhook.webhook.id);
  const paused = pauseText(input.webhook.webhook);
  const table =
    input.deliveries.length === 0
      ? html`<p id="no-deliveries">Nothing has been sent to this endpoint yet.</p>`
      : dataTable({
          caption: 'Deliveries, newest first',
          id: 'deliveries',
          rows: input.deliveries,
          rowAttributes: ({ delivery }) => html` id="delivery-${delivery.message_id}"`,
          columns: [
            {
              heading: 'Event',
              kind: 'title',
              cell: (row) =>
                html`<code>${row.delivery.event_type}</code><br><code class="muted">${row.delivery.message_id}</code>${requestSent(row)}`,
            },
            { heading: 'Created', cell: ({ delivery }) => whenMs(delivery.created_at) },
            { heading: 'Status', kind: 'narrow', cell: ({ delivery }) => DELIVERY_BADGES[delivery.status] },
            { heading: 'Attempts', kind: 'narrow', cell: ({ delivery }) => String(delivery.attempts) },
            { heading: 'Last answer', kind: 'long', cell: lastAnswer },
            {
              heading: 'Actions',
              kind: 'actions',
              cell: ({ delivery }) =>
                delivery.status === 'delivering'
                  ? ''
                  : actionButton(
                      page.csrf,
                      `${base}/deliveries/${encodeURIComponent(delivery.message_id)}/send-again`,
                      'Send again',
                    ),
            },
          ],
        });
  const pages =
    input.next || input.paged
      ? html`<p class="pager">${input.paged ? html`<a href="${base}#deliveries-heading">Newest</a>` : ''}${input.next ? html` <a href="${base}?before=${encodeURIComponent(input.next)}#deliveries-heading">Older deliveries</a>` : ''}</p>`
      : '';
  return html`<section aria-labelledby="deliveries-heading">
<h2 id="deliveries-heading">Delivery log</h2>
<p>Each event sent to this endpoint, with the receiver's last answer or what went wrong, and the request it was sent as. “Send again” sends the same message, with the same <code>webhook-id</code>, now.</p>
${paused ? html`<p id="delivery-pause" class="warning">${paused}</p>` : ''}
${
  input.webhook.webhook.status === 'enabled'
    ? html`<div class="test-event" id="test-event">${actionButton(page.csrf, `${base}/test`, 'Send test event')} <span class="muted">A signed <code>webhook.test</code> event, sent now to this endpoint only; its outcome appears below.</span></div>`
    : ''
}
${table}
${pages}
</section>`;
}

export function webhookPage(page: AdminPage, input: WebhookPageInput): string {
  const { webhook } = input.webhook;
  const base = webhookPath(webhook.id);
  const disabled = webhook.status === 'disabled';
  return consolePage(page, {
    title: `Webhook ${webhook.description || new URL(webhook.url).host}`,
    section: 'admin',
    notice: pageNotice(input.notice, input.errors),
    body: html`${adminNavigation('webhooks')}
<p><a href="${WEBHOOKS_PATH}">All webhooks</a></p>
<dl class="webhook">
<dt>Webhook ID</dt><dd><code id="webhook-id">${webhook.id}</code></dd>
<dt>URL</dt><dd>${webhook.url}</dd>
<dt>Events</dt><dd>${eventsText(input.webhook.events)}</dd>
<dt>Status</dt><dd id="webhook-status">${statusBadge(webhook)}${webhook.disabled_reason ? html` ${webhook.disabled_reason}` : ''}${webhook.paused_until !== null && webhook.status === 'enabled' ? html` ${pauseText(webhook)}` : ''}</dd>
<dt>Created</dt><dd>${when(webhook.created_at)}</dd>
</dl>
${
  disabled
    ? html`<p>Nothing is sent while it is disabled; deliveries wait and go out once it is enabled again.</p>
${actionButton(page.csrf, `${base}/enable`, 'Enable webhook')}`
    : webhook.paused_until !== null
      ? actionButton(page.csrf, `${base}/enable`, 'Resume now')
      : ''
}
${deliveryLog(page, input)}
<section aria-labelledby="settings-heading">
<h2 id="settings-heading">Settings</h2>
${settingsForm(page, base, input, input.webhook)}
</section>
<section aria-labelledby="secret-heading">
<h2 id="secret-heading">Signing secret</h2>
<p>A new secret signs every delivery from the moment it is made: give it to the receiver at once.</p>
${actionButton(page.csrf, `${base}/rotate-secret`, 'Rotate signing secret', { confirm: 'Make a new signing secret? Deliveries are signed with it at once, and the receiver must be given it.' })}
</section>
${dangerZone(page.csrf, [
  ...(disabled
    ? []
    : [
        {
          action: `${base}/disable`,
          label: 'Disable webhook',
          consequence:
            'Disabling stops sending to this endpoint; its events wait and are sent once it is enabled again.',
          confirm: `Disable the webhook to ${webhook.url}?`,
        },
      ]),
  {
    action: `${base}/delete`,
    label: 'Delete webhook',
    consequence:
      'Deleting removes the endpoint with its delivery log; events not yet delivered are never sent. This cannot be undone.',
    confirm: `Delete the webhook to ${webhook.url}? This cannot be undone.`,
  },
])}`,
  });
}
