/** Operations (DESIGN.md §10): health, readiness, metrics, purge, log redaction. */
import { connect } from 'node:net';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { digest } from '../src/crypto.ts';
import { purgeOnce } from '../src/server.ts';
import { authenticate, continueFlow, obtainTokens, type Party, postForm, setupParty, startFlow } from './helpers/flow.ts';
import { startTestServer, TEST_ENGINE, type TestServer } from './helpers/server.ts';

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

  it('/metrics is Prometheus text with request counts by route', async () => {
    await fetch(`${server.baseUrl}/healthz`);
    const response = await fetch(`${server.baseUrl}/metrics`);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await response.text()).toMatch(/agentauth_http_request_duration_seconds_count\{method="GET",route="\/healthz",status="200"\} \d+/);
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
    expect(JSON.parse(huge.split('\r\n\r\n')[1]!)).toEqual({ error: 'invalid_request', error_description: 'The request headers are too large.' });
    const malformed = await raw('GET /healthz HTTP/1.1\r\nhost: x\r\nx-bad: a\x01b\r\n\r\n');
    expect(malformed).toMatch(/^HTTP\/1.1 400 /);
    expect(JSON.parse(malformed.split('\r\n\r\n')[1]!)).toEqual({ error: 'invalid_request', error_description: 'The request is malformed.' });
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
      expect(await server.ctx.store.findRequest(pending.requestId)).toBeUndefined();
      expect(await server.ctx.store.findRefreshToken(digest(tokens.refresh_token))).toBeDefined();
      const refreshed = await postForm(server, '/token', { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: party.clientId, client_secret: party.clientSecret });
      expect(refreshed.status).toBe(200);
    } finally {
      await server.close();
    }
  });
});

describe('logs', () => {
  it('a full flow at LOG_LEVEL=trace logs no secret, code, token or cookie', async () => {
    let logs = '';
    const stream = new Writable({
      write(chunk, _encoding, done) {
        logs += chunk.toString();
        done();
      },
    });
    const server = await startTestServer({ env: { LOG_LEVEL: 'trace' }, logStream: stream });
    let party: Party | undefined;
    const secrets: string[] = [];
    try {
      party = await setupParty(server);
      const started = await startFlow(server, party, { state: 'state-value-xyz' });
      await authenticate(server, party, started.requestId);
      const redirect = await continueFlow(server, started);
      const code = new URL(redirect.headers.get('location')!).searchParams.get('code')!;
      const tokenResponse = await postForm(server, '/token', { grant_type: 'authorization_code', code, code_verifier: started.verifier, client_id: party.clientId, client_secret: party.clientSecret });
      const tokens = (await tokenResponse.json()) as Record<string, string>;
      await fetch(`${server.baseUrl}/userinfo`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
      await postForm(server, '/token', { grant_type: 'refresh_token', refresh_token: tokens.refresh_token!, client_id: party.clientId, client_secret: party.clientSecret });
      await postForm(server, '/token', { grant_type: 'authorization_code', code, code_verifier: 'x'.repeat(43), client_id: party.clientId, client_secret: 'cls_wrong-secret-attempt' });
      secrets.push(party.agentSecret, party.clientSecret, code, tokens.access_token!, tokens.refresh_token!, tokens.id_token!, started.cookie.split('=')[1]!, started.verifier, 'state-value-xyz', 'cls_wrong-secret-attempt');
    } finally {
      await server.close();
    }
    expect(logs).toContain('"msg":"request"');
    for (const secret of secrets) expect(logs).not.toContain(secret);
  });
});
