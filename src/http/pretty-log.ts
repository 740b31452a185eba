/**
 * Readable log lines for a person at a terminal (LOG_FORMAT, docs/reference/configuration.md).
 * Pino still makes every line: the formatter only rewrites the JSON line pino hands its
 * destination, after pino's serializers and redaction have run, so a readable line can hold no
 * value the JSON line would not. Written here rather than taken from pino-pretty: this is one
 * fixed layout of a few fields, where pino-pretty brings a dozen packages and options we would
 * not use. In JSON mode none of this runs: pino writes to standard output as it always did.
 */
import type { DestinationStream } from 'pino';
import type { Config } from '../config.ts';

const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };

/**
 * Fields shown in a place of their own, or not at all: pid and hostname are the same on every
 * line of a process; a request's user agent is long and rarely what a person at the terminal
 * looks for (the JSON lines keep it).
 */
const PLACED = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'req', 'status', 'ms', 'err', 'reqId']);

/** A value of a key=value pair: bare when it reads unambiguously, JSON otherwise (quoted, objects). */
function shown(value: unknown): string {
  return typeof value === 'string' && /^[^\s="]+$/.test(value) ? value : JSON.stringify(value);
}

const twoDigits = (n: number) => String(n).padStart(2, '0');

/** The local time of day, to the millisecond: a terminal's reader knows the date. */
function clock(epochMs: number): string {
  const t = new Date(epochMs);
  return `${twoDigits(t.getHours())}:${twoDigits(t.getMinutes())}:${twoDigits(t.getSeconds())}.${String(t.getMilliseconds()).padStart(3, '0')}`;
}

/**
 * One pino JSON line as a readable one (with its newline): time, level, message; a request's
 * method, path, status and milliseconds; an error's message, and its stack on the lines below;
 * then the other fields as key=value, the request id first. A line that is not JSON stays as
 * it is.
 *
 * @example
 * prettyLine('{"level":30,"time":0,"reqId":"req-1","req":{"method":"GET","path":"/healthz"},"status":200,"ms":0.4,"msg":"request"}');
 * // '01:00:00.000 INFO  request GET /healthz 200 0.4 ms  reqId=req-1\n' (in Central European Time)
 */
export function prettyLine(json: string): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json.endsWith('\n') ? json : `${json}\n`;
  }
  const head = [
    typeof entry.time === 'number' ? clock(entry.time) : '',
    (LEVELS[entry.level as number] ?? String(entry.level)).padEnd(5),
  ];
  if (entry.msg !== undefined) head.push(String(entry.msg));
  const req = entry.req as { method?: string; path?: string; remoteAddress?: string } | undefined;
  if (req?.method) head.push(`${req.method} ${req.path ?? ''}`);
  if (entry.status !== undefined) head.push(String(entry.status));
  if (typeof entry.ms === 'number') head.push(`${entry.ms} ms`);
  const err = entry.err as { type?: string; message?: string; stack?: string } | undefined;
  if (err) head.push(`${err.type ?? 'Error'}: ${err.message ?? ''}`);
  const fields = [
    ...(entry.reqId !== undefined ? [`reqId=${shown(entry.reqId)}`] : []),
    ...(req?.remoteAddress ? [`from=${shown(req.remoteAddress)}`] : []),
    ...Object.entries(entry)
      .filter(([key]) => !PLACED.has(key))
      .map(([key, value]) => `${key}=${shown(value)}`),
  ];
  // The stack's first line repeats the message, which the head already has.
  const stack = err?.stack?.split('\n').slice(1).join('\n');
  return `${head.filter(Boolean).join(' ')}${fields.length ? `  ${fields.join(' ')}` : ''}\n${stack ? `${stack}\n` : ''}`;
}

/** A pino destination that writes each line to `out` as prettyLine makes it. */
export function prettyStream(out: NodeJS.WritableStream): DestinationStream {
  return { write: (line: string) => void out.write(prettyLine(line)) };
}

/**
 * Where pino writes, for LOG_FORMAT: `logStream` (the tests') or, when undefined, standard output;
 * through prettyStream for `pretty`, and for `auto` when that output is a terminal. Undefined
 * leaves pino its own destination, as fast as before.
 *
 * @example
 * pino(loggerOptions('info'), logDestination(config.logFormat)); // readable on a terminal
 */
export function logDestination(
  format: Config['logFormat'],
  logStream?: NodeJS.WritableStream,
): NodeJS.WritableStream | DestinationStream | undefined {
  const out = logStream ?? process.stdout;
  const terminal = (out as { isTTY?: boolean }).isTTY === true;
  return format === 'pretty' || (format === 'auto' && terminal) ? prettyStream(out) : logStream;
}
