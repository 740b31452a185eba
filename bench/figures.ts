/**
 * The benchmark's figures and what a measurement of one holds: each figure's reference (the
 * baseline, or oidc-provider on the same durable store) and its target per engine, shared by the
 * run (bench/run.ts) and its report (bench/report.ts).
 */
import type { ActivityPerOp } from './database-activity.ts';
import type { DriverResult } from './driver.ts';
import type { DatabaseReport, ServerView } from './targets.ts';

export type FigureKey = 'check-status' | 'authorize' | 'flows' | 'refresh' | 'introspection' | 'userinfo';

export interface Figure {
  key: FigureKey;
  label: string;
  unit: string;
  /** What the ratio is taken against. */
  versus: 'baseline' | 'peer';
  /**
   * The target, when the issue sets one, per engine: the least efficiency, that is the
   * reference's server CPU per operation over agentauth's (its own, plus the database's on
   * PostgreSQL). 3 means "three times less CPU than oidc-provider"; 0.5 "at most twice the
   * baseline's".
   */
  efficiency?: { sqlite?: number; postgres?: number };
}

// Issue 25's targets: on SQLite, check-status at least 0.5× the baseline's efficiency (issue 13's,
// unchanged); on both engines, at least 3× less server CPU per operation than oidc-provider on the
// same durable store (node + database on PostgreSQL). The in-memory peer stays in the tables, and
// its ratios in the JSON results, to show that nothing regressed against the earlier rounds.
export const FIGURES: Figure[] = [
  { key: 'check-status', label: 'check-status', unit: 'req/s', versus: 'baseline', efficiency: { sqlite: 0.5 } },
  { key: 'authorize', label: 'authorize page', unit: 'req/s', versus: 'peer', efficiency: { sqlite: 3, postgres: 3 } },
  { key: 'flows', label: 'full flows', unit: 'flows/s', versus: 'peer', efficiency: { sqlite: 3, postgres: 3 } },
  { key: 'refresh', label: 'token refresh', unit: 'req/s', versus: 'peer', efficiency: { sqlite: 3, postgres: 3 } },
  {
    key: 'introspection',
    label: 'introspection',
    unit: 'req/s',
    versus: 'peer',
    efficiency: { sqlite: 3, postgres: 3 },
  },
  { key: 'userinfo', label: 'userinfo', unit: 'req/s', versus: 'peer', efficiency: { sqlite: 3, postgres: 3 } },
];

/** The in-memory peer: a third column, and the reference of the earlier rounds. */
export const MEMORY_PEER = 'oidc-provider';
/**
 * What an agentauth engine is compared with on a figure: the baseline, or the peer on the same
 * durable store ("agentauth/sqlite" → "oidc-provider/sqlite"), like with like.
 */
export const referenceName = (figure: Figure, engine: string): string =>
  figure.versus === 'baseline' ? 'baseline' : engine.replace('agentauth/', 'oidc-provider/');

/** A flow's steps in the order they run: agentauth's authenticate and continue, the peer's interaction and resume. */
export const FLOW_STEPS = ['authorize', 'authenticate', 'interaction', 'continue', 'resume', 'token', 'userinfo'];

/** The efficiency target of a figure on one agentauth engine ("agentauth/sqlite"), if any. */
export const efficiencyGoal = (figure: Figure, engine: string): number | undefined =>
  figure.efficiency?.[engine.replace('agentauth/', '') as 'sqlite' | 'postgres'];
/** Server CPU per operation, the database's included (PostgreSQL). */
export const serverCpu = (m: Measurement) => m.cpuMsPerOp + (m.dbCpuMsPerOp ?? 0);
export const RSS_LIMIT_MB = 150;

export interface Measurement extends DriverResult {
  figure: FigureKey;
  target: string;
  cpuMsPerOp: number;
  /** Share of the server's CPU spent in the kernel (sockets, fsync). */
  systemCpuShare: number;
  /** CPU of the load generator (this process) per operation: it shares the machine's cores. */
  clientCpuMsPerOp: number;
  /** Server CPU time / window: 1 = one core busy all the time (more with helper threads). */
  serverBusy: number;
  /** Time the server waited for a CPU / window: how much the machine held it back. */
  serverCpuWait: number;
  /** PostgreSQL's own CPU per operation (the cluster's processes). */
  dbCpuMsPerOp?: number;
  /** agentauth on PostgreSQL: statements (round trips), commits and WAL bytes per operation. */
  dbActivityPerOp?: ActivityPerOp;
  peakRssMb: number;
  peakIsLifetime: boolean;
  /** The measured window, Date.now() ms. */
  window: { start: number; end: number };
  /** For the full-flow load on agentauth: the database before and after. */
  database?: { before: DatabaseReport; after: DatabaseReport };
  /** For full flows: each step's latency (one HTTP request each) inside the window, as the driver saw it. */
  steps?: Record<string, { p50Ms: number; p99Ms: number }>;
  /**
   * For full flows on agentauth, its own view of the window (its metrics): each step's mean time
   * from the request's arrival to its answer, and how late its event loop ran work. The driver's
   * latency minus this is time spent outside the server (the network, and the load generator
   * waiting for one of the two cores).
   */
  server?: { stepMeanMs: Record<string, number>; eventLoopDelay: ServerView['eventLoopDelay'] };
  /** For full flows: the same flows one at a time (bench's unloadedFlows), latency per flow and per step. */
  unloaded?: { flows: number; p50Ms: number; p99Ms: number; steps: Record<string, { p50Ms: number; p99Ms: number }> };
}
