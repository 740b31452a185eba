/**
 * The webhook dispatcher (docs/design.md §15), one per node: it claims due deliveries from the
 * outbox under a lease (PostgreSQL skips rows another node is claiming, so each delivery is made
 * by one node; a node that dies leaves its claims to another once the lease runs out), signs
 * each with the endpoint's secret as Standard Webhooks says, POSTs it under the outbound guards,
 * and records the attempt: delivered on a 2xx, else due again after a growing pause, until it is
 * given up on. Endpoints do not wait on each other: each has a few slots in flight, a slot is
 * refilled as soon as its delivery ends, a claim serves the endpoints in turns, and an endpoint
 * whose attempts get no answer is paused (its breaker opens) rather than holding its slots. An
 * endpoint that keeps failing is disabled and its owner told. It wakes as soon as a unit that
 * wrote deliveries commits, and polls every second besides. The same timer announces requests
 * that expired while waiting.
 */
import { randomBytes } from 'node:crypto';
import { Agent } from 'node:https';
import { type BlockList, isIPv4 } from 'node:net';
import { Webhook } from 'standardwebhooks';
import type { Context } from '../../context.ts';
import type { DeliveryRecord, WebhookRecord } from '../../store/webhooks.ts';
import { type AddressStage, guardedRequest, type OutboundOptions } from '../../outbound/request.ts';
import { isSpecialUseAddress } from '../../outbound/special-use.ts';
import { sendDuePings } from '../action-requests/ping.ts';
import { deliveryFailureWords } from './delivery-failures.ts';
import { trustedNetworks, webhookSecret } from './endpoints.ts';
import { requestExpired, webhookDisabled, webhookHost } from './events.ts';

/**
 * Pauses before each retry, after the first attempt: Standard Webhooks' suggested schedule
 * (5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h; eight attempts over about 28 hours).
 */
export const RETRY_SCHEDULE_MS = [5e3, 3e5, 18e5, 72e5, 18e6, 36e6, 36e6];

export interface DispatcherOptions {
  /** Test seams of the outbound request (a CA, loopback allowed); production passes none. */
  fetch?: Pick<OutboundOptions, 'ca' | 'allowAddress'>;
  /** Pauses before each retry (RETRY_SCHEDULE_MS); each is jittered by ±10 %. */
  retryDelaysMs?: number[];
  /** How often to look for due deliveries without a wake-up (1000 ms). */
  pollMs?: number;
  /** An endpoint whose every attempt failed for this long is disabled (24 hours). */
  disableAfterFailingMs?: number;
  /** …or once this many of its messages in a row were given up on (5). */
  disableAfterFailedMessages?: number;
  /**
   * Deliveries in flight to one endpoint at once, all nodes together (16): a silent receiver
   * holds no more than these, and every other endpoint keeps its own.
   */
  perEndpoint?: number;
  /** Deliveries in flight on this node at once, all endpoints together (128). */
  maxInFlight?: number;
  /** Attempts in a row with no answer (timed out, could not connect) that pause an endpoint (5). */
  pauseAfterUnanswered?: number;
  /** The first pause (30 s); each further trial with no answer doubles it, up to maxPauseMs. */
  pauseMs?: number;
  /** The longest pause (10 minutes). */
  maxPauseMs?: number;
  /**
   * Expiries one sweep announces at most (1,000); when more wait, the deliveries due go first
   * and the next round sweeps again at once.
   */
  expiriesPerSweep?: number;
  /** How long one POST may take, connect to last byte (10 s). */
  timeoutMs?: number;
  /** The most of a receiver's answer that is read (64 KiB). */
  maxResponseBytes?: number;
}

type Deps = Pick<Context, 'store' | 'clock' | 'secrets' | 'config' | 'mailer'>;

const DEFAULTS = {
  pollMs: 1000,
  disableAfterFailingMs: 86_400_000,
  disableAfterFailedMessages: 5,
  perEndpoint: 16,
  maxInFlight: 128,
  pauseAfterUnanswered: 5,
  pauseMs: 30_000,
  maxPauseMs: 600_000,
  expiriesPerSweep: 1000,
  timeoutMs: 10_000,
  maxResponseBytes: 65_536,
};
/** How long stop() waits for deliveries in flight. */
const STOP_GRACE_MS = 2000;
/** How long a connection to a receiver is kept unused (under the 5 s many servers keep one open). */
const IDLE_CONNECTION_MS = 4000;
/** How often the expiry sweep runs, and how far back it looks (seconds). */
const EXPIRY_SWEEP_MS = 5000;
const EXPIRY_LOOKBACK = 3600;
/** How far each sweep reaches back before the previous one: commits and clocks of other nodes lag. */
const EXPIRY_OVERLAP = 60;
/** Expired requests read at once, and announced at once (each in its own unit: a commit shares them). */
const EXPIRY_BATCH = 100;
const EXPIRY_CONCURRENCY = 8;

/**
 * How often the CIBA pings are looked for at most (ms): a round runs at each delivery's end, and
 * two statements a round would add up under a webhook load; a decision's ping waits at most this
 * (or the poll's second).
 */
const PING_ROUND_MS = 200;

/** The error wording of a failed POST, as the delivery log shows it. */
class DeliveryError extends Error {}

/**
 * The dispatcher of this node.
 *
 * @example
 * const dispatcher = new WebhookDispatcher(ctx);
 * await dispatcher.start();   // at start-up, on every node
 * await dispatcher.stop();    // at shutdown
 */
export class WebhookDispatcher {
  private readonly options: Required<Omit<DispatcherOptions, 'fetch'>> & Pick<DispatcherOptions, 'fetch'>;
  private readonly node = randomBytes(6).toString('hex');
  private readonly allowed: BlockList;
  /**
   * Connections to receivers, kept between deliveries: a TLS handshake is most of a delivery's
   * CPU (docs/performance.md, "Webhooks"). An idle one is closed after IDLE_CONNECTION_MS, or
   * sooner if the receiver's Keep-Alive header says so.
   */
  private readonly connections = new Agent({ keepAlive: true, timeout: IDLE_CONNECTION_MS });
  private timer: NodeJS.Timeout | undefined;
  private unwatch: (() => Promise<void>) | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = true;
  private lastSweep = 0;
  /** When this node last looked for CIBA pings (ms): at most every PING_ROUND_MS, however often it wakes. */
  private lastPings = 0;
  /** Up to when (epoch seconds) the expiry sweep has announced; null before the first sweep. */
  private sweptUntil: number | null = null;
  /** Deliveries being sent by this node; each one's end frees its slot and looks for more. */
  private readonly inFlight = new Set<Promise<void>>();
  /** Told of each delivery's outcome (for logs and tests). */
  onError: (error: unknown) => void = () => {};

  constructor(
    private readonly deps: Deps,
    options: DispatcherOptions = {},
  ) {
    this.options = { ...DEFAULTS, retryDelaysMs: RETRY_SCHEDULE_MS, ...options };
    this.allowed = trustedNetworks(deps.config.webhookAllowedAddresses);
  }

  async start(): Promise<void> {
    if (!this.stopped) return;
    this.stopped = false;
    try {
      this.unwatch = await this.deps.store.webhooks.watch({
        changed: () => this.wake(),
        resumed: () => this.wake(),
      });
    } catch (error) {
      // The poll below still finds every delivery, a second later at most.
      this.onError(error);
    }
    this.timer = setInterval(() => this.wake(), this.options.pollMs);
    this.timer.unref();
    this.wake();
  }

  /**
   * Stops claiming. Deliveries in flight get STOP_GRACE_MS to finish; one still waiting on its
   * receiver after that is left to its lease: this node or another sends it again once it runs out.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.unwatch?.().catch(() => undefined);
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, STOP_GRACE_MS);
    });
    await Promise.race([Promise.allSettled([this.running, ...this.inFlight]), grace]);
    clearTimeout(timer);
    this.connections.destroy();
  }

  /** Looks for due deliveries now (again once the current round ends, if one is running). */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.round()
      .catch((error: unknown) => this.onError(error))
      .finally(() => {
        this.running = undefined;
        if (this.again) {
          this.again = false;
          this.wake();
        }
      });
  }

  /**
   * Runs the expiry sweep when it is due, then fills this node's free slots with due deliveries
   * and starts them; it does not wait for them: each one's end wakes it again to refill its slot.
   */
  private async round(): Promise<void> {
    if (Date.now() - this.lastSweep >= EXPIRY_SWEEP_MS) {
      this.lastSweep = Date.now();
      // Each sweep looks back to a minute before the last one reached (an hour at start-up), so
      // it reads the requests of seconds, not of the whole hour, however busy the server is.
      const since = this.sweptUntil === null ? undefined : this.sweptUntil - EXPIRY_OVERLAP;
      await announceExpiredRequests(this.deps, since, this.options.expiriesPerSweep)
        .then((sweep) => {
          this.sweptUntil = sweep.through;
          // A flood of expiries (a crawler's abandoned requests) is announced a share per round,
          // between the deliveries due, rather than holding them up until it is all announced.
          if (!sweep.complete) {
            this.lastSweep = 0;
            this.again = true;
          }
        })
        .catch((error: unknown) => this.onError(error));
    }
    // Owners approve actions (docs/design.md §21): CIBA's pings go through the same guard, timer and slots.
    if (this.deps.config.actionApprovals && Date.now() - this.lastPings >= PING_ROUND_MS) {
      this.lastPings = Date.now();
      await this.sendPings().catch((error: unknown) => this.onError(error));
    }
    for (;;) {
      if (this.stopped) return;
      const free = this.options.maxInFlight - this.inFlight.size;
      if (free <= 0) return;
      const now = Date.now();
      const owner = `${this.node}.${randomBytes(6).toString('hex')}`;
      const claimed = await this.deps.store.webhooks.claimDue(
        owner,
        now,
        now + this.deps.config.webhookLease * 1000,
        free,
        this.options.perEndpoint,
      );
      if (claimed.length === 0) return;
      const endpoints = new Map<string, Promise<WebhookRecord | undefined>>();
      const endpointOf = (id: string) => {
        let found = endpoints.get(id);
        if (!found) {
          found = this.deps.store.webhooks.find(id).then((w) => w?.webhook);
          endpoints.set(id, found);
        }
        return found;
      };
      for (const delivery of claimed) {
        const sending: Promise<void> = endpointOf(delivery.endpoint_id)
          .then((endpoint) => (endpoint ? this.deliver(owner, endpoint, delivery) : undefined))
          .catch((error: unknown) => this.onError(error))
          .finally(() => {
            this.inFlight.delete(sending);
            this.wake();
          });
        this.inFlight.add(sending);
      }
      // Fewer than asked: the endpoints with deliveries due have no free slot left, or none is due.
      if (claimed.length < free) return;
    }
  }

  /** One attempt of one delivery, and what follows from it. */
  private async deliver(owner: string, endpoint: WebhookRecord, delivery: DeliveryRecord): Promise<void> {
    const started = Date.now();
    let statusCode: number | null = null;
    let error: string | null = null;
    // Signed at the attempt's start, so the log's time and webhook-timestamp agree.
    const headers = this.signedHeaders(endpoint, delivery, new Date(started));
    try {
      statusCode = await this.post(endpoint, delivery, headers);
      if (statusCode < 200 || statusCode > 299) error = `the receiver answered HTTP ${statusCode}`;
    } catch (failure) {
      error = failure instanceof DeliveryError ? failure.message : 'the delivery could not be made';
    }
    const finished = Date.now();
    const attempt = delivery.attempts + 1;
    const delays = this.options.retryDelaysMs;
    const status = error === null ? 'delivered' : attempt > delays.length ? 'failed' : 'pending';
    const pause = status === 'pending' ? delays[attempt - 1]! * (0.9 + Math.random() * 0.2) : 0;
    // The breaker first, while this delivery still holds its slot: were the slot given back
    // before the pause is set, a half-open endpoint would have a slot free for a second trial.
    if (statusCode === null) await this.pauseIfUnanswered(endpoint.id, error ?? '', finished);
    await this.deps.store.webhooks.finishAttempt(owner, {
      attempt: {
        endpoint_id: endpoint.id,
        message_id: delivery.message_id,
        attempt,
        at: started,
        duration_ms: finished - started,
        status_code: statusCode,
        error: error?.slice(0, 500) ?? null,
        request_headers: JSON.stringify(headers),
      },
      status,
      next_attempt_at: Math.round(finished + pause),
    });
    if (status !== 'delivered') await this.disableIfFailing(endpoint.id, finished);
  }

  /**
   * Opens the endpoint's breaker once pauseAfterUnanswered attempts in a row got no answer: it
   * is sent nothing for a pause (no slot held, its deliveries pending and not attempted), then
   * one delivery is tried (half-open); an answer of any kind closes the breaker, none pauses it
   * twice as long as the time before (up to maxPauseMs). Every node reads the same pause from
   * the endpoint's row. The count is set to the threshold when the breaker first opens, plus one
   * per trial after: the slots' attempts that time out together must not count as trials.
   */
  private async pauseIfUnanswered(id: string, error: string, now: number): Promise<void> {
    const webhook = (await this.deps.store.webhooks.find(id))?.webhook;
    const { pauseAfterUnanswered, pauseMs, maxPauseMs } = this.options;
    if (webhook?.status !== 'enabled') return;
    if (webhook.paused_until !== null && webhook.paused_until > now) return;
    // The attempt being recorded counts too: its finishAttempt follows the pause.
    const unanswered = webhook.unanswered_attempts + 1;
    if (unanswered < pauseAfterUnanswered) return;
    const trials = webhook.paused_until === null ? 0 : unanswered - pauseAfterUnanswered;
    const length = Math.min(maxPauseMs, pauseMs * 2 ** Math.min(trials, 20));
    // The log's words may be long (a host, a certificate's names): the reason fits its column.
    const why = error.length > 300 ? `${error.slice(0, 299)}…` : error;
    const reason =
      trials === 0
        ? `${unanswered} attempts in a row got no answer (${why}); paused for ${duration(length)}, then one delivery is tried`
        : `the delivery tried after a pause got no answer either (${why}); paused for ${duration(length)}, then one is tried again`;
    await this.deps.store.webhooks.pause(
      id,
      { seen: webhook.unanswered_attempts, count: pauseAfterUnanswered + trials, until: now + length, reason },
      now,
    );
  }

  /**
   * The headers of one attempt, signed as Standard Webhooks says: what the delivery log shows
   * (the signature is an HMAC of a payload the admin sees; the secret is never shown).
   */
  private signedHeaders(endpoint: WebhookRecord, delivery: DeliveryRecord, sentAt: Date): Record<string, string> {
    return {
      'content-type': 'application/json',
      'user-agent': 'agentauth-webhooks',
      'webhook-id': delivery.message_id,
      'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)),
      'webhook-signature': new Webhook(webhookSecret(this.deps, endpoint)).sign(
        delivery.message_id,
        sentAt,
        delivery.payload,
      ),
    };
  }

  /**
   * Whether a delivery may reach `ip` (webhooks' guard, docs/design.md §15): any address not of
   * special use, or one in WEBHOOK_ALLOWED_ADDRESSES (or a test's seam). Saving a URL asks it too.
   *
   * @example
   * ctx.webhooks.addressAllowed('127.0.0.1', 'resolved'); // false unless 127.0.0.1 is allowed
   */
  addressAllowed(ip: string, stage: AddressStage): boolean {
    return !isSpecialUseAddress(ip) || this.options.fetch?.allowAddress?.(ip, stage) === true || this.isAllowed(ip);
  }

  /** POSTs the delivery with its signed headers; resolves with the receiver's status. */
  private async post(
    endpoint: WebhookRecord,
    delivery: DeliveryRecord,
    headers: Record<string, string>,
  ): Promise<number> {
    const allowAddress = (ip: string, stage: AddressStage) =>
      this.options.fetch?.allowAddress?.(ip, stage) === true || this.isAllowed(ip);
    const answer = await guardedRequest(
      endpoint.url,
      { method: 'POST', headers, body: delivery.payload },
      {
        ca: this.options.fetch?.ca,
        allowAddress,
        agent: this.connections,
        timeoutMs: this.options.timeoutMs,
        maxBytes: this.options.maxResponseBytes,
      },
      {
        // The admin who chose the URL is told what really failed (delivery-failures.ts).
        failure: (host, reason, unreached) =>
          new DeliveryError(unreached && host ? deliveryFailureWords(host, unreached) : reason),
        // Redirects are not followed: a 3xx is an answer like any other non-2xx.
        tooLarge: 'truncate',
        what: 'the answer',
      },
    );
    return answer.status;
  }

  /** Starts the CIBA pings due (ping.ts), each held among the deliveries in flight until it ends. */
  private async sendPings(): Promise<void> {
    const allowAddress = (ip: string, stage: AddressStage) =>
      this.options.fetch?.allowAddress?.(ip, stage) === true || this.isAllowed(ip);
    const sendings = await sendDuePings(
      this.deps,
      { fetch: { ca: this.options.fetch?.ca, agent: this.connections }, allowAddress },
      this.onError,
    );
    for (const each of sendings) {
      const sending: Promise<void> = each
        .catch((error: unknown) => this.onError(error))
        .finally(() => this.inFlight.delete(sending));
      this.inFlight.add(sending);
    }
  }

  private isAllowed(ip: string): boolean {
    try {
      return this.allowed.check(ip, isIPv4(ip) ? 'ipv4' : 'ipv6');
    } catch {
      return false;
    }
  }

  /**
   * Disables the endpoint when every attempt has failed for disableAfterFailingMs, or when
   * disableAfterFailedMessages messages in a row were given up on; its owner is told by mail
   * when SMTP is configured.
   */
  private async disableIfFailing(id: string, now: number): Promise<void> {
    const webhook = (await this.deps.store.webhooks.find(id))?.webhook;
    if (webhook?.status !== 'enabled') return;
    const failingFor = webhook.failing_since === null ? 0 : now - webhook.failing_since;
    let reason: string | null = null;
    if (webhook.consecutive_failures >= this.options.disableAfterFailedMessages)
      reason = `${webhook.consecutive_failures} messages in a row could not be delivered`;
    else if (failingFor >= this.options.disableAfterFailingMs)
      reason = `every delivery failed for ${duration(failingFor)}`;
    if (reason === null) return;
    const disabled = await this.deps.store.webhooks.disableFailing(
      id,
      reason,
      this.deps.clock(),
      { at: this.deps.clock(), actor_id: null, action: 'webhook.disabled', target: id, ip: null, detail: reason },
      [webhookDisabled(webhook, reason)],
    );
    if (!disabled) return;
    const mailer = this.deps.mailer;
    const owner = mailer ? await this.deps.store.accounts.find(webhook.account_id) : undefined;
    if (mailer && owner)
      await mailer
        .send({
          to: owner.email,
          subject: 'agentauth disabled a webhook that kept failing',
          text: `Hello${owner.name ? ` ${owner.name}` : ''},\n\nthe webhook ${webhook.id} to ${webhookHost(webhook.url)}${webhook.description ? ` (${webhook.description})` : ''} was disabled: ${reason}.\n\nIts undelivered messages wait. Once the receiver works again, enable the webhook in the console (Webhooks), with \`agentauth webhook enable ${webhook.id}\` or the API, and they are sent.\n`,
        })
        .catch((error: unknown) => this.onError(error));
  }
}

/** A span as a reason says it: '26 hours', '15 minutes', '3 seconds'. */
function duration(ms: number): string {
  if (ms >= 7_200_000) return `${Math.round(ms / 3_600_000)} hours`;
  if (ms >= 120_000) return `${Math.round(ms / 60_000)} minutes`;
  const seconds = Math.max(1, Math.round(ms / 1000));
  return seconds === 1 ? '1 second' : `${seconds} seconds`;
}

/** What one expiry sweep did. */
export interface ExpirySweep {
  /** Requests it announced (another node may have announced some it found). */
  announced: number;
  /** Whether it announced every expiry up to now, or stopped at its limit. */
  complete: boolean;
  /** Up to when (epoch seconds) it announced every expiry: now, or the last one it reached. */
  through: number;
}

/**
 * Announces (authorization_request.expired) each request that expired while pending or
 * authenticated since `since` (at most an hour ago), soonest first and at most `most` of them,
 * once (a column marks it), and only while some endpoint subscribes to the event, to the
 * endpoints that existed when it expired: a new endpoint hears of what happens after it is
 * made, not of the hour before it. Every node may run it: the mark is a guarded update.
 *
 * @example
 * await announceExpiredRequests(ctx); // { announced: 3, complete: true, through: 1764292000 }
 */
export async function announceExpiredRequests(
  deps: Pick<Context, 'store' | 'clock'>,
  since?: number,
  most = Number.POSITIVE_INFINITY,
): Promise<ExpirySweep> {
  const now = deps.clock();
  const subscribed = await deps.store.webhooks.subscribedSince('authorization_request.expired');
  if (subscribed === null) return { announced: 0, complete: true, through: now };
  // `from` is exclusive; an endpoint made in the second a request expired hears of it.
  const from = Math.max(since ?? 0, now - EXPIRY_LOOKBACK, subscribed - 1);
  let announced = 0;
  let reached = 0;
  for (;;) {
    const batch = Math.max(1, Math.min(EXPIRY_BATCH, most - reached));
    const expired = await deps.store.webhooks.findUnannouncedExpiredRequests(from, now, batch);
    for (let i = 0; i < expired.length; i += EXPIRY_CONCURRENCY) {
      const marked = await Promise.all(
        expired
          .slice(i, i + EXPIRY_CONCURRENCY)
          .map((request) => deps.store.webhooks.markExpiryAnnounced(request.id, now, [requestExpired(request)])),
      );
      announced += marked.filter(Boolean).length;
    }
    reached += expired.length;
    if (expired.length < batch) return { announced, complete: true, through: now };
    if (reached >= most) return { announced, complete: false, through: expired.at(-1)!.expires_at };
  }
}
