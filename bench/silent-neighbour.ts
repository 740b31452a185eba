/**
 * A silent receiver beside a healthy one (issue 35; docs/performance.md, "A silent neighbour"):
 * how long a healthy endpoint waits for its deliveries when another endpoint's receiver accepts
 * every connection and never answers. One agentauth node (in this process, on a fresh SQLite
 * file, or on DATABASE_URL when set), a steady feed of anonymous failed sign-ins over HTTP
 * (POST /api/agent/authenticate with unknown agents: one agent.sign_in.failed event each, which
 * both endpoints subscribe to), and two HTTPS receivers on loopback. The healthy endpoint's
 * latency, from the agent's 401 to the verified receipt, is measured alone and then with the
 * silent endpoint beside it.
 *
 *   npx tsx bench/silent-neighbour.ts [--seconds=30] [--rate=20] [--agentauth-dir=DIR]
 *
 * --agentauth-dir runs another checkout's src/ (for a before/after comparison: a copy of the old
 * src/ inside this repository, so that its imports find node_modules).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { Webhook } from 'standardwebhooks';
import { startHttpsServer } from '../test/helpers/https.ts';
import { freePort } from '../test/helpers/net.ts';

const args = new Map(
  process.argv.slice(2).map((arg) => {
    const [name, value = ''] = arg.replace(/^--/, '').split('=');
    return [name!, value] as const;
  }),
);
const SECONDS = Number(args.get('seconds') ?? 30);
const RATE = Number(args.get('rate') ?? 20);
const SOURCES = resolve(args.get('agentauth-dir') ?? '.');

const percentile = (sorted: number[], p: number) =>
  sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

/** A receiver that verifies each delivery and notes when each failed sign-in's event arrived; or one that never answers. */
async function receiver(silent: boolean) {
  let secret = '';
  const arrivals = new Map<string, number>();
  const held: ServerResponse[] = [];
  const server = await startHttpsServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (silent) {
        held.push(res);
        return;
      }
      const raw = Buffer.concat(chunks).toString('utf8');
      new Webhook(secret).verify(raw, req.headers as Record<string, string>);
      const agent = (JSON.parse(raw) as { data: { agent: { id: string } } }).data.agent.id;
      if (!arrivals.has(agent)) arrivals.set(agent, performance.now());
      res.writeHead(204).end();
    });
  });
  return {
    url: `${server.origin}/hooks`,
    ca: server.ca,
    arrivals,
    get open() {
      return server.openConnections;
    },
    trust(value: string) {
      secret = value;
    },
    close: () => server.close(),
  };
}

async function main() {
  const { loadConfig } = await import(pathToFileURL(join(SOURCES, 'src/config.ts')).href);
  const { startServer } = await import(pathToFileURL(join(SOURCES, 'src/server.ts')).href);
  const { createAccount } = await import(pathToFileURL(join(SOURCES, 'src/domain/accounts.ts')).href);
  const { createWebhook, deleteWebhook } = await import(
    pathToFileURL(join(SOURCES, 'src/domain/webhooks/endpoints.ts')).href
  );
  const dir = mkdtempSync(join(tmpdir(), 'agentauth-silent-'));
  const healthy = await receiver(false);
  const silent = await receiver(true);
  const port = await freePort();
  const config = loadConfig({
    PORT: String(port),
    HOST: '127.0.0.1',
    BASE_URL: 'http://127.0.0.1:8080',
    DATABASE_URL: process.env.DATABASE_URL ?? `sqlite:${join(dir, 'agentauth.db')}`,
    JWT_SECRET: 'silent-neighbour-bench-secret-of-32-bytes-or-more',
    LOG_LEVEL: 'silent',
    AUTH_FAILURES_PER_IP: '100000000',
    AUTH_FAILURES_PER_AGENT: '100000000',
  });
  const loopback = (ip: string) => ip === '127.0.0.1' || ip === '::1' || ip === '::ffff:127.0.0.1';
  const server = await startServer(config, {
    warn: () => {},
    webhooks: { fetch: { ca: healthy.ca, allowAddress: loopback } },
  });
  const base = `http://127.0.0.1:${port}`;
  const admin = await createAccount(server.ctx, { email: 'bench@example.com', role: 'admin' });
  const subscribe = async (url: string) => createWebhook(server.ctx, admin, { url, events: ['agent.sign_in.failed'] });
  const made = await subscribe(healthy.url);
  healthy.trust(made.secret);

  /** A steady feed for `seconds`; the healthy endpoint's latency per sign-in, once all arrived (or 60 s after). */
  async function phase(name: string) {
    const answered = new Map<string, number>();
    const interval = 1000 / RATE;
    const started = performance.now();
    const sends: Promise<void>[] = [];
    for (let i = 0; performance.now() - started < SECONDS * 1000; i++) {
      const agent = `agt_${name}_${i}_${Math.random().toString(36).slice(2, 8)}`;
      sends.push(
        fetch(`${base}/api/agent/authenticate`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            request_id: 'req_unknown',
            agent_id: agent,
            agent_secret: 'aas_wrong',
            model: 'bench',
          }),
        }).then(async (response) => {
          await response.arrayBuffer();
          answered.set(agent, performance.now());
        }),
      );
      const next = started + (i + 1) * interval;
      await sleep(Math.max(0, next - performance.now()));
    }
    await Promise.all(sends);
    const deadline = performance.now() + 60_000;
    while ([...answered.keys()].some((agent) => !healthy.arrivals.has(agent)) && performance.now() < deadline)
      await sleep(50);
    const latencies = [...answered]
      .filter(([agent]) => healthy.arrivals.has(agent))
      .map(([agent, at]) => healthy.arrivals.get(agent)! - at)
      .sort((a, b) => a - b);
    const missing = answered.size - latencies.length;
    console.log(
      `${name.padEnd(26)} ${answered.size} sign-ins, healthy endpoint: p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms, max ${latencies.at(-1)?.toFixed(1)} ms${missing ? `, ${missing} not delivered within 60 s` : ''}; silent receiver's open connections ${silent.open}`,
    );
    return { p50: percentile(latencies, 50), p99: percentile(latencies, 99), max: latencies.at(-1), missing };
  }

  console.log(`agentauth from ${SOURCES} on ${server.ctx.store.engine}, ${RATE} sign-ins/s for ${SECONDS} s each`);
  await phase('alone');
  const neighbour = await subscribe(silent.url);
  await phase('with a silent neighbour');
  await deleteWebhook(server.ctx, admin, neighbour.webhook.webhook.id);
  await server.close();
  await Promise.all([healthy.close(), silent.close()]);
  rmSync(dir, { recursive: true, force: true });
}

await main();
