/**
 * The push run (issue 11): what 1,000 pages waiting at once cost, listening on
 * GET /api/check-status/events versus polling GET /api/check-status every second as SPEC.md
 * recommends; the memory each waiting connection holds; and the time from an agent's
 * authentication to the waiting page's event (p50/p99), on one node and, with PostgreSQL, from
 * one node to another (LISTEN/NOTIFY).
 *
 * Database reads are counted where they can be seen from outside: PostgreSQL's
 * pg_stat_database (transactions and rows returned in the benchmark's database). With SQLite,
 * a poll is one read by construction (GET /api/check-status reads one row) and a stream reads
 * only when a change is announced, so the server's CPU shows the difference.
 */
import { type Agent, request as httpRequest, type IncomingMessage, Agent as HttpAgent } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { percentile } from './driver.ts';
import { cpuMs, rssMb } from './measure.ts';
import type { Target } from './targets.ts';

export interface WaitingCost {
  mode: 'push' | 'polling';
  connections: number;
  seconds: number;
  /** Server CPU per second of waiting (ms/s; 1000 = one core). */
  serverCpuMsPerSecond: number;
  /** Answers of GET /api/check-status per second (polling), each one database read. */
  pollsPerSecond?: number;
  /** PostgreSQL: transactions and rows returned per second in the benchmark's database. */
  dbTransactionsPerSecond?: number;
  dbRowsReturnedPerSecond?: number;
}

export interface PushResult {
  target: string;
  waiting: WaitingCost[];
  /** RSS added per open stream, in KB. */
  rssKbPerStream: number;
  latency: { samples: number; p50Ms: number; p99Ms: number; acrossNodes: boolean }[];
}

/** A stream of status events over node:http (lighter than fetch for a thousand of them). */
function openStream(
  agent: Agent,
  baseUrl: string,
  requestId: string,
  onEvent: (data: string) => void,
): Promise<{ close(): void }> {
  return new Promise((resolve, reject) => {
    let opened = false;
    const req = httpRequest(
      `${baseUrl}/api/check-status/events?request_id=${requestId}`,
      { agent, headers: { accept: 'text/event-stream' } },
      (res: IncomingMessage) => {
        if (res.statusCode !== 200) return reject(new Error(`stream answered ${res.statusCode}`));
        let buffer = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          buffer += chunk;
          for (let at = buffer.indexOf('\n\n'); at >= 0; at = buffer.indexOf('\n\n')) {
            const block = buffer.slice(0, at);
            buffer = buffer.slice(at + 2);
            const data = block.split('\n').find((line) => line.startsWith('data: '));
            if (!data) continue;
            onEvent(data.slice(6));
            if (!opened) {
              opened = true;
              resolve({ close: () => req.destroy() });
            }
          }
        });
        res.on('error', () => undefined);
      },
    );
    req.on('error', (error) => {
      if (!opened) reject(error);
    });
    req.end();
  });
}

/** pg_stat_database of one database: transactions and rows returned so far. */
async function databaseActivity(
  databaseUrl: string,
): Promise<{ read(): Promise<{ xacts: number; rows: number }>; close(): Promise<void> }> {
  const client = new pg.Client({ connectionString: databaseUrl });
  client.on('error', () => undefined);
  await client.connect();
  return {
    async read() {
      // Each backend reports its counters at the end of its transactions, with a short delay.
      await client.query('SELECT pg_stat_clear_snapshot()');
      const { rows } = await client.query(
        'SELECT xact_commit + xact_rollback AS xacts, tup_returned AS rows FROM pg_stat_database WHERE datname = current_database()',
      );
      return { xacts: Number(rows[0].xacts), rows: Number(rows[0].rows) };
    },
    close: () => client.end(),
  };
}

async function pending(target: Target, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i += 50)
    ids.push(...(await Promise.all(Array.from({ length: Math.min(50, count - i) }, () => target.pendingRequest!()))));
  return ids;
}

async function authenticate(baseUrl: string, target: Target, requestId: string): Promise<void> {
  const response = await fetch(`${baseUrl}/api/agent/authenticate`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      request_id: requestId,
      agent_id: target.agent!.agentId,
      agent_secret: target.agent!.agentSecret,
      model: 'bench-push',
    }),
  });
  await response.arrayBuffer();
  if (response.status !== 200) throw new Error(`authenticate answered ${response.status}`);
}

export async function pushRun(options: {
  target: Target;
  /** Another node on the same database (PostgreSQL): authentications go there. */
  otherNode?: Target;
  databaseUrl: string;
  waiting: number;
  seconds: number;
  samples: number;
}): Promise<PushResult> {
  const { target } = options;
  const pid = target.meter.pid;
  const baseUrl = target.baseUrl!;
  const activity = options.databaseUrl.startsWith('postgres') ? await databaseActivity(options.databaseUrl) : undefined;
  const agent = new HttpAgent({ keepAlive: true, maxSockets: Infinity });
  const waiting: WaitingCost[] = [];

  /** Server CPU and database activity over `seconds`, with `connections` waiting. */
  const window = async (mode: WaitingCost['mode'], during: () => Promise<number | undefined>): Promise<WaitingCost> => {
    const cpu0 = cpuMs(pid)!.total;
    const db0 = await activity?.read();
    const polls = await during();
    const cpu1 = cpuMs(pid)!.total;
    const db1 = await activity?.read();
    return {
      mode,
      connections: options.waiting,
      seconds: options.seconds,
      serverCpuMsPerSecond: (cpu1 - cpu0) / options.seconds,
      ...(polls === undefined ? {} : { pollsPerSecond: polls / options.seconds }),
      ...(db0 && db1
        ? {
            dbTransactionsPerSecond: (db1.xacts - db0.xacts) / options.seconds,
            dbRowsReturnedPerSecond: (db1.rows - db0.rows) / options.seconds,
          }
        : {}),
    };
  };

  // Push: a thousand open streams, nothing changing.
  const ids = await pending(target, options.waiting);
  const rssBefore = rssMb(pid);
  const streams = await Promise.all(ids.map((id) => openStream(agent, baseUrl, id, () => {})));
  await sleep(500);
  const rssKbPerStream = ((rssMb(pid) - rssBefore) * 1024) / options.waiting;
  // PostgreSQL's backends report their counters when idle at most every 10 s: let the
  // thousand authorizations above reach pg_stat_database before the window opens.
  if (activity) await sleep(11_000);
  waiting.push(
    await window('push', async () => {
      await sleep(options.seconds * 1000);
      return undefined;
    }),
  );
  for (const stream of streams) stream.close();

  // Polling: the same number of pages, each asking once a second.
  const pollIds = await pending(target, options.waiting);
  let answered = 0;
  let polling = true;
  const pollers = pollIds.map(async (id, i) => {
    await sleep((i * 1000) / options.waiting);
    while (polling) {
      const started = Date.now();
      await new Promise<void>((resolve) => {
        const req = httpRequest(`${baseUrl}/api/check-status?request_id=${id}`, { agent }, (res) => {
          res.resume();
          res.on('end', () => {
            if (res.statusCode === 200) answered++;
            resolve();
          });
        });
        req.on('error', () => resolve());
        req.end();
      });
      await sleep(Math.max(0, 1000 - (Date.now() - started)));
    }
  });
  await sleep(1500); // every poller has started
  waiting.push(
    await window('polling', async () => {
      const before = answered;
      await sleep(options.seconds * 1000);
      return answered - before;
    }),
  );
  polling = false;
  await Promise.all(pollers);

  // Latency: authentication to the waiting stream's event, one node, then across nodes.
  const latency: PushResult['latency'] = [];
  for (const via of [target, options.otherNode].filter((t): t is Target => t !== undefined)) {
    const times: number[] = [];
    for (let i = 0; i < options.samples; i++) {
      const id = await target.pendingRequest!();
      let heard: (() => void) | undefined;
      const authenticated = new Promise<void>((resolve) => (heard = resolve));
      const stream = await openStream(agent, baseUrl, id, (data) => {
        if (data.includes('"authenticated"')) heard!();
      });
      const started = performance.now();
      await authenticate(via.baseUrl!, target, id);
      await authenticated;
      times.push(performance.now() - started);
      stream.close();
    }
    times.sort((a, b) => a - b);
    latency.push({
      samples: times.length,
      p50Ms: percentile(times, 50),
      p99Ms: percentile(times, 99),
      acrossNodes: via !== target,
    });
  }
  agent.destroy();
  await activity?.close();
  return { target: target.name, waiting, rssKbPerStream, latency };
}
