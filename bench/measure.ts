/**
 * What a server process costs, read from /proc (Linux) with no dependency: CPU time (utime and
 * stime of /proc/<pid>/stat; for PostgreSQL the whole cluster's process tree), peak resident
 * memory (VmHWM of /proc/<pid>/status) and the time the event loop waited for a CPU
 * (/proc/<pid>/schedstat), which says how much a noisy machine held the server back.
 *
 * The peak is reset before each measurement by writing 5 to /proc/<pid>/clear_refs, so each
 * figure reports the peak under its own load rather than the process's lifetime peak. Where
 * that is not permitted the lifetime peak is reported and `peakIsLifetime` says so.
 *
 * Also here: the cost of one durable SQLite commit on the benchmark's disk.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';

/** Clock ticks per second, the unit of utime/stime (almost always 100). */
const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

interface Stat {
  ppid: number;
  /** utime + stime of the process itself, in ms. */
  ownMs: number;
  /** stime alone: CPU spent in the kernel on the process's behalf (syscalls: sockets, fsync). */
  systemMs: number;
  /** cutime + cstime: CPU of children that exited and were reaped, in ms. */
  reapedChildrenMs: number;
}

function readStat(pid: number): Stat | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined; // the process has exited
  }
  // The command name (field 2) is in parentheses and may contain spaces: split after it.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  // fields[0] is field 3 of stat(5): state; ppid is field 4, utime..cstime are fields 14..17.
  const tick = (i: number) => (Number(fields[i - 3]) * 1000) / CLOCK_TICKS;
  return {
    ppid: Number(fields[1]),
    ownMs: tick(14) + tick(15),
    systemMs: tick(15),
    reapedChildrenMs: tick(16) + tick(17),
  };
}

/** CPU ms a process has used so far, and the part of it in the kernel (undefined once it has exited). */
export function cpuMs(pid: number): { total: number; system: number } | undefined {
  const stat = readStat(pid);
  return stat && { total: stat.ownMs, system: stat.systemMs };
}

/**
 * CPU ms of a whole process tree, such as a PostgreSQL cluster (postmaster and its backends):
 * the live processes' own time plus what the root has reaped from exited children.
 */
export function treeCpuMs(rootPid: number): number {
  const root = readStat(rootPid);
  if (!root) return 0;
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readStat(Number(entry));
    if (stat) children.set(stat.ppid, [...(children.get(stat.ppid) ?? []), Number(entry)]);
  }
  let total = root.ownMs + root.reapedChildrenMs;
  const queue = [...(children.get(rootPid) ?? [])];
  while (queue.length) {
    const pid = queue.pop()!;
    total += readStat(pid)?.ownMs ?? 0;
    queue.push(...(children.get(pid) ?? []));
  }
  return total;
}

/**
 * Time the process's main thread (the event loop, where nearly all of a Node server's work
 * happens) was runnable but waiting for a CPU, in ms, from /proc/<pid>/schedstat: on a shared
 * machine, how much the neighbours (and the load generator) held it back. 0 where the kernel
 * keeps no schedstats.
 */
export function runQueueWaitMs(pid: number): number {
  try {
    return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[1]) / 1e6;
  } catch {
    return 0;
  }
}

function statusKb(pid: number, field: 'VmHWM' | 'VmRSS'): number | undefined {
  try {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** The process's resident memory now, in MB. */
export function rssMb(pid: number): number {
  return (statusKb(pid, 'VmRSS') ?? 0) / 1024;
}

/** Resets the process's peak RSS to its current RSS (clear_refs value 5, Linux >= 4.0). */
export function resetPeakRss(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

export interface Usage {
  /** CPU ms of the server process during the window. */
  cpuMs: number;
  /** The part of cpuMs spent in the kernel. */
  systemCpuMs: number;
  /** Time the server's event loop was ready to run but waited for a CPU. */
  runQueueWaitMs: number;
  /** CPU ms of the database cluster during the window (PostgreSQL only). */
  dbCpuMs?: number;
  /** Peak RSS in MB during the window (or over the process lifetime, see peakIsLifetime). */
  peakRssMb: number;
  peakIsLifetime: boolean;
  /** RSS in MB at the end of the window. */
  rssMb: number;
}

/** Measures one server process (and optionally its database cluster) over a window. */
export class ProcessMeter {
  private cpuStart = { total: 0, system: 0 };
  private waitStart = 0;
  private dbCpuStart = 0;
  private peakReset = false;

  constructor(
    readonly pid: number,
    /** The postmaster pid of a PostgreSQL cluster the server uses, to count the database's CPU too. */
    readonly dbRootPid?: number,
  ) {}

  start(): void {
    this.peakReset = resetPeakRss(this.pid);
    this.cpuStart = cpuMs(this.pid) ?? { total: 0, system: 0 };
    this.waitStart = runQueueWaitMs(this.pid);
    if (this.dbRootPid !== undefined) this.dbCpuStart = treeCpuMs(this.dbRootPid);
  }

  stop(): Usage {
    const cpu = cpuMs(this.pid);
    if (cpu === undefined) throw new Error(`server process ${this.pid} has exited`);
    return {
      cpuMs: cpu.total - this.cpuStart.total,
      systemCpuMs: cpu.system - this.cpuStart.system,
      runQueueWaitMs: runQueueWaitMs(this.pid) - this.waitStart,
      ...(this.dbRootPid !== undefined ? { dbCpuMs: treeCpuMs(this.dbRootPid) - this.dbCpuStart } : {}),
      peakRssMb: (statusKb(this.pid, 'VmHWM') ?? 0) / 1024,
      peakIsLifetime: !this.peakReset,
      rssMb: (statusKb(this.pid, 'VmRSS') ?? 0) / 1024,
    };
  }
}

/** The postmaster pid of a running cluster: the first line of <data>/postmaster.pid. */
export function postmasterPid(dataDir: string): number | undefined {
  try {
    return Number(readFileSync(`${dataDir}/postmaster.pid`, 'utf8').split('\n')[0]) || undefined;
  } catch {
    return undefined;
  }
}

/**
 * What one durable SQLite commit costs on the disk under `dir`, with agentauth's settings (WAL,
 * synchronous=FULL): the median of `count` single-row insert commits, in ms. better-sqlite3 is
 * synchronous, so a server blocks its event loop for this long on every commit; it bounds the
 * write rate of a single SQLite node whatever its CPU.
 */
export function durableCommitMs(dir: string, count = 300): number {
  const file = join(dir, 'commit-probe.db');
  const db = new Database(file);
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.exec('create table probe (id integer primary key, value text not null)');
    const insert = db.prepare('insert into probe (value) values (?)');
    const times: number[] = [];
    for (let i = 0; i < count; i++) {
      const started = performance.now();
      insert.run('x'.repeat(200));
      times.push(performance.now() - started);
    }
    times.sort((a, b) => a - b);
    return times[Math.floor(times.length / 2)]!;
  } finally {
    db.close();
    for (const suffix of ['', '-wal', '-shm']) rmSync(file + suffix, { force: true });
  }
}
