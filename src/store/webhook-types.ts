/**
 * Webhooks' records (docs/design.md §15): endpoints and what they subscribe to, the outbox of
 * deliveries and the log of attempts. Delivery times are epoch milliseconds; the endpoints'
 * created_at and updated_at are epoch seconds like every other record's.
 */

import type { ConsoleEvent } from './history.ts';
import type { ChangeListener } from './driver.ts';
import type { WebhookEvent } from './outbox.ts';

export type WebhookStatus = 'enabled' | 'disabled';
export type DeliveryStatus = 'pending' | 'delivering' | 'delivered' | 'failed';

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
  created_at: number;
  updated_at: number;
}

/** An endpoint with the event types it subscribes to ('*': every event). */
export interface WebhookWithEvents {
  webhook: WebhookRecord;
  events: string[];
}

export type WebhookPatch = Partial<
  Pick<
    WebhookRecord,
    'url' | 'description' | 'secret_sealed' | 'status' | 'disabled_reason' | 'consecutive_failures' | 'failing_since'
  >
> & { updated_at: number };

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
}

export interface AttemptRecord {
  endpoint_id: string;
  message_id: string;
  attempt: number;
  at: number;
  duration_ms: number;
  /** The receiver's HTTP status, or null when there was no answer (then `error` says why). */
  status_code: number | null;
  error: string | null;
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

export interface WebhookStore {
  /** Stores an endpoint with its subscriptions, and the events announcing it, in one unit. */
  insertWebhook(webhook: WebhookRecord, events: string[], announce?: WebhookEvent[]): Promise<void>;
  findWebhook(id: string): Promise<WebhookWithEvents | undefined>;
  /** Every endpoint, oldest first. */
  listWebhooks(): Promise<WebhookWithEvents[]>;
  /**
   * Changes an endpoint (and replaces its subscriptions when `events` is given) with the events
   * announcing it, in one unit; false when there is no such endpoint.
   */
  updateWebhook(id: string, patch: WebhookPatch, events?: string[], announce?: WebhookEvent[]): Promise<boolean>;
  /** Deletes an endpoint with its subscriptions, deliveries and attempts; false when there was none. */
  deleteWebhook(id: string, announce?: WebhookEvent[]): Promise<boolean>;
  /** An endpoint's deliveries, newest first, before the message id `before` when given. */
  listDeliveries(endpointId: string, limit: number, before?: string): Promise<DeliveryRecord[]>;
  findDelivery(endpointId: string, messageId: string): Promise<DeliveryRecord | undefined>;
  /** The attempts of one delivery, oldest first. */
  listAttempts(endpointId: string, messageId: string): Promise<AttemptRecord[]>;
  /** Makes a delivery due now again (send again), whatever its state; false when there is none. */
  redeliver(endpointId: string, messageId: string, now: number): Promise<boolean>;
  /** Writes the deliveries of `events` for every enabled endpoint subscribed to them (no endpoint: no row). */
  announce(events: WebhookEvent[]): Promise<void>;
  /**
   * Claims up to `limit` due deliveries of enabled endpoints for `owner` until `leaseUntil`:
   * pending ones due by `now`, and delivering ones whose lease ran out (their node died).
   */
  claimDue(owner: string, now: number, leaseUntil: number, limit: number): Promise<DeliveryRecord[]>;
  /**
   * Records an attempt and its outcome, if `owner` still holds the lease; the endpoint's run of
   * failures is reset by a success and extended by a message given up on.
   */
  finishAttempt(owner: string, outcome: AttemptOutcome): Promise<boolean>;
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
  disableFailingWebhook(
    id: string,
    reason: string,
    now: number,
    event: ConsoleEvent,
    announce: WebhookEvent[],
  ): Promise<boolean>;
  /** Hears, on every node, of each committed unit that wrote deliveries (or made one due again). */
  watch(listener: ChangeListener): Promise<() => Promise<void>>;
  /** Deletes delivered and failed deliveries whose last attempt was before `before` (epoch ms), with their attempts; returns how many deliveries. */
  purge(before: number): Promise<number>;
}
