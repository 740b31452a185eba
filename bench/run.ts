/**
 * npm run bench [-- --quick] [--figures=flows,refresh] [--no-postgres] [--sqlite-dir=DIR]
 *                 [--sqlite-synchronous=normal] [--agentauth-dir=DIR] [--agentauth-env=K=V …] [--profile]
 *
 * Starts, side by side in one run on this machine, the raw node:http baseline, agentauth on
 * SQLite (durable defaults) and on PostgreSQL (a durable throwaway cluster, when installed),
 * and the peer oidc-provider three times (in memory, on a SQLite file and on its own database in
 * the same PostgreSQL cluster), each in its own process; measures every figure on every server
 * that has it, one server after the other within each figure (so a noisy moment hurts one
 * figure rather than one server); and prints each figure as a ratio to its reference measured
 * in the same run: the baseline for check-status, and for the rest oidc-provider on the same
 * durable store as the agentauth engine (like with like; the in-memory peer stays a column).
 * The machine is shared and noisy, so only those ratios are meant to be compared across runs.
 *
 * The targets are judged on server CPU per operation (agentauth's, plus the database's on
 * PostgreSQL), as an efficiency ratio: the reference's CPU per operation over agentauth's.
 * Requests per second and latency stay in the report as context: the load generator shares the
 * two cores and caps the rate, which the report's last table shows (its CPU per operation
 * bounds the rate it can drive, and with it the highest req/s ratio any server could show).
 *
 * The floor (bench/floor.ts, issue 25): after each figure, the same figure's operation reduced
 * to its database work, the durable commits and reads it logically needs as bare statements
 * (bench/servers/floor.ts: a minimal better-sqlite3 / pg script in its own process, no HTTP, no
 * JWT, no validation; its CPU measured like a server's, the cluster's added on PostgreSQL), plus
 * the baseline's server CPU per request times the operation's HTTP requests. The report gives
 * agentauth's server CPU per operation as a multiple of that floor (target: at most 1.5×), with
 * the shape beside what agentauth/postgres ran. Measured per figure rather than after all of
 * them, for the reason the servers are: a noisy moment then hurts one figure.
 *
 * Writes the whole result as JSON to bench/results/<time>[-quick].json. Exits 1 when any
 * response was not the expected one (the figure is then flagged with "!").
 *
 * --sqlite-dir=DIR puts agentauth's SQLite file in DIR (default: the system temporary
 * directory); --sqlite-dir=/dev/shm (tmpfs, where fsync costs nothing) shows what durability
 * costs, by comparison with a run on disk.
 *
 * --sqlite-synchronous=normal runs agentauth/sqlite with SQLITE_SYNCHRONOUS=normal (the opt-in
 * without an fsync per commit) to show what the default durability costs.
 *
 * --agentauth-dir=DIR runs the agentauth of another checkout (another revision) against the
 * same baseline and peer.
 *
 * --agentauth-env=NAME=VALUE (repeatable) sets a setting of every agentauth server of the
 * figures and the push run, e.g. --agentauth-env=TOKEN_SIGNING_ALG=ES256 to measure a signing
 * mode; the run prints and records them.
 *
 * After the figures, a sustained run (--figures=sustained alone, or left out by any other
 * --figures list) takes full flows for 40 s (8 s quick) on a separate agentauth/sqlite whose
 * lifetimes are seconds and whose purge runs every second, samples its database, and checks
 * that rows and file size stop growing: the purge keeps up (bench/sustained.ts).
 *
 * Then a webhooks run (--figures=webhooks alone, or left out by any other --figures list) on
 * each agentauth engine (bench/webhooks.ts): an endpoint registered with the CLI at an HTTPS
 * receiver on loopback that verifies every delivery; full flows without it, with its deliveries
 * held (the outbox's writes alone) and delivered, alternated (what the outbox costs a sign-in);
 * the held backlog's drain (deliveries per second and CPU per delivery); the time from the
 * agent's answer to the verified delivery (p50/p99); and the deliveries per second made while
 * sign-ins run at full concurrency.
 *
 * --profile runs agentauth under `node --cpu-prof` and prints where its CPU time went (the
 * figures of such a run are slowed down by the profiler and are not comparable).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { availableParallelism, cpus, freemem, loadavg, release, tmpdir, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  createDatabase,
  postgresUnavailableReason,
  startCluster,
  type Cluster,
} from '../test/helpers/postgres-cluster.ts';
import { cannon, closedLoop, type DriverResult, median, stepRecorder, type Window } from './driver.ts';
import { type ActivitySnapshot, DatabaseActivity } from './database-activity.ts';
import { durableCommitMs, postmasterPid, rssMb, type Usage } from './measure.ts';
import { FIGURES, type Figure, type Measurement } from './figures.ts';
import { type FloorMeasurement, type Floors, floorLine, startFloors } from './floor.ts';
import { formatProfile, summarizeProfile } from './profile.ts';
import { number } from './format.ts';
import { latency, report } from './report.ts';
import { type PushResult, pushRun } from './push.ts';
import { type WebhooksResult, webhooksRun } from './webhooks.ts';
import { sustainedRun, type SustainedResult } from './sustained.ts';
import {
  CONCURRENCY,
  logPath,
  type ServerView,
  startAgentauth,
  startBaseline,
  startPeer,
  type Target,
} from './targets.ts';

// ---------------------------------------------------------------------------------------------
// Options

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const profiling = args.includes('--profile');
const withPostgres = !args.includes('--no-postgres');
const option = (name: string) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const sqliteDir = option('sqlite-dir');
const sqliteSynchronous = option('sqlite-synchronous');
if (sqliteSynchronous !== undefined && !['full', 'normal'].includes(sqliteSynchronous))
  throw new Error('--sqlite-synchronous must be full or normal');
const agentauthDirOption = option('agentauth-dir');
const agentauthDir = agentauthDirOption === undefined ? undefined : resolve(agentauthDirOption);
/** Settings of the measured agentauth servers beyond the benchmark's own (--agentauth-env=NAME=VALUE). */
const agentauthEnv: Record<string, string> = Object.fromEntries(
  args
    .filter((a) => a.startsWith('--agentauth-env='))
    .map((a) => {
      const setting = a.slice('--agentauth-env='.length);
      const equals = setting.indexOf('=');
      if (equals < 1) throw new Error(`--agentauth-env needs NAME=VALUE, not ${setting}`);
      return [setting.slice(0, equals), setting.slice(equals + 1)];
    }),
);
const WINDOW: Window = quick ? { warmupMs: 500, durationMs: 1000 } : { warmupMs: 3000, durationMs: 10_000 };
/** Flows one at a time, after each loaded flow window (latency without queueing). */
const UNLOADED_WINDOW: Window = quick ? { warmupMs: 200, durationMs: 1000 } : { warmupMs: 500, durationMs: 3000 };

const only = option('figures')?.split(',');
for (const key of only ?? []) {
  if (!['sustained', 'push', 'webhooks'].includes(key) && !FIGURES.some((f) => f.key === key))
    throw new Error(
      `unknown figure ${key}; figures: ${FIGURES.map((f) => f.key).join(', ')}, sustained, push, webhooks`,
    );
}
const figures = FIGURES.filter((f) => !only || only.includes(f.key));
/** The sustained run (does the purge keep up?), on agentauth/sqlite only. */
const withSustained = !only || only.includes('sustained');
const SUSTAINED_SECONDS = quick ? 8 : 40;
/** The push run (bench/push.ts): waiting pages, seconds each way, and timed authentications. */
const withPush = !only || only.includes('push');
const PUSH = { waiting: 1000, seconds: quick ? 3 : 10, samples: quick ? 30 : 200 };
/** The webhooks run (bench/webhooks.ts): alternated rounds of the outbox's three modes, and timed deliveries at about 20/s. */
const withWebhooks = !only || only.includes('webhooks');
const WEBHOOKS = { rounds: quick ? 1 : 3, latencySamples: quick ? 30 : 300, latencyPauseMs: 50 };
/**
 * Settings of the agentauth servers for the webhooks run: the receiver is on loopback with the
 * test certificate (test/fixtures/tls), which production would refuse and not trust.
 */
const WEBHOOK_SETTINGS = {
  WEBHOOK_ALLOWED_ADDRESSES: '127.0.0.1/32,::1/128',
  NODE_EXTRA_CA_CERTS: fileURLToPath(new URL('../test/fixtures/tls/localhost.crt', import.meta.url)),
};

/** Which agentauth is measured: its checkout, commit and whether its sources differ from it. */
function agentauthRevision(dir: string): { dir: string; commit: string; modified: boolean } {
  const git = (...a: string[]) =>
    execFileSync('git', ['-C', dir, ...a], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  try {
    return {
      dir,
      commit: git('rev-parse', '--short', 'HEAD'),
      modified: git('status', '--porcelain', '--', 'src', 'bin', 'package.json') !== '',
    };
  } catch {
    return { dir, commit: 'unknown (not a git checkout)', modified: false };
  }
}

// ---------------------------------------------------------------------------------------------
// Measuring one figure on one server

/** Access tokens to introspect or present, one per connection, from fresh flows. */
const freshAccessTokens = async (target: Target) =>
  (await Promise.all(Array.from({ length: CONCURRENCY }, () => target.flow!()))).map((t) => t.accessToken);

async function measure(figure: Figure, target: Target): Promise<Measurement | undefined> {
  let usage: Usage | undefined;
  let clientCpu = process.cpuUsage();
  const window = { start: 0, end: 0 };
  let activity: { before?: Promise<ActivitySnapshot>; after?: Promise<ActivitySnapshot> } = {};
  let views: { before?: Promise<ServerView>; after?: Promise<ServerView> } = {};
  let measuring = false;
  const meter = {
    start: () => {
      measuring = true;
      target.meter.start();
      clientCpu = process.cpuUsage();
      window.start = Date.now();
      activity = { before: target.activity?.snapshot() };
      if (figure.key === 'flows') views = { before: target.serverView?.() };
    },
    stop: () => {
      measuring = false;
      window.end = Date.now();
      clientCpu = process.cpuUsage(clientCpu);
      usage = target.meter.stop();
      activity.after = target.activity?.snapshot();
      if (figure.key === 'flows') views.after = target.serverView?.();
    },
  };
  const load = { connections: CONCURRENCY, window: WINDOW, measure: meter };
  let result: DriverResult;
  let database: Measurement['database'];
  let steps: Measurement['steps'];
  let server: Measurement['server'];
  let unloaded: Measurement['unloaded'];
  switch (figure.key) {
    case 'check-status':
      if (!target.checkStatus) return undefined;
      result = await cannon(await target.checkStatus(), load);
      break;
    case 'authorize':
      if (!target.authorizePage) return undefined;
      result = await cannon(target.authorizePage(), load);
      break;
    case 'flows': {
      if (!target.flow) return undefined;
      const before = await target.database?.();
      // Each step's latency inside the window: where a flow waits.
      const recorder = stepRecorder(() => measuring);
      result = await closedLoop({
        concurrency: CONCURRENCY,
        window: WINDOW,
        init: async () => undefined,
        operation: async () => void (await target.flow!(recorder.clock)),
        measure: meter,
      });
      steps = recorder.latencies();
      const [start, end] = [await views.before, await views.after];
      if (start && end) server = serverSide(start, end);
      const after = await target.database?.();
      if (before && after) database = { before, after };
      unloaded = await unloadedFlows(target);
      break;
    }
    case 'refresh': {
      if (!target.refresh) return undefined;
      // Each virtual user keeps its own chain; a failed refresh ends the chain and a new flow starts another.
      const newChain = async () => (await target.flow!()).refreshToken;
      result = await closedLoop({
        concurrency: CONCURRENCY,
        window: WINDOW,
        init: newChain,
        operation: (token) => target.refresh!(token),
        recover: newChain,
        measure: meter,
      });
      break;
    }
    case 'introspection':
      if (!target.introspection) return undefined;
      result = await cannon(target.introspection(await freshAccessTokens(target)), load);
      break;
    case 'userinfo':
      if (!target.userinfo) return undefined;
      result = await cannon(target.userinfo(await freshAccessTokens(target)), load);
      break;
  }
  const used = usage!;
  const [before, after] = [await activity.before, await activity.after];
  const dbActivityPerOp =
    target.activity && before && after ? await target.activity.perOperation(before, after, result.ok) : undefined;
  return {
    ...result,
    figure: figure.key,
    target: target.name,
    cpuMsPerOp: used.cpuMs / result.ok,
    systemCpuShare: used.cpuMs > 0 ? used.systemCpuMs / used.cpuMs : 0,
    clientCpuMsPerOp: (clientCpu.user + clientCpu.system) / 1000 / result.ok,
    serverBusy: used.cpuMs / (window.end - window.start),
    serverCpuWait: used.runQueueWaitMs / (window.end - window.start),
    ...(used.dbCpuMs !== undefined ? { dbCpuMsPerOp: used.dbCpuMs / result.ok } : {}),
    ...(dbActivityPerOp ? { dbActivityPerOp } : {}),
    peakRssMb: used.peakRssMb,
    peakIsLifetime: used.peakIsLifetime,
    window,
    ...(database ? { database } : {}),
    ...(steps ? { steps } : {}),
    ...(server ? { server } : {}),
    ...(unloaded ? { unloaded } : {}),
  };
}

/**
 * Flows one at a time, after the loaded window: each step's latency with nothing queued beside
 * it (its own work, its commit's sync and the network). The loaded figure's latency minus this
 * is time spent waiting behind the other 15 flows.
 */
async function unloadedFlows(target: Target): Promise<NonNullable<Measurement['unloaded']>> {
  let measuring = false;
  const recorder = stepRecorder(() => measuring);
  const flows = await closedLoop({
    concurrency: 1,
    window: UNLOADED_WINDOW,
    init: async () => undefined,
    operation: async () => void (await target.flow!(recorder.clock)),
    measure: { start: () => void (measuring = true), stop: () => void (measuring = false) },
  });
  return { flows: flows.ok, p50Ms: flows.p50Ms, p99Ms: flows.p99Ms, steps: recorder.latencies() };
}

/** agentauth's routes of a flow, by the step names of the flow driver. */
const ROUTE_STEPS: Record<string, string> = {
  'GET /authorize': 'authorize',
  'POST /api/agent/authenticate': 'authenticate',
  'POST /authorize/continue': 'continue',
  'POST /token': 'token',
  'GET /userinfo': 'userinfo',
};

/** agentauth's own view of a window: each step's mean time inside the server, and its event loop's delay. */
function serverSide(start: ServerView, end: ServerView): NonNullable<Measurement['server']> {
  const stepMeanMs: Record<string, number> = {};
  for (const [route, step] of Object.entries(ROUTE_STEPS)) {
    const [a, b] = [start.routes[route], end.routes[route]];
    if (!b) continue;
    const count = b.count - (a?.count ?? 0);
    if (count > 0) stepMeanMs[step] = (1000 * (b.seconds - (a?.seconds ?? 0))) / count;
  }
  return { stepMeanMs, eventLoopDelay: end.eventLoopDelay };
}

// ---------------------------------------------------------------------------------------------
// The run

async function main(): Promise<void> {
  const startedAt = new Date();
  const stamp = startedAt.toISOString().replace(/[:.]/g, '-').replace(/Z$/, '');
  const resultsDir = new URL('results/', import.meta.url).pathname;
  mkdirSync(resultsDir, { recursive: true });
  const work = mkdtempSync(join(sqliteDir ?? tmpdir(), 'agentauth-bench-'));
  const profileDir = join(work, 'profiles');
  const commitMs = durableCommitMs(work);
  const agentauth = {
    ...agentauthRevision(resolve(agentauthDir ?? fileURLToPath(new URL('..', import.meta.url)))),
    env: agentauthEnv,
  };
  const machine = {
    nproc: availableParallelism(),
    cpu: cpus()[0]?.model ?? 'unknown',
    node: process.version,
    kernel: release(),
    memoryGb: Number((totalmem() / 1024 ** 3).toFixed(1)),
    freeMemoryGbAtStart: Number((freemem() / 1024 ** 3).toFixed(1)),
    loadAverageAtStart: loadavg().map((l) => Number(l.toFixed(2))),
    durableSqliteCommitMs: Number(commitMs.toFixed(3)),
  };
  const say = (line: string) => process.stdout.write(`${line}\n`);
  say(
    `agentauth benchmark, ${quick ? 'quick' : 'full'} mode: ${WINDOW.warmupMs / 1000} s warm-up + ${WINDOW.durationMs / 1000} s per figure, concurrency ${CONCURRENCY}`,
  );
  say(
    `machine: ${machine.nproc} cores (${machine.cpu}), Node ${machine.node}, Linux ${machine.kernel}, load average ${machine.loadAverageAtStart.join(' ')}`,
  );
  say(
    `agentauth: ${agentauth.dir} at ${agentauth.commit}${agentauth.modified ? ' with uncommitted changes to its sources' : ''}${
      Object.keys(agentauthEnv).length > 0
        ? `, with ${Object.entries(agentauthEnv)
            .map(([name, value]) => `${name}=${value}`)
            .join(' ')}`
        : ''
    }`,
  );
  say(
    `disk: a durable SQLite commit (WAL, synchronous=FULL) takes ${number(commitMs, 2)} ms here (median): at most ${number(1000 / commitMs, 0)} commits/s made one at a time`,
  );
  if (sqliteSynchronous === 'normal')
    say(
      'agentauth/sqlite runs with SQLITE_SYNCHRONOUS=normal: no fsync per commit, so not durable against power loss (the default is full)',
    );
  if (quick)
    say('quick mode is a smoke test: its windows are too short for stable ratios; use the full mode for those');
  if (profiling) say(`profiling agentauth with --cpu-prof: the figures of this run are slowed down by the profiler`);

  const targets: Target[] = [];
  let failed = false;
  let cluster: Cluster | undefined;
  let dropDatabase: (() => Promise<void>) | undefined;
  let floors: Floors | undefined;
  const cleanup = async () => {
    await Promise.allSettled(targets.map((t) => t.stop()));
    await floors?.stop();
    await dropDatabase?.().catch(() => {});
    try {
      cluster?.stop();
    } catch {
      // already gone
    }
  };
  process.once('SIGINT', () => void cleanup().finally(() => process.exit(130)));

  try {
    // Servers: started together (PostgreSQL's cluster first: it starts synchronously) before
    // any measurement, stopped after the last.
    const nodeFlags = profiling ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
    let postgres: Promise<Target> | undefined;
    let postgresPeer: Promise<Target> | undefined;
    let postgresUrl: string | undefined;
    let floorCluster: Parameters<typeof startFloors>[0]['postgres'];
    const unavailable = postgresUnavailableReason();
    if (!withPostgres) say('PostgreSQL: skipped (--no-postgres)');
    else if (unavailable) say(`PostgreSQL: skipped. ${unavailable}`);
    else {
      cluster = startCluster({ durable: true, observed: true });
      const database = await createDatabase(cluster.url);
      dropDatabase = database.drop;
      postgresUrl = database.url;
      const socketDir = new URL(cluster.url).searchParams.get('host');
      const dbRootPid =
        socketDir && !process.env.TEST_DATABASE_URL ? postmasterPid(join(socketDir, 'data')) : undefined;
      // Statements, commits and WAL per operation, unless the cluster is someone else's (TEST_DATABASE_URL).
      const observeDatabase = process.env.TEST_DATABASE_URL ? undefined : new DatabaseActivity(database.url);
      await observeDatabase?.prepare();
      floorCluster = { clusterUrl: cluster.url, dbRootPid, observe: !!observeDatabase };
      postgres = startAgentauth({
        name: 'agentauth/postgres',
        databaseUrl: database.url,
        logFile: logPath(work, 'agentauth-postgres'),
        dbRootPid,
        nodeFlags,
        dir: agentauthDir,
        observeDatabase,
        env: { ...(withWebhooks ? WEBHOOK_SETTINGS : {}), ...agentauthEnv },
      });
      // The peer on the same cluster, in a database of its own (issue 25: like with like).
      const peerDatabase = await createDatabase(cluster.url);
      dropDatabase = async () => {
        await database.drop();
        await peerDatabase.drop();
      };
      postgresPeer = startPeer(logPath(work, 'oidc-provider-postgres'), {
        name: 'oidc-provider/postgres',
        store: peerDatabase.url,
        dbRootPid,
      });
    }
    const starting = [
      startBaseline(logPath(work, 'baseline')),
      startBaseline(logPath(work, 'fastify'), { framework: true }),
      startAgentauth({
        name: 'agentauth/sqlite',
        databaseUrl: `sqlite:${join(work, 'agentauth.db')}`,
        logFile: logPath(work, 'agentauth-sqlite'),
        nodeFlags,
        dir: agentauthDir,
        env: {
          ...(sqliteSynchronous ? { SQLITE_SYNCHRONOUS: sqliteSynchronous } : {}),
          ...(withWebhooks ? WEBHOOK_SETTINGS : {}),
          ...agentauthEnv,
        },
      }),
      ...(postgres ? [postgres] : []),
      startPeer(logPath(work, 'oidc-provider')),
      startPeer(logPath(work, 'oidc-provider-sqlite'), {
        name: 'oidc-provider/sqlite',
        store: `sqlite:${join(work, 'oidc-provider.db')}`,
      }),
      ...(postgresPeer ? [postgresPeer] : []),
    ];
    const started = await Promise.allSettled(starting);
    for (const outcome of started) if (outcome.status === 'fulfilled') targets.push(outcome.value);
    const rejected = started.find((outcome) => outcome.status === 'rejected');
    if (rejected) throw rejected.reason;
    // Resident memory of each server right after start, before any load: what the peaks start from.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const idleRssMb = Object.fromEntries(targets.map((t) => [t.name, rssMb(t.meter.pid)]));
    floors = figures.length ? await startFloors({ work, postgres: floorCluster }) : undefined;
    say(
      `servers: ${targets.map((t) => `${t.name} (pid ${t.meter.pid}, ${number(idleRssMb[t.name], 0)} MB RSS idle)`).join(', ')}`,
    );
    say(`SQLite file and server logs in ${work} (removed at the end unless something failed)`);
    say(
      '(busy: server CPU time / window, 100% = one core; waited: time its event loop was ready to run but had no CPU)',
    );
    say('');

    const measurements: Measurement[] = [];
    const floorMeasurements: FloorMeasurement[] = [];
    for (const figure of figures) {
      for (const target of targets) {
        const m = await measure(figure, target);
        if (!m) continue;
        measurements.push(m);
        const db = m.dbCpuMsPerOp === undefined ? '' : ` + db ${number(m.dbCpuMsPerOp)}`;
        say(
          `${figure.label.padEnd(15)} ${target.name.padEnd(19)} ${number(m.perSecond).padStart(8)} ${figure.unit.padEnd(7)} p50 ${latency(m, m.p50Ms)} ms  p99 ${latency(m, m.p99Ms)} ms  ` +
            `cpu ${number(m.cpuMsPerOp)}${db} ms/op (${number(100 * m.systemCpuShare, 0)}% sys)  client ${number(m.clientCpuMsPerOp)} ms/op  server busy ${number(100 * m.serverBusy, 0)}% waited ${number(100 * m.serverCpuWait, 0)}%  peak rss ${number(m.peakRssMb, 0)} MB` +
            (m.errors ? `  ! ${m.errors} errors: ${m.errorSamples.join(' | ')}` : ''),
        );
      }
      for (const f of (await floors?.measure(figure.key, WINDOW)) ?? []) {
        floorMeasurements.push(f);
        say(floorLine(figure.label, f));
      }
    }
    // The floor's HTTP part is the baseline's check-status: measured once for it when not a figure.
    // The same for the empty Fastify route, the framework's share of that floor.
    const httpOf = async (name: string) => {
      const measured = measurements.find((m) => m.figure === 'check-status' && m.target === name);
      if (measured || !floors) return measured;
      const m = await measure(FIGURES[0]!, targets.find((t) => t.name === name)!);
      say(`(the floor's HTTP part: ${name} check-status, cpu ${number(m?.cpuMsPerOp, 3)} ms per request)`);
      return m;
    };
    const httpFloor = await httpOf('baseline');
    const frameworkFloor = await httpOf('fastify');

    let sustained: SustainedResult | undefined;
    if (withSustained) {
      // Alone on the machine: the other servers stay up but idle.
      say(
        `\nsustained run: full flows for ${SUSTAINED_SECONDS} s on a separate agentauth/sqlite whose lifetimes are seconds and whose purge runs every second`,
      );
      sustained = await sustainedRun({ work, seconds: SUSTAINED_SECONDS, dir: agentauthDir });
    }

    const push: PushResult[] = [];
    if (withPush) {
      say(
        `\npush run: ${PUSH.waiting} pages waiting for ${PUSH.seconds} s on GET /api/check-status/events, then polling GET /api/check-status once a second; then ${PUSH.samples} authentications timed to the waiting page's event`,
      );
      for (const target of targets.filter((t) => t.kind === 'agentauth')) {
        const onPostgres = target.name === 'agentauth/postgres';
        // A second node on the same database: authentications there reach the page through LISTEN/NOTIFY.
        const other = onPostgres
          ? await startAgentauth({
              name: 'agentauth/postgres-2',
              databaseUrl: postgresUrl!,
              logFile: logPath(work, 'agentauth-postgres-2'),
              dir: agentauthDir,
              env: agentauthEnv,
            })
          : undefined;
        try {
          let result: PushResult;
          try {
            result = await pushRun({
              target,
              otherNode: other,
              databaseUrl: onPostgres ? postgresUrl! : `sqlite:${join(work, 'agentauth.db')}`,
              ...PUSH,
            });
          } catch (error) {
            // A revision from before the status stream, measured with --agentauth-dir: its figures still count.
            if (agentauthDir === undefined || !String(error).includes('stream answered 404')) throw error;
            say(
              `${target.name.padEnd(19)} has no status stream (GET /api/check-status/events answered 404): push run skipped`,
            );
            continue;
          }
          push.push(result);
          for (const w of result.waiting) {
            say(
              `${target.name.padEnd(19)} ${w.mode.padEnd(7)} ${w.connections} waiting: server cpu ${number(w.serverCpuMsPerSecond, 1)} ms/s` +
                (w.pollsPerSecond === undefined ? '' : `, ${number(w.pollsPerSecond, 0)} polls/s (one read each)`) +
                (w.dbTransactionsPerSecond === undefined
                  ? ''
                  : `, database ${number(w.dbTransactionsPerSecond, 1)} transactions/s, ${number(w.dbRowsReturnedPerSecond!, 0)} rows returned/s`),
            );
          }
          say(`${target.name.padEnd(19)} memory per waiting stream: ${number(result.rssKbPerStream, 1)} KB`);
          for (const l of result.latency)
            say(
              `${target.name.padEnd(19)} authentication → page's event${l.acrossNodes ? ' across two nodes' : ' on one node'}: p50 ${number(l.p50Ms, 1)} ms, p99 ${number(l.p99Ms, 1)} ms (${l.samples} samples)`,
            );
        } finally {
          await other?.stop();
        }
      }
    }

    const webhooks: WebhooksResult[] = [];
    if (withWebhooks) {
      say(
        `\nwebhooks run: full flows with no endpoint, with one subscribed to agent.sign_in.succeeded whose deliveries are held, and with it delivering (${WEBHOOKS.rounds} alternated round(s) of the three), ` +
          `${WEBHOOKS.latencySamples} sign-ins timed to their verified delivery, then sign-ins at concurrency ${CONCURRENCY} for the deliveries per second`,
      );
      for (const target of targets.filter((t) => t.kind === 'agentauth')) {
        let result: WebhooksResult;
        try {
          result = await webhooksRun({ target, window: WINDOW, ...WEBHOOKS, say });
        } catch (error) {
          // A revision from before webhooks, measured with --agentauth-dir: its other figures still count.
          if (agentauthDir === undefined || !String(error).includes("unknown command 'webhook'")) throw error;
          say(
            `${target.name.padEnd(19)} has no webhooks (agentauth webhook is an unknown command): webhooks run skipped`,
          );
          continue;
        }
        webhooks.push(result);
        const { outbox, latency: l, throughput: t } = result;
        const m = outbox.medians;
        say(
          `${target.name.padEnd(19)} server cpu per flow (medians): ${number(m.none.cpuMsPerFlow)} ms no endpoint, ${number(m.held.cpuMsPerFlow)} ms with the outbox's writes (${number(outbox.outboxCpuRatio, 3)}×), ` +
            `${number(m.delivering.cpuMsPerFlow)} ms delivering too (${number(outbox.deliveringCpuRatio, 3)}×); flows/s ${number(m.none.flowsPerSecond)} → ${number(m.held.flowsPerSecond)} → ${number(m.delivering.flowsPerSecond)}`,
        );
        const drain = (key: 'perSecond' | 'cpuMsPerDelivery') => median(outbox.drains.map((d) => d[key]));
        say(
          `${target.name.padEnd(19)} deliveries with nothing else running: ${number(drain('perSecond'), 0)}/s, server cpu ${number(drain('cpuMsPerDelivery'))} ms per delivery (medians of ${outbox.drains.length} drains)`,
        );
        say(
          `${target.name.padEnd(19)} authentication answered → verified delivery: p50 ${number(l.p50Ms, 1)} ms, p99 ${number(l.p99Ms, 1)} ms (${l.samples} samples, min ${number(l.minMs, 1)}, max ${number(l.maxMs, 1)})`,
        );
        say(
          `${target.name.padEnd(19)} sign-ins at concurrency ${CONCURRENCY}: ${number(t.signInsPerSecond)}/s, deliveries ${number(t.deliveriesPerSecond)}/s; ` +
            `${number(t.backlogAtEnd, 0)} waiting at the window's end, all delivered ${number(t.drainSeconds, 1)} s later` +
            (t.drainCpuMsPerDelivery === undefined
              ? ''
              : ` (server cpu ${number(t.drainCpuMsPerDelivery)} ms per delivery while draining)`) +
            `; server cpu ${number(t.cpuMsPerSignIn)}${t.dbCpuMsPerSignIn === undefined ? '' : ` + db ${number(t.dbCpuMsPerSignIn)}`} ms per sign-in with its delivery`,
        );
        if (result.errors || result.unverified) {
          say(
            `${target.name.padEnd(19)} ! ${result.errors} errors, ${result.unverified} unverified deliveries: ${result.errorSamples.join(' | ')}`,
          );
          process.exitCode = 1;
        }
      }
    }

    await report({
      figures,
      quick,
      profiling,
      window: WINDOW,
      sqliteSynchronous,
      measurements,
      floor: { measurements: floorMeasurements, http: httpFloor, framework: frameworkFloor },
      sustained,
      push,
      webhooks,
      idleRssMb,
      machine,
      agentauth,
      startedAt,
      stamp,
      resultsDir,
    });
    if (profiling) {
      await Promise.all(targets.map((t) => t.stop())); // the profile is written at exit
      for (const target of targets.filter((t) => t.kind === 'agentauth')) {
        const file = readdirSync(profileDir).find((f) => f.includes(`.${target.meter.pid}.`));
        if (!file) continue;
        // Only the samples of each figure's measured window, not those of start-up or warm-up.
        for (const m of measurements.filter((x) => x.target === target.name)) {
          const window: [number, number] = [m.window.start - target.spawnedAt, m.window.end - target.spawnedAt];
          say(
            `\n${formatProfile(`${target.name}, ${m.figure}`, summarizeProfile(join(profileDir, file), [window], Number(option('profile-top') ?? 12)))}`,
          );
        }
        // The webhooks run: the held backlog's drains (deliveries alone) and the rounds with the outbox's writes.
        const run = webhooks.find((w) => w.target === target.name);
        const since = (w: { start: number; end: number }): [number, number] => [
          w.start - target.spawnedAt,
          w.end - target.spawnedAt,
        ];
        for (const [title, windows] of [
          ['webhook deliveries (drains)', run?.outbox.drains.map((d) => since(d.window)) ?? []],
          [
            "flows with the outbox's writes (held rounds)",
            run?.outbox.rounds.filter((r) => r.mode === 'held').map((r) => since(r.window)) ?? [],
          ],
        ] as const) {
          if (windows.length === 0) continue;
          say(
            `\n${formatProfile(`${target.name}, ${title}`, summarizeProfile(join(profileDir, file), [...windows], 12))}`,
          );
        }
      }
    }
    say(`\nfinished in ${((Date.now() - startedAt.getTime()) / 1000).toFixed(0)} s`);
  } catch (error) {
    failed = true;
    throw error;
  } finally {
    await cleanup();
    // Kept when something went wrong (the server logs say why) or for the profiles.
    if (failed || process.exitCode || profiling)
      say(`kept ${work} (server logs, SQLite file${profiling ? ', profiles' : ''})`);
    else rmSync(work, { recursive: true, force: true });
  }
}

await main();
