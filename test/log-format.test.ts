/**
 * LOG_FORMAT (docs/reference/configuration.md): readable lines for a terminal, made from pino's
 * JSON line after its redaction, and JSON everywhere else. The real process with LOG_FORMAT=pretty
 * and with auto on a pipe is in test/cli.test.ts (agentauth serve).
 */
import { PassThrough } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { loggerOptions } from '../src/http/logger.ts';
import { logDestination, prettyLine, prettyStream } from '../src/http/pretty-log.ts';

const TIME = /^\d\d:\d\d:\d\d\.\d{3} /;

/** A logger with the server's options writing through the pretty stream; what it wrote. */
function prettyLogger() {
  let text = '';
  const out = new PassThrough();
  out.on('data', (chunk: Buffer) => (text += chunk.toString()));
  return { log: pino(loggerOptions('info'), prettyStream(out)), text: () => text };
}

describe('prettyLine', () => {
  it('puts time, level and message first, then the request: method, path, status, milliseconds, request id', () => {
    const line = prettyLine(
      `${JSON.stringify({
        level: 30,
        time: Date.now(),
        pid: 1,
        hostname: 'h',
        reqId: 'req-7',
        req: { method: 'GET', path: '/healthz', remoteAddress: '127.0.0.1', userAgent: 'curl/8' },
        status: 200,
        ms: 0.42,
        msg: 'request',
      })}\n`,
    );
    expect(line).toMatch(TIME);
    expect(line.replace(TIME, '')).toBe('INFO  request GET /healthz 200 0.42 ms  reqId=req-7 from=127.0.0.1\n');
  });

  it('shows other fields as key=value, quoting what would not read unambiguously', () => {
    const line = prettyLine(
      JSON.stringify({ level: 40, time: 0, msg: 'note', signal: 'SIGTERM', text: 'two words', n: 3, o: { a: 1 } }),
    );
    expect(line.replace(TIME, '')).toBe('WARN  note  signal=SIGTERM text="two words" n=3 o={"a":1}\n');
  });

  it("gives an error's type and message on its line and its stack below", () => {
    const error = new TypeError('boom');
    const { log, text } = prettyLogger();
    log.error({ err: error }, 'request failed');
    const [first, second] = text().split('\n');
    expect(first!.replace(TIME, '')).toBe('ERROR request failed TypeError: boom');
    expect(second).toMatch(/^\s+at /);
  });

  it('leaves a line that is not JSON as it is', () => {
    expect(prettyLine('plain words')).toBe('plain words\n');
  });

  it('holds no secret: redaction has run before the line is made', () => {
    const { log, text } = prettyLogger();
    log.info({ body: { client_secret: 'cls_SECRET', password: 'hunter2hunter2hunter2' } }, 'posted');
    log.info(
      {
        req: { method: 'GET', url: '/console/setup/lnk_TOKEN?code=cod_SECRET', headers: {}, ip: '::1' },
        status: 200,
        ms: 1,
      },
      'request',
    );
    expect(text()).not.toMatch(/cls_SECRET|hunter2|lnk_TOKEN|cod_SECRET/);
    expect(text()).toContain('"client_secret":"[redacted]"');
    expect(text()).toContain('GET /console/setup/lnk_[redacted] 200 1 ms');
  });
});

describe('logDestination', () => {
  const terminal = Object.assign(new PassThrough(), { isTTY: true });
  const pipe = new PassThrough();

  it('leaves JSON to pino untouched unless the format is pretty, or auto on a terminal', () => {
    expect(logDestination('json', pipe)).toBe(pipe);
    expect(logDestination('json', terminal)).toBe(terminal);
    expect(logDestination('auto', pipe)).toBe(pipe);
    expect(logDestination('json')).toBeUndefined();
  });

  it('writes readable lines for pretty, and for auto on a terminal', () => {
    for (const [format, out] of [
      ['pretty', pipe],
      ['auto', terminal],
    ] as const) {
      let text = '';
      out.on('data', (chunk: Buffer) => (text += chunk.toString()));
      const destination = logDestination(format, out);
      expect(destination).not.toBe(out);
      destination!.write(`${JSON.stringify({ level: 30, time: 0, msg: 'hello' })}\n`);
      expect(text.replace(TIME, '')).toBe('INFO  hello\n');
      out.removeAllListeners('data');
    }
  });
});
