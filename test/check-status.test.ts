/** GET /api/check-status: docs/contract.md's state table and error rows, docs/design.md §5 and §9. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { purgeOnce } from '../src/server.ts';
import { authenticate, checkStatus, continueFlow, type Party, setupParty, startFlow } from './helpers/flow.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';

let server: TestServer;
let party: Party;

beforeAll(async () => {
  server = await startTestServer();
  party = await setupParty(server);
});
afterAll(() => server.close());

const EXPIRED = { status: 'error', error: 'request_expired', error_description: expect.stringMatching(/expired/) };

describe('GET /api/check-status', () => {
  it('reports pending, authenticated and completed, with no-store', async () => {
    const started = await startFlow(server, party);
    const response = await fetch(`${server.baseUrl}/api/check-status?request_id=${started.requestId}`);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(await response.json()).toEqual({ status: 'pending' });
    await authenticate(server, party, started.requestId);
    expect(await checkStatus(server, started.requestId)).toEqual({ status: 200, body: { status: 'authenticated' } });
    await continueFlow(server, started);
    expect(await checkStatus(server, started.requestId)).toEqual({ status: 200, body: { status: 'completed' } });
  });

  it('reports error with error and error_description after a cancel', async () => {
    const started = await startFlow(server, party);
    await continueFlow(server, started, { action: 'cancel' });
    expect(await checkStatus(server, started.requestId)).toEqual({
      status: 200,
      body: { status: 'error', error: 'access_denied', error_description: expect.any(String) },
    });
  });

  it('expires a pending request at 10 minutes: 200 error request_expired', async () => {
    const { requestId } = await startFlow(server, party);
    server.clock.advance(599);
    expect((await checkStatus(server, requestId)).body).toEqual({ status: 'pending' });
    server.clock.advance(1);
    expect(await checkStatus(server, requestId)).toEqual({ status: 200, body: EXPIRED });
    server.clock.advance(-600);
  });

  it('expires an authenticated request at 10 minutes, and the browser can no longer continue', async () => {
    const started = await startFlow(server, party);
    await authenticate(server, party, started.requestId);
    server.clock.advance(600);
    expect(await checkStatus(server, started.requestId)).toEqual({ status: 200, body: EXPIRED });
    const late = await continueFlow(server, started);
    expect(late.status).toBe(400);
    expect(await late.text()).toContain('<meta name="error" content="request_expired">');
    server.clock.advance(-600);
  });

  it('keeps a completed request completed after 10 minutes', async () => {
    const started = await startFlow(server, party);
    await authenticate(server, party, started.requestId);
    await continueFlow(server, started);
    server.clock.advance(3600);
    expect((await checkStatus(server, started.requestId)).body).toEqual({ status: 'completed' });
    server.clock.advance(-3600);
  });

  it('404 not_found for an unknown request', async () => {
    const { status, body } = await checkStatus(server, 'req_unknown');
    expect(status).toBe(404);
    expect(body).toEqual({ error: 'not_found', error_description: expect.any(String) });
  });

  it('400 invalid_request without request_id', async () => {
    const response = await fetch(`${server.baseUrl}/api/check-status`);
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: 'invalid_request', error_description: 'request_id is required' });
  });

  it('never carries the code, the state or the redirect_uri', async () => {
    const started = await startFlow(server, party, { state: 'secret-state-value' });
    await authenticate(server, party, started.requestId);
    const redirect = await continueFlow(server, started);
    const code = new URL(redirect.headers.get('location')!).searchParams.get('code')!;
    const raw = await (await fetch(`${server.baseUrl}/api/check-status?request_id=${started.requestId}`)).text();
    for (const secret of [code, 'secret-state-value', party.redirectUri, 'localhost:8080'])
      expect(raw).not.toContain(secret);
  });

  it('answers request_expired until the purge retention has passed, then 404 (docs/design.md §9)', async () => {
    const { requestId } = await startFlow(server, party);
    expect((await authenticate(server, party, requestId)).status).toBe(200);
    server.clock.advance(600 + 86_400 - 1);
    await purgeOnce(server.ctx);
    expect((await checkStatus(server, requestId)).body).toEqual(EXPIRED);
    server.clock.advance(2);
    await purgeOnce(server.ctx);
    expect((await checkStatus(server, requestId)).status).toBe(404);
    server.clock.advance(-(600 + 86_400 + 1));
  });

  it('purges a request no agent ever authenticated PURGE_UNAUTHENTICATED_AFTER (600 s) after expiry, not a day', async () => {
    const never = await startFlow(server, party);
    const cancelled = await startFlow(server, party);
    expect((await continueFlow(server, cancelled, { action: 'cancel' })).status).toBe(302);
    const authenticated = await startFlow(server, party);
    expect((await authenticate(server, party, authenticated.requestId)).status).toBe(200);
    server.clock.advance(600 + 600 - 1);
    await purgeOnce(server.ctx);
    expect((await checkStatus(server, never.requestId)).body).toEqual(EXPIRED);
    server.clock.advance(2);
    await purgeOnce(server.ctx);
    expect((await checkStatus(server, never.requestId)).status).toBe(404);
    expect((await checkStatus(server, cancelled.requestId)).status).toBe(404);
    expect((await checkStatus(server, authenticated.requestId)).body).toEqual(EXPIRED);
    server.clock.advance(-(600 + 600 + 1));
  });
});
