/** The WebhookStore in SQL, one text for SQLite and PostgreSQL (see webhook-types.ts). */
import { type ConsoleEvent, consoleEventStep } from './history.ts';
import { type ChangeListener, type Driver, type Step, WEBHOOK_CHANNEL } from './driver.ts';
import { announceSteps, type WebhookEvent } from './outbox.ts';
import { insert, update } from './rows.ts';
import type {
  AttemptOutcome,
  AttemptRecord,
  DeliveryRecord,
  ExpiredRequest,
  WebhookPatch,
  WebhookRecord,
  WebhookStore,
  WebhookWithEvents,
} from './webhook-types.ts';

/** Deliveries one purge unit deletes at most (as the protocol's purge, sql-store.ts). */
const PURGE_BATCH = 5000;

const DUE = `((d.status = 'pending' AND d.next_attempt_at <= ?) OR (d.status = 'delivering' AND d.lease_until <= ?))`;

export class SqlWebhookStore implements WebhookStore {
  constructor(private readonly driver: Driver) {}

  async insertWebhook(webhook: WebhookRecord, events: string[], announce?: WebhookEvent[]): Promise<void> {
    await this.driver.write([
      insert('webhook_endpoints', webhook),
      ...subscriptionSteps(webhook.id, events),
      ...announceSteps(announce),
    ]);
  }

  async findWebhook(id: string): Promise<WebhookWithEvents | undefined> {
    const webhook = await this.driver.one<WebhookRecord>('SELECT * FROM webhook_endpoints WHERE id = ?', [id]);
    if (!webhook) return undefined;
    const rows = await this.driver.all<{ event_type: string }>(
      'SELECT event_type FROM webhook_subscriptions WHERE endpoint_id = ? ORDER BY event_type',
      [id],
    );
    return { webhook, events: rows.map((row) => row.event_type) };
  }

  async listWebhooks(): Promise<WebhookWithEvents[]> {
    const webhooks = await this.driver.all<WebhookRecord>('SELECT * FROM webhook_endpoints ORDER BY created_at, id');
    const rows = await this.driver.all<{ endpoint_id: string; event_type: string }>(
      'SELECT endpoint_id, event_type FROM webhook_subscriptions ORDER BY event_type',
    );
    return webhooks.map((webhook) => ({
      webhook,
      events: rows.filter((row) => row.endpoint_id === webhook.id).map((row) => row.event_type),
    }));
  }

  async updateWebhook(id: string, patch: WebhookPatch, events?: string[], announce?: WebhookEvent[]): Promise<boolean> {
    const steps: Step[] = [update('webhook_endpoints', 'id', id, patch)];
    if (events)
      steps.push(
        { sql: 'DELETE FROM webhook_subscriptions WHERE endpoint_id = ?', params: [id] },
        ...subscriptionSteps(id, events),
      );
    return (await this.driver.write([...steps, ...announceSteps(announce)])) !== null;
  }

  async deleteWebhook(id: string, announce?: WebhookEvent[]): Promise<boolean> {
    const done = await this.driver.write([
      { sql: 'DELETE FROM webhook_endpoints WHERE id = ?', params: [id], guard: true },
      { sql: 'DELETE FROM webhook_subscriptions WHERE endpoint_id = ?', params: [id] },
      { sql: 'DELETE FROM webhook_deliveries WHERE endpoint_id = ?', params: [id] },
      { sql: 'DELETE FROM webhook_attempts WHERE endpoint_id = ?', params: [id] },
      ...announceSteps(announce),
    ]);
    return done !== null;
  }

  listDeliveries(endpointId: string, limit: number, before?: string): Promise<DeliveryRecord[]> {
    return before === undefined
      ? this.driver.all<DeliveryRecord>(
          'SELECT * FROM webhook_deliveries WHERE endpoint_id = ? ORDER BY message_id DESC LIMIT ?',
          [endpointId, limit],
        )
      : this.driver.all<DeliveryRecord>(
          'SELECT * FROM webhook_deliveries WHERE endpoint_id = ? AND message_id < ? ORDER BY message_id DESC LIMIT ?',
          [endpointId, before, limit],
        );
  }

  findDelivery(endpointId: string, messageId: string): Promise<DeliveryRecord | undefined> {
    return this.driver.one<DeliveryRecord>(
      'SELECT * FROM webhook_deliveries WHERE endpoint_id = ? AND message_id = ?',
      [endpointId, messageId],
    );
  }

  listAttempts(endpointId: string, messageId: string): Promise<AttemptRecord[]> {
    return this.driver.all<AttemptRecord>(
      'SELECT * FROM webhook_attempts WHERE endpoint_id = ? AND message_id = ? ORDER BY attempt',
      [endpointId, messageId],
    );
  }

  async redeliver(endpointId: string, messageId: string, now: number): Promise<boolean> {
    // A delivery in flight keeps its lease (its node finishes it); any other is due now.
    const done = await this.driver.write([
      {
        sql: "UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = ?, delivered_at = NULL WHERE endpoint_id = ? AND message_id = ? AND status <> 'delivering'",
        params: [now, endpointId, messageId],
        guard: true,
        notify: 'due',
        channel: WEBHOOK_CHANNEL,
      },
    ]);
    return done !== null;
  }

  async announce(events: WebhookEvent[]): Promise<void> {
    const steps = announceSteps(events);
    if (steps.length > 0) await this.driver.write(steps, { independent: true });
  }

  async claimDue(owner: string, now: number, leaseUntil: number, limit: number): Promise<DeliveryRecord[]> {
    // PostgreSQL: the rows are locked as they are chosen and rows another node is choosing are
    // skipped, so two nodes never claim one delivery. SQLite has one writer: no lock to skip.
    const lock = this.driver.engine === 'postgres' ? ' FOR UPDATE OF d SKIP LOCKED' : '';
    const claimed = await this.driver.write([
      {
        sql: `UPDATE webhook_deliveries SET status = 'delivering', lease_owner = ?, lease_until = ?
          WHERE (message_id, endpoint_id) IN (
            SELECT d.message_id, d.endpoint_id FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
            WHERE ${DUE} AND e.status = 'enabled' ORDER BY d.message_id LIMIT ?${lock})`,
        params: [owner, leaseUntil, now, now, limit],
      },
    ]);
    if (!claimed || claimed[0] === 0) return [];
    // `owner` is unique to this claim; the rows in flight are few and found by the status index.
    return this.driver.all<DeliveryRecord>(
      "SELECT * FROM webhook_deliveries WHERE status = 'delivering' AND lease_owner = ? ORDER BY message_id",
      [owner],
    );
  }

  async finishAttempt(owner: string, outcome: AttemptOutcome): Promise<boolean> {
    const { attempt, status } = outcome;
    const steps: Step[] = [
      {
        sql: `UPDATE webhook_deliveries SET status = ?, attempts = ?, next_attempt_at = ?, lease_owner = NULL, lease_until = NULL,
          last_status_code = ?, last_error = ?, delivered_at = ?
          WHERE message_id = ? AND endpoint_id = ? AND status = 'delivering' AND lease_owner = ?`,
        params: [
          status,
          attempt.attempt,
          outcome.next_attempt_at,
          attempt.status_code,
          attempt.error,
          status === 'delivered' ? attempt.at : null,
          attempt.message_id,
          attempt.endpoint_id,
          owner,
        ],
        guard: true,
      },
      insert('webhook_attempts', attempt),
    ];
    if (status === 'delivered')
      steps.push({
        sql: 'UPDATE webhook_endpoints SET consecutive_failures = 0, failing_since = NULL WHERE id = ? AND (consecutive_failures <> 0 OR failing_since IS NOT NULL)',
        params: [attempt.endpoint_id],
      });
    else
      steps.push({
        sql: 'UPDATE webhook_endpoints SET failing_since = COALESCE(failing_since, ?), consecutive_failures = consecutive_failures + ? WHERE id = ?',
        params: [attempt.at, status === 'failed' ? 1 : 0, attempt.endpoint_id],
      });
    return (await this.driver.write(steps)) !== null;
  }

  async nextDue(): Promise<number | null> {
    const row = await this.driver.one<{ due: number | null }>(
      "SELECT MIN(next_attempt_at) AS due FROM webhook_deliveries WHERE status = 'pending'",
    );
    return row?.due == null ? null : Number(row.due);
  }

  async subscribedSince(eventType: string): Promise<number | null> {
    const row = await this.driver.one<{ since: number | string | null }>(
      "SELECT min(e.created_at) AS since FROM webhook_subscriptions s JOIN webhook_endpoints e ON e.id = s.endpoint_id WHERE s.event_type IN (?, '*') AND e.status = 'enabled'",
      [eventType],
    );
    return row?.since == null ? null : Number(row.since);
  }

  findUnannouncedExpiredRequests(since: number, now: number, limit: number): Promise<ExpiredRequest[]> {
    return this.driver.all<ExpiredRequest>(
      `SELECT r.id, r.client_id, c.name AS client_name, r.status, r.agent_id, r.scope, r.resource, r.created_at, r.expires_at
        FROM authorization_requests r LEFT JOIN clients c ON c.id = r.client_id
        WHERE r.expires_at > ? AND r.expires_at <= ? AND r.status IN ('pending', 'authenticated') AND r.expiry_announced_at IS NULL
        ORDER BY r.expires_at LIMIT ?`,
      [since, now, limit],
    );
  }

  async markExpiryAnnounced(requestId: string, now: number, announce: WebhookEvent[]): Promise<boolean> {
    const done = await this.driver.write(
      [
        {
          sql: 'UPDATE authorization_requests SET expiry_announced_at = ? WHERE id = ? AND expiry_announced_at IS NULL',
          params: [now, requestId],
          guard: true,
        },
        ...announceSteps(announce),
      ],
      { independent: true },
    );
    return done !== null;
  }

  async disableFailingWebhook(
    id: string,
    reason: string,
    now: number,
    event: ConsoleEvent,
    announce: WebhookEvent[],
  ): Promise<boolean> {
    const done = await this.driver.write([
      {
        sql: "UPDATE webhook_endpoints SET status = 'disabled', disabled_reason = ?, updated_at = ? WHERE id = ? AND status = 'enabled'",
        params: [reason, now, id],
        guard: true,
      },
      consoleEventStep(event),
      ...announceSteps(announce),
    ]);
    return done !== null;
  }

  watch(listener: ChangeListener): Promise<() => Promise<void>> {
    return this.driver.listen(listener, WEBHOOK_CHANNEL);
  }

  async purge(before: number, batchSize = PURGE_BATCH): Promise<number> {
    // Settled deliveries whose last attempt is older than `before`, found through the status
    // index; in batches, each one unit with its attempts, so a backlog never holds the database.
    // Both statements choose the same rows: one order, and no row can newly qualify meanwhile.
    const settled = `SELECT message_id, endpoint_id FROM webhook_deliveries
      WHERE status IN ('delivered', 'failed') AND next_attempt_at < ?
      ORDER BY next_attempt_at, message_id, endpoint_id LIMIT ${batchSize}`;
    let total = 0;
    for (;;) {
      const [, deleted = 0] =
        (await this.driver.write([
          {
            sql: `DELETE FROM webhook_attempts WHERE (message_id, endpoint_id) IN (${settled})`,
            params: [before],
          },
          { sql: `DELETE FROM webhook_deliveries WHERE (message_id, endpoint_id) IN (${settled})`, params: [before] },
        ])) ?? [];
      total += deleted;
      if (deleted < batchSize) return total;
    }
  }
}

/** One row per event type an endpoint subscribes to. */
function subscriptionSteps(endpointId: string, events: string[]): Step[] {
  return events.map((eventType) => insert('webhook_subscriptions', { endpoint_id: endpointId, event_type: eventType }));
}
