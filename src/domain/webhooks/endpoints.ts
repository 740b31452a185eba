/**
 * Webhook endpoints and their rules (docs/design.md §15): only admins make, see and change them
 * (the console's admins, and API keys of an admin that reach all accounts); anyone else is
 * answered as if there were none. The console, the API and the CLI all call these functions.
 */
import { lookup } from 'node:dns/promises';
import { BlockList, isIP, isIPv4 } from 'node:net';
import type { Context } from '../../context.ts';
import { newWebhookId, newWebhookSecret } from '../../crypto.ts';
import { AccessDenied, Conflict, InvalidField, NotFound, PreconditionFailed } from '../../errors.ts';
import type { AccountRecord } from '../../store/accounts.ts';
import type {
  AttemptRecord,
  DeliveryRecord,
  WebhookPatch,
  WebhookRecord,
  WebhookStatus,
  WebhookWithEvents,
} from '../../store/webhooks.ts';
import { isSpecialUseAddress, trustedAddresses, trustedNetworks } from '../../outbound/special-use.ts';
import { UNDISPLAYABLE_IN_NAME } from '../rules/client.ts';
import { specialUseWords } from './delivery-failures.ts';
import { ALL_EVENTS, isEventType } from './event-types.ts';
import { webhookTest } from './events.ts';

type Deps = Pick<Context, 'store' | 'clock' | 'secrets' | 'config' | 'webhooks'>;

/** How long saving an endpoint waits for its host name to resolve. */
const SAVE_LOOKUP_MS = 2000;

export const MAX_WEBHOOK_URL_LENGTH = 2048;
export const MAX_WEBHOOK_DESCRIPTION_LENGTH = 500;
export const MAX_WEBHOOK_EVENTS = 100;
/** Pages of the delivery log. */
export const DELIVERY_PAGE = { default: 50, max: 100 } as const;

export interface NewWebhook {
  url: string;
  events: string[];
  description?: string;
}

export interface WebhookChanges {
  url?: string;
  events?: string[];
  description?: string;
  status?: WebhookStatus;
}

/** A webhook as it was just made or rotated: its secret is shown this once. */
export interface WebhookWithSecret {
  webhook: WebhookWithEvents;
  /** `whsec_…`: the Standard Webhooks signing secret. */
  secret: string;
}

export { trustedNetworks };

/**
 * The URL a webhook may be sent to, or an InvalidField naming `url`: https, no user name or
 * password, no fragment, at most 2,048 characters, and not at a special-use IP address unless
 * `trusted` holds it (names are checked again when a delivery connects: what they resolve to
 * may change).
 *
 * @example
 * checkWebhookUrl('https://hooks.example.com/agentauth'); // 'https://hooks.example.com/agentauth'
 * checkWebhookUrl('http://hooks.example.com/');            // throws InvalidField('url', …)
 * checkWebhookUrl('https://10.0.0.5/hooks', trustedNetworks(['10.0.0.0/8'])); // 'https://10.0.0.5/hooks'
 */
export function checkWebhookUrl(value: unknown, trusted: BlockList = new BlockList()): string {
  if (typeof value !== 'string' || value.trim() === '') throw new InvalidField('url', 'a webhook needs a URL');
  const url = value.trim();
  if (url.length > MAX_WEBHOOK_URL_LENGTH)
    throw new InvalidField('url', `a webhook URL is at most ${MAX_WEBHOOK_URL_LENGTH} characters`);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new InvalidField('url', 'the webhook URL is not a valid URL');
  }
  if (parsed.protocol !== 'https:') throw new InvalidField('url', 'a webhook URL must use https');
  if (parsed.username !== '' || parsed.password !== '')
    throw new InvalidField('url', 'a webhook URL may not carry a user name or password');
  if (url.includes('#')) throw new InvalidField('url', 'a webhook URL may not have a fragment (#…)');
  const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1');
  if (isIP(host) !== 0 && isSpecialUseAddress(host) && !trusted.check(host, isIPv4(host) ? 'ipv4' : 'ipv6'))
    throw new InvalidField('url', specialUseWords(host, host));
  return url;
}

/**
 * Refuses, when an endpoint is saved, a URL whose host resolves to an address deliveries would
 * refuse (loopback, private, other special use, unless WEBHOOK_ALLOWED_ADDRESSES holds it):
 * such as `https://localhost`, which was accepted and then failed every delivery (issue 38). A
 * name that does not resolve now (no record yet, a resolver down) is accepted: DNS may change
 * before the first delivery, and the delivery log (or Send test event) names the failure.
 * Every delivery checks the addresses again.
 *
 * @example
 * await checkReceiverAddress(ctx, 'https://localhost/hooks'); // throws InvalidField('url', 'localhost is at 127.0.0.1, which is a loopback, …')
 */
export async function checkReceiverAddress(deps: Pick<Context, 'webhooks' | 'config'>, url: string): Promise<void> {
  const host = new URL(url).hostname.replace(/^\[(.*)\]$/, '$1');
  const addresses = isIP(host) !== 0 ? [host] : await resolveForSave(host);
  const trusted = trustedAddresses(deps.config.webhookAllowedAddresses);
  for (const address of addresses)
    if (isSpecialUseAddress(address) && !trusted(address) && !deps.webhooks.addressAllowed(address, 'resolved'))
      throw new InvalidField('url', specialUseWords(host, address));
}

/** The addresses `host` resolves to, or none when it does not within SAVE_LOOKUP_MS. */
async function resolveForSave(host: string): Promise<string[]> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<string[]>((resolve) => {
    timer = setTimeout(() => resolve([]), SAVE_LOOKUP_MS);
  });
  const answered = lookup(host, { all: true }).then(
    (found) => found.map(({ address }) => address),
    () => [],
  );
  try {
    return await Promise.race([answered, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The event types an endpoint subscribes to, or an InvalidField naming `events`: at least one,
 * each from the catalogue or '*' (which then stands alone: it means all).
 *
 * @example
 * checkWebhookEvents(['agent.created', 'agent.deleted']); // ['agent.created', 'agent.deleted']
 * checkWebhookEvents(['*', 'agent.created']);             // ['*']
 */
export function checkWebhookEvents(value: unknown): string[] {
  if (!Array.isArray(value) || value.length === 0)
    throw new InvalidField('events', "a webhook subscribes to at least one event type (or '*' for all)");
  if (value.length > MAX_WEBHOOK_EVENTS)
    throw new InvalidField('events', `a webhook subscribes to at most ${MAX_WEBHOOK_EVENTS} event types`);
  for (const name of value)
    if (typeof name !== 'string' || !isEventType(name))
      throw new InvalidField(
        'events',
        `unknown event type ${JSON.stringify(name)}: see GET /api/admin/v1/webhook-event-types or docs/reference/webhooks.md`,
      );
  const names = [...new Set(value as string[])];
  return names.includes(ALL_EVENTS) ? [ALL_EVENTS] : names.sort();
}

function checkDescription(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value !== 'string') throw new InvalidField('description', 'a description is text');
  const description = value.trim();
  if (description.length > MAX_WEBHOOK_DESCRIPTION_LENGTH)
    throw new InvalidField('description', `a description is at most ${MAX_WEBHOOK_DESCRIPTION_LENGTH} characters`);
  if (UNDISPLAYABLE_IN_NAME.test(description))
    throw new InvalidField('description', 'a description is one line of text');
  return description;
}

function requireWebhookAdmin(actor: AccountRecord): void {
  if (actor.role !== 'admin' || actor.status !== 'active')
    throw new AccessDenied('Only administrators manage webhooks.');
}

/**
 * Registers an endpoint for `events`, made by `actor` (an admin); the secret is returned once.
 *
 * @example
 * const { webhook, secret } = await createWebhook(ctx, admin, { url: 'https://hooks.example.com/a', events: ['*'] });
 * // webhook.webhook.id: 'whk_…'; secret: 'whsec_…' (shown once)
 */
export async function createWebhook(deps: Deps, actor: AccountRecord, input: NewWebhook): Promise<WebhookWithSecret> {
  requireWebhookAdmin(actor);
  const url = checkWebhookUrl(input.url, trustedNetworks(deps.config.webhookAllowedAddresses));
  const events = checkWebhookEvents(input.events);
  const description = checkDescription(input.description);
  await checkReceiverAddress(deps, url);
  const secret = newWebhookSecret();
  const now = deps.clock();
  const webhook: WebhookRecord = {
    id: newWebhookId(),
    account_id: actor.id,
    url,
    description,
    secret_sealed: deps.secrets.box.seal(secret),
    status: 'enabled',
    disabled_reason: null,
    consecutive_failures: 0,
    failing_since: null,
    unanswered_attempts: 0,
    paused_until: null,
    paused_reason: null,
    created_at: now,
    updated_at: now,
    version: 1,
  };
  await deps.store.webhooks.insert(webhook, events);
  return { webhook: { webhook, events }, secret };
}

/**
 * Every endpoint, oldest first, for an admin.
 *
 * @example
 * const webhooks = await listWebhooks(ctx, admin);
 */
export async function listWebhooks(deps: Deps, actor: AccountRecord): Promise<WebhookWithEvents[]> {
  requireWebhookAdmin(actor);
  return deps.store.webhooks.list();
}

/**
 * The endpoint, for an admin; NotFound for anyone else, as for an id that does not exist.
 *
 * @example
 * const { webhook, events } = await reachableWebhook(ctx, admin, 'whk_abc');
 */
export async function reachableWebhook(deps: Deps, actor: AccountRecord, id: string): Promise<WebhookWithEvents> {
  const found =
    actor.role === 'admin' && actor.status === 'active' && /^whk_[A-Za-z0-9_-]{1,60}$/.test(id)
      ? await deps.store.webhooks.find(id)
      : undefined;
  if (!found) throw new NotFound('No such webhook.');
  return found;
}

/**
 * Changes an endpoint's URL, events, description or status. Disabling keeps its deliveries
 * waiting (nothing is sent while disabled); enabling starts its count of failures afresh and
 * closes its breaker, and enabling a paused endpoint resumes it at once.
 *
 * @example
 * await updateWebhook(ctx, admin, 'whk_abc', { status: 'disabled' });
 */
export async function updateWebhook(
  deps: Deps,
  actor: AccountRecord,
  id: string,
  changes: WebhookChanges,
  version?: number,
): Promise<WebhookWithEvents> {
  const { webhook, events } = await reachableWebhook(deps, actor, id);
  const patch: WebhookPatch = { updated_at: deps.clock() };
  if (changes.url !== undefined) {
    patch.url = checkWebhookUrl(changes.url, trustedNetworks(deps.config.webhookAllowedAddresses));
    // Only a changed URL is resolved: saving the description of an endpoint allowed before
    // (its network listed then) is not refused for it.
    if (patch.url !== webhook.url) await checkReceiverAddress(deps, patch.url);
  }
  if (changes.description !== undefined) patch.description = checkDescription(changes.description);
  const newEvents = changes.events === undefined ? undefined : checkWebhookEvents(changes.events);
  if (changes.status !== undefined) {
    if (changes.status !== 'enabled' && changes.status !== 'disabled')
      throw new InvalidField('status', 'status is enabled or disabled');
    if (changes.status !== webhook.status) {
      patch.status = changes.status;
      if (changes.status === 'enabled')
        Object.assign(patch, {
          consecutive_failures: 0,
          failing_since: null,
          unanswered_attempts: 0,
          paused_until: null,
          paused_reason: null,
        });
      patch.disabled_reason = changes.status === 'disabled' ? `disabled by ${actor.email}` : null;
    } else if (changes.status === 'enabled' && webhook.paused_until !== null) {
      // Enabling a paused endpoint resumes it now: the admin says its receiver works again.
      Object.assign(patch, { unanswered_attempts: 0, paused_until: null, paused_reason: null });
    }
  }
  if (!(await deps.store.webhooks.update(webhook.id, patch, newEvents, undefined, version))) throw lost(version);
  const updated = { ...webhook, ...patch, version: webhook.version + 1 } as WebhookRecord;
  // A null disabled_reason must read as null, not as the patch's absence.
  if (patch.status === 'enabled') updated.disabled_reason = null;
  return { webhook: updated, events: newEvents ?? events };
}

/**
 * Deletes an endpoint with its deliveries and their log.
 *
 * @example
 * await deleteWebhook(ctx, admin, 'whk_abc');
 */
export async function deleteWebhook(
  deps: Deps,
  actor: AccountRecord,
  id: string,
  version?: number,
): Promise<WebhookWithEvents> {
  const found = await reachableWebhook(deps, actor, id);
  if (!(await deps.store.webhooks.delete(found.webhook.id, undefined, version))) throw lost(version);
  return found;
}

/**
 * Gives an endpoint a new signing secret at once (returned this once); deliveries from now on
 * are signed with it.
 *
 * @example
 * const { secret } = await rotateWebhookSecret(ctx, admin, 'whk_abc'); // 'whsec_…'
 */
export async function rotateWebhookSecret(
  deps: Deps,
  actor: AccountRecord,
  id: string,
  version?: number,
): Promise<WebhookWithSecret> {
  const { webhook, events } = await reachableWebhook(deps, actor, id);
  const secret = newWebhookSecret();
  const patch: WebhookPatch = { secret_sealed: deps.secrets.box.seal(secret), updated_at: deps.clock() };
  if (!(await deps.store.webhooks.update(webhook.id, patch, undefined, undefined, version))) throw lost(version);
  return { webhook: { webhook: { ...webhook, ...patch, version: webhook.version + 1 }, events }, secret };
}

/**
 * Why a change of an endpoint wrote nothing: with `version` (If-Match, each change here takes
 * one), it changed or went since the tag was checked; without, there is no such endpoint.
 */
const lost = (version: number | undefined) =>
  version === undefined ? new NotFound('No such webhook.') : new PreconditionFailed();

/**
 * The signing secret of an endpoint (`whsec_…`), for the dispatcher.
 *
 * @example
 * new Webhook(webhookSecret(ctx, webhook)).sign(messageId, new Date(), payload);
 */
export const webhookSecret = (deps: Pick<Context, 'secrets'>, webhook: WebhookRecord): string =>
  deps.secrets.box.open(webhook.secret_sealed);

/** A delivery with its attempts, as the delivery log shows it. */
export interface DeliveryWithAttempts {
  delivery: DeliveryRecord;
  attempts: AttemptRecord[];
}

/**
 * An endpoint's delivery log, newest first, `limit` at a time; `cursor` is the last message id
 * of the page before, and `next_cursor` null on the last page.
 *
 * @example
 * const { data, next_cursor } = await listDeliveries(ctx, admin, 'whk_abc', { limit: 20 });
 */
export async function listDeliveries(
  deps: Deps,
  actor: AccountRecord,
  id: string,
  page: { limit?: number; cursor?: string } = {},
): Promise<{ data: DeliveryWithAttempts[]; next_cursor: string | null }> {
  const { webhook } = await reachableWebhook(deps, actor, id);
  const limit = page.limit ?? DELIVERY_PAGE.default;
  if (!Number.isInteger(limit) || limit < 1 || limit > DELIVERY_PAGE.max)
    throw new InvalidField('limit', `limit is 1 to ${DELIVERY_PAGE.max}`);
  if (page.cursor !== undefined && !/^msg_[0-9a-f]{1,60}$/.test(page.cursor))
    throw new InvalidField('cursor', 'the cursor is not one this list gave');
  const rows = await deps.store.webhooks.listDeliveries(webhook.id, limit + 1, page.cursor);
  const shown = rows.slice(0, limit);
  const data = await Promise.all(
    shown.map(async (delivery) => ({
      delivery,
      attempts: await deps.store.webhooks.listAttempts(webhook.id, delivery.message_id),
    })),
  );
  return { data, next_cursor: rows.length > limit ? shown.at(-1)!.message_id : null };
}

/**
 * Sends a delivery again ("send again"): the same message, with its id, attempted now (a
 * receiver that already has it recognises the id). A delivery in flight is left to finish.
 *
 * @example
 * await redeliver(ctx, admin, 'whk_abc', 'msg_1764292000123000…');
 */
export async function redeliver(
  deps: Deps,
  actor: AccountRecord,
  id: string,
  messageId: string,
): Promise<DeliveryRecord> {
  const { webhook } = await reachableWebhook(deps, actor, id);
  const delivery = /^msg_[0-9a-f]{1,60}$/.test(messageId)
    ? await deps.store.webhooks.findDelivery(webhook.id, messageId)
    : undefined;
  if (!delivery) throw new NotFound('No such delivery.');
  if (!(await deps.store.webhooks.redeliver(webhook.id, messageId, Date.now())))
    throw new Conflict('This delivery is being attempted right now; look again in a moment.');
  return (await deps.store.webhooks.findDelivery(webhook.id, messageId)) ?? delivery;
}

/**
 * Sends a signed `webhook.test` event to the endpoint now, through the normal delivery path
 * (signed, guarded, logged, retried on failure like any delivery): its outcome shows in the
 * delivery log. A disabled endpoint is sent nothing, so it is refused (409).
 *
 * @example
 * const delivery = await sendTestEvent(ctx, admin, 'whk_abc'); // { message_id: 'msg_…', event_type: 'webhook.test', status: 'pending', … }
 */
export async function sendTestEvent(deps: Deps, actor: AccountRecord, id: string): Promise<DeliveryRecord> {
  const { webhook } = await reachableWebhook(deps, actor, id);
  if (webhook.status !== 'enabled')
    throw new Conflict('This webhook is disabled, and nothing is sent to it: enable it, then send a test event.');
  return deps.store.webhooks.sendTest(webhook.id, webhookTest(webhook));
}
