/**
 * Anonymous requests cannot fill the outbox (SECURITY.md, "Filling the disk"; issue 35): anyone
 * may open GET /authorize, and each request that expires is announced to every endpoint
 * subscribed to `authorization_request.expired`. Those deliveries are purged with their
 * requests (PURGE_UNAUTHENTICATED_AFTER after expiry), delivered or not, so the outbox holds at
 * most one such delivery per endpoint and stored request; the expiry of a request an agent
 * authenticated is kept WEBHOOK_RETENTION like any other event. Real HTTP, real receivers, the
 * server's own purge; both engines.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../src/domain/accounts.ts';
import { announceExpiredRequests } from '../../src/domain/webhooks/dispatcher.ts';
import { createWebhook } from '../../src/domain/webhooks/endpoints.ts';
import { purgeOnce } from '../../src/server.ts';
import { authenticate, type Party, setupParty, startFlow } from '../helpers/flow.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { allowLoopback, startWebhookReceiver } from '../helpers/webhook-receiver.ts';

type Receiver = Awaited<ReturnType<typeof startWebhookReceiver>>;

const REQUEST_TTL = 600;
const PURGE_UNAUTHENTICATED_AFTER = 600;

let server: TestServer;
let answering: Receiver;
let failing: Receiver;
let endpoints: string[];
let party: Party;

beforeAll(async () => {
  answering = await startWebhookReceiver();
  failing = await startWebhookReceiver();
  failing.answer(503);
  server = await startTestServer({
    env: { REQUEST_TTL: String(REQUEST_TTL), PURGE_UNAUTHENTICATED_AFTER: String(PURGE_UNAUTHENTICATED_AFTER) },
    webhooks: {
      fetch: { ca: answering.ca, allowAddress: allowLoopback },
      pollMs: 50,
      // The failing endpoint's deliveries stay pending (retried a minute later), and it stays enabled.
      retryDelaysMs: [60_000],
      disableAfterFailedMessages: 100_000,
    },
  });
  const admin = await createAccount(server.ctx, { email: 'expiries@example.com', role: 'admin' });
  endpoints = [];
  for (const receiver of [answering, failing]) {
    const made = await createWebhook(server.ctx, admin, {
      url: receiver.url,
      events: ['authorization_request.expired'],
    });
    receiver.useSecret(made.secret);
    endpoints.push(made.webhook.webhook.id);
  }
  party = await setupParty(server);
});
afterAll(async () => {
  await server.close();
  await Promise.all([answering.close(), failing.close()]);
});

/** Every delivery of the endpoints, from the store. */
async function outbox() {
  const all = await Promise.all(endpoints.map((id) => server.ctx.store.webhooks.listDeliveries(id, 1000)));
  return all.flat().map((delivery) => ({ ...delivery, request: JSON.parse(delivery.payload).data.request.id }));
}

describe('expiries of requests no agent authenticated', () => {
  it('are purged with their requests, delivered or not: the outbox does not grow under a flood', async () => {
    const WAVES = 3;
    const PER_WAVE = 25;
    const stored: string[] = [];
    for (let wave = 0; wave < WAVES; wave++) {
      // A crawler's requests: GET /authorize over HTTP, never followed by an agent.
      const ids: string[] = [];
      for (let i = 0; i < PER_WAVE; i++) ids.push((await startFlow(server, party)).requestId);
      server.clock.advance(REQUEST_TTL + 1);
      await announceExpiredRequests(server.ctx);
      // Announced to both endpoints: delivered to one, pending (503, retried later) at the other.
      await answering.until((all) => ids.every((id) => all.some((r) => r.payload.data.request.id === id)), 10_000);
      const announced = (await outbox()).filter((d) => ids.includes(d.request));
      expect(announced).toHaveLength(2 * PER_WAVE);

      // The server's purge, once the requests are past PURGE_UNAUTHENTICATED_AFTER.
      server.clock.advance(PURGE_UNAUTHENTICATED_AFTER + 1);
      await purgeOnce(server.ctx);
      stored.length = 0;
      for (const id of ids) if (await server.ctx.store.requests.find(id)) stored.push(id);
      expect(stored).toEqual([]);
      // The bound: no more deliveries than endpoints × stored requests; here none is left,
      // whatever its state (the failing endpoint's were still pending).
      const left = await outbox();
      expect(left.filter((d) => d.event_type === 'authorization_request.expired')).toEqual([]);
      expect(left.length).toBeLessThanOrEqual(endpoints.length * stored.length);
    }
  });

  it('keeps the expiry of a request an agent authenticated for the retention, as any event', async () => {
    const started = await startFlow(server, party);
    expect((await authenticate(server, party, started.requestId)).status).toBe(200);
    server.clock.advance(REQUEST_TTL + 1);
    await announceExpiredRequests(server.ctx);
    await answering.until((all) => all.some((r) => r.payload.data.request.id === started.requestId));
    server.clock.advance(PURGE_UNAUTHENTICATED_AFTER + 1);
    await purgeOnce(server.ctx);
    const mine = (await outbox()).filter((d) => d.request === started.requestId);
    expect(mine).toHaveLength(2);
    expect(JSON.parse(mine[0]!.payload).data.request.status_before).toBe('authenticated');
  });
});
