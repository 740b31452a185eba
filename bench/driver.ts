/**
 * Load generation: a closed-loop driver for multi-step work (whole flows, refresh chains) and a
 * wrapper around autocannon for single requests. Every answer is checked; anything but the
 * expected status (and body, where one is given) counts as an error, never as throughput.
 *
 * The flow driver uses node:http with a keep-alive agent rather than fetch: on a two-core
 * machine the driver shares the CPU with the server, and node:http costs the client several
 * times less per request than fetch, which leaves more of the machine to the server measured.
 */
import { Agent, request as httpRequest } from 'node:http';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import autocannon from 'autocannon';
import { metaContent, pkcePair } from '../test/helpers/flow.ts';

export { metaContent, pkcePair };

// ---------------------------------------------------------------------------------------------
// HTTP

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export interface Send {
  method?: string;
  headers?: Record<string, string>;
  /** A form (sent x-www-form-urlencoded), a JSON value (sent as JSON) or nothing. */
  form?: Record<string, string>;
  json?: unknown;
}

/** One keep-alive connection pool to one server. */
export class HttpClient {
  readonly agent: Agent;

  constructor(
    readonly baseUrl: string,
    connections: number,
  ) {
    this.agent = new Agent({ keepAlive: true, maxSockets: connections, maxFreeSockets: connections });
  }

  send(path: string, options: Send = {}): Promise<Reply> {
    const url = new URL(path, this.baseUrl);
    const headers: Record<string, string> = { ...options.headers };
    let body: string | undefined;
    if (options.form) {
      body = new URLSearchParams(options.form).toString();
      headers['content-type'] = 'application/x-www-form-urlencoded';
    } else if (options.json !== undefined) {
      body = JSON.stringify(options.json);
      headers['content-type'] = 'application/json';
    }
    if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
    return new Promise((resolve, reject) => {
      const req = httpRequest(
        url,
        { method: options.method ?? (body === undefined ? 'GET' : 'POST'), headers, agent: this.agent },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? 0,
              headers: res.headers,
              body: Buffer.concat(chunks).toString('utf8'),
            }),
          );
          res.on('error', reject);
        },
      );
      req.setTimeout(30_000, () => req.destroy(new Error(`timeout: ${url.pathname}`)));
      req.on('error', reject);
      req.end(body);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

/** Thrown for an answer the flow did not expect; the driver counts it as an error. */
export class Unexpected extends Error {}

/** The reply when its status is one of `statuses`, else an Unexpected naming the step. */
export function expectStatus(step: string, reply: Reply, ...statuses: number[]): Reply {
  if (!statuses.includes(reply.status)) throw new Unexpected(`${step}: ${reply.status} ${reply.body.slice(0, 160)}`);
  return reply;
}

export function json<T = Record<string, unknown>>(reply: Reply): T {
  return JSON.parse(reply.body) as T;
}

export function location(step: string, reply: Reply): URL {
  const value = reply.headers.location;
  if (typeof value !== 'string') throw new Unexpected(`${step}: no Location header`);
  return new URL(value, 'http://placeholder.invalid');
}

/** A browser's cookies for one flow: names and values only (every cookie is sent everywhere). */
export class CookieJar {
  private readonly cookies = new Map<string, string>();

  take(reply: Reply): void {
    const set = reply.headers['set-cookie'];
    for (const line of Array.isArray(set) ? set : set ? [set] : []) {
      const [pair = '', ...attributes] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const deleted = attributes.some((a) => /^\s*(max-age=0|expires=thu, 01 jan 1970)/i.test(a));
      if (deleted) this.cookies.delete(name);
      else this.cookies.set(name, pair.slice(eq + 1).trim());
    }
  }

  header(): Record<string, string> {
    return this.cookies.size ? { cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ') } : {};
  }
}

export const randomState = () => randomBytes(16).toString('base64url');

/** Where a flow reports how long each of its steps took (a step is one HTTP request). */
export type StepClock = (step: string, ms: number) => void;

/** Sends one step's request and tells `clock` how long it took, answer included. */
export async function timed<T>(clock: StepClock | undefined, step: string, send: () => Promise<T>): Promise<T> {
  const started = performance.now();
  const reply = await send();
  clock?.(step, performance.now() - started);
  return reply;
}

/**
 * A StepClock that keeps the latencies it hears while `counting()` says so (a figure's measured
 * window), and their p50 and p99 per step.
 *
 * @example
 * const steps = stepRecorder(() => measuring);
 * await target.flow(steps.clock);
 * steps.latencies(); // { authorize: { p50Ms: 1.9, p99Ms: 10.5 }, … }
 */
export function stepRecorder(counting: () => boolean): {
  clock: StepClock;
  latencies(): Record<string, { p50Ms: number; p99Ms: number }>;
} {
  const samples = new Map<string, number[]>();
  return {
    clock(step, ms) {
      if (!counting()) return;
      const values = samples.get(step);
      if (values) values.push(ms);
      else samples.set(step, [ms]);
    },
    latencies: () =>
      Object.fromEntries(
        [...samples].map(([step, values]) => {
          const sorted = [...values].sort((a, b) => a - b);
          return [step, { p50Ms: percentile(sorted, 50), p99Ms: percentile(sorted, 99) }];
        }),
      ),
  };
}

// ---------------------------------------------------------------------------------------------
// Closed-loop driver

export interface Window {
  warmupMs: number;
  durationMs: number;
}

export interface DriverResult {
  /** Operations that completed successfully inside the measured window. */
  ok: number;
  errors: number;
  /** A few error messages, to say what went wrong. */
  errorSamples: string[];
  seconds: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** autocannon records latencies in whole milliseconds. */
  latencyResolutionMs?: number;
}

/** The median of some values (the mean of the middle two for an even count). */
export const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/**
 * Runs `operation` in `concurrency` loops ("virtual users") for the warm-up and then the
 * measured window; only operations that end inside the window are counted. `measure.start`
 * and `measure.stop` bracket the window exactly (for the server's CPU and memory).
 * When an operation fails, the virtual user's `recover` runs (for example to start a new
 * refresh chain) before it goes on; recovery is not counted.
 */
export async function closedLoop<S>(options: {
  concurrency: number;
  window: Window;
  /** Per virtual user state (a refresh chain), made before the clock starts. */
  init: (vu: number) => Promise<S>;
  operation: (state: S) => Promise<S>;
  recover?: (vu: number) => Promise<S>;
  measure: { start(): void; stop(): void };
}): Promise<DriverResult> {
  const states = await Promise.all(Array.from({ length: options.concurrency }, (_, vu) => options.init(vu)));
  let phase: 'warmup' | 'measure' | 'done' = 'warmup';
  const latencies: number[] = [];
  const errorSamples: string[] = [];
  let errors = 0;

  const user = async (vu: number) => {
    let state = states[vu] as S;
    while (phase !== 'done') {
      const started = performance.now();
      try {
        state = await options.operation(state);
        if (phase === 'measure') latencies.push(performance.now() - started);
      } catch (error) {
        if (phase === 'measure') {
          errors += 1;
          if (errorSamples.length < 5) errorSamples.push((error as Error).message);
        }
        if (options.recover) {
          try {
            state = await options.recover(vu);
          } catch {
            await sleep(10); // the server is failing; try again shortly rather than spin
          }
        }
      }
    }
  };

  const users = Array.from({ length: options.concurrency }, (_, vu) => user(vu));
  await sleep(options.window.warmupMs);
  options.measure.start();
  phase = 'measure';
  const started = performance.now();
  await sleep(options.window.durationMs);
  phase = 'done';
  const seconds = (performance.now() - started) / 1000;
  options.measure.stop();
  await Promise.all(users);
  latencies.sort((a, b) => a - b);
  return {
    ok: latencies.length,
    errors,
    errorSamples,
    seconds,
    perSecond: latencies.length / seconds,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
  };
}

// ---------------------------------------------------------------------------------------------
// autocannon

export interface CannonRequest {
  url: string;
  method?: 'GET' | 'POST';
  /**
   * Requests each connection sends in turn (so that tokens rotate), with their headers (added
   * to `headers`) and body. autocannon builds them once; a per-request setup callback would
   * have it rebuild every request, at a CPU cost close to what a fast server spends answering.
   */
  variants?: Array<{ headers?: Record<string, string>; body?: string }>;
  headers?: Record<string, string>;
  body?: string;
  /** Statuses that count as success. */
  expect: number[];
  /** A check of the body of every response; a false answer is an error. */
  verifyBody?: (body: string) => boolean;
}

/**
 * One autocannon run for the warm-up (discarded) and one for the window. Success is counted
 * from autocannon's per-status counters; responses whose body fails the check are errors.
 */
export async function cannon(
  request: CannonRequest,
  options: { connections: number; window: Window; measure: { start(): void; stop(): void } },
): Promise<DriverResult> {
  const run = (seconds: number) =>
    autocannon({
      url: request.url,
      method: request.method ?? 'GET',
      connections: options.connections,
      duration: seconds,
      headers: request.headers,
      body: request.body,
      ...(request.verifyBody
        ? { verifyBody: (body: string | Buffer | undefined) => request.verifyBody!(String(body ?? '')) }
        : {}),
      ...(request.variants ? { requests: request.variants.map((variant) => ({ ...variant })) } : {}),
    });
  await run(options.window.warmupMs / 1000);
  options.measure.start();
  const result = await run(options.window.durationMs / 1000);
  options.measure.stop();

  const counts = Object.entries(result.statusCodeStats ?? {}).map(
    ([status, { count = 0 }]) => [Number(status), Number(count)] as const,
  );
  const answered = counts.reduce((sum, [, count]) => sum + count, 0);
  const unexpected = counts
    .filter(([status]) => !request.expect.includes(status))
    .reduce((sum, [, count]) => sum + count, 0);
  // A response with the wrong status usually has the wrong body too: count it once.
  const bad = Math.max(unexpected, result.mismatches);
  const errorSamples = counts
    .filter(([status]) => !request.expect.includes(status))
    .map(([status, count]) => `${count} × status ${status}`);
  if (result.mismatches) errorSamples.push(`${result.mismatches} × body check failed`);
  if (result.errors) errorSamples.push(`${result.errors} connection errors (${result.timeouts} timeouts)`);
  const ok = answered - bad;
  return {
    ok,
    errors: bad + result.errors,
    errorSamples,
    seconds: result.duration,
    perSecond: ok / result.duration,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    latencyResolutionMs: 1,
  };
}
