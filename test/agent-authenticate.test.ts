/** POST /api/agent/authenticate: docs/contract.md's error rows and docs/design.md §5. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setAgentStatus } from '../src/domain/agents.ts';
import { clientKey } from '../src/throttle/address.ts';
import {
  authenticate,
  checkStatus,
  continueFlow,
  type Party,
  postJson,
  setupParty,
  startFlow,
} from './helpers/flow.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';

let server: TestServer;
let party: Party;

beforeAll(async () => {
  server = await startTestServer({
    env: { AUTH_FAILURES_PER_AGENT: '1000', AUTH_FAILURES_PER_IP: '1000', ALLOWED_RESOURCES: 'https://rs.example/mcp' },
  });
  party = await setupParty(server);
});
afterAll(() => server.close());

function body(requestId: string, overrides: Record<string, unknown> = {}) {
  return {
    request_id: requestId,
    agent_id: party.agentId,
    agent_secret: party.agentSecret,
    model: 'claude-sonnet',
    ...overrides,
  };
}

async function expectError(response: Response, status: number, error: string) {
  expect(response.status).toBe(status);
  const json = (await response.json()) as Record<string, unknown>;
  expect(Object.keys(json).sort()).toEqual(['error', 'error_description']);
  expect(json.error).toBe(error);
  expect(json.error_description).toEqual(expect.any(String));
  return json;
}

describe('POST /api/agent/authenticate', () => {
  it('200 with status authenticated and a message; the request becomes authenticated', async () => {
    const { requestId } = await startFlow(server, party);
    const response = await postJson(server, '/api/agent/authenticate', body(requestId));
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const json = await response.json();
    expect(json).toEqual({ status: 'authenticated', message: expect.stringMatching(/Test App/) });
    const stored = await server.ctx.store.requests.find(requestId);
    expect(stored).toMatchObject({ status: 'authenticated', agent_id: party.agentId, model: 'claude-sonnet' });
    expect((await server.ctx.store.agents.find(party.agentId))!.last_used_at).toEqual(expect.any(Number));
  });

  it("records the agent's last use to the minute: a sign-in within a minute of the recorded one leaves it", async () => {
    const lastUse = async () => (await server.ctx.store.agents.find(party.agentId))!.last_used_at;
    const signIn = async () => {
      const { requestId } = await startFlow(server, party);
      expect((await postJson(server, '/api/agent/authenticate', body(requestId))).status).toBe(200);
    };
    server.clock.advance(61); // whatever an earlier test recorded is now over a minute old
    await signIn();
    const recorded = await lastUse();
    expect(recorded).toBe(server.clock());
    server.clock.advance(59);
    await signIn();
    expect(await lastUse()).toBe(recorded);
    server.clock.advance(1);
    await signIn();
    expect(await lastUse()).toBe(recorded! + 60);
  });

  it.each(['request_id', 'agent_id', 'agent_secret', 'model'])(
    '400 invalid_request naming %s when it is missing',
    async (field) => {
      const { requestId } = await startFlow(server, party);
      const payload: Record<string, unknown> = body(requestId);
      delete payload[field];
      const json = await expectError(
        await postJson(server, '/api/agent/authenticate', payload),
        400,
        'invalid_request',
      );
      expect(json.error_description).toBe(`${field} is required`);
      expect((await checkStatus(server, requestId)).body.status).toBe('pending');
    },
  );

  it.each([
    ['a number', 42],
    ['an array', ['x']],
    ['an object', { a: 1 }],
    ['null', null],
    ['an empty string', ''],
    ['a string with a C0 control character', 'model\u0007'],
    ['a string with a C1 control character', 'model\u0085'],
  ])('400 invalid_request when a field is %s', async (_case, value) => {
    const { requestId } = await startFlow(server, party);
    await expectError(
      await postJson(server, '/api/agent/authenticate', body(requestId, { model: value })),
      400,
      'invalid_request',
    );
  });

  it('401 invalid_credentials for a wrong secret, an unknown agent and a disabled agent, alike', async () => {
    const { requestId } = await startFlow(server, party);
    const disabled = await server.createAgent();
    await setAgentStatus(server.ctx, disabled.agentId, 'disabled');
    const answers = [];
    for (const overrides of [
      { agent_secret: 'aas_wrong' },
      { agent_id: 'agt_nobody' },
      { agent_id: disabled.agentId, agent_secret: disabled.agentSecret },
    ]) {
      answers.push(
        await expectError(
          await postJson(server, '/api/agent/authenticate', body(requestId, overrides)),
          401,
          'invalid_credentials',
        ),
      );
    }
    expect(new Set(answers.map((a) => JSON.stringify(a))).size).toBe(1);
    expect((await checkStatus(server, requestId)).body.status).toBe('pending');
  });

  it('checks credentials before the request: bad credentials on an unknown request are 401', async () => {
    await expectError(
      await postJson(server, '/api/agent/authenticate', body('req_nothing', { agent_secret: 'aas_wrong' })),
      401,
      'invalid_credentials',
    );
  });

  it('404 invalid_request when the authorization request does not exist', async () => {
    await expectError(
      await postJson(server, '/api/agent/authenticate', body('req_doesnotexist')),
      404,
      'invalid_request',
    );
  });

  it('409 request_already_used on a second authentication, whatever the state', async () => {
    const started = await startFlow(server, party);
    expect((await authenticate(server, party, started.requestId)).status).toBe(200);
    await expectError(await authenticate(server, party, started.requestId), 409, 'request_already_used');
    expect((await continueFlow(server, started)).status).toBe(302);
    await expectError(await authenticate(server, party, started.requestId), 409, 'request_already_used');
  });

  it('409 request_already_used after the browser cancelled', async () => {
    const started = await startFlow(server, party);
    expect((await continueFlow(server, started, { action: 'cancel' })).status).toBe(302);
    await expectError(await authenticate(server, party, started.requestId), 409, 'request_already_used');
  });

  it('400 request_expired once the request is 10 minutes old, and not before', async () => {
    const early = await startFlow(server, party);
    const late = await startFlow(server, party);
    server.clock.advance(599);
    expect((await authenticate(server, party, early.requestId)).status).toBe(200);
    server.clock.advance(1);
    await expectError(await authenticate(server, party, late.requestId), 400, 'request_expired');
    server.clock.advance(-600);
  });

  it('415 for a body that is not JSON', async () => {
    const { requestId } = await startFlow(server, party);
    const form = await fetch(`${server.baseUrl}/api/agent/authenticate`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(body(requestId) as Record<string, string>).toString(),
    });
    await expectError(form, 415, 'invalid_request');
    const text = await fetch(`${server.baseUrl}/api/agent/authenticate`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: JSON.stringify(body(requestId)),
    });
    await expectError(text, 415, 'invalid_request');
    expect((await checkStatus(server, requestId)).body.status).toBe('pending');
  });

  it('400 for malformed JSON and 413 for a body over 64 KiB', async () => {
    await expectError(await postJson(server, '/api/agent/authenticate', '{"request_id": '), 400, 'invalid_request');
    await expectError(
      await postJson(server, '/api/agent/authenticate', JSON.stringify({ pad: 'x'.repeat(70_000) })),
      413,
      'invalid_request',
    );
  });

  it('of 20 concurrent authentications of one request exactly one succeeds', async () => {
    const { requestId } = await startFlow(server, party);
    const responses = await Promise.all(Array.from({ length: 20 }, () => authenticate(server, party, requestId)));
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(19);
  });

  it('records an audit event for every attempt, success or failure', async () => {
    const { requestId } = await startFlow(server, party);
    const agent = await server.createAgent();
    const attempt = (secret: string) =>
      postJson(
        server,
        '/api/agent/authenticate',
        { request_id: requestId, agent_id: agent.agentId, agent_secret: secret, model: 'm-1' },
        { 'user-agent': 'agent-test/1.0' },
      );
    await attempt('aas_wrong');
    await attempt(agent.agentSecret);
    await attempt(agent.agentSecret);
    const events = await server.ctx.store.signIns.listEvents({ agent_id: agent.agentId, limit: 10 });
    expect(events.map((e) => e.outcome).sort()).toEqual([
      'authenticated',
      'invalid_credentials',
      'request_already_used',
    ]);
    for (const event of events) {
      expect(event).toMatchObject({
        request_id: requestId,
        model: 'm-1',
        ip: '127.0.0.1',
        user_agent: 'agent-test/1.0',
      });
    }
    expect(events.find((e) => e.outcome === 'authenticated')!.client_id).toBe(party.clientId);
  });

  it("expected_resource: 412 request_mismatch before any state change for another resource or none; 200 for the request's own (design §13)", async () => {
    const resource = 'https://rs.example/mcp';
    const lookup = async (requestId: string) =>
      (await (await fetch(`${server.baseUrl}/api/agent/request?request_id=${requestId}`)).json()) as Record<
        string,
        unknown
      >;
    const withResource = await startFlow(server, party, { resource });
    const plain = await startFlow(server, party);
    expect((await lookup(withResource.requestId)).resource).toBe(resource);
    expect((await lookup(plain.requestId)).resource).toBeNull();
    for (const [requestId, expected] of [
      [withResource.requestId, 'https://rs.example/other'],
      [plain.requestId, resource],
    ] as const) {
      await expectError(
        await postJson(server, '/api/agent/authenticate', body(requestId, { expected_resource: expected })),
        412,
        'request_mismatch',
      );
      expect((await checkStatus(server, requestId)).body.status).toBe('pending');
    }
    expect(
      (await postJson(server, '/api/agent/authenticate', body(withResource.requestId, { expected_resource: resource })))
        .status,
    ).toBe(200);
    expect((await checkStatus(server, withResource.requestId)).body.status).toBe('authenticated');
  });

  it('refuses a request whose client has been disabled since', async () => {
    const client = await server.createClient();
    const other = { ...party, ...client };
    const { requestId } = await startFlow(server, other);
    await server.ctx.store.clients.update(client.clientId, { status: 'inactive' });
    await expectError(await authenticate(server, other, requestId), 400, 'invalid_client');
  });
});

describe('throttling of failed authentications (docs/design.md §5)', () => {
  it('answers 429 with Retry-After to wrong secrets per agent_id, and never to the right one (no lock-out)', async () => {
    const throttled = await startTestServer({
      env: { AUTH_FAILURES_PER_AGENT: '3', AUTH_FAILURES_PER_IP: '100', AUTH_FAILURE_WINDOW: '60', TRUST_PROXY: '1' },
    });
    try {
      const victim = await setupParty(throttled);
      const { requestId } = await startFlow(throttled, victim);
      // Guessers from several addresses, each well within its own address's allowance.
      const wrong = (i: number) =>
        postJson(
          throttled,
          '/api/agent/authenticate',
          { request_id: requestId, agent_id: victim.agentId, agent_secret: 'aas_guess', model: 'm' },
          { 'x-forwarded-for': `198.51.100.${i}` },
        );
      for (let i = 0; i < 3; i++) expect((await wrong(i)).status).toBe(401);
      for (let i = 3; i < 6; i++) {
        const blocked = await wrong(i);
        await expectError(blocked, 429, 'too_many_requests');
        expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      }
      // The agent that knows its secret gets in at once, from its own address, in the same window.
      const own = await postJson(
        throttled,
        '/api/agent/authenticate',
        body(requestId, { agent_id: victim.agentId, agent_secret: victim.agentSecret }),
        { 'x-forwarded-for': '203.0.113.10' },
      );
      expect(own.status).toBe(200);
    } finally {
      await throttled.close();
    }
  });

  it('a throttled key writes one audit event per window, not one per attempt', async () => {
    const throttled = await startTestServer({
      env: { AUTH_FAILURES_PER_AGENT: '2', AUTH_FAILURES_PER_IP: '3', AUTH_FAILURE_WINDOW: '60', TRUST_PROXY: '1' },
    });
    try {
      const victim = await setupParty(throttled);
      const guess = (ip: string, agentId = victim.agentId) =>
        postJson(
          throttled,
          '/api/agent/authenticate',
          { request_id: 'req_x', agent_id: agentId, agent_secret: 'aas_guess', model: 'm' },
          { 'x-forwarded-for': ip },
        );
      // Per agent_id: 2 failures, then 30 refusals from fresh addresses.
      for (let i = 0; i < 32; i++) expect((await guess(`198.51.100.${i}`)).status).toBe(i < 2 ? 401 : 429);
      // Per address: 3 failures, then 30 refusals for fresh agent ids.
      for (let i = 0; i < 33; i++) expect((await guess('203.0.113.7', `agt_other${i}`)).status).toBe(i < 3 ? 401 : 429);
      const events = await throttled.ctx.store.signIns.listEvents({ limit: 1000 });
      expect(events.filter((e) => e.outcome === 'invalid_credentials')).toHaveLength(5);
      const refusals = events.filter((e) => e.outcome === 'throttled');
      expect(refusals.map((e) => e.ip).sort()).toEqual(['198.51.100.2', '203.0.113.7']);
    } finally {
      await throttled.close();
    }
  });

  it('clientKey: IPv4 as it is (also IPv4-mapped), IPv6 by its /64 however it is written', () => {
    expect(clientKey('192.0.2.7')).toBe('192.0.2.7');
    expect(clientKey('::ffff:192.0.2.7')).toBe('192.0.2.7');
    for (const ip of [
      '2001:db8:1:2::1',
      '2001:0DB8:0001:0002:ffff:ffff:ffff:fffe',
      '2001:db8:1:2:aaaa::',
      '2001:db8:1:2:3:4:5:6',
    ])
      expect(clientKey(ip), ip).toBe('2001:db8:1:2::/64');
    expect(clientKey('::1')).toBe('0:0:0:0::/64');
    expect(clientKey('2001:db8::1.2.3.4')).toBe('2001:db8:0:0::/64');
    expect(clientKey('not an address')).toBe('not an address');
  });

  it('counts the addresses of one IPv6 /64 as one client', async () => {
    const throttled = await startTestServer({
      env: { AUTH_FAILURES_PER_AGENT: '100', AUTH_FAILURES_PER_IP: '3', AUTH_FAILURE_WINDOW: '60', TRUST_PROXY: '1' },
    });
    try {
      const guess = (ip: string) =>
        postJson(
          throttled,
          '/api/agent/authenticate',
          { request_id: 'req_x', agent_id: 'agt_guess', agent_secret: 'aas_x', model: 'm' },
          { 'x-forwarded-for': ip },
        );
      for (const ip of ['2001:db8:1:2::1', '2001:db8:1:2:aaaa::2', '2001:0db8:0001:0002:ffff:ffff:ffff:fffe'])
        expect((await guess(ip)).status).toBe(401);
      expect((await guess('2001:db8:1:2:1234::99')).status).toBe(429);
      expect((await guess('2001:db8:1:3::1')).status).toBe(401);
    } finally {
      await throttled.close();
    }
  });

  it("does not count an agent's own request errors against its agent_id", async () => {
    const throttled = await startTestServer({ env: { AUTH_FAILURES_PER_AGENT: '2', AUTH_FAILURES_PER_IP: '100' } });
    try {
      const agent = await setupParty(throttled);
      for (let i = 0; i < 3; i++) expect((await authenticate(throttled, agent, 'req_unknown')).status).toBe(404);
      const { requestId } = await startFlow(throttled, agent);
      expect((await authenticate(throttled, agent, requestId)).status).toBe(200);
    } finally {
      await throttled.close();
    }
  });

  it('answers 429 per client IP across agent ids', async () => {
    const throttled = await startTestServer({
      env: { AUTH_FAILURES_PER_AGENT: '100', AUTH_FAILURES_PER_IP: '5', AUTH_FAILURE_WINDOW: '60' },
    });
    try {
      for (let i = 0; i < 5; i++) {
        expect(
          (
            await postJson(throttled, '/api/agent/authenticate', {
              request_id: 'req_x',
              agent_id: `agt_guess${i}`,
              agent_secret: 'aas_x',
              model: 'm',
            })
          ).status,
        ).toBe(401);
      }
      const blocked = await postJson(throttled, '/api/agent/authenticate', {
        request_id: 'req_x',
        agent_id: 'agt_other',
        agent_secret: 'aas_x',
        model: 'm',
      });
      expect(blocked.status).toBe(429);
    } finally {
      await throttled.close();
    }
  });
});
