/**
 * The benchmark's report: the tables of a run (throughput, latency per step, server CPU per
 * operation, the targets, the floor, PostgreSQL's work per operation, the database under load,
 * the sustained run) printed to the terminal, and the whole result written as JSON.
 */
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import type { Window } from './driver.ts';
import { type FloorMeasurement, floorReport } from './floor.ts';
import {
  efficiencyGoal,
  FIGURES,
  type Figure,
  type FigureKey,
  FLOW_STEPS,
  MEMORY_PEER,
  type Measurement,
  RSS_LIMIT_MB,
  referenceName,
  serverCpu,
} from './figures.ts';
import type { SustainedResult } from './sustained.ts';
import { CONCURRENCY, type DatabaseReport } from './targets.ts';
import { number, table } from './format.ts';
import type { PushResult } from './push.ts';
import type { WebhooksResult } from './webhooks.ts';

/** A latency: whole ms (and "<1") where the tool measured whole ms. */
export const latency = (m: Measurement, ms: number) =>
  m.latencyResolutionMs === 1 ? (ms < 1 ? '<1' : number(ms, 0)) : number(ms);
export const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
export const flag = (m: Measurement | undefined) => (m && m.errors > 0 ? '!' : '');

interface Ceiling {
  figure: FigureKey;
  label: string;
  target: string;
  clientCpuMsPerOp: number;
  /** 1000 / clientCpuMsPerOp: the most one thread of the generator can drive. */
  perSecond: number;
  /** The peer it is compared with (the same store's). */
  peer: string;
  /** That rate over the peer's measured rate: the highest req/s ratio a run here could show. */
  ratio: number;
}

/**
 * For each figure measured against the peer: the highest ratio a run on this machine could
 * show, whatever agentauth did. The generator (flow driver or autocannon) runs on one thread,
 * so 1 / (its CPU per operation) caps the operations per second it can drive.
 */
function loadGeneratorCeilings(
  measurements: Measurement[],
  find: (figure: FigureKey, target: string) => Measurement | undefined,
  figures: Figure[],
): Ceiling[] {
  const ceilings: Ceiling[] = [];
  for (const figure of figures.filter((f) => f.versus === 'peer')) {
    for (const m of measurements.filter((x) => x.figure === figure.key && x.target.startsWith('agentauth/'))) {
      const peer = find(figure.key, referenceName(figure, m.target));
      if (!peer || peer.perSecond <= 0 || m.clientCpuMsPerOp <= 0) continue;
      const perSecond = 1000 / m.clientCpuMsPerOp;
      ceilings.push({
        figure: figure.key,
        label: figure.label,
        target: m.target,
        clientCpuMsPerOp: m.clientCpuMsPerOp,
        perSecond,
        peer: peer.target,
        ratio: perSecond / peer.perSecond,
      });
    }
  }
  return ceilings;
}

export async function report(run: {
  /** The run's options: the figures measured, the mode, the window. */
  figures: Figure[];
  quick: boolean;
  profiling: boolean;
  window: Window;
  sqliteSynchronous: string | undefined;
  measurements: Measurement[];
  /** The floor's database parts, and the baseline's check-status for its HTTP part. */
  floor: { measurements: FloorMeasurement[]; http: Measurement | undefined; framework: Measurement | undefined };
  sustained?: SustainedResult;
  push: PushResult[];
  webhooks: WebhooksResult[];
  idleRssMb: Record<string, number>;
  machine: Record<string, unknown>;
  agentauth: object;
  startedAt: Date;
  stamp: string;
  resultsDir: string;
}): Promise<void> {
  const { measurements, figures, quick, profiling, sqliteSynchronous } = run;
  const say = (line = '') => process.stdout.write(`${line}\n`);
  // A run of only the sustained check has no measurement to tabulate.
  const sayTable = (rows: string[][]) => {
    if (!measurements.length) return;
    say();
    say(table(rows));
  };
  const names = [...new Set(measurements.map((m) => m.target))];
  const engines = names.filter((n) => n.startsWith('agentauth/'));
  const find = (figure: FigureKey, target: string) =>
    measurements.find((m) => m.figure === figure && m.target === target);
  const reference = (figure: Figure, engine: string) => find(figure.key, referenceName(figure, engine));
  const ratio = (figure: Figure, target: string, against = reference(figure, target)) => {
    const m = find(figure.key, target);
    return against && m && against.perSecond > 0 ? m.perSecond / against.perSecond : undefined;
  };

  // Throughput, each agentauth figure with its ratio to the reference.
  const rows: string[][] = [['figure', ...names]];
  for (const figure of figures) {
    rows.push([
      `${figure.label} ${figure.unit} (× ${figure.versus === 'baseline' ? 'baseline' : 'same-store peer'})`,
      ...names.map((name) => {
        const m = find(figure.key, name);
        if (!m) return '—';
        const r = name.startsWith('agentauth/') ? ratio(figure, name) : undefined;
        return `${number(m.perSecond)}${flag(m)}${r === undefined ? '' : ` (${number(r)}×)`}`;
      }),
    ]);
    rows.push([
      `  ${figure.key === 'flows' ? 'flow p50 / p99 ms' : 'p50 / p99 ms'}`,
      ...names.map((name) => {
        const m = find(figure.key, name);
        return m ? `${latency(m, m.p50Ms)} / ${latency(m, m.p99Ms)}` : '—';
      }),
    ]);
  }
  sayTable(rows);
  const withSteps = names.filter((name) => find('flows', name)?.steps);
  if (withSteps.length) {
    // The peer's interaction and resume stand where agentauth's authenticate and continue do.
    const stepRows: string[][] = [['flow latency p50 / p99 ms', ...withSteps]];
    const seen = new Set(withSteps.flatMap((name) => Object.keys(find('flows', name)!.steps!)));
    const stepNames = FLOW_STEPS.filter((step) => seen.has(step));
    const pair = (l: { p50Ms: number; p99Ms: number } | undefined) =>
      l ? `${number(l.p50Ms)} / ${number(l.p99Ms)}` : '—';
    stepRows.push([`${CONCURRENCY} flows in flight (agentauth: [mean time inside it])`, ...withSteps.map(() => '')]);
    for (const step of ['flow', ...stepNames])
      stepRows.push([
        `  ${step}`,
        ...withSteps.map((name) => {
          const m = find('flows', name)!;
          if (step === 'flow') return pair(m);
          const inside = m.server?.stepMeanMs[step];
          return `${pair(m.steps![step])}${inside === undefined ? '' : ` [${number(inside)}]`}`;
        }),
      ]);
    stepRows.push(['one flow at a time', ...withSteps.map(() => '')]);
    for (const step of ['flow', ...stepNames])
      stepRows.push([
        `  ${step}`,
        ...withSteps.map((name) => {
          const u = find('flows', name)!.unloaded;
          return pair(step === 'flow' ? u : u?.steps[step]);
        }),
      ]);
    const delays = withSteps.map((name) => find('flows', name)!.server?.eventLoopDelay);
    if (delays.some((d) => d))
      stepRows.push([
        `event loop delay p50 / p99 / max ms (${CONCURRENCY} in flight)`,
        ...delays.map((d) => (d ? `${number(d.p50Ms)} / ${number(d.p99Ms)} / ${number(d.maxMs)}` : '—')),
      ]);
    sayTable(stepRows);
  }
  const peerAuthorize = find('authorize', 'oidc-provider');
  if (peerAuthorize) say(`(oidc-provider's /auth answers 303 to its interaction page, counted as its authorize page)`);

  // Cost per operation on the server side.
  const cost: string[][] = [['server CPU ms/op · peak RSS MB', ...names]];
  cost.push(['(RSS after start, idle)', ...names.map((name) => `${number(run.idleRssMb[name], 0)}`)]);
  for (const figure of figures) {
    cost.push([
      figure.label,
      ...names.map((name) => {
        const m = find(figure.key, name);
        if (!m) return '—';
        const db = m.dbCpuMsPerOp === undefined ? '' : ` (+${number(m.dbCpuMsPerOp)} db)`;
        return `${number(m.cpuMsPerOp)}${db} · ${number(m.peakRssMb, 0)}${m.peakIsLifetime ? '*' : ''}`;
      }),
    ]);
  }
  sayTable(cost);
  if (measurements.some((m) => m.peakIsLifetime))
    say('* peak RSS since the process started (resetting the peak through /proc/<pid>/clear_refs was not permitted)');

  // Targets, on server CPU per operation (the database's included on PostgreSQL).
  const targetRows: string[][] = [['target (server CPU per operation)', ...engines]];
  const targets: {
    target: string;
    engine: string;
    value: number | undefined;
    pass: boolean | undefined;
    flagged: boolean;
  }[] = [];
  for (const figure of figures.filter((f) => f.efficiency !== undefined)) {
    const against = figure.versus === 'baseline' ? 'baseline' : 'same-store oidc-provider';
    const label = `${figure.label}: ${against}'s CPU/op ÷ ours`;
    targetRows.push([
      label,
      ...engines.map((engine) => {
        const goal = efficiencyGoal(figure, engine);
        const m = find(figure.key, engine);
        const ref = reference(figure, engine);
        if (goal === undefined || !m || !ref) return '—';
        const efficiency = serverCpu(ref) / serverCpu(m);
        const flagged = !!(flag(m) || flag(ref));
        const pass = efficiency >= goal;
        targets.push({ target: `${label} ≥ ${goal}`, engine, value: efficiency, pass, flagged });
        return `${pass ? 'PASS' : 'FAIL'}${flagged ? '!' : ''} ${number(efficiency)}× (≥ ${goal}×)`;
      }),
    ]);
    // The earlier rounds' reference, for context: no target, but a fall here is a regression.
    const memoryPeer = figure.versus === 'peer' ? find(figure.key, MEMORY_PEER) : undefined;
    if (memoryPeer)
      targetRows.push([
        `  (in-memory oidc-provider's CPU/op ÷ ours)`,
        ...engines.map((engine) => {
          const m = find(figure.key, engine);
          return m ? `${number(serverCpu(memoryPeer) / serverCpu(m))}×` : '—';
        }),
      ]);
  }
  if (figures.some((f) => f.key === 'flows')) {
    // Issue 25: latency under load, a flow's p99 with 16 in flight.
    const label = "flow p99 ≤ the same-store peer's and ≤ 2× the in-memory peer's";
    const memoryPeer = find('flows', MEMORY_PEER);
    targetRows.push([
      label,
      ...engines.map((engine) => {
        const m = find('flows', engine);
        const durablePeer = find('flows', engine.replace('agentauth/', 'oidc-provider/'));
        if (!m || !durablePeer || !memoryPeer) return '—';
        const limit = Math.min(durablePeer.p99Ms, 2 * memoryPeer.p99Ms);
        const pass = m.p99Ms <= limit;
        const flagged = !!(flag(m) || flag(durablePeer) || flag(memoryPeer));
        targets.push({ target: label, engine, value: m.p99Ms, pass, flagged });
        return `${pass ? 'PASS' : 'FAIL'}${flagged ? '!' : ''} ${number(m.p99Ms)} ms (≤ ${number(limit)})`;
      }),
    ]);
  }
  if (figures.some((f) => f.key === 'flows')) {
    const label = `peak RSS under full-flow load ≤ ${RSS_LIMIT_MB} MB`;
    targetRows.push([
      label,
      ...engines.map((engine) => {
        const m = find('flows', engine);
        const pass = m ? m.peakRssMb <= RSS_LIMIT_MB : undefined;
        targets.push({ target: label, engine, value: m?.peakRssMb, pass, flagged: !!flag(m) });
        return m ? `${pass ? 'PASS' : 'FAIL'}${flag(m)} ${number(m.peakRssMb, 0)} MB` : '—';
      }),
    ]);
  }
  sayTable(targetRows);

  // The floor: the database's own work plus HTTP (bench/floor.ts).
  const floor = floorReport({
    floors: run.floor.measurements,
    httpMsPerRequest: run.floor.http?.cpuMsPerOp,
    frameworkMsPerRequest: run.floor.framework?.cpuMsPerOp,
    httpFlagged: !!flag(run.floor.http) || !!flag(run.floor.framework),
    labels: figures,
    agentauth: (figure, engine) => {
      const m = find(figure, `agentauth/${engine}`);
      return m && { cpuMsPerOp: serverCpu(m), flagged: !!flag(m), activity: m.dbActivityPerOp };
    },
  });
  if (floor.results.length) {
    sayTable(floor.rows);
    for (const note of floor.notes) say(note);
    targets.push(...floor.targets);
  }
  const ceilings = loadGeneratorCeilings(measurements, find, figures);
  if (ceilings.length) {
    say();
    say(
      'why the targets are on CPU: the load generator is one thread of this process; its CPU per operation caps the rate it could drive even against a server that cost nothing:',
    );
    for (const c of ceilings) {
      say(
        `  ${c.label} on ${c.target}: ${number(c.clientCpuMsPerOp, 3)} ms per op → at most about ${number(c.perSecond, 0)}/s = ${number(c.ratio)}× ${c.peer}'s req/s`,
      );
    }
  }

  // What each operation asks of PostgreSQL, and what one PostgreSQL sustains.
  const observed = measurements.filter((m) => m.dbActivityPerOp && m.dbCpuMsPerOp !== undefined);
  if (observed.length) {
    say();
    say(
      "PostgreSQL per operation (statements are round trips, BEGIN and COMMIT included; commits are WAL commit records; the CPU is the cluster's):",
    );
    for (const m of observed) {
      const a = m.dbActivityPerOp!;
      say(
        `  ${m.figure.padEnd(14)} ${number(a.statements, 1)} statements, ${number(a.commits, 1)} commits, ${number(a.walBytes, 0)} WAL bytes, ${number(m.dbCpuMsPerOp, 2)} ms database CPU` +
          ` → one PostgreSQL core sustains about ${number(1000 / m.dbCpuMsPerOp!, 0)}/s`,
      );
    }
  }

  // The database under the full-flow load.
  const withDatabase = measurements.filter((m) => m.database);
  if (withDatabase.length) {
    say();
    say('database during the full-flow load (before the warm-up → after the window; default TTLs, purge after 1 day):');
    for (const m of withDatabase) {
      const { before, after } = m.database!;
      // Every flow creates one authorization request (warm-up included); m.ok counts the window only.
      const requests = (r: DatabaseReport) => r.rows.authorization_requests;
      const flows =
        requests(after) !== undefined && requests(before) !== undefined ? requests(after)! - requests(before)! : m.ok;
      say(
        `  ${m.target}: ${mb(before.bytes)} → ${mb(after.bytes)} for ${number(flows, 0)} flows (${number((after.bytes - before.bytes) / Math.max(flows, 1), 0)} bytes per flow)`,
      );
      say(
        `    rows: ${Object.keys(after.rows)
          .map((t) => `${t} ${number(before.rows[t], 0)} → ${number(after.rows[t], 0)}`)
          .join(', ')}`,
      );
    }
  }

  const { sustained } = run;
  if (sustained) {
    const settings = Object.entries(sustained.settings)
      .map(([k, v]) => `${k}=${v}`)
      .join(' ');
    say();
    say(
      `sustained run (${settings}): ${number(sustained.flows.ok, 0)} flows in ${number(sustained.flows.seconds, 0)} s, ${number(sustained.flows.perSecond)} flows/s, ${sustained.flows.errors} errors`,
    );
    say(
      `  rows / file size every ${number(sustained.samples[1] ? sustained.samples[1].second - sustained.samples[0]!.second : 0, 1)} s: ${sustained.samples.map((s) => `${number(s.rows, 0)}/${mb(s.bytes)}`).join(' ')}`,
    );
    say(
      `  ${sustained.pass ? 'PASS' : 'FAIL'}: the purge keeps up: at most ${number(sustained.firstHalf.rows, 0)} rows (${mb(sustained.firstHalf.bytes)}) in the first half once settled, ` +
        `at most ${number(sustained.secondHalf.rows, 0)} rows (${mb(sustained.secondHalf.bytes)}) in the second, of ${number(sustained.rowsCreated, 0)} rows written`,
    );
    say(`  resident memory, MB: ${sustained.samples.map((s) => number(s.rssMb, 0)).join(' ')}`);
    const rssPass = sustained.peakRssMb <= RSS_LIMIT_MB;
    say(
      `  ${rssPass ? 'PASS' : 'FAIL'}: resident memory ≤ ${RSS_LIMIT_MB} MB throughout: peak ${number(sustained.peakRssMb, 0)} MB, settled at ${number(sustained.settledRssMb, 0)} MB (median once settled)`,
    );
    if (sustained.flows.errors) say(`  ! errors: ${sustained.flows.errorSamples.join(' | ')}`);
    if (!sustained.pass) process.exitCode = 1;
  }

  const flagged = measurements.filter((m) => m.errors > 0);
  say();
  if (flagged.length) {
    say(`! ${flagged.length} measurement(s) had errors (wrong status or body); their figures are not valid:`);
    for (const m of flagged) say(`  ${m.figure} on ${m.target}: ${m.errors} errors: ${m.errorSamples.join(' | ')}`);
    process.exitCode = 1;
  } else {
    say('every response had the expected status and body (no errors)');
  }
  if (floor.problems.length) {
    say(`! the floor's statements failed; its figures are not valid:`);
    for (const problem of floor.problems) say(`  ${problem}`);
    process.exitCode = 1;
  }

  const file = join(run.resultsDir, `${run.stamp}${quick ? '-quick' : ''}.json`);
  writeFileSync(
    file,
    `${JSON.stringify(
      {
        startedAt: run.startedAt.toISOString(),
        mode: quick ? 'quick' : 'full',
        profiling,
        window: run.window,
        concurrency: CONCURRENCY,
        agentauth: run.agentauth,
        sqliteSynchronous: sqliteSynchronous ?? 'full',
        machine: { ...run.machine, loadAverageAtEnd: loadavg().map((l) => Number(l.toFixed(2))) },
        idleRssMb: run.idleRssMb,
        figures: figures.map((f) => ({
          ...f,
          reference: f.versus === 'baseline' ? 'baseline' : 'oidc-provider/<engine> (the same store)',
        })),
        measurements: measurements.map((m) => {
          const figure = FIGURES.find((f) => f.key === m.figure)!;
          return {
            ...m,
            ratio: ratio(figure, m.target),
            ...(figure.versus === 'peer' && m.target.startsWith('agentauth/')
              ? { ratioToMemoryPeer: ratio(figure, m.target, find(m.figure, MEMORY_PEER)) }
              : {}),
          };
        }),
        targets,
        ...(floor.results.length ? { floor: { httpBaseline: run.floor.http, figures: floor.results } } : {}),
        loadGeneratorCeilings: ceilings,
        ...(sustained ? { sustained } : {}),
        ...(run.push.length ? { push: run.push } : {}),
        ...(run.webhooks.length ? { webhooks: run.webhooks } : {}),
      },
      null,
      2,
    )}\n`,
  );
  say(`results written to ${file}`);
}
