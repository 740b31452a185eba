/**
 * Endpoints do not wait on each other (docs/design.md §15, issue 35): a receiver that accepts
 * the connection and never answers holds only its own slots, while a healthy endpoint beside it
 * receives every event; after attempts with no answer its breaker opens (nothing is sent to it,
 * its deliveries wait pending), then one delivery is tried (half-open), and an answer resumes
 * the rest. Events are made through the management API; real HTTPS receivers; both engines.
 * Assertions are on order and state (who received what while what was still open), not time.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { DispatcherOptions } from '../../src/domain/webhooks/dispatcher.ts';
import { createWebhook } from '../../src/domain/webhooks/endpoints.ts';
import type { AccountRecord } from '../../src/store/accounts.ts';
import { accountWithKey } from '../helpers/api.ts';
import { createPasswordAccount, signIn } from '../helpers/console.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { allowLoopback, startWebhookReceiver } from '../helpers/webhook-receiver.ts';

type Receiver = Awaited<ReturnType<typeof startWebhookReceiver>>;

let receivers: Receiver[] = [];
let servers: TestServer[] = [];

afterEach(async () => {
  await Promise.all(servers.map((server) => server.close()));
  await Promise.all(receivers.map((receiver) => receiver.close()));
  servers = [];
  receivers = [];
});

/** A server whose dispatcher uses `options`, two receivers, and an admin with an API key. */
async function setUp(options: DispatcherOptions = {}) {
  const silent = await startWebhookReceiver();
  const healthy = await startWebhookReceiver();
  receivers.push(silent, healthy);
  silent.answer('hold');
  const server = await startTestServer({
    webhooks: { fetch: { ca: silent.ca, allowAddress: allowLoopback }, pollMs: 50, ...options },
  });
  servers.push(server);
  const { account, call } = await accountWithKey(server, { role: 'admin', key: { reach: 'all' } });
  const subscribe = async (receiver: Receiver) => {
    const made = await createWebhook(server.ctx, account as AccountRecord, {
      url: receiver.url,
      events: ['agent.created'],
    });
    receiver.useSecret(made.secret);
    return made.webhook.webhook.id;
  };
  return { server, silent, healthy, call, subscribe };
}

/** `n` agents made through the API, one after another: one agent.created event each. */
async function makeAgents(call: Awaited<ReturnType<typeof accountWithKey>>['call'], n: number, tag: string) {
  for (let i = 0; i < n; i++) expect((await call('POST', '/agents', { name: `${tag} ${i}` })).status).toBe(201);
}

/** The endpoint's deliveries by status, from the store. */
async function statuses(server: TestServer, id: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const d of await server.ctx.store.webhooks.listDeliveries(id, 1000))
    counts[d.status] = (counts[d.status] ?? 0) + 1;
  return counts;
}

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`not reached within ${ms} ms: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('a silent receiver beside a healthy one', () => {
  it('holds only its own slots: the healthy endpoint gets every event while every silent request is still open', async () => {
    // The default attempt deadline (10 s) keeps the silent requests open for the whole test.
    const { server, silent, healthy, call, subscribe } = await setUp();
    const silentId = await subscribe(silent);
    const healthyId = await subscribe(healthy);

    await makeAgents(call, 40, 'Fed');
    await healthy.until((all) => all.length >= 40, 8000);

    // Every request the silent receiver got is still open and unanswered, and there are only as
    // many as one endpoint's slots (16): the rest of its deliveries wait, pending, not attempted.
    expect(silent.open).toBe(silent.received.length);
    expect(silent.received.length).toBe(16);
    expect(silent.received.every((r) => r.status === null)).toBe(true);
    expect(await statuses(server, silentId)).toEqual({ delivering: 16, pending: 24 });
    // The log is written just after the answer.
    expect(
      await until(
        () => statuses(server, healthyId),
        (c) => c.delivered === 40,
      ),
    ).toEqual({ delivered: 40 });
    expect(new Set(healthy.received.map((r) => r.id)).size).toBe(40);
    expect(healthy.received.every((r) => r.verified)).toBe(true);

    // More events while the silent slots are still held: the healthy endpoint keeps up.
    await makeAgents(call, 10, 'More');
    await healthy.until((all) => all.length >= 50, 8000);
    expect(silent.open).toBe(16);
    expect(silent.received.length).toBe(16);
  });

  it('pauses the silent endpoint (breaker open), tries one delivery after the pause, and resumes on an answer', async () => {
    const { server, silent, healthy, call, subscribe } = await setUp({
      timeoutMs: 300,
      retryDelaysMs: Array.from({ length: 20 }, () => 20),
      pauseAfterUnanswered: 3,
      pauseMs: 1500,
      // Never disabled here: the breaker is what is tested.
      disableAfterFailingMs: 3_600_000,
      disableAfterFailedMessages: 1000,
    });
    const silentId = await subscribe(silent);
    await subscribe(healthy);

    await makeAgents(call, 20, 'Paused');
    // The first slots time out unanswered; the breaker opens.
    const paused = await until(
      async () => (await server.ctx.store.webhooks.find(silentId))!.webhook,
      (w) => w.paused_until !== null,
    );
    expect(paused.status).toBe('enabled');
    expect(paused.paused_reason).toMatch(/^\d+ attempts in a row got no answer \(.+\); paused for 2 seconds/);
    await healthy.until((all) => all.length >= 20);

    // While paused: nothing is sent to it, nothing is in flight, and its deliveries wait, pending,
    // none of them given up on; the silent receiver's count stays where it was.
    const sentBeforePause = await until(
      async () => (await statuses(server, silentId)).delivering ?? 0,
      (n) => n === 0,
    ).then(() => silent.received.length);
    expect(sentBeforePause).toBeGreaterThanOrEqual(3);
    const whilePaused = await statuses(server, silentId);
    expect(whilePaused).toEqual({ pending: 20 });
    const { webhook } = (await server.ctx.store.webhooks.find(silentId))!;
    expect(webhook.paused_until).toBeGreaterThan(Date.now());
    expect(webhook.consecutive_failures).toBe(0);

    // The API, the console's page and its delivery log say it is paused, and why.
    const shown = await call('GET', `/webhooks/${silentId}`);
    expect(shown.status).toBe(200);
    expect(shown.json).toMatchObject({
      status: 'enabled',
      paused_until: new Date(webhook.paused_until!).toISOString(),
      paused_reason: webhook.paused_reason,
    });
    const person = await createPasswordAccount(server.ctx, { role: 'admin' });
    const session = await signIn(server.baseUrl, person.email);
    const page = await session.get(`/console/admin/webhooks/${silentId}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('<span class="badge wait">paused</span>');
    expect(page.text).toMatch(
      /<p id="delivery-pause" class="warning">Paused until <time[^>]*>.*?<\/time>: \d+ attempts in a row got no answer .*Its deliveries wait; none is lost\.<\/p>/s,
    );
    expect(silent.received.length).toBe(sentBeforePause);

    // Half-open: after the pause, one delivery is tried, alone; unanswered, the pause doubles.
    await silent.until((all) => all.length === sentBeforePause + 1, 5000);
    const reopened = await until(
      async () => (await server.ctx.store.webhooks.find(silentId))!.webhook,
      (w) => w.paused_until !== null && w.paused_until > Date.now() && w.paused_reason !== paused.paused_reason,
    );
    expect(reopened.paused_reason).toMatch(
      /^the delivery tried after a pause got no answer either .*paused for 3 seconds/,
    );
    expect(silent.received.length).toBe(sentBeforePause + 1);

    // The receiver answers again: the next trial is answered, the breaker closes, all is delivered.
    silent.answer(204);
    await until(
      () => statuses(server, silentId),
      (counts) => counts.delivered === 20,
      15_000,
    );
    const closed = (await server.ctx.store.webhooks.find(silentId))!.webhook;
    expect(closed).toMatchObject({ paused_until: null, paused_reason: null, unanswered_attempts: 0 });
    const answered = silent.received.filter((r) => r.status === 204);
    expect(new Set(answered.map((r) => r.id)).size).toBe(20);
    expect(answered.every((r) => r.verified)).toBe(true);
  });

  it('resumes a paused endpoint at once when an admin enables it (console "Resume now", API, CLI)', async () => {
    const { server, silent, call, subscribe } = await setUp({
      timeoutMs: 300,
      retryDelaysMs: Array.from({ length: 20 }, () => 20),
      pauseAfterUnanswered: 3,
      // Far longer than the test: only the admin's act can end it.
      pauseMs: 600_000,
      maxPauseMs: 600_000,
    });
    const silentId = await subscribe(silent);
    await makeAgents(call, 5, 'Resumed');
    await until(
      async () => (await server.ctx.store.webhooks.find(silentId))!.webhook,
      (w) => w.paused_until !== null,
    );
    const person = await createPasswordAccount(server.ctx, { role: 'admin' });
    const session = await signIn(server.baseUrl, person.email);
    const page = await session.get(`/console/admin/webhooks/${silentId}`);
    expect(page.text).toContain('Resume now');

    silent.answer(204);
    const resumed = await session.submit(`/console/admin/webhooks/${silentId}/enable`);
    expect(resumed.posted.status).toBe(303);
    expect((await server.ctx.store.webhooks.find(silentId))!.webhook).toMatchObject({
      status: 'enabled',
      paused_until: null,
      paused_reason: null,
      unanswered_attempts: 0,
    });
    await until(
      () => statuses(server, silentId),
      (counts) => counts.delivered === 5,
    );
  });
});
