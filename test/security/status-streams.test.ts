/**
 * Status streams cannot exhaust a node (issue 19, finding 2; docs/design.md §12 "Flooding"):
 * the per-address limit holds under concurrent opens, a per-node cap (STATUS_STREAMS_MAX)
 * answers 503 past it while polling is still served, every slot taken is given back exactly
 * once whatever way the open ends, and a node out of descriptors answers 503, not 500.
 */
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentAuth } from '../../packages/agent/src/index.ts';
import { defaultStatusStreamsMax } from '../../src/config.ts';
import type { RequestStatusFields } from '../../src/store/requests.ts';
import { ARRIVAL_TIMEOUT, haveChromium, launchChromium, startCallbackServer } from '../helpers/browser.ts';
import {
  authenticate,
  authorizeUrl,
  continueFlow,
  type Party,
  pkcePair,
  setupParty,
  startFlow,
} from '../helpers/flow.ts';
import { freePort } from '../helpers/net.ts';
import { freshDatabase, startTestServer, TEST_JWT_SECRET, type TestServer } from '../helpers/server.ts';
import { spawnServer, waitReady } from '../helpers/server-process.ts';

/** One open of GET /api/check-status/events on a connection of its own (no pool in between). */
interface RawOpen {
  /** The answer's status; 0 when the connection failed (reset, refused). */
  status: number;
  headers: IncomingHttpHeaders;
  /** The body of an answer that is not a stream, or the connection's error. */
  body: string;
  /** Ends the connection, as a browser leaving the page does. */
  close(): void;
}

function openRaw(
  baseUrl: string,
  requestId: string,
  headers: Record<string, string> = {},
  onRequest?: (close: () => void) => void,
): Promise<RawOpen> {
  return new Promise((resolve) => {
    const req = httpRequest(
      `${baseUrl}/api/check-status/events?request_id=${encodeURIComponent(requestId)}`,
      { agent: false, headers: { accept: 'text/event-stream', ...headers } },
      (response) => {
        const status = response.statusCode ?? 0;
        if (status === 200) {
          response.resume(); // events are not read here; nothing may back up
          return resolve({ status, headers: response.headers, body: '', close });
        }
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () => resolve({ status, headers: response.headers, body, close }));
      },
    );
    const close = () => void req.destroy();
    req.on('error', (error) => resolve({ status: 0, headers: {}, body: String(error), close }));
    req.end();
    onRequest?.(close);
  });
}

/** How many opens answered each status, e.g. { 200: 100, 429: 200 }. */
function tally(opens: RawOpen[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const open of opens) counts[open.status] = (counts[open.status] ?? 0) + 1;
  return counts;
}

/** Closes the streams and waits until the server has noticed every one. */
async function closeAll(server: TestServer, opens: RawOpen[]): Promise<void> {
  for (const open of opens) open.close();
  await expect.poll(() => server.ctx.statusEvents.waiting, { timeout: 10_000 }).toBe(0);
}

function expectRefusal(open: RawOpen, status: 429 | 503): void {
  expect(open.status).toBe(status);
  expect(open.headers['retry-after']).toBe('5');
  expect(open.headers['cache-control']).toBe('no-store');
  expect(JSON.parse(open.body)).toEqual({
    error: status === 429 ? 'too_many_requests' : 'temporarily_unavailable',
    error_description: expect.stringContaining('poll GET /api/check-status'),
  });
}

/** A read of the store the test holds back for one request id until it says so (the real read then runs). */
function holdReads(
  server: TestServer,
  requestId: string,
): { entered: Promise<void>; release(): void; restore(): void } {
  const store = server.ctx.store;
  const original = store.requests.findStatus;
  let enter!: () => void;
  let release!: () => void;
  const entered = new Promise<void>((resolve) => (enter = resolve));
  const released = new Promise<void>((resolve) => (release = resolve));
  store.requests.findStatus = async (id: string): Promise<RequestStatusFields | undefined> => {
    if (id !== requestId) return original.call(store, id);
    enter();
    await released;
    return original.call(store, id);
  };
  return { entered, release, restore: () => void (store.requests.findStatus = original) };
}

describe('status streams: per address, concurrently', () => {
  let server: TestServer;
  let party: Party;
  beforeAll(async () => {
    server = await startTestServer({ env: { STATUS_STREAMS_PER_IP: '100' } });
    party = await setupParty(server);
  });
  afterAll(() => server?.close());

  it('300 concurrent opens from one address with STATUS_STREAMS_PER_IP=100: exactly 100 streams, 200 × 429; all given back on close', async () => {
    const { requestId } = await startFlow(server, party);
    const opens = await Promise.all(Array.from({ length: 300 }, () => openRaw(server.baseUrl, requestId)));
    const counts = tally(opens);
    await closeAll(server, opens);
    expect(counts).toEqual({ 200: 100, 429: 200 });
    for (const open of opens.filter((o) => o.status === 200))
      expect(open.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    for (const open of opens.filter((o) => o.status === 429)) expectRefusal(open, 429);
    // Every slot came back: the address may hold its 100 again, and not one more.
    const again = await Promise.all(Array.from({ length: 100 }, () => openRaw(server.baseUrl, requestId)));
    const extra = await openRaw(server.baseUrl, requestId);
    await closeAll(server, [...again, extra]);
    expect(tally(again)).toEqual({ 200: 100 });
    expectRefusal(extra, 429);
  });

  it('an open being set up holds its slot, and gives it back when it ends without a stream: not found, a failed read, the client gone', async () => {
    const limited = await startTestServer({ env: { STATUS_STREAMS_PER_IP: '1' } });
    try {
      const limitedParty = await setupParty(limited);
      const { requestId } = await startFlow(limited, limitedParty);
      const expectOneStreamAgain = async () => {
        const stream = await openRaw(limited.baseUrl, requestId);
        const second = await openRaw(limited.baseUrl, requestId);
        await closeAll(limited, [stream, second]);
        expect(stream.status).toBe(200);
        expectRefusal(second, 429);
      };

      // Not found: while its read is under way it holds the address's one slot; then 404 gives it back.
      const unknown = 'req_nobody_knows_this_one';
      const held = holdReads(limited, unknown);
      try {
        const pending = openRaw(limited.baseUrl, unknown);
        await held.entered;
        expectRefusal(await openRaw(limited.baseUrl, requestId), 429);
        held.release();
        const notFound = await pending;
        expect(notFound.status).toBe(404);
        expect(JSON.parse(notFound.body)).toMatchObject({ error: 'not_found' });
      } finally {
        held.restore();
      }
      await expectOneStreamAgain();

      // A failed read (here the node out of descriptors): 503, not 500, and the slot is back.
      const store = limited.ctx.store;
      const original = store.requests.findStatus;
      store.requests.findStatus = async () => {
        throw Object.assign(new Error('connect EMFILE /tmp/.s.PGSQL.5432 - Local (undefined:undefined)'), {
          code: 'EMFILE',
          errno: -24,
          syscall: 'connect',
        });
      };
      let failed: RawOpen;
      let polled: Response;
      try {
        failed = await openRaw(limited.baseUrl, requestId);
        polled = await fetch(`${limited.baseUrl}/api/check-status?request_id=${requestId}`);
      } finally {
        store.requests.findStatus = original;
      }
      expect(failed.status).toBe(503);
      expect(JSON.parse(failed.body)).toMatchObject({ error: 'temporarily_unavailable' });
      expect(polled.status).toBe(503);
      expect(await polled.json()).toMatchObject({ error: 'temporarily_unavailable' });
      await expectOneStreamAgain();

      // The client leaves while the stream is being set up: nothing is left waiting, the slot is back.
      const gone = holdReads(limited, requestId);
      try {
        let close!: () => void;
        const accepted = new Promise<Socket>((resolve) => limited.app.server.once('connection', resolve));
        const pending = openRaw(limited.baseUrl, requestId, {}, (c) => (close = c));
        const serverSide = await accepted;
        await gone.entered;
        const noticed = new Promise((resolve) => serverSide.once('close', resolve));
        close();
        await Promise.all([pending, noticed]);
        gone.release();
      } finally {
        gone.restore();
      }
      await expect.poll(() => limited.ctx.statusEvents.waiting).toBe(0);
      await expectOneStreamAgain();
    } finally {
      await limited.close();
    }
  });
});

describe('status streams: the node cap (STATUS_STREAMS_MAX)', () => {
  it('with STATUS_STREAMS_MAX=50, 80 opens from 80 addresses give 50 streams and 30 × 503; polling is served meanwhile, and the slots come back', async () => {
    // Behind one trusted proxy, X-Forwarded-For names the client: every open is another address.
    const server = await startTestServer({
      env: { STATUS_STREAMS_MAX: '50', STATUS_STREAMS_PER_IP: '0', TRUST_PROXY: '1' },
    });
    try {
      const party = await setupParty(server);
      const { requestId } = await startFlow(server, party);
      const from = (i: number) => ({ 'x-forwarded-for': `203.0.${Math.floor(i / 250)}.${(i % 250) + 1}` });
      const opens = await Promise.all(
        Array.from({ length: 80 }, (_, i) => openRaw(server.baseUrl, requestId, from(i))),
      );
      const counts = tally(opens);
      // Another client asks by polling, and is answered.
      const polled = await fetch(`${server.baseUrl}/api/check-status?request_id=${requestId}`);
      expect(polled.status).toBe(200);
      expect(await polled.json()).toEqual({ status: 'pending' });
      await closeAll(server, opens);
      expect(counts).toEqual({ 200: 50, 503: 30 });
      for (const open of opens.filter((o) => o.status === 503)) expectRefusal(open, 503);
      const again = await Promise.all(
        Array.from({ length: 51 }, (_, i) => openRaw(server.baseUrl, requestId, from(100 + i))),
      );
      await closeAll(server, again);
      expect(tally(again)).toEqual({ 200: 50, 503: 1 });
    } finally {
      await server.close();
    }
  });

  it('on a full node the agent SDK polls instead of failing', async () => {
    const server = await startTestServer({ env: { STATUS_STREAMS_MAX: '1' } });
    try {
      const party = await setupParty(server);
      const started = await startFlow(server, party);
      const holder = await openRaw(server.baseUrl, started.requestId);
      expect(holder.status).toBe(200);
      const answers: string[] = [];
      const agent = new AgentAuth({
        issuer: server.baseUrl,
        agentId: party.agentId,
        agentSecret: party.agentSecret,
        model: 'test-model',
        fetch: async (input, init) => {
          const response = await fetch(input, init);
          answers.push(`${new URL(String(input)).pathname} ${response.status}`);
          return response;
        },
      });
      const waiting = agent.waitForCompletion(started.requestId, { timeoutMs: 10_000 });
      await expect.poll(() => answers).toContain('/api/check-status 200');
      expect((await authenticate(server, party, started.requestId)).status).toBe(200);
      expect((await continueFlow(server, started)).status).toBe(302);
      expect(await waiting).toEqual({ status: 'completed' });
      expect(answers[0]).toBe('/api/check-status/events 503');
      await closeAll(server, [holder]);
    } finally {
      await server.close();
    }
  });

  it.skipIf(!haveChromium)('on a full node the authorization page polls instead, and still continues', async () => {
    const [server, callback, browser] = await Promise.all([
      startTestServer({ env: { STATUS_STREAMS_MAX: '1' } }),
      startCallbackServer(),
      launchChromium(),
    ]);
    try {
      const party = {
        ...(await server.createClient({ redirectUris: [callback.uri] })),
        ...(await server.createAgent()),
      };
      // Another request's stream takes the node's one slot.
      const holder = await openRaw(server.baseUrl, (await startFlow(server, party)).requestId);
      expect(holder.status).toBe(200);
      const page = await (await browser.newContext()).newPage();
      const answers: string[] = [];
      page.on('response', (response) => answers.push(`${new URL(response.url()).pathname} ${response.status()}`));
      await page.goto(
        authorizeUrl(server, {
          client_id: party.clientId,
          redirect_uri: party.redirectUri,
          response_type: 'code',
          state: 'full-node',
          code_challenge: pkcePair().challenge,
          code_challenge_method: 'S256',
        }),
      );
      const requestId = await page.locator('meta[name="request-id"]').getAttribute('content');
      await expect.poll(() => answers, { timeout: 5000 }).toContain('/api/check-status 200');
      expect(answers).toContain('/api/check-status/events 503');
      expect((await authenticate(server, party, requestId!)).status).toBe(200);
      await page.waitForURL((url) => url.origin === callback.origin && url.pathname === '/callback', {
        timeout: ARRIVAL_TIMEOUT,
      });
      await closeAll(server, [holder]);
    } finally {
      await Promise.allSettled([browser.close(), callback.close(), server.close()]);
    }
  });

  it('with its default under a 256-descriptor limit, a flood of streams meets 503s and the node keeps serving (no reset, no 500)', async () => {
    // The review's setting in small: one address, no per-address limit, more streams than descriptors.
    const dir = mkdtempSync(join(tmpdir(), 'agentauth-streams-'));
    const database = await freshDatabase(dir);
    try {
      const setup = await startTestServer({ databaseUrl: database.url });
      const party = await setupParty(setup);
      const { requestId } = await startFlow(setup, party);
      await setup.close();
      const port = await freePort();
      const child = spawnServer(
        {
          PORT: String(port),
          HOST: '127.0.0.1',
          BASE_URL: `http://127.0.0.1:${port}`,
          DATABASE_URL: database.url,
          JWT_SECRET: TEST_JWT_SECRET,
          LOG_LEVEL: 'info',
          STATUS_STREAMS_PER_IP: '0',
        },
        { openFiles: 256 },
      );
      const opens: RawOpen[] = [];
      try {
        await waitReady(child);
        const max = defaultStatusStreamsMax(256, 10);
        expect(max).toBe(91);
        expect(child.output()).toMatch(new RegExp(`"statusStreamsMax":${max}\\b.*"msg":"agentauth is serving"`));
        // In rounds, as clients arrive: refused connections close, streams accumulate.
        for (let round = 0; round < 6; round++) {
          opens.push(...(await Promise.all(Array.from({ length: 50 }, () => openRaw(child.baseUrl, requestId)))));
          for (const open of opens) if (open.status !== 200) open.close();
        }
        expect(tally(opens), opens.find((o) => o.status === 0)?.body).toEqual({ 200: max, 503: 300 - max });
        const polled = await fetch(`${child.baseUrl}/api/check-status?request_id=${requestId}`);
        expect(polled.status).toBe(200);
        expect((await fetch(`${child.baseUrl}/readyz`)).status).toBe(200);
      } finally {
        for (const open of opens) open.close();
        await child.kill('SIGTERM');
      }
    } finally {
      await database.dispose();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
