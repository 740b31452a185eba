/**
 * The sustained run: does the purge keep up? A separate agentauth on durable SQLite with every
 * lifetime shortened to seconds and the purge running every second takes full flows for the
 * whole run while its database is sampled. With the default lifetimes (days) a run would have
 * to last days to reach the steady state; shortened, it reaches it within seconds, and from
 * then on the row count and the file must stop growing. The server's resident memory is read
 * beside them: the figure windows are too short to show where it settles.
 */
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { closedLoop, type DriverResult, median } from './driver.ts';
import { rssMb } from './measure.ts';
import { CONCURRENCY, type DatabaseReport, logPath, startAgentauth } from './targets.ts';

/** Every lifetime in seconds; the longest (the refresh token's) bounds how long a row lives. */
export const SUSTAINED_SETTINGS = {
  REQUEST_TTL: '2',
  CODE_TTL: '2',
  ACCESS_TOKEN_TTL: '2',
  REFRESH_TOKEN_TTL: '4',
  AUDIT_RETENTION: '4',
  PURGE_AFTER: '0',
  PURGE_INTERVAL: '1',
};
/** Longest lifetime + purge interval: after this, every row older than the run's start is gone. */
const SETTLE_SECONDS = Number(SUSTAINED_SETTINGS.REFRESH_TOKEN_TTL) + Number(SUSTAINED_SETTINGS.PURGE_INTERVAL);
/** Each flow writes a request, a code, a grant, an access and a refresh token and an audit event. */
const ROWS_PER_FLOW = 6;
/** Growth allowed from the first settled half of the run to the second (load varies on a shared machine). */
const TOLERANCE = 1.25;
const SLACK_BYTES = 1024 * 1024;

export interface Sample {
  second: number;
  rows: number;
  bytes: number;
  /** The server's resident memory, in MB. */
  rssMb: number;
}

export interface SustainedResult {
  flows: DriverResult;
  settings: typeof SUSTAINED_SETTINGS;
  samples: Sample[];
  /** Rows all the flows of the run created (what the database would hold without the purge). */
  rowsCreated: number;
  /** Peaks of the first and of the second half of the run's settled part. */
  firstHalf: Sample;
  secondHalf: Sample;
  pass: boolean;
  /** Resident memory: the highest sample of the run, and the median of its settled part. */
  peakRssMb: number;
  settledRssMb: number;
}

/** The sample with the most rows, its file size the largest of them all (the file never shrinks). */
function peak(samples: Sample[]): Sample {
  const most = samples.reduce((a, b) => (b.rows > a.rows ? b : a));
  return { ...most, bytes: Math.max(...samples.map((s) => s.bytes)) };
}

const totalRows = (report: DatabaseReport) => Object.values(report.rows).reduce((sum, n) => sum + n, 0);

export async function sustainedRun(options: { work: string; seconds: number; dir?: string }): Promise<SustainedResult> {
  const target = await startAgentauth({
    name: 'agentauth/sqlite (sustained)',
    databaseUrl: `sqlite:${join(options.work, 'sustained.db')}`,
    logFile: logPath(options.work, 'agentauth-sustained'),
    dir: options.dir,
    env: SUSTAINED_SETTINGS,
  });
  try {
    const samples: Sample[] = [];
    const started = Date.now();
    let running = true;
    const sampler = (async () => {
      while (running) {
        const report = await target.database!();
        samples.push({
          second: (Date.now() - started) / 1000,
          rows: totalRows(report),
          bytes: report.bytes,
          rssMb: rssMb(target.meter.pid),
        });
        await sleep((options.seconds * 1000) / 20);
      }
    })();
    const before = totalRows(await target.database!());
    const flows = await closedLoop({
      concurrency: CONCURRENCY,
      window: { warmupMs: 0, durationMs: options.seconds * 1000 },
      init: async () => undefined,
      operation: async () => void (await target.flow!()),
      measure: { start() {}, stop() {} },
    });
    running = false;
    await sampler;
    const rowsCreated = before + ROWS_PER_FLOW * flows.ok;
    // Past the settling time the row count saws up and down with each purge, so single samples
    // are not compared: the peak of the first half of the settled samples against the peak of
    // the second half, which must not be higher (within the tolerance).
    const settledFrom = Math.min(Math.max(SETTLE_SECONDS + 1, options.seconds / 2), options.seconds * 0.75);
    const settled = samples.filter((s) => s.second >= settledFrom);
    const half = Math.ceil(settled.length / 2);
    const firstHalf = peak(settled.slice(0, half));
    const secondHalf = peak(settled.slice(half));
    // Bounded: and well below what was written (without a purge the two would be equal).
    const pass =
      flows.errors === 0 &&
      secondHalf.rows <= firstHalf.rows * TOLERANCE + CONCURRENCY * ROWS_PER_FLOW &&
      secondHalf.bytes <= firstHalf.bytes * TOLERANCE + SLACK_BYTES &&
      secondHalf.rows < rowsCreated * 0.75;
    return {
      flows,
      settings: SUSTAINED_SETTINGS,
      samples,
      rowsCreated,
      firstHalf,
      secondHalf,
      pass,
      peakRssMb: Math.max(...samples.map((s) => s.rssMb)),
      settledRssMb: median(settled.map((s) => s.rssMb)),
    };
  } finally {
    await target.stop();
  }
}
