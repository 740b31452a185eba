/**
 * Where a server's CPU time goes, from the .cpuprofile that `node --cpu-prof` writes at exit:
 * the functions with the most self time, and the same time grouped by package (a node_modules
 * package, agentauth's own src/, or a V8 category such as (garbage collector)).
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileSummary {
  totalMs: number;
  /** Self time of the busiest functions, idle time excluded. */
  functions: { name: string; where: string; selfMs: number; percent: number }[];
  packages: { name: string; selfMs: number; percent: number }[];
}

const ROOT = new URL('..', import.meta.url).pathname;

/** Which package a script belongs to: `fastify`, `src/domain`, `node:internal`, `(native)`. */
function packageOf(url: string, functionName: string): string {
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  const path = url.replace(/^file:\/\//, '');
  const modules = path.lastIndexOf('/node_modules/');
  if (modules >= 0) {
    const [scope = '', name = ''] = path.slice(modules + '/node_modules/'.length).split('/');
    return scope.startsWith('@') ? `${scope}/${name}` : scope;
  }
  if (path.startsWith(ROOT)) return path.slice(ROOT.length).split('/').slice(0, 2).join('/');
  return path.startsWith('node:') ? `node:${path.slice(5).split('/')[0]}` : path;
}

/**
 * Summarizes the samples taken within `windows` (ms since the profiler started, which is within
 * a few tens of ms of the process start), or all samples when no window is given, so that the
 * start-up (module loading and TypeScript transformation) does not blur the load's picture.
 */
export function summarizeProfile(file: string, windows: [number, number][] = [], top = 15): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfUs = new Map<number, number>();
  let atUs = 0;
  profile.samples.forEach((id, i) => {
    atUs += profile.timeDeltas[i] ?? 0;
    const ms = atUs / 1000;
    if (windows.length && !windows.some(([from, to]) => ms >= from && ms < to)) return;
    // timeDeltas[i + 1] is the time from sample i to the next one: the time spent where sample i was taken.
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i + 1] ?? 0));
  });

  const functions = new Map<string, { name: string; where: string; us: number }>();
  const packages = new Map<string, number>();
  let totalUs = 0;
  for (const [id, us] of selfUs) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    if (functionName === '(idle)') continue;
    totalUs += us;
    const name = functionName || '(anonymous)';
    const where = url ? `${url.replace(/^file:\/\//, '').replace(ROOT, '')}:${lineNumber + 1}` : '';
    const key = `${name} ${where}`;
    const entry = functions.get(key) ?? { name, where, us: 0 };
    entry.us += us;
    functions.set(key, entry);
    const pkg = packageOf(url, name);
    packages.set(pkg, (packages.get(pkg) ?? 0) + us);
  }
  const percent = (us: number) => (100 * us) / totalUs;
  return {
    totalMs: totalUs / 1000,
    functions: [...functions.values()]
      .sort((a, b) => b.us - a.us)
      .slice(0, top)
      .map((f) => ({ name: f.name, where: f.where, selfMs: f.us / 1000, percent: percent(f.us) })),
    packages: [...packages]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, us]) => ({ name, selfMs: us / 1000, percent: percent(us) })),
  };
}

export function formatProfile(title: string, summary: ProfileSummary): string {
  // The profiler samples the main thread by wall time: time blocked in a synchronous native call
  // (a SQLite commit waiting for fsync) or preempted by the scheduler counts for the function it
  // happened in.
  const lines = [
    `${title}: ${summary.totalMs.toFixed(0)} ms of main-thread samples (idle excluded; blocked or preempted time included)`,
    '  top self time by function:',
  ];
  for (const f of summary.functions) lines.push(`    ${f.percent.toFixed(1).padStart(5)}%  ${f.name}  ${f.where}`);
  lines.push('  by package:');
  for (const p of summary.packages) lines.push(`    ${p.percent.toFixed(1).padStart(5)}%  ${p.name}`);
  return lines.join('\n');
}
