/**
 * Webhooks with several nodes on one PostgreSQL database (docs/design.md §15): `agentauth serve`
 * processes share the outbox; each delivery is made by one node (FOR UPDATE SKIP LOCKED), and a
 * node killed with SIGKILL while its deliveries are in flight loses none of them: another node
 * makes them once the lease has run out. The receiver is a real HTTPS server on loopback, let
 * through by WEBHOOK_ALLOWED_ADDRESSES and trusted through NODE_EXTRA_CA_CERTS.
 */
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createContext } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { createAccount } from '../src/domain/accounts.ts';
import type { Context } from '../src/context.ts';
import { createWebhook } from '../src/domain/webhooks/endpoints.ts';
import { openStore } from '../src/store/open.ts';
import { freePort } from './helpers/net.ts';
import { createDatabase } from './helpers/postgres-cluster.ts';
import { type ServerProcess, spawnServer, waitReady } from './helpers/server-process.ts';
import { startWebhookReceiver } from './helpers/webhook-receiver.ts';

const JWT_SECRET = 'multi-node-webhooks-secret-of-at-least-32-bytes';
const ISSUER = 'http://agentauth.test:8080';
const TEST_CA = fileURLToPath(new URL('./fixtures/tls/localhost.crt', import.meta.url));

let database: { url: string; drop(): Promise<void> };
let ctx: Context;
let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
const running: ServerProcess[] = [];

async function node(env: Record<string, string> = {}): Promise<ServerProcess> {
  const server = spawnServer({
    BASE_URL: ISSUER,
    PORT: String(await freePort()),
    HOST: '127.0.0.1',
    DATABASE_URL: database.url,
    JWT_SECRET,
    LOG_LEVEL: 'warn',
    WEBHOOK_ALLOWED_ADDRESSES: '127.0.0.1/32,::1/128',
    NODE_EXTRA_CA_CERTS: TEST_CA,
    ...env,
  });
  running.push(server);
  await waitReady(server);
  return server;
}

/** The outbox's rows by status, once none is pending or in flight (or the deadline passed). */
async function settledDeliveries(ms = 20_000): Promise<Record<string, number>> {
  const deadline = Date.now() + ms;
  for (;;) {
    const rows = await Promise.all(
      (await ctx.store.webhooks.list()).map((w) => ctx.store.webhooks.listDeliveries(w.webhook.id, 1000)),
    );
    const counts: Record<string, number> = {};
    for (const delivery of rows.flat()) counts[delivery.status] = (counts[delivery.status] ?? 0) + 1;
    if ((!counts.pending && !counts.delivering) || Date.now() > deadline) return counts;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

beforeAll(async () => {
  database = await createDatabase(inject('postgresUrl'));
  receiver = await startWebhookReceiver();
  // The test's own context writes the events, as the CLI would; it sends nothing itself.
  const store = await openStore(database.url, { poolSize: 2 });
  await store.migrate();
  ctx = await createContext(
    loadConfig({
      DATABASE_URL: database.url,
      JWT_SECRET,
      BASE_URL: ISSUER,
      WEBHOOK_ALLOWED_ADDRESSES: '127.0.0.1/32,::1/128',
    }),
    store,
    JWT_SECRET,
  );
  const admin = await createAccount(ctx, { email: 'hooks@example.com', role: 'admin' });
  const { secret } = await createWebhook(ctx, admin, { url: receiver.url, events: ['agent.created'] });
  receiver.useSecret(secret);
}, 60_000);

afterAll(async () => {
  await Promise.all(running.map((server) => server.kill('SIGKILL')));
  await ctx?.store.close();
  await receiver?.close();
  await database?.drop();
});

const events = (n: number, tag: string) =>
  Array.from({ length: n }, (_, i) => ({ type: 'agent.created', data: { agent: { id: `agt_${tag}${i}` } } }));

describe('webhooks on several nodes', () => {
  it('two nodes deliver each of 60 messages exactly once, verified', async () => {
    const [first, second] = await Promise.all([node(), node()]);
    for (const batch of [0, 1, 2]) await ctx.store.webhooks.announce(events(20, `n${batch}_`));
    await receiver.until((all) => new Set(all.map((r) => r.id)).size >= 60, 20_000);
    expect(await settledDeliveries()).toEqual({ delivered: 60 });
    // Every delivery is settled: nothing more can be sent, so the count is final.
    expect(receiver.received).toHaveLength(60);
    expect(new Set(receiver.received.map((r) => r.id)).size).toBe(60);
    expect(receiver.received.every((r) => r.verified)).toBe(true);
    await Promise.all([first!.kill('SIGTERM'), second!.kill('SIGTERM')]);
  }, 90_000);

  it('a node killed with SIGKILL mid-delivery loses no event: another node delivers after the lease', async () => {
    receiver.received.length = 0;
    receiver.answer('hold');
    const doomed = await node({ WEBHOOK_LEASE: '3' });
    await ctx.store.webhooks.announce(events(10, 'k_'));
    // The doomed node has claimed all ten and is waiting for the receiver's answers.
    await receiver.until((all) => all.length >= 10, 20_000);
    expect(await doomed.kill('SIGKILL')).toEqual({ code: null, signal: 'SIGKILL' });
    receiver.answer(204);
    await node({ WEBHOOK_LEASE: '3' });
    expect(await settledDeliveries(30_000)).toMatchObject({ delivered: 70 });
    const answered = new Set(receiver.received.filter((r) => r.status === 204).map((r) => r.id));
    expect(answered.size).toBe(10);
    expect(receiver.received.every((r) => r.verified)).toBe(true);
  }, 90_000);
});
