/**
 * Webhooks (docs/design.md §15, docs/reference/webhooks.md): endpoints and what they subscribe
 * to, the outbox of deliveries and the log of attempts; their records and SQL, one text for
 * SQLite and PostgreSQL, behind store.webhooks. Deliveries are written by every entity's units
 * through outbox.ts, in the unit of the change they report; the dispatcher claims them here under
 * a lease. Delivery times are epoch milliseconds; the endpoints' created_at and updated_at are
 * epoch seconds like every other record's.
 */
import { type ChangeListener, type Driver, type Step, WEBHOOK_CHANNEL } from './driver.ts';
import { type ConsoleEvent, consoleEventStep } from './history.ts';
import { announceSteps, testDeliveryStep, type WebhookEvent } from './outbox.ts';
import { insert, PURGE_BATCH, update } from './rows.ts';

/** A disabled endpoint is sent nothing; its deliveries wait. */
export type WebhookStatus = 'enabled' | 'disabled';
/** Where a delivery is: due, claimed by a node, delivered, or given up on. */
export type DeliveryStatus = 'pending' | 'delivering' | 'delivered' | 'failed';

/** A webhook endpoint: where events are sent, signed with its secret. */
export interface WebhookRecord {
  /** `whk_…` */
  id: string;
  /** The admin who made it; told by mail when it is disabled for failing. */
  account_id: string;
  url: string;
  description: string;
  /** `whsec_…`, sealed under the server secret (ctx.secrets.box) like client secrets. */
  secret_sealed: string;
  status: WebhookStatus;
  /** Why it is disabled, in words, when it is (by an admin, or for failing). */
  disabled_reason: string | null;
  /** Messages given up on (or attempts failed) in a row since the last success. */
  consecutive_failures: number;
  /** When its run of failures began (epoch ms), null while it succeeds. */
  failing_since: number | null;
  /** Attempts in a row that got no answer (timed out, could not connect); any answer resets it. */
  unanswered_attempts: number;
  /**
   * The breaker (docs/design.md §15): until when (epoch ms) nothing is sent to it because its
   * attempts got no answer; once past, one delivery is tried (half-open) before the others
   * follow. Null while it is sent to normally.
   */
  paused_until: number | null;
  /** Why it is paused, in words (null when it is not). */
  paused_reason: string | null;
  created_at: number;
  updated_at: number;
  /** How many times it was changed (1 when made): what If-Match compares and sets (rows.ts update). */
  version: number;
}

/** An endpoint with the event types it subscribes to ('*': every event). */
export interface WebhookWithEvents {
  webhook: WebhookRecord;
  events: string[];
}

/** What a change of an endpoint may set; every change sets updated_at. */
export type WebhookPatch = Partial<
  Pick<
    WebhookRecord,
    | 'url'
    | 'description'
    | 'secret_sealed'
    | 'status'
    | 'disabled_reason'
    | 'consecutive_failures'
    | 'failing_since'
    | 'unanswered_attempts'
    | 'paused_until'
    | 'paused_reason'
  >
> & { updated_at: number };

/** One event's delivery to one endpoint: the outbox's row, and its state. */
export interface DeliveryRecord {
  /** `msg_…`, sorting by creation; the same for every endpoint of one event (webhook-id). */
  message_id: string;
  endpoint_id: string;
  event_type: string;
  /** The JSON body sent: {type, timestamp, data}. */
  payload: string;
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at: number;
  lease_until: number | null;
  lease_owner: string | null;
  last_status_code: number | null;
  last_error: string | null;
  delivered_at: number | null;
  created_at: number;
  /**
   * For the expiry of a request no agent authenticated: the request's expiry (epoch seconds).
   * The delivery is purged with that request, delivered or not (WebhookEvent.requestExpiresAt).
   */
  request_expires_at: number | null;
}

/** One attempt of a delivery, for the delivery log. */
export interface AttemptRecord {
  endpoint_id: string;
  message_id: string;
  attempt: number;
  at: number;
  duration_ms: number;
  /** The receiver's HTTP status, or null when there was no answer (then `error` says why). */
  status_code: number | null;
  error: string | null;
  /**
   * The headers the attempt was sent with, as JSON (webhook-id, webhook-timestamp,
   * webhook-signature, content-type, user-agent); null for attempts logged before they were kept.
   */
  request_headers: string | null;
}

/** What one attempt came to, as the dispatcher records it. */
export interface AttemptOutcome {
  attempt: AttemptRecord;
  /** delivered; or pending again at `next_attempt_at`; or failed for good. */
  status: 'delivered' | 'pending' | 'failed';
  next_attempt_at: number;
}

/** What the announcement of an expired request says about it. */
export interface ExpiredRequest {
  id: string;
  client_id: string;
  client_name: string | null;
  status: 'pending' | 'authenticated';
  agent_id: string | null;
  scope: string;
  resource: string | null;
  created_at: number;
  expires_at: number;
}

/** Webhook endpoints and their deliveries in the store (Store.webhooks). */
export interface WebhookStore {
  /** Stores an endpoint with its subscriptions, and the events announcing it, in one unit. */
  insert(webhook: WebhookRecord, events: string[], announce?: WebhookEvent[]): Promise<void>;
  find(id: string): Promise<WebhookWithEvents | undefined>;
  /** Every endpoint, oldest first. */
  list(): Promise<WebhookWithEvents[]>;
  /**
   * Changes an endpoint (and replaces its subscriptions when `events` is given) with the events
   * announcing it, in one unit, adding one to its version; false when there is no such endpoint
   * or (with `version`) it no longer has that version.
   */
  update(
    id: string,
    patch: WebhookPatch,
    events?: string[],
    announce?: WebhookEvent[],
    version?: number,
  ): Promise<boolean>;
  /**
   * Deletes an endpoint with its subscriptions, deliveries and attempts; false when there was none
   * or (with `version`) it no longer had that version.
   */
  delete(id: string, announce?: WebhookEvent[], version?: number): Promise<boolean>;
  /** An endpoint's deliveries, newest first, before the message id `before` when given. */
  listDeliveries(endpointId: string, limit: number, before?: string): Promise<DeliveryRecord[]>;
  findDelivery(endpointId: string, messageId: string): Promise<DeliveryRecord | undefined>;
  /** The attempts of one delivery, oldest first. */
  listAttempts(endpointId: string, messageId: string): Promise<AttemptRecord[]>;
  /** Makes a delivery due now again (send again), whatever its state; false when there is none. */
  redeliver(endpointId: string, messageId: string, now: number): Promise<boolean>;
  /** Writes the deliveries of `events` for every enabled endpoint subscribed to them (no endpoint: no row). */
  announce(events: WebhookEvent[]): Promise<void>;
  /** Writes a delivery of `event` to this endpoint alone, due now (a test event); answers it. */
  sendTest(endpointId: string, event: WebhookEvent, now?: number): Promise<DeliveryRecord>;
  /**
   * Claims up to `limit` due deliveries for `owner` until `leaseUntil`: pending ones due by `now`,
   * and delivering ones whose lease ran out (their node died). Each enabled endpoint gets at most
   * `perEndpoint` (default `limit`) in flight across all nodes (one while its breaker is
   * half-open, none while it is paused), and the claim takes the endpoints' oldest deliveries in
   * turns: every endpoint's first, then every endpoint's second, and so on.
   */
  claimDue(
    owner: string,
    now: number,
    leaseUntil: number,
    limit: number,
    perEndpoint?: number,
  ): Promise<DeliveryRecord[]>;
  /**
   * Records an attempt and its outcome, if `owner` still holds the lease; the endpoint's run of
   * failures is reset by a success and extended by a message given up on. An attempt with no
   * answer counts towards the breaker (not while the endpoint is paused: the attempts still in
   * flight when it paused do not count); any answer, even an error, closes it.
   */
  finishAttempt(owner: string, outcome: AttemptOutcome, now?: number): Promise<boolean>;
  /**
   * Pauses an endpoint until `pause.until` (epoch ms) for `pause.reason`, and sets its count of
   * unanswered attempts to `pause.count`, if that count is still `pause.seen` and the endpoint is
   * not paused at `now` (another node may have paused it first, or an answer closed it
   * meanwhile); false when this call did not pause it.
   */
  pause(
    id: string,
    pause: { seen: number; count: number; until: number; reason: string },
    now: number,
  ): Promise<boolean>;
  /** The soonest time a delivery is due (epoch ms), or null when none waits. */
  nextDue(): Promise<number | null>;
  /**
   * Since when (epoch seconds) some enabled endpoint subscribes to this event type (or to all):
   * the earliest such endpoint's creation, or null when none does.
   */
  subscribedSince(eventType: string): Promise<number | null>;
  /**
   * Requests that expired while pending or authenticated, after `since` and by `now` (epoch
   * seconds), not yet announced: at most `limit`, soonest expired first.
   */
  findUnannouncedExpiredRequests(since: number, now: number, limit: number): Promise<ExpiredRequest[]>;
  /** Marks a request's expiry announced with its events, in one unit; false when it already was. */
  markExpiryAnnounced(requestId: string, now: number, announce: WebhookEvent[]): Promise<boolean>;
  /**
   * Disables an endpoint that keeps failing, with the console event and the webhook.disabled
   * announcement, in one unit; false when it was not enabled (another node did it first).
   */
  disableFailing(
    id: string,
    reason: string,
    now: number,
    event: ConsoleEvent,
    announce: WebhookEvent[],
  ): Promise<boolean>;
  /** Hears, on every node, of each committed unit that wrote deliveries (or made one due again). */
  watch(listener: ChangeListener): Promise<() => Promise<void>>;
  /**
   * Deletes delivered and failed deliveries whose last attempt was before `before` (epoch ms),
   * and, whatever their state, those announcing the expiry of a request no agent authenticated
   * that expired before `requestsExpiredBefore` (epoch seconds: the requests' own purge), with
   * their attempts; returns how many deliveries.
   */
  purge(before: number, requestsExpiredBefore?: number): Promise<number>;
}

/** Whether the delivery `d` is due (two parameters: now, now). */
const due = (d: string) =>
  `((${d}.status = 'pending' AND ${d}.next_attempt_at <= ?) OR (${d}.status = 'delivering' AND ${d}.lease_until <= ?))`;

/**
 * The claim (claimDue): the endpoints with free slots (enabled, not paused; a cap less what all
 * nodes hold in flight, found through the status index; one while half-open), their due
 * deliveries numbered oldest first per endpoint, and the first `limit` taken in turns. On
 * PostgreSQL the rows are locked as they are taken and rows another node is taking are skipped
 * (the due condition is checked again on each locked row), so two nodes never claim one delivery.
 * Parameters: owner, lease_until, now ×2, cap, now ×2, now ×2, limit.
 */
const claimSql = (
  lock: string,
) => `UPDATE webhook_deliveries SET status = 'delivering', lease_owner = ?, lease_until = ?
  WHERE (message_id, endpoint_id) IN (
    SELECT d.message_id, d.endpoint_id FROM webhook_deliveries d
    WHERE ${due('d')} AND (d.message_id, d.endpoint_id) IN (
      SELECT turns.message_id, turns.endpoint_id FROM (
        SELECT w.message_id, w.endpoint_id, slots.free,
          row_number() OVER (PARTITION BY w.endpoint_id ORDER BY w.message_id) AS turn
        FROM webhook_deliveries w JOIN (
          SELECT e.id, CASE WHEN e.paused_until IS NULL THEN CAST(? AS integer) ELSE 1 END - COALESCE(busy.n, 0) AS free
          FROM webhook_endpoints e LEFT JOIN (
            SELECT endpoint_id, count(*) AS n FROM webhook_deliveries
            WHERE status = 'delivering' AND lease_until > ? GROUP BY endpoint_id
          ) busy ON busy.endpoint_id = e.id
          WHERE e.status = 'enabled' AND (e.paused_until IS NULL OR e.paused_until <= ?)
        ) slots ON slots.id = w.endpoint_id
        WHERE slots.free > 0 AND ${due('w')}
      ) turns
      WHERE turns.turn <= turns.free
      ORDER BY turns.turn, turns.message_id LIMIT ?
    )${lock})`;

/**
 * The webhook endpoints and deliveries of the database behind `driver`.
 *
 * @example
 * const claimed = await webhookStore(driver).claimDue(owner, Date.now(), leaseUntil, 8);
 */
export function webhookStore(driver: Driver): WebhookStore {
  return {
    async insert(webhook: WebhookRecord, events: string[], announce?: WebhookEvent[]): Promise<void> {
      await driver.write([
        insert('webhook_endpoints', webhook),
        ...subscriptionSteps(webhook.id, events),
        ...announceSteps(announce),
      ]);
    },

    async find(id: string): Promise<WebhookWithEvents | undefined> {
      const webhook = await driver.one<WebhookRecord>('SELECT * FROM webhook_endpoints WHERE id = ?', [id]);
      if (!webhook) return undefined;
      const rows = await driver.all<{ event_type: string }>(
        'SELECT event_type FROM webhook_subscriptions WHERE endpoint_id = ? ORDER BY event_type',
        [id],
      );
      return { webhook, events: rows.map((row) => row.event_type) };
    },

    async list(): Promise<WebhookWithEvents[]> {
      const webhooks = await driver.all<WebhookRecord>('SELECT * FROM webhook_endpoints ORDER BY created_at, id');
      const rows = await driver.all<{ endpoint_id: string; event_type: string }>(
        'SELECT endpoint_id, event_type FROM webhook_subscriptions ORDER BY event_type',
      );
      return webhooks.map((webhook) => ({
        webhook,
        events: rows.filter((row) => row.endpoint_id === webhook.id).map((row) => row.event_type),
      }));
    },

    async update(
      id: string,
      patch: WebhookPatch,
      events?: string[],
      announce?: WebhookEvent[],
      version?: number,
    ): Promise<boolean> {
      const steps: Step[] = [update('webhook_endpoints', 'id', id, patch, version)];
      if (events)
        steps.push(
          { sql: 'DELETE FROM webhook_subscriptions WHERE endpoint_id = ?', params: [id] },
          ...subscriptionSteps(id, events),
        );
      return (await driver.write([...steps, ...announceSteps(announce)])) !== null;
    },

    async delete(id: string, announce?: WebhookEvent[], version?: number): Promise<boolean> {
      const done = await driver.write([
        version === undefined
          ? { sql: 'DELETE FROM webhook_endpoints WHERE id = ?', params: [id], guard: true }
          : { sql: 'DELETE FROM webhook_endpoints WHERE id = ? AND version = ?', params: [id, version], guard: true },
        { sql: 'DELETE FROM webhook_subscriptions WHERE endpoint_id = ?', params: [id] },
        { sql: 'DELETE FROM webhook_deliveries WHERE endpoint_id = ?', params: [id] },
        { sql: 'DELETE FROM webhook_attempts WHERE endpoint_id = ?', params: [id] },
        ...announceSteps(announce),
      ]);
      return done !== null;
    },

    listDeliveries(endpointId: string, limit: number, before?: string): Promise<DeliveryRecord[]> {
      return before === undefined
        ? driver.all<DeliveryRecord>(
            'SELECT * FROM webhook_deliveries WHERE endpoint_id = ? ORDER BY message_id DESC LIMIT ?',
            [endpointId, limit],
          )
        : driver.all<DeliveryRecord>(
            'SELECT * FROM webhook_deliveries WHERE endpoint_id = ? AND message_id < ? ORDER BY message_id DESC LIMIT ?',
            [endpointId, before, limit],
          );
    },

    findDelivery(endpointId: string, messageId: string): Promise<DeliveryRecord | undefined> {
      return driver.one<DeliveryRecord>('SELECT * FROM webhook_deliveries WHERE endpoint_id = ? AND message_id = ?', [
        endpointId,
        messageId,
      ]);
    },

    listAttempts(endpointId: string, messageId: string): Promise<AttemptRecord[]> {
      return driver.all<AttemptRecord>(
        'SELECT * FROM webhook_attempts WHERE endpoint_id = ? AND message_id = ? ORDER BY attempt',
        [endpointId, messageId],
      );
    },

    async redeliver(endpointId: string, messageId: string, now: number): Promise<boolean> {
      // A delivery in flight keeps its lease (its node finishes it); any other is due now.
      const done = await driver.write([
        {
          sql: "UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = ?, delivered_at = NULL WHERE endpoint_id = ? AND message_id = ? AND status <> 'delivering'",
          params: [now, endpointId, messageId],
          guard: true,
          notify: 'due',
          channel: WEBHOOK_CHANNEL,
        },
      ]);
      return done !== null;
    },

    async announce(events: WebhookEvent[]): Promise<void> {
      const steps = announceSteps(events);
      if (steps.length > 0) await driver.write(steps, { independent: true });
    },

    async sendTest(endpointId: string, event: WebhookEvent, now = Date.now()): Promise<DeliveryRecord> {
      const { step, messageId } = testDeliveryStep(endpointId, event, now);
      await driver.write([step]);
      const delivery = await this.findDelivery(endpointId, messageId);
      if (!delivery) throw new Error(`the test delivery ${messageId} was not written`);
      return delivery;
    },

    async claimDue(
      owner: string,
      now: number,
      leaseUntil: number,
      limit: number,
      perEndpoint = limit,
    ): Promise<DeliveryRecord[]> {
      // SQLite has one writer: no lock to skip.
      const claimed = await driver.write([
        {
          sql: claimSql(driver.engine === 'postgres' ? ' FOR UPDATE OF d SKIP LOCKED' : ''),
          params: [owner, leaseUntil, now, now, perEndpoint, now, now, now, now, limit],
        },
      ]);
      if (!claimed || claimed[0] === 0) return [];
      // `owner` is unique to this claim; the rows in flight are few and found by the status index.
      return driver.all<DeliveryRecord>(
        "SELECT * FROM webhook_deliveries WHERE status = 'delivering' AND lease_owner = ? ORDER BY message_id",
        [owner],
      );
    },

    async finishAttempt(owner: string, outcome: AttemptOutcome, now = Date.now()): Promise<boolean> {
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
      // The breaker: an answer of any kind closes it; no answer counts, unless it is open.
      steps.push(
        attempt.status_code === null
          ? {
              sql: 'UPDATE webhook_endpoints SET unanswered_attempts = unanswered_attempts + 1 WHERE id = ? AND (paused_until IS NULL OR paused_until <= ?)',
              params: [attempt.endpoint_id, now],
            }
          : {
              sql: 'UPDATE webhook_endpoints SET unanswered_attempts = 0, paused_until = NULL, paused_reason = NULL WHERE id = ? AND (unanswered_attempts <> 0 OR paused_until IS NOT NULL)',
              params: [attempt.endpoint_id],
            },
      );
      return (await driver.write(steps)) !== null;
    },

    async pause(
      id: string,
      pause: { seen: number; count: number; until: number; reason: string },
      now: number,
    ): Promise<boolean> {
      const done = await driver.write([
        {
          sql: 'UPDATE webhook_endpoints SET paused_until = ?, paused_reason = ?, unanswered_attempts = ? WHERE id = ? AND unanswered_attempts = ? AND (paused_until IS NULL OR paused_until <= ?)',
          params: [pause.until, pause.reason, pause.count, id, pause.seen, now],
          guard: true,
        },
      ]);
      return done !== null;
    },

    async nextDue(): Promise<number | null> {
      const row = await driver.one<{ due: number | null }>(
        "SELECT MIN(next_attempt_at) AS due FROM webhook_deliveries WHERE status = 'pending'",
      );
      return row?.due == null ? null : Number(row.due);
    },

    async subscribedSince(eventType: string): Promise<number | null> {
      const row = await driver.one<{ since: number | string | null }>(
        "SELECT min(e.created_at) AS since FROM webhook_subscriptions s JOIN webhook_endpoints e ON e.id = s.endpoint_id WHERE s.event_type IN (?, '*') AND e.status = 'enabled'",
        [eventType],
      );
      return row?.since == null ? null : Number(row.since);
    },

    findUnannouncedExpiredRequests(since: number, now: number, limit: number): Promise<ExpiredRequest[]> {
      return driver.all<ExpiredRequest>(
        `SELECT r.id, r.client_id, c.name AS client_name, r.status, r.agent_id, r.scope, r.resource, r.created_at, r.expires_at
        FROM authorization_requests r LEFT JOIN clients c ON c.id = r.client_id
        WHERE r.expires_at > ? AND r.expires_at <= ? AND r.status IN ('pending', 'authenticated') AND r.expiry_announced_at IS NULL
        ORDER BY r.expires_at LIMIT ?`,
        [since, now, limit],
      );
    },

    async markExpiryAnnounced(requestId: string, now: number, announce: WebhookEvent[]): Promise<boolean> {
      const done = await driver.write(
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
    },

    async disableFailing(
      id: string,
      reason: string,
      now: number,
      event: ConsoleEvent,
      announce: WebhookEvent[],
    ): Promise<boolean> {
      const done = await driver.write([
        {
          sql: "UPDATE webhook_endpoints SET status = 'disabled', disabled_reason = ?, updated_at = ? WHERE id = ? AND status = 'enabled'",
          params: [reason, now, id],
          guard: true,
        },
        consoleEventStep(event),
        ...announceSteps(announce),
      ]);
      return done !== null;
    },

    watch(listener: ChangeListener): Promise<() => Promise<void>> {
      return driver.listen(listener, WEBHOOK_CHANNEL);
    },

    async purge(before: number, requestsExpiredBefore?: number, batchSize = PURGE_BATCH): Promise<number> {
      // Settled deliveries whose last attempt is older than `before`, found through the status
      // index; then the expiries of requests no agent authenticated, whose requests are purged,
      // through their own index, in any state (a delivery in flight then finds no row, and its
      // attempt is not recorded). In batches, each one unit with its attempts, so a backlog never
      // holds the database. Both statements of a batch choose the same rows: one order, and no
      // row can newly qualify meanwhile.
      const settled = `SELECT message_id, endpoint_id FROM webhook_deliveries
      WHERE status IN ('delivered', 'failed') AND next_attempt_at < ?
      ORDER BY next_attempt_at, message_id, endpoint_id LIMIT ${batchSize}`;
      const purgedWithRequest = `SELECT message_id, endpoint_id FROM webhook_deliveries
      WHERE request_expires_at < ?
      ORDER BY request_expires_at, message_id, endpoint_id LIMIT ${batchSize}`;
      const inBatches = async (rows: string, cutoff: number) => {
        let total = 0;
        for (;;) {
          const [, deleted = 0] =
            (await driver.write([
              { sql: `DELETE FROM webhook_attempts WHERE (message_id, endpoint_id) IN (${rows})`, params: [cutoff] },
              { sql: `DELETE FROM webhook_deliveries WHERE (message_id, endpoint_id) IN (${rows})`, params: [cutoff] },
            ])) ?? [];
          total += deleted;
          if (deleted < batchSize) return total;
        }
      };
      return (
        (await inBatches(settled, before)) +
        (requestsExpiredBefore === undefined ? 0 : await inBatches(purgedWithRequest, requestsExpiredBefore))
      );
    },
  };
}

/** One row per event type an endpoint subscribes to. */
function subscriptionSteps(endpointId: string, events: string[]): Step[] {
  return events.map((eventType) => insert('webhook_subscriptions', { endpoint_id: endpointId, event_type: eventType }));
}
