/**
 * Push (issue 11, item 5; docs/design.md §12): GET /api/check-status/events tells a waiting page
 * or agent of every status change without polling, and GET /api/check-status answers exactly as
 * before.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { revokeGrants } from '../src/domain/revocation.ts';
import { openStatusStream } from './helpers/events.ts';
import { authenticate, checkStatus, continueFlow, type Party, setupParty, startFlow } from './helpers/flow.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { expectJsonError } from './security/support.ts';

let server: TestServer;
let party: Party;
beforeAll(async () => {
  server = await startTestServer();
  party = await setupParty(server);
});
afterAll(() => server?.close());

describe('GET /api/check-status/events', () => {
  it('sends the status now, then every change, and ends after the final one', async () => {
    const started = await startFlow(server, party);
    const stream = await openStatusStream(server.baseUrl, started.requestId);
    expect(stream.response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(stream.response.headers.get('cache-control')).toBe('no-store');
    expect(await stream.nextStatus()).toEqual({ status: 'pending' });
    expect(stream.retry).toBe(2000);
    expect((await authenticate(server, party, started.requestId)).status).toBe(200);
    expect(await stream.nextStatus()).toEqual({ status: 'authenticated' });
    expect((await continueFlow(server, started)).status).toBe(302);
    expect(await stream.nextStatus()).toEqual({ status: 'completed' });
    expect(await stream.next()).toBeNull();
    // Polling answers as SPEC.md says, unchanged.
    expect(await checkStatus(server, started.requestId)).toEqual({ status: 200, body: { status: 'completed' } });
  });

  it('ends at once for a request already final, and says error for a cancelled one', async () => {
    const started = await startFlow(server, party);
    const stream = await openStatusStream(server.baseUrl, started.requestId);
    expect(await stream.nextStatus()).toEqual({ status: 'pending' });
    expect((await continueFlow(server, started, { action: 'cancel' })).status).toBe(302);
    expect(await stream.nextStatus()).toMatchObject({ status: 'error', error: 'access_denied' });
    expect(await stream.next()).toBeNull();
    const again = await openStatusStream(server.baseUrl, started.requestId);
    expect(await again.nextStatus()).toMatchObject({ status: 'error', error: 'access_denied' });
    expect(await again.next()).toBeNull();
  });

  it('hears of a revocation that ends requests it cannot name (the "any request" notice)', async () => {
    const started = await startFlow(server, party);
    expect((await authenticate(server, party, started.requestId)).status).toBe(200);
    const stream = await openStatusStream(server.baseUrl, started.requestId);
    expect(await stream.nextStatus()).toEqual({ status: 'authenticated' });
    await revokeGrants(server.ctx, { agent_id: party.agentId });
    expect(await stream.nextStatus()).toMatchObject({ status: 'error', error: 'access_denied' });
    expect(await stream.next()).toBeNull();
  });

  it('answers like /api/check-status for an unknown or malformed request id', async () => {
    await expectJsonError(
      await fetch(`${server.baseUrl}/api/check-status/events?request_id=req_unknown`),
      404,
      'not_found',
    );
    await expectJsonError(await fetch(`${server.baseUrl}/api/check-status/events`), 400, 'invalid_request');
    await expectJsonError(
      await fetch(`${server.baseUrl}/api/check-status/events?request_id=${'x'.repeat(200)}`),
      400,
      'invalid_request',
    );
  });

  it('forgets a client that went away: nothing keeps waiting on its behalf', async () => {
    const started = await startFlow(server, party);
    const streams = await Promise.all([1, 2, 3].map(() => openStatusStream(server.baseUrl, started.requestId)));
    for (const stream of streams) expect(await stream.nextStatus()).toEqual({ status: 'pending' });
    expect(server.ctx.statusEvents.waiting).toBe(3);
    await Promise.all(streams.map((stream) => stream.close()));
    await expect.poll(() => server.ctx.statusEvents.waiting).toBe(0);
  });

  it('reads the database once per change, not while nothing changes', async () => {
    const started = await startFlow(server, party);
    const reads: string[] = [];
    const original = server.ctx.store.requests.findStatus.bind(server.ctx.store);
    server.ctx.store.requests.findStatus = (id) => {
      reads.push(id);
      return original(id);
    };
    try {
      const streams = await Promise.all(
        Array.from({ length: 20 }, () => openStatusStream(server.baseUrl, started.requestId)),
      );
      for (const stream of streams) expect(await stream.nextStatus()).toEqual({ status: 'pending' });
      expect(reads.length).toBe(20);
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(reads.length).toBe(20);
      expect((await authenticate(server, party, started.requestId)).status).toBe(200);
      for (const stream of streams) expect(await stream.nextStatus()).toEqual({ status: 'authenticated' });
      expect(reads.length).toBe(40);
      await Promise.all(streams.map((stream) => stream.close()));
    } finally {
      server.ctx.store.requests.findStatus = original;
    }
  });

  it('ends open streams when the server shuts down', async () => {
    const own = await startTestServer();
    try {
      const ownParty = await setupParty(own);
      const started = await startFlow(own, ownParty);
      const stream = await openStatusStream(own.baseUrl, started.requestId);
      expect(await stream.nextStatus()).toEqual({ status: 'pending' });
      const closing = own.close();
      expect(await stream.next()).toBeNull();
      await closing;
    } finally {
      await own.close();
    }
  });

  it('limits the open streams per address (STATUS_STREAMS_PER_IP): past it, 429 and the page polls', async () => {
    const limited = await startTestServer({ env: { STATUS_STREAMS_PER_IP: '2' } });
    try {
      const limitedParty = await setupParty(limited);
      const started = await startFlow(limited, limitedParty);
      const first = await openStatusStream(limited.baseUrl, started.requestId);
      const second = await openStatusStream(limited.baseUrl, started.requestId);
      const refused = await fetch(`${limited.baseUrl}/api/check-status/events?request_id=${started.requestId}`);
      expect(refused.headers.get('retry-after')).toBe('5');
      await expectJsonError(refused, 429, 'too_many_requests');
      expect((await checkStatus(limited, started.requestId)).status).toBe(200);
      await first.close();
      await expect.poll(() => limited.ctx.statusEvents.waiting).toBe(1);
      const third = await openStatusStream(limited.baseUrl, started.requestId);
      expect(await third.nextStatus()).toEqual({ status: 'pending' });
      await Promise.all([second.close(), third.close()]);
    } finally {
      await limited.close();
    }
  });
});
