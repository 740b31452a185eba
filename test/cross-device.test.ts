/**
 * Cross-device defences (RFC 10027, docs/design.md §5): a request_id travels between people and
 * agents, so it must never be enough to steer a sign-in.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  authenticate,
  checkStatus,
  continueFlow,
  metaContent,
  type Party,
  postJson,
  setupParty,
  startFlow,
} from './helpers/flow.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { expectJsonError } from './security/support.ts';

let server: TestServer;
let party: Party;

beforeAll(async () => {
  server = await startTestServer({ env: { AUTH_FAILURES_PER_AGENT: '1000', AUTH_FAILURES_PER_IP: '1000' } });
  party = await setupParty(server, { name: 'Shop <Example>', redirectUris: ['https://shop.example:8443/cb?x=1'] });
});
afterAll(() => server.close());

async function lookup(
  requestId: string,
): Promise<{ status: number; body: Record<string, unknown>; response: Response }> {
  const response = await fetch(
    new URL(`/api/agent/request?request_id=${encodeURIComponent(requestId)}`, server.baseUrl),
  );
  return { status: response.status, body: (await response.json()) as Record<string, unknown>, response };
}

const outcomes = async (requestId: string) =>
  (await server.ctx.store.signIns.listEvents({ limit: 1000 }))
    .filter((e) => e.request_id === requestId)
    .map((e) => e.outcome);

describe('consent phishing: an agent can look a request up and refuse a site it did not expect', () => {
  it('GET /api/agent/request describes the site, scope and expiry, and nothing secret', async () => {
    const started = await startFlow(server, party, {
      scope: 'openid email',
      state: 'secret-state-value',
      nonce: 'secret-nonce',
    });
    const { status, body, response } = await lookup(started.requestId);
    expect(status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const stored = (await server.ctx.store.requests.find(started.requestId))!;
    expect(body).toEqual({
      request_id: started.requestId,
      client_id: party.clientId,
      client_name: 'Shop <Example>',
      redirect_host: 'shop.example:8443',
      scope: 'openid email',
      resource: null,
      expires_at: stored.expires_at,
      expires_in: 600,
      status: 'pending',
    });
    const text = JSON.stringify(body);
    for (const secret of ['secret-state-value', 'secret-nonce', stored.code_challenge, '/cb', 'x=1'])
      expect(text).not.toContain(secret);
  });

  it('reports the state of the request, expiry included, and 404 not_found for an unknown one', async () => {
    const started = await startFlow(server, party);
    expect((await authenticate(server, party, started.requestId)).status).toBe(200);
    expect((await lookup(started.requestId)).body.status).toBe('authenticated');
    server.clock.advance(600);
    try {
      expect((await lookup(started.requestId)).body).toMatchObject({
        status: 'error',
        error: 'request_expired',
        expires_in: 0,
      });
    } finally {
      server.clock.advance(-600);
    }
    const unknown = await fetch(new URL('/api/agent/request?request_id=req_nobody', server.baseUrl));
    await expectJsonError(unknown, 404, 'not_found');
  });

  it('412 request_mismatch for an unexpected client or redirect host, before any state change', async () => {
    const started = await startFlow(server, party);
    const attempt = (expectations: Record<string, string>) =>
      postJson(server, '/api/agent/authenticate', {
        request_id: started.requestId,
        agent_id: party.agentId,
        agent_secret: party.agentSecret,
        model: 'm',
        ...expectations,
      });
    await expectJsonError(await attempt({ expected_client_id: 'cli_the_one_i_meant' }), 412, 'request_mismatch');
    await expectJsonError(await attempt({ expected_redirect_host: 'shop.example' }), 412, 'request_mismatch');
    await expectJsonError(await attempt({ expected_redirect_host: 'evil.example:8443' }), 412, 'request_mismatch');
    expect((await checkStatus(server, started.requestId)).body).toEqual({ status: 'pending' });
    expect(await outcomes(started.requestId)).toEqual(['request_mismatch', 'request_mismatch', 'request_mismatch']);
    // The expected site, host compared without regard to case: authenticated.
    expect(
      (await attempt({ expected_client_id: party.clientId, expected_redirect_host: 'SHOP.example:8443' })).status,
    ).toBe(200);
  });
});

describe('identity swap: a leaked request_id cannot sign a browser in as someone else', () => {
  it('login_hint binds the request to one agent: any other agent gets 403 agent_mismatch and changes nothing', async () => {
    const intruder = await server.createAgent({ ownerEmail: 'mallory@example.com' });
    const started = await startFlow(server, party, { login_hint: party.agentId });
    expect(started.page).toContain(`Only the agent <code>${party.agentId}</code> can sign in`);
    await expectJsonError(
      await authenticate(server, { ...party, ...intruder }, started.requestId),
      403,
      'agent_mismatch',
    );
    expect((await checkStatus(server, started.requestId)).body).toEqual({ status: 'pending' });
    expect((await authenticate(server, party, started.requestId)).status).toBe(200);
    expect((await server.ctx.store.requests.find(started.requestId))!.agent_id).toBe(party.agentId);
  });

  it('a second, different agent on an authenticated request makes it request_contested, and no code is released', async () => {
    const intruder = await server.createAgent({ ownerEmail: 'mallory@example.com' });
    const started = await startFlow(server, party);
    expect((await authenticate(server, { ...party, ...intruder }, started.requestId)).status).toBe(200);
    await expectJsonError(await authenticate(server, party, started.requestId), 409, 'request_contested');
    expect((await checkStatus(server, started.requestId)).body).toEqual({
      status: 'error',
      error: 'request_contested',
      error_description: expect.any(String),
    });
    const page = await continueFlow(server, started);
    expect(page.status).toBe(409);
    expect(page.headers.get('location')).toBeNull();
    expect(metaContent(await page.text(), 'error')).toBe('request_contested');
    expect(await server.ctx.store.requests.find(started.requestId)).toMatchObject({
      status: 'error',
      error: 'request_contested',
    });
    expect(await outcomes(started.requestId)).toEqual(expect.arrayContaining(['authenticated', 'request_contested']));
    // Either agent trying again: the request is spent.
    await expectJsonError(
      await authenticate(server, { ...party, ...intruder }, started.requestId),
      409,
      'request_already_used',
    );
  });

  it('the same agent twice is request_already_used, and a completed request is not contested', async () => {
    const other = await server.createAgent({ ownerEmail: 'bob@example.com' });
    const started = await startFlow(server, party);
    expect((await authenticate(server, party, started.requestId)).status).toBe(200);
    await expectJsonError(await authenticate(server, party, started.requestId), 409, 'request_already_used');
    expect((await continueFlow(server, started)).status).toBe(302);
    await expectJsonError(
      await authenticate(server, { ...party, ...other }, started.requestId),
      409,
      'request_already_used',
    );
    expect((await checkStatus(server, started.requestId)).body).toEqual({ status: 'completed' });
  });

  it('wrong credentials never contest a request', async () => {
    const started = await startFlow(server, party);
    expect((await authenticate(server, party, started.requestId)).status).toBe(200);
    await expectJsonError(
      await authenticate(server, { ...party, agentSecret: 'aas_wrong' }, started.requestId),
      401,
      'invalid_credentials',
    );
    expect((await checkStatus(server, started.requestId)).body).toEqual({ status: 'authenticated' });
  });

  it('the browser that started the request, and only it, learns which agent authenticated', async () => {
    const started = await startFlow(server, party);
    const ask = (cookie?: string) =>
      fetch(new URL(`/authorize/agent?request_id=${started.requestId}`, server.baseUrl), {
        headers: cookie ? { cookie } : {},
      });
    expect(await (await ask(started.cookie)).json()).toEqual({ status: 'pending' });
    expect((await authenticate(server, party, started.requestId, 'claude-x')).status).toBe(200);
    const answer = await ask(started.cookie);
    expect(answer.headers.get('cache-control')).toBe('no-store');
    expect(await answer.json()).toEqual({
      status: 'authenticated',
      agent: {
        agent_id: party.agentId,
        name: 'Ada Lovelace',
        owner_name: 'Ada Lovelace',
        owner_email: 'ada@example.com',
        model: 'claude-x',
      },
    });
    await expectJsonError(await ask(), 403, 'access_denied');
    const otherBrowser = await startFlow(server, party);
    await expectJsonError(await ask(otherBrowser.cookie.replace(/=.*/, '=A'.padEnd(88, 'A'))), 403, 'access_denied');
    // The public status endpoint still says only what the contract says.
    expect((await checkStatus(server, started.requestId)).body).toEqual({ status: 'authenticated' });
  });
});
