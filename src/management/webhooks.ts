/**
 * What admins do with webhook endpoints, through any door (docs/design.md §15, §17): the rules
 * of src/domain/webhooks/endpoints.ts, run as the admin who acts (the operator's chosen admin at
 * the CLI), each change recorded as a `webhook.*` act.
 */
import type { Context } from '../context.ts';
import { accountByEmail } from '../domain/accounts.ts';
import {
  createWebhook as createEndpoint,
  type DeliveryWithAttempts,
  deleteWebhook as deleteEndpoint,
  listDeliveries,
  listWebhooks as listEndpoints,
  type NewWebhook,
  reachableWebhook,
  redeliver,
  rotateWebhookSecret as rotateEndpointSecret,
  sendTestEvent,
  updateWebhook as updateEndpoint,
  type WebhookChanges,
  type WebhookWithSecret,
} from '../domain/webhooks/endpoints.ts';
import { webhookHost } from '../domain/webhooks/events.ts';
import { AccessDenied, InvalidRequest, NotFound } from '../errors.ts';
import type { AccountRecord } from '../store/accounts.ts';
import type { WebhookWithEvents } from '../store/webhooks.ts';
import { type Actor, actingAccount, requireAdmin, requireWrite } from './actor.ts';
import { asActor, recordAct } from './audit.ts';
import { checkedVersion, type Precondition } from './shared.ts';

type Deps = Pick<Context, 'store' | 'clock' | 'config' | 'secrets' | 'webhooks'>;

/**
 * What the audit says of an endpoint: its host and events, never its URL (its path may be a
 * capability, and the activity is kept, listed and exported long after the endpoint is gone).
 */
const webhookDetail = ({ webhook, events }: WebhookWithEvents) => `${webhookHost(webhook.url)} (${events.join(', ')})`;

/**
 * The admin `actor` manages webhooks as: its own account, or for the operator the admin named
 * by `adminEmail`, else the first active admin. A member in the console asking for one webhook
 * (`id`) is answered as if there were none, as the console answers another owner's records.
 */
async function adminOf(deps: Deps, actor: Actor, id?: string): Promise<AccountRecord> {
  if (id !== undefined && !actor.admin && !actor.key) throw new NotFound('No such webhook.');
  requireAdmin(actor);
  if (actor.account) return actingAccount(actor);
  if (actor.adminEmail !== undefined) {
    const account = await accountByEmail(deps, actor.adminEmail);
    if (account.role !== 'admin' || account.status !== 'active')
      throw new AccessDenied(`${actor.adminEmail} is not an active admin: only admins manage webhooks`);
    return account;
  }
  const admin = (await deps.store.accounts.list()).find((a) => a.role === 'admin' && a.status === 'active');
  if (!admin)
    throw new InvalidRequest(
      'webhooks belong to an admin: make one first (agentauth account create --admin --email …)',
    );
  return admin;
}

/** The version a change must still find once `precondition` accepted the endpoint (checkedVersion); none without one. */
async function checkedWebhookVersion(
  deps: Deps,
  admin: AccountRecord,
  id: string,
  precondition?: Precondition<WebhookWithEvents>,
): Promise<number | undefined> {
  if (!precondition) return undefined;
  const found = await reachableWebhook(deps, admin, id);
  return checkedVersion(found, found.webhook.version, precondition);
}

/** @example const webhooks = await listWebhooks(ctx, actor); */
export async function listWebhooks(deps: Deps, actor: Actor): Promise<WebhookWithEvents[]> {
  return listEndpoints(deps, await adminOf(deps, actor));
}

/** @example const webhook = await getWebhook(ctx, actor, 'whk_…'); // or NotFound */
export async function getWebhook(deps: Deps, actor: Actor, id: string): Promise<WebhookWithEvents> {
  return reachableWebhook(deps, await adminOf(deps, actor, id), id);
}

/**
 * Registers an endpoint; its signing secret is returned once.
 *
 * @example
 * const { webhook, secret } = await createWebhook(ctx, actor, { url: 'https://hooks.example/agentauth', events: ['*'] });
 */
export async function createWebhook(deps: Deps, actor: Actor, input: NewWebhook): Promise<WebhookWithSecret> {
  const admin = await adminOf(deps, actor);
  requireWrite(actor);
  const made = await asActor(actor, () => createEndpoint(deps, admin, input));
  await recordAct(deps, actor, 'webhook.create', made.webhook.webhook.id, webhookDetail(made.webhook));
  return made;
}

/**
 * Changes an endpoint's URL, events, description or status; a status change is its own act
 * (`webhook.disable`, `webhook.enable`).
 *
 * @example
 * await updateWebhook(ctx, actor, 'whk_…', { status: 'disabled' });
 */
export async function updateWebhook(
  deps: Deps,
  actor: Actor,
  id: string,
  changes: WebhookChanges,
  precondition?: Precondition<WebhookWithEvents>,
): Promise<WebhookWithEvents> {
  const admin = await adminOf(deps, actor, id);
  requireWrite(actor);
  const version = await checkedWebhookVersion(deps, admin, id, precondition);
  const changed = await asActor(actor, () => updateEndpoint(deps, admin, id, changes, version));
  const act = changes.status === 'disabled' ? 'disable' : changes.status === 'enabled' ? 'enable' : 'update';
  await recordAct(deps, actor, `webhook.${act}`, changed.webhook.id, webhookDetail(changed));
  return changed;
}

/** @example await deleteWebhook(ctx, actor, 'whk_…'); */
export async function deleteWebhook(
  deps: Deps,
  actor: Actor,
  id: string,
  precondition?: Precondition<WebhookWithEvents>,
): Promise<WebhookWithEvents> {
  const admin = await adminOf(deps, actor, id);
  requireWrite(actor);
  const version = await checkedWebhookVersion(deps, admin, id, precondition);
  const deleted = await asActor(actor, () => deleteEndpoint(deps, admin, id, version));
  await recordAct(deps, actor, 'webhook.delete', deleted.webhook.id, webhookDetail(deleted));
  return deleted;
}

/** A new signing secret, returned once; the old one stops at once. */
export async function rotateWebhookSecret(
  deps: Deps,
  actor: Actor,
  id: string,
  precondition?: Precondition<WebhookWithEvents>,
): Promise<WebhookWithSecret> {
  const admin = await adminOf(deps, actor, id);
  requireWrite(actor);
  const version = await checkedWebhookVersion(deps, admin, id, precondition);
  const rotated = await asActor(actor, () => rotateEndpointSecret(deps, admin, id, version));
  await recordAct(
    deps,
    actor,
    'webhook.rotate_secret',
    rotated.webhook.webhook.id,
    webhookHost(rotated.webhook.webhook.url),
  );
  return rotated;
}

/**
 * The endpoint's delivery log, newest first.
 *
 * @example
 * const { data } = await listWebhookDeliveries(ctx, actor, 'whk_…', { limit: 20 });
 */
export async function listWebhookDeliveries(
  deps: Deps,
  actor: Actor,
  id: string,
  page: { limit?: number; cursor?: string } = {},
): Promise<{ data: DeliveryWithAttempts[]; next_cursor: string | null }> {
  return listDeliveries(deps, await adminOf(deps, actor, id), id, page);
}

/**
 * Sends a delivery again, with its message id, now.
 *
 * @example
 * const { delivery } = await redeliverWebhook(ctx, actor, 'whk_…', 'msg_…');
 */
export async function redeliverWebhook(
  deps: Deps,
  actor: Actor,
  id: string,
  messageId: string,
): Promise<DeliveryWithAttempts> {
  const admin = await adminOf(deps, actor, id);
  requireWrite(actor);
  const delivery = await asActor(actor, () => redeliver(deps, admin, id, messageId));
  await recordAct(
    deps,
    actor,
    'webhook.redeliver',
    delivery.endpoint_id,
    `${delivery.message_id} ${delivery.event_type}`,
  );
  return { delivery, attempts: await deps.store.webhooks.listAttempts(delivery.endpoint_id, delivery.message_id) };
}

/**
 * Sends a signed `webhook.test` event to the endpoint now; its outcome shows in the delivery log.
 *
 * @example
 * const { delivery } = await sendWebhookTestEvent(ctx, actor, 'whk_…'); // delivery.event_type: 'webhook.test'
 */
export async function sendWebhookTestEvent(deps: Deps, actor: Actor, id: string): Promise<DeliveryWithAttempts> {
  const admin = await adminOf(deps, actor, id);
  requireWrite(actor);
  const delivery = await asActor(actor, () => sendTestEvent(deps, admin, id));
  await recordAct(deps, actor, 'webhook.test', delivery.endpoint_id, delivery.message_id);
  return { delivery, attempts: [] };
}
