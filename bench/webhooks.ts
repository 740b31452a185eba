/**
 * npm run bench:webhooks [-- --postgres] [--sign-ins=200] [--messages=2000]
 *
 * Webhook delivery on this machine (docs/design.md §15): an agentauth server (SQLite in a
 * temporary directory, or with --postgres a durable throwaway PostgreSQL cluster) and a real HTTPS
 * receiver on loopback
 * that verifies every delivery with the Standard Webhooks library.
 *
 * - latency: sign-ins one after the other, each timed from the agent's 200 to the receiver's
 *   receipt of its agent.sign_in.succeeded (p50, p95, p99, max);
 * - throughput: `messages` events written to the outbox at once, timed until the receiver has
 *   them all (deliveries per second, one node, batches of 20 in flight).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { loadConfig } from '../src/config.ts';
import { registerAgent } from '../src/domain/agents.ts';
import { registerClient } from '../src/domain/clients.ts';
import { createAccount } from '../src/console/accounts.ts';
import { createWebhook } from '../src/domain/webhooks/endpoints.ts';
import { startServer } from '../src/server.ts';
import { authenticate, startFlow } from '../test/helpers/flow.ts';
import { startHttpsServer } from '../test/helpers/https.ts';
import { freePort } from '../test/helpers/net.ts';
import { createDatabase, startCluster } from '../test/helpers/postgres-cluster.ts';
import type { TestServer } from '../test/helpers/server.ts';

const option = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const SIGN_INS = Number(option('sign-ins') ?? 200);
const MESSAGES = Number(option('messages') ?? 2000);
const withPostgres = process.argv.includes('--postgres');

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'agentauth-bench-webhooks-'));
  const received = new Map<string, number>();
  let verifier: Webhook | null = null;
  let unverified = 0;
  let wake: (() => void) | null = null;
  const receiver = await startHttpsServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const at = performance.now();
      const body = Buffer.concat(chunks).toString('utf8');
      try {
        verifier?.verify(body, req.headers as Record<string, string>);
      } catch {
        unverified++;
      }
      received.set(String(req.headers['webhook-id']), at);
      res.writeHead(204).end();
      wake?.();
    });
  });
  const until = async (done: () => boolean) => {
    while (!done()) await new Promise<void>((resolve) => (wake = resolve));
  };

  const cluster = withPostgres ? startCluster({ durable: true }) : undefined;
  const database = cluster ? await createDatabase(cluster.url) : undefined;
  const port = await freePort();
  const config = loadConfig({
    PORT: String(port),
    HOST: '127.0.0.1',
    BASE_URL: `http://127.0.0.1:${port}`,
    DATABASE_URL: database?.url ?? `sqlite:${join(dir, 'bench.db')}`,
    JWT_SECRET: 'bench-webhooks-secret-of-at-least-32-bytes',
    LOG_LEVEL: 'warn',
    AUTHORIZE_LIMIT_PER_IP: '1000000',
    AUTH_FAILURES_PER_IP: '1000000',
  });
  const server = await startServer(config, {
    warn: () => {},
    webhooks: { fetch: { ca: receiver.ca, allowAddress: (ip) => ip === '127.0.0.1' || ip === '::1' } },
  });
  try {
    const { ctx } = server;
    const admin = await createAccount(ctx, { email: `bench-${Date.now()}@example.com`, role: 'admin' });
    const { secret } = await createWebhook(ctx, admin, {
      url: `https://localhost:${receiver.port}/hooks`,
      events: ['agent.sign_in.succeeded', 'agent.created'],
    });
    verifier = new Webhook(secret);
    const { client, secret: clientSecret } = await registerClient(ctx, {
      name: 'Bench',
      redirectUris: ['https://bench.example/cb'],
    });
    const { agent, secret: agentSecret } = await registerAgent(ctx, { ownerEmail: 'bench@example.com' });
    const party = {
      clientId: client.id,
      clientSecret,
      redirectUri: 'https://bench.example/cb',
      agentId: agent.id,
      agentSecret,
    };
    const target = { baseUrl: config.baseUrl } as TestServer;

    // Latency: one sign-in at a time.
    const latencies: number[] = [];
    for (let i = 0; i < SIGN_INS; i++) {
      const started = await startFlow(target, party);
      const before = received.size;
      const answer = await authenticate(target, party, started.requestId);
      const answeredAt = performance.now();
      if (answer.status !== 200) throw new Error(`sign-in answered ${answer.status}`);
      await until(() => received.size > before);
      latencies.push([...received.values()].at(-1)! - answeredAt);
    }
    latencies.sort((a, b) => a - b);

    // Throughput: many messages at once.
    received.clear();
    const t0 = performance.now();
    for (let written = 0; written < MESSAGES; written += 100)
      await ctx.store.webhooks.announce(
        Array.from({ length: Math.min(100, MESSAGES - written) }, (_, i) => ({
          type: 'agent.created',
          data: { agent: { id: `agt_bench${written + i}` } },
        })),
      );
    await until(() => received.size >= MESSAGES);
    const seconds = (performance.now() - t0) / 1000;

    const ms = (value: number) => `${value.toFixed(1)} ms`;
    process.stdout.write(
      [
        `webhooks on ${ctx.store.engine}, one node, receiver on loopback (https, verified with standardwebhooks)`,
        `latency, sign-in answered → receiver has agent.sign_in.succeeded (${SIGN_INS} sign-ins): p50 ${ms(percentile(latencies, 0.5))}, p95 ${ms(percentile(latencies, 0.95))}, p99 ${ms(percentile(latencies, 0.99))}, max ${ms(latencies.at(-1)!)}`,
        `throughput: ${MESSAGES} messages in ${seconds.toFixed(2)} s = ${Math.round(MESSAGES / seconds)} deliveries/s`,
        `signatures that failed verification: ${unverified}`,
        '',
      ].join('\n'),
    );
  } finally {
    await server.close();
    await receiver.close();
    await database?.drop();
    cluster?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
