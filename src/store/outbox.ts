/**
 * The webhooks' outbox (docs/design.md §15): the steps that write an event's deliveries in the
 * unit of the change it reports, so the event is announced exactly when the change commits. A
 * leaf every entity's writes use; the endpoints and the deliveries themselves are webhooks.ts's.
 */
import { newWebhookMessageId } from '../crypto.ts';
import { type Step, WEBHOOK_CHANNEL } from './driver.ts';

/** An event to announce: its type and its data (ids, names, hosts: never a secret). */
export interface WebhookEvent {
  type: string;
  data: Record<string, unknown>;
  /**
   * When what it reports happened (epoch seconds), for an event announced later than that (a
   * request's expiry, found by a sweep): only the endpoints that existed by then hear of it.
   * Without it, every endpoint subscribed when the change commits does.
   */
  occurredAt?: number;
  /**
   * For the expiry of a request no agent authenticated: that request's expiry (epoch seconds).
   * Anyone can make such requests, so their announcements live no longer than they do: the
   * deliveries are purged with the request (PURGE_UNAUTHENTICATED_AFTER after this), delivered
   * or not, instead of being kept WEBHOOK_RETENTION (docs/design.md §15, "Retention").
   */
  requestExpiresAt?: number;
}

/**
 * The outbox's write for one event: a delivery row for each enabled endpoint subscribed to its
 * type or to all, one statement whatever their number (none: no row, and no wake-up). Its
 * parameters are cast so PostgreSQL knows their types in INSERT … SELECT.
 */
const ANNOUNCE_SQL = `INSERT INTO webhook_deliveries (message_id, endpoint_id, event_type, payload, status, attempts, next_attempt_at, created_at, request_expires_at)
  SELECT CAST(? AS text), e.id, CAST(? AS text), CAST(? AS text), 'pending', 0, CAST(? AS bigint), CAST(? AS bigint), CAST(? AS bigint)
  FROM webhook_subscriptions s JOIN webhook_endpoints e ON e.id = s.endpoint_id
  WHERE s.event_type IN (?, '*') AND e.status = 'enabled'`;
/** …for an event announced after it happened: the endpoints that existed by then (WebhookEvent.occurredAt). */
const ANNOUNCE_SINCE_SQL = `${ANNOUNCE_SQL} AND e.created_at <= CAST(? AS bigint)`;

/**
 * The steps that write the deliveries of `events` in the unit of the change they report
 * (docs/design.md §15, the outbox): the event is announced exactly when the change commits.
 * The body is the Standard Webhooks shape, {type, timestamp, data}.
 *
 * @example
 * await driver.write([update('agents', 'id', id, patch), ...announceSteps([{ type: 'agent.updated', data }])]);
 */
export function announceSteps(events: readonly WebhookEvent[] | undefined, now = Date.now()): Step[] {
  if (!events || events.length === 0) return [];
  const timestamp = new Date(now).toISOString();
  return events.map((event) => ({
    sql: event.occurredAt === undefined ? ANNOUNCE_SQL : ANNOUNCE_SINCE_SQL,
    params: [
      newWebhookMessageId(now),
      event.type,
      JSON.stringify({ type: event.type, timestamp, data: event.data }),
      now,
      now,
      event.requestExpiresAt ?? null,
      event.type,
      ...(event.occurredAt === undefined ? [] : [event.occurredAt]),
    ],
    notify: 'due',
    channel: WEBHOOK_CHANNEL,
  }));
}

/**
 * The delivery of a test event (Send test event) to one endpoint, whatever it subscribes to, as
 * due now: the dispatcher sends it like any other. Returns the step and the message id.
 *
 * @example
 * const { step, messageId } = testDeliveryStep('whk_abc', { type: 'webhook.test', data });
 */
export function testDeliveryStep(
  endpointId: string,
  event: WebhookEvent,
  now = Date.now(),
): { step: Step; messageId: string } {
  const messageId = newWebhookMessageId(now);
  const payload = JSON.stringify({ type: event.type, timestamp: new Date(now).toISOString(), data: event.data });
  return {
    messageId,
    step: {
      sql: `INSERT INTO webhook_deliveries (message_id, endpoint_id, event_type, payload, status, attempts, next_attempt_at, created_at)
        VALUES (?, ?, ?, ?, 'pending', 0, ?, ?)`,
      params: [messageId, endpointId, event.type, payload, now, now],
      notify: 'due',
      channel: WEBHOOK_CHANNEL,
    },
  };
}
