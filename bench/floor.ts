/**
 * The floor (issue 25, "the limit: the database's own work plus HTTP"): for each figure and
 * engine, the least server CPU its operation could cost here.
 *
 *   floor = the operation's durable commits and reads, issued as bare statements by a minimal
 *           script with no HTTP, no JWT and no validation (bench/servers/floor.ts, its own
 *           process, measured like a server: its CPU, plus the cluster's on PostgreSQL)
 *         + the raw node:http baseline's server CPU per request (its check-status figure in the
 *           same run) × the HTTP requests the operation makes.
 *
 * agentauth's server CPU per operation (node + database on PostgreSQL) is reported as a multiple
 * of it; the issue's target is at most 1.5×. The shapes are in FLOOR_SHAPES, below, and the report
 * prints beside them what agentauth/postgres ran in the same run, so a reader can see they match.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { createDatabase } from '../test/helpers/postgres-cluster.ts';
import { type ActivityPerOp, type ActivitySnapshot, DatabaseActivity } from './database-activity.ts';
import type { Window } from './driver.ts';
import { number } from './format.ts';
import { ProcessMeter } from './measure.ts';
import { CONCURRENCY } from './targets.ts';

export type FloorFigure = 'check-status' | 'authorize' | 'flows' | 'refresh' | 'introspection' | 'userinfo';
export type FloorEngine = 'sqlite' | 'postgres';

/** The issue's target: agentauth's server CPU per operation at most this multiple of the floor. */
export const FLOOR_MULTIPLE_LIMIT = 1.5;

/** What one operation logically needs from the database, and the HTTP requests it makes. */
export interface FloorShape {
  reads: number;
  commits: number;
  httpRequests: number;
}

/**
 * The shape of each figure's operation: the reads and durable commits it logically needs, and
 * its HTTP requests. Taken from what agentauth does at the time of writing, as the benchmark
 * counts it on PostgreSQL (statements and commits per operation; each write unit is one
 * statement and one commit, so reads = statements − commits), and kept here when agentauth's
 * own count changes: the floor is what the operation needs, not what agentauth happens to run.
 *
 * - check-status: the request's status (1 read), one GET.
 * - authorize page: the client (1 read) and the new authorization request (1 commit), one GET.
 * - full flow, five requests: the page (the client; the request), the agent's authentication
 *   (its address's failure counter, the throttle's; the agent with the request and its client;
 *   the authentication), the browser's decision (the request with its client; the code), the
 *   code exchange (the calling client, the code and its agent; the grant and tokens) and
 *   userinfo (the token with its agent): 6 reads, 4 commits.
 * - refresh: the calling client with the token and its grant (1 read), the rotation (1 commit).
 * - introspection, userinfo: the token with what it depends on (1 read).
 */
export const FLOOR_SHAPES: Record<FloorFigure, FloorShape> = {
  'check-status': { reads: 1, commits: 0, httpRequests: 1 },
  authorize: { reads: 1, commits: 1, httpRequests: 1 },
  flows: { reads: 6, commits: 4, httpRequests: 5 },
  refresh: { reads: 1, commits: 1, httpRequests: 1 },
  introspection: { reads: 1, commits: 0, httpRequests: 1 },
  userinfo: { reads: 1, commits: 0, httpRequests: 1 },
};

/** The database part of a floor: one window of bare operations of one figure's shape. */
export interface FloorMeasurement {
  figure: FloorFigure;
  engine: FloorEngine;
  shape: FloorShape;
  ok: number;
  errors: number;
  errorSamples: string[];
  seconds: number;
  perSecond: number;
  /** CPU of the floor's process per operation. */
  cpuMsPerOp: number;
  /** PostgreSQL's own CPU per operation (the cluster's processes). */
  dbCpuMsPerOp?: number;
  /** What the floor ran per operation on PostgreSQL: statements, commits and WAL bytes. */
  dbActivityPerOp?: ActivityPerOp;
  /** The measured window, Date.now() ms. */
  window: { start: number; end: number };
  /**
   * SQLite, figures that write: the CPU of one commit's fsync (FULL less NORMAL, measured alone
   * right after the window), part of every commit here; agentauth shares one fsync among
   * concurrent requests' commits.
   */
  syncCpuMsPerCommit?: number;
}

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** One bench/servers/floor.ts process on one store, driven by commands on its stdin. */
class FloorProcess {
  readonly meter: ProcessMeter;
  private readonly waiting: Array<{ resolve(line: string): void; reject(error: Error): void }> = [];
  private exited: string | undefined;
  private readonly exit: Promise<void>;

  private constructor(
    readonly engine: FloorEngine,
    private readonly child: ChildProcess,
    logFile: string,
    dbRootPid: number | undefined,
    private readonly activity: DatabaseActivity | undefined,
  ) {
    this.meter = new ProcessMeter(child.pid!, dbRootPid);
    child.stderr!.pipe(createWriteStream(logFile));
    createInterface({ input: child.stdout! }).on('line', (line) => this.waiting.shift()?.resolve(line));
    this.exit = new Promise((resolve) =>
      child.once('exit', (code, signal) => {
        this.exited = `the floor's process (${engine}) exited with ${signal ?? code}; see ${logFile}`;
        for (const waiter of this.waiting.splice(0)) waiter.reject(new Error(this.exited));
        resolve();
      }),
    );
  }

  static async start(options: {
    engine: FloorEngine;
    store: string;
    logFile: string;
    dbRootPid?: number;
    activity?: DatabaseActivity;
  }): Promise<FloorProcess> {
    const child = spawn(process.execPath, ['--import', 'tsx', 'bench/servers/floor.ts'], {
      cwd: ROOT,
      env: { ...process.env, STORE: options.store, CONCURRENCY: String(CONCURRENCY) },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const floor = new FloorProcess(options.engine, child, options.logFile, options.dbRootPid, options.activity);
    const ready = await floor.next();
    if (ready !== 'ready') throw new Error(`the floor's process (${options.engine}) said ${ready}`);
    return floor;
  }

  /** The next line the process prints. */
  private next(): Promise<string> {
    if (this.exited) return Promise.reject(new Error(this.exited));
    return new Promise((resolve, reject) => this.waiting.push({ resolve, reject }));
  }

  private command(line: string): Promise<string> {
    const answer = this.next();
    this.child.stdin!.write(`${line}\n`);
    return answer;
  }

  private async count(): Promise<{ completed: number; errors: number }> {
    const [completed, errors] = (await this.command('count')).split(' ').map(Number) as [number, number];
    return { completed, errors };
  }

  /** Runs the figure's shape for the warm-up, then measures a window of it, as the servers' figures are. */
  async measure(figure: FloorFigure, window: Window): Promise<FloorMeasurement> {
    const shape = FLOOR_SHAPES[figure];
    await this.command(`run ${shape.reads} ${shape.commits}`);
    await sleep(window.warmupMs);
    this.meter.start();
    const start = Date.now();
    const before: Promise<ActivitySnapshot> | undefined = this.activity?.snapshot();
    const first = await this.count();
    await sleep(window.durationMs);
    const last = await this.count();
    const end = Date.now();
    const used = this.meter.stop();
    const after = this.activity?.snapshot();
    const stopped = await this.command('stop');
    // After the window, in the same conditions: what each of its commits paid for its own fsync.
    const syncCpuMs = this.engine === 'sqlite' && shape.commits > 0 ? Number(await this.command('sync')) : undefined;
    const ok = last.completed - first.completed;
    const errors = last.errors - first.errors;
    const [beforeSnapshot, afterSnapshot] = [await before, await after];
    const dbActivityPerOp =
      this.activity && beforeSnapshot && afterSnapshot
        ? await this.activity.perOperation(beforeSnapshot, afterSnapshot, ok)
        : undefined;
    const seconds = (end - start) / 1000;
    return {
      figure,
      engine: this.engine,
      shape,
      ok,
      errors,
      errorSamples: errors ? [stopped.replace(/^stopped \d+ /, '')] : [],
      seconds,
      perSecond: ok / seconds,
      cpuMsPerOp: used.cpuMs / ok,
      ...(used.dbCpuMs !== undefined ? { dbCpuMsPerOp: used.dbCpuMs / ok } : {}),
      ...(dbActivityPerOp ? { dbActivityPerOp } : {}),
      window: { start, end },
      ...(syncCpuMs !== undefined ? { syncCpuMsPerCommit: syncCpuMs } : {}),
    };
  }

  async stop(): Promise<void> {
    if (this.exited) return;
    this.child.stdin!.end(); // the process ends when its commands do
    const killer = setTimeout(() => this.child.kill('SIGKILL'), 15_000);
    await this.exit;
    clearTimeout(killer);
  }
}

export interface Floors {
  /** The floor of one figure on each engine, one after the other. */
  measure(figure: FloorFigure, window: Window): Promise<FloorMeasurement[]>;
  stop(): Promise<void>;
}

/**
 * Starts the floor's processes: on a SQLite file in `work` and, given a cluster, on a database of
 * its own in it (created here and dropped by stop), with its CPU counted through `dbRootPid`.
 *
 * @example
 * const floors = await startFloors({ work, postgres: { clusterUrl: cluster.url, dbRootPid } });
 * const [sqlite, postgres] = await floors.measure('flows', { warmupMs: 500, durationMs: 1000 });
 * await floors.stop();
 */
export async function startFloors(options: {
  work: string;
  postgres?: { clusterUrl: string; dbRootPid?: number; observe: boolean };
}): Promise<Floors> {
  const processes: FloorProcess[] = [];
  let drop: (() => Promise<void>) | undefined;
  const stop = async () => {
    await Promise.allSettled(processes.map((p) => p.stop()));
    await drop?.().catch(() => {});
  };
  try {
    processes.push(
      await FloorProcess.start({
        engine: 'sqlite',
        store: `sqlite:${join(options.work, 'floor.db')}`,
        logFile: join(options.work, 'floor-sqlite.log'),
      }),
    );
    if (options.postgres) {
      const database = await createDatabase(options.postgres.clusterUrl);
      drop = database.drop;
      const activity = options.postgres.observe ? new DatabaseActivity(database.url) : undefined;
      await activity?.prepare();
      processes.push(
        await FloorProcess.start({
          engine: 'postgres',
          store: database.url,
          logFile: join(options.work, 'floor-postgres.log'),
          ...(options.postgres.dbRootPid !== undefined ? { dbRootPid: options.postgres.dbRootPid } : {}),
          ...(activity ? { activity } : {}),
        }),
      );
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    async measure(figure, window) {
      const measurements: FloorMeasurement[] = [];
      for (const floor of processes) measurements.push(await floor.measure(figure, window));
      return measurements;
    },
    stop,
  };
}

// ---------------------------------------------------------------------------------------------
// The report

/** The floor's figures are fractions of a millisecond: three decimals unless told. */
const fixed = (n: number | undefined, digits = 3) => number(n, digits);

/** The floor's database part: its process's CPU, plus the cluster's on PostgreSQL. */
const databaseMs = (m: FloorMeasurement) => m.cpuMsPerOp + (m.dbCpuMsPerOp ?? 0);

/** One line of the run's progress for a floor measurement. */
export function floorLine(label: string, m: FloorMeasurement): string {
  const db = m.dbCpuMsPerOp === undefined ? '' : ` + db ${fixed(m.dbCpuMsPerOp)}`;
  const shape = `${m.shape.reads} reads + ${m.shape.commits} commits`;
  return (
    `${label.padEnd(15)} ${`floor/${m.engine}`.padEnd(19)} ${fixed(m.perSecond, 0).padStart(8)} ops/s   ${shape}: cpu ${fixed(m.cpuMsPerOp)}${db} ms/op` +
    (m.errors ? `  ! ${m.errors} errors: ${m.errorSamples.join(' | ')}` : '')
  );
}

/** agentauth's measurement of a figure on an engine, as the floor's report needs it. */
export interface AgentauthCost {
  /** Server CPU per operation: node, plus the database's on PostgreSQL. */
  cpuMsPerOp: number;
  flagged: boolean;
  /** On PostgreSQL: the statements and commits it ran per operation. */
  activity?: ActivityPerOp;
}

/** A target judged by the floor's table, as bench/run.ts lists its targets. */
export interface FloorTarget {
  target: string;
  engine: string;
  value: number | undefined;
  pass: boolean | undefined;
  flagged: boolean;
}

export interface FloorResult extends FloorMeasurement {
  /** The raw node:http baseline's server CPU per request, from the same run. */
  httpMsPerRequest: number | undefined;
  /** The database part (the floor's process, plus the cluster on PostgreSQL) + the HTTP part. */
  floorMsPerOp: number | undefined;
  agentauthMsPerOp: number | undefined;
  /** agentauth's server CPU per operation ÷ the floor's. */
  multiple: number | undefined;
}

/**
 * The floor's table (per figure and engine: the floor, agentauth, the multiple against the
 * target), the targets it judges, what the floor ran on PostgreSQL, and its results for the JSON.
 *
 * @example
 * const floor = floorReport({ floors, httpMsPerRequest: 0.04, httpFlagged: false, labels, agentauth: (f, e) => … });
 * console.log(floor.rows, floor.notes);
 */
export function floorReport(run: {
  floors: FloorMeasurement[];
  httpMsPerRequest: number | undefined;
  /** An empty Fastify route's server CPU per request (bench/servers/fastify-baseline.ts), for context. */
  frameworkMsPerRequest?: number | undefined;
  /** The baseline's measurement had wrong answers. */
  httpFlagged: boolean;
  /** The figures' labels, in the report's order. */
  labels: Array<{ key: FloorFigure; label: string }>;
  agentauth(figure: FloorFigure, engine: FloorEngine): AgentauthCost | undefined;
}): {
  rows: string[][];
  notes: string[];
  targets: FloorTarget[];
  results: FloorResult[];
  problems: string[];
} {
  const rows: string[][] = [
    [
      'floor: server CPU ms/op',
      'engine',
      'reads · commits · HTTP',
      'agentauth/postgres ran',
      'database',
      'HTTP',
      'floor',
      'agentauth',
      `agentauth ÷ floor (≤ ${FLOOR_MULTIPLE_LIMIT}×)`,
    ],
  ];
  const notes: string[] = [];
  const targets: FloorTarget[] = [];
  const results: FloorResult[] = [];
  const problems: string[] = [];
  const http = run.httpMsPerRequest;
  for (const { key, label } of run.labels) {
    const ranOnPostgres = run.agentauth(key, 'postgres')?.activity;
    for (const m of run.floors.filter((f) => f.figure === key)) {
      const ours = run.agentauth(key, m.engine);
      const httpMs = http === undefined ? undefined : http * m.shape.httpRequests;
      const floorMs = httpMs === undefined ? undefined : databaseMs(m) + httpMs;
      const multiple = ours && floorMs ? ours.cpuMsPerOp / floorMs : undefined;
      const flagged = m.errors > 0 || run.httpFlagged || !!ours?.flagged;
      const pass = multiple === undefined ? undefined : multiple <= FLOOR_MULTIPLE_LIMIT;
      const engine = `agentauth/${m.engine}`;
      const target = `${label}: agentauth's CPU/op ÷ the floor's ≤ ${FLOOR_MULTIPLE_LIMIT}`;
      if (ours) targets.push({ target, engine, value: multiple, pass, flagged });
      results.push({
        ...m,
        httpMsPerRequest: http,
        floorMsPerOp: floorMs,
        agentauthMsPerOp: ours?.cpuMsPerOp,
        multiple,
      });
      if (m.errors) problems.push(`floor of ${key} on ${m.engine}: ${m.errors} errors: ${m.errorSamples.join(' | ')}`);
      rows.push([
        m.engine === 'sqlite' || !run.floors.some((f) => f.figure === key && f.engine === 'sqlite') ? label : '',
        m.engine,
        `${m.shape.reads} · ${m.shape.commits} · ${m.shape.httpRequests}`,
        m.engine === 'postgres' && ranOnPostgres
          ? `${fixed(ranOnPostgres.statements, 1)} statements, ${fixed(ranOnPostgres.commits, 1)} commits`
          : '',
        m.dbCpuMsPerOp === undefined ? fixed(m.cpuMsPerOp) : `${fixed(m.cpuMsPerOp)} + ${fixed(m.dbCpuMsPerOp)} db`,
        `${m.shape.httpRequests} × ${fixed(http)}`,
        fixed(floorMs),
        ours ? fixed(ours.cpuMsPerOp) : '—',
        multiple === undefined ? '—' : `${pass ? 'PASS' : 'FAIL'}${flagged ? '!' : ''} ${fixed(multiple, 2)}×`,
      ]);
    }
  }
  if (run.httpFlagged && results.length)
    problems.push("the baseline's check-status, the floor's HTTP part, had wrong answers");
  const synced = results.filter((r) => r.syncCpuMsPerCommit !== undefined);
  if (synced.length) {
    notes.push(
      "each of the SQLite floor's commits pays its own fsync (CPU per commit: synchronous=FULL less NORMAL, alternated right after the window), " +
        "where agentauth's group commit shares one among the commits of concurrent requests; the floor without them bounds it from below:",
    );
    for (const r of synced) {
      const unsynced =
        r.floorMsPerOp === undefined ? undefined : r.floorMsPerOp - r.shape.commits * r.syncCpuMsPerCommit!;
      const ratio = unsynced && r.agentauthMsPerOp !== undefined ? r.agentauthMsPerOp / unsynced : undefined;
      notes.push(
        `  ${r.figure.padEnd(14)} fsync ${fixed(r.syncCpuMsPerCommit)} ms per commit; floor without fsyncs ${fixed(unsynced)} ms/op, agentauth ${fixed(ratio, 2)}× that`,
      );
    }
  }
  const framework = run.frameworkMsPerRequest;
  if (framework !== undefined && http !== undefined && results.length) {
    // Not the target's floor: context, to tell the framework's share of the distance from ours.
    notes.push(
      `an empty Fastify route (agentauth's framework, a logger, a query and a response schema) costs ${fixed(framework)} ms per request, ${fixed(framework / http, 2)}× the raw baseline; with it as the HTTP part, agentauth ÷ floor would read:`,
    );
    for (const r of results) {
      if (r.floorMsPerOp === undefined || r.agentauthMsPerOp === undefined) continue;
      const withFramework = r.floorMsPerOp + (framework - http) * r.shape.httpRequests;
      notes.push(
        `  ${r.figure.padEnd(14)} ${r.engine.padEnd(9)} floor with Fastify ${fixed(withFramework)} ms/op, agentauth ${fixed(r.agentauthMsPerOp / withFramework, 2)}× that`,
      );
    }
  }
  const observed = run.floors.filter((m) => m.dbActivityPerOp);
  if (observed.length) {
    notes.push('the floor on PostgreSQL ran per operation (each statement one round trip; commits from the WAL):');
    for (const m of observed) {
      const a = m.dbActivityPerOp!;
      notes.push(
        `  ${m.figure.padEnd(14)} ${fixed(a.statements, 1)} statements, ${fixed(a.commits, 1)} commits, ${fixed(a.walBytes, 0)} WAL bytes` +
          (a.commits > 0 ? ` (${fixed(a.walBytes / a.commits, 0)} per commit)` : ''),
      );
    }
  }
  return { rows, notes, targets, results, problems };
}
