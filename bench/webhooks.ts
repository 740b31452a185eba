/**
 * The webhooks run (issue 23): what signed webhooks deliver and what they cost, on one agentauth
 * target started with WEBHOOK_ALLOWED_ADDRESSES letting loopback through and NODE_EXTRA_CA_CERTS
 * trusting the test certificate (test/fixtures/tls). The receiver is an HTTPS server in this
 * process that verifies every delivery with the Standard Webhooks reference library, as a
 * user's receiver would; the endpoint is registered, and deleted, with the CLI
 * (`agentauth webhook create --endpoint … --event agent.sign_in.succeeded --json`), as an
 * operator would: the one event a flow makes (its deliveries are the same as with '*').
 *
 *   outbox cost  full flows at the figures' concurrency, alternated: with no endpoint; with one
 *                endpoint subscribed to the sign-in event whose receiver holds the first deliveries
 *                unanswered (the endpoint's 16 slots stay taken, then its breaker pauses it, so
 *                the window has the outbox's writes and almost no delivery: what a sign-in pays);
 *                and with the endpoint answering (the outbox and the deliveries, made by the same
 *                node). Server CPU per flow (the database's included on PostgreSQL), flows/s and
 *                latency. After each held round the receiver answers again, the endpoint is
 *                resumed (`agentauth webhook enable`, which ends a pause) and the backlog is
 *                timed as it drains with nothing else running: the deliveries per second one
 *                node makes, and the server CPU per delivery.
 *   latency      from the agent's 200 to POST /api/agent/authenticate to the verified receipt of
 *                its agent.sign_in.succeeded delivery, one sign-in at a time at a modest rate.
 *   throughput   sign-ins (GET /authorize + POST /api/agent/authenticate) at full concurrency:
 *                deliveries received per second during the window against sign-ins per second,
 *                the backlog at its end and how long it took to drain, and the server's CPU per
 *                delivery while draining (no sign-in running then) when the backlog is enough to
 *                time.
 */
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { Webhook } from 'standardwebhooks';
import { startHttpsServer } from '../test/helpers/https.ts';
import { closedLoop, expectStatus, HttpClient, median, percentile, type Window } from './driver.ts';
import { cpuMs, treeCpuMs } from './measure.ts';
import { CONCURRENCY, type Target } from './targets.ts';

export type OutboxMode = 'none' | 'held' | 'delivering';

export interface OutboxRound {
  /** No endpoint; one whose receiver holds the first batch (outbox writes only); one answering. */
  mode: OutboxMode;
  flows: number;
  errors: number;
  flowsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  cpuMsPerFlow: number;
  dbCpuMsPerFlow?: number;
  /** Verified deliveries received during the window. */
  deliveries: number;
  /** The measured window, Date.now() ms (to place profile samples). */
  window: { start: number; end: number };
}

export interface WebhooksResult {
  target: string;
  outbox: {
    rounds: OutboxRound[];
    /** Per mode, medians over its rounds: server CPU per flow (the database's included), flows/s, flow p50. */
    medians: Record<OutboxMode, { cpuMsPerFlow: number; flowsPerSecond: number; p50Ms: number }>;
    /** held / none: 1.05 means the outbox's writes cost a flow 5 % more server CPU. */
    outboxCpuRatio: number;
    /** delivering / none: the outbox and the deliveries together. */
    deliveringCpuRatio: number;
    /** The drains after the held rounds: the backlog delivered with nothing else running. */
    drains: {
      deliveries: number;
      seconds: number;
      perSecond: number;
      cpuMsPerDelivery: number;
      window: { start: number; end: number };
    }[];
  };
  latency: { samples: number; p50Ms: number; p99Ms: number; minMs: number; maxMs: number };
  throughput: {
    seconds: number;
    signInsPerSecond: number;
    deliveriesPerSecond: number;
    /** Sign-ins whose delivery had not arrived when the window closed. */
    backlogAtEnd: number;
    /** From the window's end until every sign-in's delivery had arrived. */
    drainSeconds: number;
    /** Server CPU (+ database's) per delivery while draining, when at least 50 were left. */
    drainCpuMsPerDelivery?: number;
    cpuMsPerSignIn: number;
    dbCpuMsPerSignIn?: number;
  };
  /** Deliveries whose signature did not verify (should be 0), and sign-ins that failed. */
  unverified: number;
  errors: number;
  errorSamples: string[];
}

/** An HTTPS receiver that verifies each delivery and notes when each sign-in's event arrived. */
async function startReceiver() {
  const secrets: string[] = [];
  /** request id → performance.now() of the verified agent.sign_in.succeeded delivery. */
  const signIns = new Map<string, number>();
  const waiters = new Map<string, () => void>();
  const arrivals: number[] = [];
  let unverified = 0;
  let holding = false;
  const held: ServerResponse[] = [];
  const verifies = (raw: string, headers: IncomingHttpHeaders) =>
    secrets.some((secret) => {
      try {
        new Webhook(secret).verify(raw, headers as Record<string, string>);
        return true;
      } catch {
        return false;
      }
    });
  const server = await startHttpsServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      if (!verifies(raw, req.headers)) {
        unverified += 1;
        res.writeHead(400).end();
        return;
      }
      const at = performance.now();
      arrivals.push(at);
      const payload = JSON.parse(raw) as { type: string; data?: { request?: { id?: string } } };
      const requestId = payload.data?.request?.id;
      if (payload.type === 'agent.sign_in.succeeded' && requestId && !signIns.has(requestId)) {
        signIns.set(requestId, at);
        waiters.get(requestId)?.();
        waiters.delete(requestId);
      }
      if (holding) held.push(res);
      else res.writeHead(204).end();
    });
  });
  return {
    // A name: an IP literal at a special-use address is refused when the URL is saved, whatever
    // WEBHOOK_ALLOWED_ADDRESSES says; the name's address is judged against it at each delivery.
    url: `${server.origin}/hooks`,
    trust: (secret: string) => secrets.push(secret),
    /** Leaves deliveries unanswered from now on. */
    hold() {
      holding = true;
    },
    /** Answers the held deliveries, and the next ones at once. */
    release() {
      holding = false;
      for (const res of held.splice(0)) if (!res.destroyed) res.writeHead(204).end();
    },
    signIns,
    arrivals,
    get unverified() {
      return unverified;
    },
    /** performance.now() of the sign-in's delivery, once it arrived (rejects after `ms`). */
    receipt(requestId: string, ms = 30_000): Promise<number> {
      const at = signIns.get(requestId);
      if (at !== undefined) return Promise.resolve(at);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no delivery for ${requestId} within ${ms} ms`)), ms);
        waiters.set(requestId, () => {
          clearTimeout(timer);
          resolve(signIns.get(requestId)!);
        });
      });
    },
    close: () => server.close(),
  };
}

/** Server CPU (and the database cluster's) over a span. */
function cpuSpan(target: Target) {
  const pid = target.meter.pid;
  const db = target.meter.dbRootPid;
  const start = { cpu: cpuMs(pid)!.total, db: db === undefined ? 0 : treeCpuMs(db) };
  return () => ({
    cpuMs: cpuMs(pid)!.total - start.cpu,
    ...(db === undefined ? {} : { dbCpuMs: treeCpuMs(db) - start.db }),
  });
}

export async function webhooksRun(options: {
  target: Target;
  window: Window;
  /** Rounds of the outbox's three modes (none, held, delivering), alternated. */
  rounds: number;
  latencySamples: number;
  /** Pause between two latency samples (ms): a modest rate. */
  latencyPauseMs: number;
  say: (line: string) => void;
}): Promise<WebhooksResult> {
  const { target, say } = options;
  const receiver = await startReceiver();
  const http = new HttpClient(target.baseUrl!, CONCURRENCY);
  const errorSamples: string[] = [];
  let errors = 0;
  const failed = (error: unknown) => {
    errors += 1;
    if (errorSamples.length < 5) errorSamples.push((error as Error).message);
  };
  try {
    await target.cli!(['account', 'create', '--email', 'bench-admin@example.com', '--admin', '--json']);
    let endpoint: string | undefined;
    const register = async () => {
      // The event every flow makes, rather than '*': the authorize page figure leaves about 150,000
      // requests unfinished, and they expire (REQUEST_TTL, 10 minutes) while this run goes on. An
      // endpoint subscribed to all events is rightly sent each expiry, which in a full run made the
      // first round drain 282 deliveries/s instead of about 3,000.
      const made = await target.cli!([
        'webhook',
        'create',
        '--endpoint',
        receiver.url,
        '--event',
        'agent.sign_in.succeeded',
        '--json',
      ]);
      receiver.trust(String(made.secret));
      endpoint = String(made.id);
    };
    const unregister = async () => {
      if (endpoint) await target.cli!(['webhook', 'delete', endpoint, '--json']);
      endpoint = undefined;
    };

    /** A new pending request signed in by the agent; resolves with its id once answered 200. */
    const signIn = async (): Promise<string> => {
      const requestId = await target.pendingRequest!();
      expectStatus(
        'authenticate',
        await http.send('/api/agent/authenticate', {
          json: { request_id: requestId, ...agentCredentials(target), model: 'bench-webhooks' },
        }),
        200,
      );
      return requestId;
    };

    // 1. The outbox's cost: full flows with no endpoint, with the deliveries held, and delivered, alternated.
    const rounds: OutboxRound[] = [];
    const drains: WebhooksResult['outbox']['drains'] = [];
    for (let round = 0; round < options.rounds; round++) {
      for (const mode of ['none', 'held', 'delivering'] as const) {
        if (mode === 'none') await unregister();
        else if (!endpoint) await register();
        if (mode === 'held') receiver.hold();
        const signInsBefore = receiver.signIns.size;
        let completed = 0;
        let span: ReturnType<typeof cpuSpan> | undefined;
        let used: ReturnType<ReturnType<typeof cpuSpan>> | undefined;
        const window = { start: 0, end: 0 };
        const wall = { start: 0, end: 0 };
        const result = await closedLoop({
          concurrency: CONCURRENCY,
          window: options.window,
          init: async () => undefined,
          operation: async () => {
            await target.flow!();
            completed += 1;
          },
          measure: {
            start: () => {
              span = cpuSpan(target);
              window.start = performance.now();
              wall.start = Date.now();
            },
            stop: () => {
              window.end = performance.now();
              wall.end = Date.now();
              used = span!();
            },
          },
        });
        const row: OutboxRound = {
          mode,
          flows: result.ok,
          errors: result.errors,
          flowsPerSecond: result.perSecond,
          p50Ms: result.p50Ms,
          p99Ms: result.p99Ms,
          cpuMsPerFlow: used!.cpuMs / result.ok,
          ...(used!.dbCpuMs === undefined ? {} : { dbCpuMsPerFlow: used!.dbCpuMs / result.ok }),
          deliveries: receiver.arrivals.filter((at) => at >= window.start && at < window.end).length,
          window: wall,
        };
        if (result.errors) for (const sample of result.errorSamples) failed(new Error(sample));
        rounds.push(row);
        say(
          `${target.name.padEnd(19)} flows, ${MODE_LABEL[mode].padEnd(28)} ${row.flowsPerSecond.toFixed(1).padStart(6)} flows/s, cpu ${row.cpuMsPerFlow.toFixed(2)}${row.dbCpuMsPerFlow === undefined ? '' : ` + db ${row.dbCpuMsPerFlow.toFixed(2)}`} ms/flow, p50 ${row.p50Ms.toFixed(0)} ms p99 ${row.p99Ms.toFixed(0)} ms, ${row.deliveries} deliveries received in the window`,
        );
        if (mode === 'held') {
          // The backlog, delivered with nothing else running.
          const expected = signInsBefore + completed;
          const arrivedBefore = receiver.arrivals.length;
          // The held slots timed out and paused the endpoint: resume it, as an operator would.
          if (endpoint) await target.cli!(['webhook', 'enable', endpoint, '--json']);
          const drainSpan = cpuSpan(target);
          const started = performance.now();
          const wallStart = Date.now();
          receiver.release();
          const deadline = started + 180_000;
          while (receiver.signIns.size < expected && performance.now() < deadline) await sleep(20);
          const seconds = (performance.now() - started) / 1000;
          const drainUsed = drainSpan();
          if (receiver.signIns.size < expected)
            failed(new Error(`${expected - receiver.signIns.size} sign-ins' deliveries missing after the drain`));
          const deliveries = receiver.arrivals.length - arrivedBefore;
          drains.push({
            deliveries,
            seconds,
            perSecond: deliveries / seconds,
            cpuMsPerDelivery: (drainUsed.cpuMs + (drainUsed.dbCpuMs ?? 0)) / deliveries,
            window: { start: wallStart, end: Date.now() },
          });
          say(
            `${target.name.padEnd(19)} drain of the held backlog: ${deliveries} deliveries in ${seconds.toFixed(1)} s, ${(deliveries / seconds).toFixed(0)}/s, server cpu ${drains.at(-1)!.cpuMsPerDelivery.toFixed(2)} ms per delivery`,
          );
        }
      }
    }
    const serverCpu = (r: OutboxRound) => r.cpuMsPerFlow + (r.dbCpuMsPerFlow ?? 0);
    const medianOf = (mode: OutboxMode) => {
      const of = rounds.filter((r) => r.mode === mode);
      return {
        cpuMsPerFlow: median(of.map(serverCpu)),
        flowsPerSecond: median(of.map((r) => r.flowsPerSecond)),
        p50Ms: median(of.map((r) => r.p50Ms)),
      };
    };
    const medians = { none: medianOf('none'), held: medianOf('held'), delivering: medianOf('delivering') };
    const outbox = {
      rounds,
      medians,
      outboxCpuRatio: medians.held.cpuMsPerFlow / medians.none.cpuMsPerFlow,
      deliveringCpuRatio: medians.delivering.cpuMsPerFlow / medians.none.cpuMsPerFlow,
      drains,
    };

    // Let the last round's deliveries arrive before timing single ones.
    await sleep(2000);

    // 2. Latency: one sign-in at a time, from the agent's answer to the verified delivery.
    const times: number[] = [];
    for (let i = 0; i < options.latencySamples; i++) {
      try {
        const requestId = await signIn();
        const answered = performance.now();
        times.push((await receiver.receipt(requestId)) - answered);
      } catch (error) {
        failed(error);
      }
      await sleep(options.latencyPauseMs);
    }
    times.sort((a, b) => a - b);
    const latency = {
      samples: times.length,
      p50Ms: percentile(times, 50),
      p99Ms: percentile(times, 99),
      minMs: times[0] ?? NaN,
      maxMs: times.at(-1) ?? NaN,
    };

    // 3. Throughput: sign-ins at full concurrency; deliveries per second meanwhile, then the drain.
    const signedIn: string[] = [];
    let window = { start: 0, end: 0 };
    let span: ReturnType<typeof cpuSpan> | undefined;
    let used: ReturnType<ReturnType<typeof cpuSpan>> | undefined;
    const load = await closedLoop({
      concurrency: CONCURRENCY,
      window: options.window,
      init: async () => undefined,
      operation: async () => void signedIn.push(await signIn()),
      measure: {
        start: () => {
          span = cpuSpan(target);
          window = { start: performance.now(), end: 0 };
        },
        stop: () => {
          window.end = performance.now();
          used = span!();
        },
      },
    });
    if (load.errors) for (const sample of load.errorSamples) failed(new Error(sample));
    const seconds = (window.end - window.start) / 1000;
    const deliveredInWindow = receiver.arrivals.filter((at) => at >= window.start && at < window.end).length;
    const backlogAtEnd = signedIn.filter((id) => {
      const at = receiver.signIns.get(id);
      return at === undefined || at >= window.end;
    }).length;
    // The drain: every sign-in's delivery, timed from the window's end (the last operations
    // finish just after it; they are in the backlog and in the drain).
    const drainSpan = cpuSpan(target);
    const arrivedBefore = receiver.arrivals.length;
    let drainEnd = window.end;
    for (const id of signedIn) {
      try {
        drainEnd = Math.max(drainEnd, await receiver.receipt(id, 120_000));
      } catch (error) {
        failed(error);
        break;
      }
    }
    const drainUsed = drainSpan();
    const drained = receiver.arrivals.length - arrivedBefore;
    const throughput = {
      seconds,
      signInsPerSecond: load.ok / seconds,
      deliveriesPerSecond: deliveredInWindow / seconds,
      backlogAtEnd,
      drainSeconds: (drainEnd - window.end) / 1000,
      ...(drained >= 50 ? { drainCpuMsPerDelivery: (drainUsed.cpuMs + (drainUsed.dbCpuMs ?? 0)) / drained } : {}),
      cpuMsPerSignIn: used!.cpuMs / load.ok,
      ...(used!.dbCpuMs === undefined ? {} : { dbCpuMsPerSignIn: used!.dbCpuMs / load.ok }),
    };
    await unregister();
    return {
      target: target.name,
      outbox,
      latency,
      throughput,
      unverified: receiver.unverified,
      errors,
      errorSamples,
    };
  } finally {
    http.close();
    await receiver.close();
  }
}

const MODE_LABEL: Record<OutboxMode, string> = {
  none: 'no endpoint:',
  held: 'endpoint, deliveries held:',
  delivering: 'endpoint, delivering:',
};

const agentCredentials = (target: Target) => ({
  agent_id: target.agent!.agentId,
  agent_secret: target.agent!.agentSecret,
});
