/** Operations (docs/design.md §10): health, readiness, metrics, purge, log redaction. */
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { digest } from '../src/crypto.ts';
import { purgeOnce } from '../src/server.ts';
import {
  authenticate,
  continueFlow,
  obtainTokens,
  type Party,
  postForm,
  setupParty,
  startFlow,
} from './helpers/flow.ts';
import { freePort } from './helpers/net.ts';
import { captureLogs, startTestServer, TEST_ENGINE, type TestServer } from './helpers/server.ts';

describe('health, readiness and metrics', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server.close());

  it('/healthz and /readyz answer 200', async () => {
    expect(await (await fetch(`${server.baseUrl}/healthz`)).json()).toEqual({ status: 'ok' });
    expect(await (await fetch(`${server.baseUrl}/readyz`)).json()).toEqual({ status: 'ready', database: TEST_ENGINE });
  });

  it('/metrics is not public: 404 in the documented shape on the main listener by default', async () => {
    const response = await fetch(`${server.baseUrl}/metrics`);
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ error: 'not_found', error_description: 'No such endpoint.' });
  });

  it('/metrics with METRICS_TOKEN: Prometheus text with request counts by route for the bearer token, 401 with WWW-Authenticate otherwise', async () => {
    const token = 'metrics-token-of-at-least-32-bytes-0123456789';
    const guarded = await startTestServer({ env: { METRICS_TOKEN: token } });
    try {
      await fetch(`${guarded.baseUrl}/healthz`);
      for (const authorization of [undefined, 'Bearer wrong-token', `Bearer ${token}x`, `Basic ${token}`, token]) {
        const refused = await fetch(`${guarded.baseUrl}/metrics`, { headers: authorization ? { authorization } : {} });
        expect(refused.status, authorization).toBe(401);
        expect(refused.headers.get('www-authenticate'), authorization).toMatch(/^Bearer\b/);
        const text = await refused.text();
        expect(JSON.parse(text), authorization).toEqual({
          error: 'invalid_token',
          error_description: expect.any(String),
        });
        expect(text).not.toContain(token);
      }
      const response = await fetch(`${guarded.baseUrl}/metrics`, { headers: { authorization: `Bearer ${token}` } });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
      expect(await response.text()).toMatch(
        /agentauth_http_request_duration_seconds_count\{method="GET",route="\/healthz",status="200"\} \d+/,
      );
    } finally {
      await guarded.close();
    }
  });

  it('/metrics with METRICS_PORT: served without a token on a listener of its own that serves nothing else, closed with the server', async () => {
    const metricsPort = await freePort();
    const separate = await startTestServer({ env: { METRICS_PORT: String(metricsPort) } });
    const metricsUrl = `http://127.0.0.1:${metricsPort}`;
    let closed = false;
    try {
      await fetch(`${separate.baseUrl}/healthz`);
      const response = await fetch(`${metricsUrl}/metrics`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
      expect(await response.text()).toMatch(
        /agentauth_http_request_duration_seconds_count\{method="GET",route="\/healthz",status="200"\} \d+/,
      );
      const other = await fetch(`${metricsUrl}/healthz`);
      expect(other.status).toBe(404);
      expect(await other.json()).toEqual({ error: 'not_found', error_description: 'No such endpoint.' });
      expect((await fetch(`${separate.baseUrl}/metrics`)).status).toBe(404);
      await separate.close();
      closed = true;
      await expect(fetch(`${metricsUrl}/metrics`)).rejects.toThrow();
    } finally {
      if (!closed) await separate.close();
    }
  });

  it('unknown paths are 404 in the documented shape', async () => {
    const response = await fetch(`${server.baseUrl}/nope`);
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ error: 'not_found', error_description: expect.any(String) });
  });

  it('answers errors of the HTTP parser in the documented shape (huge or malformed headers)', async () => {
    const raw = (head: string) =>
      new Promise<string>((resolve, reject) => {
        const url = new URL(server.baseUrl);
        const socket = connect(Number(url.port), url.hostname, () => socket.write(head));
        let answer = '';
        socket.on('data', (chunk) => (answer += chunk.toString()));
        socket.on('end', () => resolve(answer));
        socket.on('error', reject);
      });
    const huge = await raw(`GET /authorize HTTP/1.1\r\nhost: x\r\nx-pad: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(huge).toMatch(/^HTTP\/1.1 431 /);
    expect(JSON.parse(huge.split('\r\n\r\n')[1]!)).toEqual({
      error: 'invalid_request',
      error_description: 'The request headers are too large.',
    });
    const malformed = await raw('GET /healthz HTTP/1.1\r\nhost: x\r\nx-bad: a\x01b\r\n\r\n');
    expect(malformed).toMatch(/^HTTP\/1.1 400 /);
    expect(JSON.parse(malformed.split('\r\n\r\n')[1]!)).toEqual({
      error: 'invalid_request',
      error_description: 'The request is malformed.',
    });
  });

  it('/readyz fails with 503 and requests answer 503 when the database is gone', async () => {
    const broken = await startTestServer();
    await broken.ctx.store.close();
    try {
      const ready = await fetch(`${broken.baseUrl}/readyz`);
      expect(ready.status).toBe(503);
      expect(await ready.json()).toMatchObject({ status: 'unavailable' });
      const status = await fetch(`${broken.baseUrl}/api/check-status?request_id=req_x`);
      expect(status.status).toBe(503);
      expect(await status.json()).toEqual({ error: 'temporarily_unavailable', error_description: expect.any(String) });
    } finally {
      await broken.app.close();
    }
  });
});

describe('purge', () => {
  it('deletes expired requests, codes and tokens after the retention, and keeps live ones', async () => {
    const server = await startTestServer({ env: { PURGE_AFTER: '60' } });
    try {
      const party = await setupParty(server);
      const tokens = await obtainTokens(server, party);
      const pending = await startFlow(server, party);
      server.clock.advance(3600 + 61);
      const counts = await purgeOnce(server.ctx);
      expect(counts).toMatchObject({ requests: 2, codes: 1, accessTokens: 1, refreshTokens: 0 });
      expect(await server.ctx.store.requests.find(pending.requestId)).toBeUndefined();
      expect(await server.ctx.store.refreshTokens.find(digest(tokens.refresh_token))).toBeDefined();
      const refreshed = await postForm(server, '/token', {
        grant_type: 'refresh_token',
        refresh_token: tokens.refresh_token,
        client_id: party.clientId,
        client_secret: party.clientSecret,
      });
      expect(refreshed.status).toBe(200);
    } finally {
      await server.close();
    }
  });
});

describe('logs', () => {
  it("an upload the client aborts is logged quietly as the client's doing: no error line, no 503", async () => {
    const captured = captureLogs();
    const server = await startTestServer({ env: { LOG_LEVEL: 'debug' }, logStream: captured.stream });
    try {
      for (let i = 0; i < 3; i++) {
        const url = new URL(server.baseUrl);
        const socket = connect(Number(url.port), url.hostname);
        await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
        socket.write(
          'POST /api/agent/authenticate HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{"request_id":"req_',
        );
        await sleep(200);
        socket.destroy();
      }
      // The server notices the aborts and logs them; then a normal request, so the log is flushed past them.
      await sleep(300);
      expect((await fetch(`${server.baseUrl}/healthz`)).status).toBe(200);
    } finally {
      await server.close();
    }
    const logs = captured.text();
    const lines = logs
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { level: number; msg: string; status?: number });
    expect(lines.filter((line) => line.msg === 'request').length).toBeGreaterThan(0);
    // pino levels: 50 error, 60 fatal.
    expect(
      lines.filter((line) => line.level >= 50),
      logs,
    ).toEqual([]);
    expect(
      lines.filter((line) => line.status === 503 || line.status === 500),
      logs,
    ).toEqual([]);
    expect(
      lines.filter((line) => line.msg === 'client aborted the request'),
      logs,
    ).toHaveLength(3);
  });

  it('every line a request writes carries its request id: the access line and the lines of its handler', async () => {
    const captured = captureLogs();
    const server = await startTestServer({ env: { LOG_LEVEL: 'debug' }, logStream: captured.stream });
    try {
      expect((await fetch(`${server.baseUrl}/healthz`)).status).toBe(200);
      // A refusal: the error handler writes a debug line, then the access line.
      expect((await fetch(`${server.baseUrl}/api/check-status?request_id=req_unknown`)).status).toBe(404);
    } finally {
      await server.close();
    }
    const lines = captured
      .text()
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { msg: string; reqId?: string; req?: { path: string } });
    const access = lines.filter((line) => line.msg === 'request');
    expect(access.map((line) => line.req?.path)).toEqual(['/healthz', '/api/check-status']);
    expect(access[0]!.reqId).toMatch(/\S/);
    expect(access[1]!.reqId).toMatch(/\S/);
    expect(access[0]!.reqId).not.toBe(access[1]!.reqId);
    const refused = lines.find((line) => line.msg === 'request refused');
    expect(refused?.reqId).toBe(access[1]!.reqId);
  });

  it('a full flow at LOG_LEVEL=trace logs no secret, code, token or cookie', async () => {
    const captured = captureLogs();
    const server = await startTestServer({ env: { LOG_LEVEL: 'trace' }, logStream: captured.stream });
    let party: Party | undefined;
    const secrets: string[] = [];
    try {
      party = await setupParty(server);
      const started = await startFlow(server, party, { state: 'state-value-xyz' });
      await authenticate(server, party, started.requestId);
      const redirect = await continueFlow(server, started);
      const code = new URL(redirect.headers.get('location')!).searchParams.get('code')!;
      const tokenResponse = await postForm(server, '/token', {
        grant_type: 'authorization_code',
        code,
        code_verifier: started.verifier,
        client_id: party.clientId,
        client_secret: party.clientSecret,
      });
      const tokens = (await tokenResponse.json()) as Record<string, string>;
      await fetch(`${server.baseUrl}/userinfo`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
      await postForm(server, '/token', {
        grant_type: 'refresh_token',
        refresh_token: tokens.refresh_token!,
        client_id: party.clientId,
        client_secret: party.clientSecret,
      });
      await postForm(server, '/token', {
        grant_type: 'authorization_code',
        code,
        code_verifier: 'x'.repeat(43),
        client_id: party.clientId,
        client_secret: 'cls_wrong-secret-attempt',
      });
      secrets.push(
        party.agentSecret,
        party.clientSecret,
        code,
        tokens.access_token!,
        tokens.refresh_token!,
        tokens.id_token!,
        started.cookie.split('=')[1]!,
        started.verifier,
        'state-value-xyz',
        'cls_wrong-secret-attempt',
      );
    } finally {
      await server.close();
    }
    const logs = captured.text();
    expect(logs).toContain('"msg":"request"');
    for (const secret of secrets) expect(logs).not.toContain(secret);
  });
});
