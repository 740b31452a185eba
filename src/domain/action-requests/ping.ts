/**
 * CIBA's ping (OpenID CIBA Core 1.0 §10.2; docs/design.md §21): once an action request of a ping
 * client is decided (by the owner or the policy) or expires, `POST {endpoint}` with
 * `Authorization: Bearer {client_notification_token}` and `{"auth_req_id": "…"}`, through the
 * outbound guard the webhooks use (https only, no special-use address unless allowed, one
 * deadline). The due ping is written in the unit that decides or expires the request (the row's
 * notify_at), and each node's webhook dispatcher claims it under a lease: it survives a node's
 * end and is sent by one node. A failed ping is tried again a few times, then given up on: the
 * client can always poll.
 */
import type { Context } from '../../context.ts';
import type { ActionRequestRecord } from '../../store/action-requests.ts';
import { type AddressStage, guardedRequest, type OutboundOptions } from '../../outbound/request.ts';

/** Pauses before each retry of a ping (ms): four attempts within about two minutes. */
export const PING_RETRY_MS = [2_000, 15_000, 90_000];
/** How long a node holds a claimed ping (ms): longer than one attempt may take. */
const PING_LEASE_MS = 30_000;
/** How long one ping may take, connect to last byte, and the most of the answer read. */
const PING_TIMEOUT_MS = 10_000;
const PING_MAX_ANSWER = 4096;
/** Pings claimed at once by one node. */
const PING_BATCH = 16;

/** What a ping client's sealed value holds: the notification token, and the auth_req_id it names. */
export interface SealedPing {
  client_notification_token: string;
  auth_req_id: string;
}

/** How a ping is sent: the test seams and the trusted networks of the webhooks' guard. */
export interface PingOptions {
  fetch?: Pick<OutboundOptions, 'ca' | 'agent'>;
  allowAddress: (ip: string, stage: AddressStage) => boolean;
}

/** Why a ping failed, in words that name the host and never the token. */
export class PingFailed extends Error {}

/**
 * Marks the expired action requests expired (their pings due), then claims the pings due and
 * starts sending each; resolves with the sendings, which the dispatcher keeps among its deliveries
 * in flight. Every time is the server's clock (seconds, in ms), so a test that moves time moves them.
 *
 * @example
 * for (const sending of await sendDuePings(ctx, { allowAddress })) inFlight.add(sending);
 */
export async function sendDuePings(
  deps: Pick<Context, 'store' | 'clock' | 'secrets'>,
  options: PingOptions,
  onError: (error: unknown) => void,
): Promise<Promise<void>[]> {
  const now = deps.clock();
  await deps.store.actionRequests.expire(now);
  const nowMs = now * 1000;
  const claimed = await deps.store.actionRequests.claimNotifications(nowMs, nowMs + PING_LEASE_MS, PING_BATCH);
  return claimed.map((request) =>
    ping(deps, request, options).then(
      () =>
        deps.store.actionRequests.notified(request.id, {
          delivered: true,
          nowMs: deps.clock() * 1000,
          retryAtMs: null,
        }),
      async (error: unknown) => {
        onError(error);
        const pause = PING_RETRY_MS[request.notify_attempts - 1];
        const retryAtMs = pause === undefined ? null : deps.clock() * 1000 + pause;
        await deps.store.actionRequests.notified(request.id, {
          delivered: false,
          nowMs: deps.clock() * 1000,
          retryAtMs,
        });
      },
    ),
  );
}

/** One ping: resolves on a 2xx answer, rejects with PingFailed otherwise. */
async function ping(deps: Pick<Context, 'secrets'>, request: ActionRequestRecord, options: PingOptions): Promise<void> {
  if (!request.notification_endpoint || !request.notification_token_sealed)
    throw new PingFailed(`action request ${request.id} has no notification endpoint`);
  const sealed = JSON.parse(deps.secrets.box.open(request.notification_token_sealed)) as SealedPing;
  const answer = await guardedRequest(
    request.notification_endpoint,
    {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${sealed.client_notification_token}`,
      },
      body: JSON.stringify({ auth_req_id: sealed.auth_req_id }),
    },
    {
      ca: options.fetch?.ca,
      agent: options.fetch?.agent,
      allowAddress: options.allowAddress,
      timeoutMs: PING_TIMEOUT_MS,
      maxBytes: PING_MAX_ANSWER,
    },
    {
      failure: (host, reason) =>
        new PingFailed(`ping of action request ${request.id} to ${host ?? 'its endpoint'}: ${reason}`),
      tooLarge: 'truncate',
      what: 'the answer',
    },
  );
  if (answer.status < 200 || answer.status > 299)
    throw new PingFailed(`ping of action request ${request.id}: the endpoint answered ${answer.status}`);
}
