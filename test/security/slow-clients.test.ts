/**
 * Slow and endless clients (docs/design.md §10): a half-sent request (headers or body) is closed
 * within the header or request timeout, an idle keep-alive connection within the keep-alive
 * timeout, a body sent after an early error answer (413, 415) is not read, and shutdown ends
 * within SHUTDOWN_TIMEOUT whatever the connections are doing. Real sockets, real timings; the
 * bounds carry generous margins (the machine is a noisy 2-core VM).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { freePort } from '../helpers/net.ts';
import { freshDatabase, startTestServer, TEST_JWT_SECRET } from '../helpers/server.ts';
import { spawnServer, waitReady } from '../helpers/server-process.ts';

/** Slack on every timing bound: scheduling on a busy 2-core machine, plus the check interval. */
const MARGIN_MS = 4000;

interface Raw {
  socket: Socket;
  /** Everything the server sent, as latin1 text. */
  received(): string;
  isClosed(): boolean;
  /** Milliseconds from connecting to the socket's close. */
  closed: Promise<number>;
}

function rawConnection(baseUrl: string): Promise<Raw> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    const opened = Date.now();
    let received = '';
    let isClosed = false;
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
    const closed = new Promise<number>((done) =>
      socket.once('close', () => {
        isClosed = true;
        done(Date.now() - opened);
      }),
    );
    socket.once('error', reject);
    socket.once('connect', () => {
      socket.off('error', reject);
      socket.on('error', () => {}); // resets after the server closes are expected
      resolve({ socket, received: () => received, isClosed: () => isClosed, closed });
    });
  });
}

/** Status code and JSON body of the first answer in raw HTTP text. */
function parseAnswer(text: string): { status: number; head: string; body: unknown } {
  const end = text.indexOf('\r\n\r\n');
  const head = end < 0 ? text : text.slice(0, end);
  const status = Number(/^HTTP\/1\.1 (\d{3}) /.exec(head)?.[1] ?? 0);
  const length = Number(/\r\ncontent-length: (\d+)/i.exec(head)?.[1] ?? -1);
  const raw = end < 0 || length < 0 ? '' : text.slice(end + 4, end + 4 + length);
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch {
    body = raw;
  }
  return { status, head, body };
}

const HEAD = 'POST /api/agent/authenticate HTTP/1.1\r\nhost: 127.0.0.1\r\n';

describe('slow clients', () => {
  it('closes 50 half-sent requests (trickled headers and bodies) within the header and request timeouts, and /healthz answers meanwhile', async () => {
    const server = await startTestServer({ env: { HEADERS_TIMEOUT: '1', REQUEST_TIMEOUT: '2' } });
    const connections: Array<Raw & { kind: 'headers' | 'body' }> = [];
    try {
      for (let i = 0; i < 50; i++) {
        const connection = await rawConnection(server.baseUrl);
        const kind: 'headers' | 'body' = i % 2 === 0 ? 'headers' : 'body';
        connection.socket.write(
          kind === 'headers'
            ? `${HEAD}content-type: application/json\r\nx-slow: `
            : `${HEAD}content-type: application/json\r\ncontent-length: 1000\r\n\r\n{"request_id":"`,
        );
        connections.push(Object.assign(connection, { kind }));
      }
      // A byte every 200 ms on every connection: an inactivity timeout alone would never fire.
      const trickle = setInterval(() => {
        for (const { socket } of connections) if (socket.writable) socket.write('a');
      }, 200);
      const health: number[] = [];
      const deadline = Date.now() + 15_000;
      try {
        while (Date.now() < deadline && connections.some((c) => !c.isClosed())) {
          const response = await fetch(`${server.baseUrl}/healthz`, { signal: AbortSignal.timeout(2000) }).catch(
            () => undefined,
          );
          health.push(response?.status ?? 0);
          await sleep(250);
        }
      } finally {
        clearInterval(trickle);
      }
      const open = connections.filter((c) => !c.isClosed());
      expect(open.length, `${open.length} of 50 half-sent requests still open after 15 s`).toBe(0);
      for (const connection of connections) {
        const bound = (connection.kind === 'headers' ? 1000 : 2000) + MARGIN_MS;
        expect(await connection.closed, `${connection.kind} closed after`).toBeLessThan(bound);
        const answer = parseAnswer(connection.received());
        expect(answer.status, connection.received()).toBe(408);
        expect(answer.body).toEqual({ error: 'invalid_request', error_description: expect.any(String) });
      }
      expect(health.length).toBeGreaterThan(0);
      expect(
        health.every((status) => status === 200),
        `healthz answers: ${health.join(',')}`,
      ).toBe(true);
    } finally {
      for (const { socket } of connections) socket.destroy();
      await server.close();
    }
  });

  it('closes an idle keep-alive connection after KEEP_ALIVE_TIMEOUT', async () => {
    const server = await startTestServer({ env: { KEEP_ALIVE_TIMEOUT: '1' } });
    const connection = await rawConnection(server.baseUrl);
    try {
      connection.socket.write('GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n');
      const closedAfter = await Promise.race([connection.closed, sleep(15_000).then(() => Infinity)]);
      expect(parseAnswer(connection.received()).status).toBe(200);
      // Node adds a second to the advertised keep-alive timeout before it closes.
      expect(closedAfter).toBeLessThan(1000 + 1000 + MARGIN_MS);
    } finally {
      connection.socket.destroy();
      await server.close();
    }
  });

  const CHUNK = Buffer.alloc(1024 * 1024, 'a');
  const ATTEMPT = 200 * 1024 * 1024;

  it.each([
    [
      '413 for a Content-Length over the limit',
      'content-type: application/json\r\ncontent-length: 209715200\r\n',
      413,
      false,
    ],
    ['415 for an unsupported Content-Type', 'content-type: text/plain\r\ncontent-length: 209715200\r\n', 415, false],
    [
      '413 for a chunked body that grows over the limit',
      'content-type: application/json\r\ntransfer-encoding: chunked\r\n',
      413,
      true,
    ],
  ] as const)(
    'does not read a 200 MB body after an early answer (%s): the client gets the answer, then the connection is closed',
    async (_name, headers, status, chunked) => {
      const server = await startTestServer();
      const serverSockets: Socket[] = [];
      server.app.server.on('connection', (socket: Socket) => serverSockets.push(socket));
      const connection = await rawConnection(server.baseUrl);
      try {
        const started = Date.now();
        connection.socket.write(`${HEAD}${headers}\r\n`);
        const frame = chunked
          ? Buffer.concat([Buffer.from(`${CHUNK.length.toString(16)}\r\n`), CHUNK, Buffer.from('\r\n')])
          : CHUNK;
        let attempted = 0;
        while (attempted < ATTEMPT && connection.socket.writable && !connection.isClosed()) {
          attempted += CHUNK.length;
          if (!connection.socket.write(frame)) {
            await new Promise<void>((resolve) => {
              const done = () => {
                connection.socket.off('drain', done);
                connection.socket.off('close', done);
                resolve();
              };
              connection.socket.on('drain', done);
              connection.socket.on('close', done);
            });
          }
        }
        const closedAfter = await Promise.race([connection.closed, sleep(10_000).then(() => Infinity)]);
        const serverSocket = serverSockets.find((socket) => socket.remotePort === connection.socket.localPort);
        const bytesRead = serverSocket?.bytesRead ?? NaN;
        const answer = parseAnswer(connection.received());
        const report = `attempted ${attempted} bytes, server read ${bytesRead}, closed after ${closedAfter} ms (${Date.now() - started} ms in all)`;
        expect(answer.status, report).toBe(status);
        expect(answer.head, report).toMatch(/\r\nconnection: close/i);
        expect(answer.body, report).toEqual({ error: 'invalid_request', error_description: expect.any(String) });
        expect(closedAfter, report).toBeLessThan(10_000);
        // What the server read is the head and at most a few buffers, nowhere near the body.
        expect(bytesRead, report).toBeLessThan(8 * 1024 * 1024);
      } finally {
        connection.socket.destroy();
        await server.close();
      }
    },
  );

  it('close() ends within SHUTDOWN_TIMEOUT with a half-sent request, an idle keep-alive connection and a request in flight', async () => {
    // Timeouts far longer than the shutdown bound, so only the shutdown can close them.
    const server = await startTestServer({
      env: { SHUTDOWN_TIMEOUT: '2', HEADERS_TIMEOUT: '60', REQUEST_TIMEOUT: '120', KEEP_ALIVE_TIMEOUT: '60' },
    });
    const halfHeaders = await rawConnection(server.baseUrl);
    const halfBody = await rawConnection(server.baseUrl);
    const idle = await rawConnection(server.baseUrl);
    const inFlight = await rawConnection(server.baseUrl);
    const sockets = [halfHeaders, halfBody, idle, inFlight];
    let closed = false;
    try {
      halfHeaders.socket.write(`${HEAD}content-type: application/json\r\n`);
      halfBody.socket.write(`${HEAD}content-type: application/json\r\ncontent-length: 1000\r\n\r\n{"request_id":"`);
      idle.socket.write('GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n');
      // A readiness check whose database never answers: in flight until the shutdown ends it.
      server.ctx.store.ping = () => new Promise<void>(() => {});
      inFlight.socket.write('GET /readyz HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n');
      await sleep(300);
      expect(parseAnswer(idle.received()).status).toBe(200);
      expect(inFlight.received()).toBe('');

      const started = Date.now();
      const outcome = await Promise.race([
        server.close().then(() => 'closed'),
        sleep(15_000).then(() => 'still closing after 15 s'),
      ]);
      const elapsed = Date.now() - started;
      closed = outcome === 'closed';
      expect(outcome).toBe('closed');
      expect(elapsed).toBeLessThan(2000 + MARGIN_MS);
      for (const { socket, isClosed } of sockets) {
        await sleep(0);
        expect(isClosed() || socket.readableEnded).toBe(true);
      }
    } finally {
      for (const { socket } of sockets) socket.destroy();
      if (!closed) await server.close();
    }
  });

  it('`agentauth serve` exits within SHUTDOWN_TIMEOUT after SIGTERM while a half-sent request is open', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentauth-shutdown-'));
    const database = await freshDatabase(dir);
    const port = await freePort();
    const child = spawnServer({
      PORT: String(port),
      HOST: '127.0.0.1',
      BASE_URL: `http://127.0.0.1:${port}`,
      DATABASE_URL: database.url,
      JWT_SECRET: TEST_JWT_SECRET,
      LOG_LEVEL: 'warn',
      SHUTDOWN_TIMEOUT: '2',
    });
    let half: Raw | undefined;
    try {
      await waitReady(child);
      half = await rawConnection(child.baseUrl);
      half.socket.write(`${HEAD}content-type: application/json\r\ncontent-length: 1000\r\n\r\n{"request_id":"`);
      await sleep(200);
      const started = Date.now();
      child.child.kill('SIGTERM');
      const outcome = await Promise.race([
        child.exited,
        sleep(20_000).then(() => 'still running 20 s after SIGTERM' as const),
      ]);
      const elapsed = Date.now() - started;
      expect(outcome, child.output()).toEqual({ code: 0, signal: null });
      expect(elapsed, child.output()).toBeLessThan(2000 + MARGIN_MS);
      expect(await Promise.race([half.closed.then(() => true), sleep(1000).then(() => false)])).toBe(true);
    } finally {
      half?.socket.destroy();
      await child.kill('SIGKILL');
      await database.dispose();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
