/**
 * Attacks on the agent back channel, POST /api/agent/authenticate and GET /api/check-status
 * (docs/contract.md; docs/design.md §5): agent_id enumeration by answer and by timing, online guessing of
 * agent secrets (throttling per agent_id and per IP), request_id probing, and authentication
 * against a disabled client or by a disabled agent.
 *
 * Related tests elsewhere: test/agent-authenticate.test.ts "401 invalid_credentials for a wrong
 * secret, an unknown agent and a disabled agent, alike", "answers 429 with Retry-After per
 * agent_id, and lets the agent in after the window", "answers 429 per client IP across agent
 * ids", "refuses a request whose client has been disabled since", "404 invalid_request when the
 * authorization request does not exist"; test/check-status.test.ts "404 not_found for an unknown
 * request". The tests below add the attacker's view: byte-identical answers, timing, guessing
 * from many addresses, X-Forwarded-For spoofing, and probing counted by the throttle.
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setAgentStatus } from '../../src/domain/agents.ts';
import { setClientStatus } from '../../src/domain/clients.ts';
import { authenticate, checkStatus, type Party, postJson, setupParty, startFlow } from '../helpers/flow.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import { expectJsonError, median } from './support.ts';

/** Throttling out of the way: enumeration, timing and state checks. */
let server: TestServer;
let party: Party;

beforeAll(async () => {
  server = await startTestServer({ env: { AUTH_FAILURES_PER_AGENT: '100000', AUTH_FAILURES_PER_IP: '100000' } });
  party = await setupParty(server);
});
afterAll(() => server?.close());

const AUTHENTICATE = '/api/agent/authenticate';

function attempt(target: TestServer, body: Record<string, string>, headers: Record<string, string> = {}) {
  return postJson(target, AUTHENTICATE, body, headers);
}

/** A value in the format of a real one (same prefix and length), so lengths cannot tell them apart. */
const fakeAgentId = () => `agt_${randomBytes(12).toString('base64url')}`;
const fakeSecret = () => `aas_${randomBytes(32).toString('base64url')}`;
const fakeRequestId = () => `req_${randomBytes(24).toString('base64url')}`;

/** Status, headers that are not per-response (date, connection) and the raw body. */
async function answerOf(
  response: Response,
): Promise<{ status: number; headers: Array<[string, string]>; body: string }> {
  const headers = [...response.headers].filter(([name]) => !['date', 'connection', 'keep-alive'].includes(name)).sort();
  return { status: response.status, headers, body: await response.text() };
}

describe('agent_id enumeration', () => {
  it('unknown agent_id, wrong secret for a real agent and a disabled agent give byte-identical statuses, headers and bodies', async () => {
    const { requestId } = await startFlow(server, party);
    const disabled = await server.createAgent();
    await setAgentStatus(server.ctx, disabled.agentId, 'disabled');
    const answers = [
      await answerOf(
        await attempt(server, {
          request_id: requestId,
          agent_id: fakeAgentId(),
          agent_secret: fakeSecret(),
          model: 'm',
        }),
      ),
      await answerOf(
        await attempt(server, {
          request_id: requestId,
          agent_id: party.agentId,
          agent_secret: fakeSecret(),
          model: 'm',
        }),
      ),
      await answerOf(
        await attempt(server, {
          request_id: requestId,
          agent_id: disabled.agentId,
          agent_secret: disabled.agentSecret,
          model: 'm',
        }),
      ),
      // On an unknown request too: credentials are checked first, so the request does not matter.
      await answerOf(
        await attempt(server, {
          request_id: fakeRequestId(),
          agent_id: fakeAgentId(),
          agent_secret: fakeSecret(),
          model: 'm',
        }),
      ),
      await answerOf(
        await attempt(server, {
          request_id: fakeRequestId(),
          agent_id: party.agentId,
          agent_secret: fakeSecret(),
          model: 'm',
        }),
      ),
    ];
    expect(answers[0]!.status).toBe(401);
    expect(JSON.parse(answers[0]!.body)).toEqual({
      error: 'invalid_credentials',
      error_description: expect.any(String),
    });
    for (const answer of answers.slice(1)) expect(answer).toEqual(answers[0]);
    expect((await checkStatus(server, requestId)).body.status).toBe('pending');
  });

  // Robustness: warm-up rounds are discarded; the two kinds alternate, in an order that flips
  // every round, so drift (GC, WAL checkpoints, a busy CPU) hits both series alike; every
  // probe uses a fresh id of the real format and length, as an enumerating attacker would
  // (each candidate once), and a secret of the real length; medians ignore outliers; and the
  // bound is wide (0.5–2) while the difference it guards against — a slow hash or an early
  // return for unknown agents — is an order of magnitude or a few database round trips.
  it('agent_id enumeration by timing: unknown agent_id and wrong secret for a real agent take comparable time (ratio of medians within 0.5–2)', async () => {
    const ROUNDS = 200;
    const WARMUP = 20;
    const agents: string[] = [];
    for (let i = 0; i < ROUNDS + WARMUP; i++) agents.push((await server.createAgent()).agentId);
    const { requestId } = await startFlow(server, party);

    const timed = async (agentId: string): Promise<number> => {
      const body = { request_id: requestId, agent_id: agentId, agent_secret: fakeSecret(), model: 'timing-probe' };
      const start = performance.now();
      const response = await attempt(server, body);
      await response.text();
      const elapsed = performance.now() - start;
      expect(response.status).toBe(401);
      return elapsed;
    };

    const known: number[] = [];
    const unknown: number[] = [];
    for (let round = 0; round < ROUNDS + WARMUP; round++) {
      const realId = agents[round]!;
      const fakeId = fakeAgentId();
      let k: number;
      let u: number;
      if (round % 2 === 0) {
        k = await timed(realId);
        u = await timed(fakeId);
      } else {
        u = await timed(fakeId);
        k = await timed(realId);
      }
      if (round >= WARMUP) {
        known.push(k);
        unknown.push(u);
      }
    }
    const ratio = median(known) / median(unknown);
    const summary = `median known ${median(known).toFixed(3)} ms, unknown ${median(unknown).toFixed(3)} ms, ratio ${ratio.toFixed(3)}`;
    console.info(`[${process.env.AGENTAUTH_TEST_ENGINE ?? 'sqlite'}] agent_id timing: ${summary}`);
    expect(ratio, summary).toBeGreaterThan(0.5);
    expect(ratio, summary).toBeLessThan(2);
  });
});

describe('online guessing of agent secrets (throttling)', () => {
  /** TRUST_PROXY lets the test play attackers at many addresses through X-Forwarded-For. */
  let throttled: TestServer;
  let victim: Party;
  beforeAll(async () => {
    throttled = await startTestServer({
      env: { AUTH_FAILURES_PER_AGENT: '3', AUTH_FAILURES_PER_IP: '4', AUTH_FAILURE_WINDOW: '1', TRUST_PROXY: '1' },
    });
    victim = await setupParty(throttled);
  });
  afterAll(() => throttled?.close());

  it('brute force of one agent_id from many IP addresses: wrong secrets get 429 with Retry-After per agent_id, the right secret is never held off (no lock-out)', async () => {
    const { requestId } = await startFlow(throttled, victim);
    const guess = (i: number) =>
      attempt(
        throttled,
        { request_id: requestId, agent_id: victim.agentId, agent_secret: fakeSecret(), model: 'm' },
        { 'x-forwarded-for': `203.0.113.${10 + i}` },
      );
    for (let i = 0; i < 3; i++) expect((await guess(i)).status).toBe(401);
    const blocked = await guess(3);
    await expectJsonError(blocked.clone(), 429, 'too_many_requests');
    expect(blocked.headers.get('retry-after')).toBe('1');
    expect((await checkStatus(throttled, requestId)).body.status).toBe('pending');
    // The legitimate agent, from its own address, in the same window: its secret is enough.
    const own = await attempt(
      throttled,
      { request_id: requestId, agent_id: victim.agentId, agent_secret: victim.agentSecret, model: 'm' },
      { 'x-forwarded-for': '198.51.100.1' },
    );
    expect(own.status).toBe(200);
    // The guessers still get 429, not a verdict on their guesses.
    expect((await guess(4)).status).toBe(429);
  });

  it('brute force from one IP address across many agent_ids: 429 with Retry-After per IP; other addresses are unaffected; the same address gets in after the window', async () => {
    const attacker = { 'x-forwarded-for': '203.0.113.200' };
    for (let i = 0; i < 4; i++) {
      expect(
        (
          await attempt(
            throttled,
            { request_id: fakeRequestId(), agent_id: fakeAgentId(), agent_secret: fakeSecret(), model: 'm' },
            attacker,
          )
        ).status,
      ).toBe(401);
    }
    const blocked = await attempt(
      throttled,
      { request_id: fakeRequestId(), agent_id: fakeAgentId(), agent_secret: fakeSecret(), model: 'm' },
      attacker,
    );
    await expectJsonError(blocked.clone(), 429, 'too_many_requests');
    expect(blocked.headers.get('retry-after')).toBe('1');

    const first = await startFlow(throttled, victim);
    // A legitimate agent elsewhere is not locked out by the attacker's address ...
    expect(
      (
        await attempt(
          throttled,
          { request_id: first.requestId, agent_id: victim.agentId, agent_secret: victim.agentSecret, model: 'm' },
          { 'x-forwarded-for': '198.51.100.2' },
        )
      ).status,
    ).toBe(200);
    // ... one behind the attacker's address (same NAT) waits for the window, then gets in.
    const second = await startFlow(throttled, victim);
    const good = () =>
      attempt(
        throttled,
        { request_id: second.requestId, agent_id: victim.agentId, agent_secret: victim.agentSecret, model: 'm' },
        attacker,
      );
    expect((await good()).status).toBe(429);
    await sleep(1100);
    expect((await good()).status).toBe(200);
  });

  it('request_id probing with valid credentials: unknown ids are 404 invalid_request (identical answers), each counts against the IP throttle but not against the agent', async () => {
    const prober = { 'x-forwarded-for': '203.0.113.77' };
    const answers = [];
    for (let i = 0; i < 4; i++) {
      const response = await attempt(
        throttled,
        { request_id: fakeRequestId(), agent_id: victim.agentId, agent_secret: victim.agentSecret, model: 'm' },
        prober,
      );
      answers.push(await answerOf(response));
    }
    expect(answers[0]!.status).toBe(404);
    expect(JSON.parse(answers[0]!.body)).toEqual({ error: 'invalid_request', error_description: expect.any(String) });
    for (const answer of answers) expect(answer).toEqual(answers[0]);
    // The prober's address is now throttled, even for a real request ...
    const real = await startFlow(throttled, victim);
    const blocked = await attempt(
      throttled,
      { request_id: real.requestId, agent_id: victim.agentId, agent_secret: victim.agentSecret, model: 'm' },
      prober,
    );
    await expectJsonError(blocked.clone(), 429, 'too_many_requests');
    expect(blocked.headers.get('retry-after')).toMatch(/^\d+$/);
    // ... while the agent itself, from another address, is not (its own mistakes never lock it out).
    expect(
      (
        await attempt(
          throttled,
          { request_id: real.requestId, agent_id: victim.agentId, agent_secret: victim.agentSecret, model: 'm' },
          { 'x-forwarded-for': '198.51.100.3' },
        )
      ).status,
    ).toBe(200);
  });
});

describe('throttling cannot be dodged, and its window is configurable', () => {
  let strict: TestServer;
  beforeAll(async () => {
    // TRUST_PROXY is off (the default): X-Forwarded-For is the attacker's own text.
    strict = await startTestServer({
      env: { AUTH_FAILURES_PER_AGENT: '1000', AUTH_FAILURES_PER_IP: '3', AUTH_FAILURE_WINDOW: '60' },
    });
  });
  afterAll(() => strict?.close());

  it('X-Forwarded-For spoofing without TRUST_PROXY does not evade the per-IP throttle; Retry-After follows AUTH_FAILURE_WINDOW', async () => {
    for (let i = 0; i < 3; i++) {
      const response = await attempt(
        strict,
        { request_id: fakeRequestId(), agent_id: fakeAgentId(), agent_secret: fakeSecret(), model: 'm' },
        { 'x-forwarded-for': `192.0.2.${i + 1}`, 'x-real-ip': `192.0.2.${i + 1}` },
      );
      expect(response.status).toBe(401);
    }
    const blocked = await attempt(
      strict,
      { request_id: fakeRequestId(), agent_id: fakeAgentId(), agent_secret: fakeSecret(), model: 'm' },
      { 'x-forwarded-for': '192.0.2.99' },
    );
    await expectJsonError(blocked.clone(), 429, 'too_many_requests');
    const retryAfter = Number(blocked.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(50);
    expect(retryAfter).toBeLessThanOrEqual(60);
  });
});

describe('request_id probing at the status endpoint', () => {
  it('unknown request ids give identical 404 not_found answers, and real ids are 192-bit random values', async () => {
    const answers = [];
    for (const id of [
      fakeRequestId(),
      fakeRequestId(),
      'req_',
      'req_0',
      `${(await startFlow(server, party)).requestId}x`,
    ]) {
      const response = await fetch(`${server.baseUrl}/api/check-status?request_id=${encodeURIComponent(id)}`);
      answers.push(await answerOf(response));
    }
    expect(answers[0]!.status).toBe(404);
    expect(JSON.parse(answers[0]!.body)).toEqual({ error: 'not_found', error_description: expect.any(String) });
    for (const answer of answers) expect(answer).toEqual(answers[0]);
    const ids = new Set<string>();
    for (let i = 0; i < 20; i++) ids.add((await startFlow(server, party)).requestId);
    expect(ids.size).toBe(20);
    for (const id of ids) expect(id).toMatch(/^req_[A-Za-z0-9_-]{32}$/);
  });
});

describe('authentication against disabled parties', () => {
  it('authenticating a request of a disabled client is 400 invalid_client, the request stays pending, and nothing is issued', async () => {
    const client = await server.createClient();
    const who = { ...party, ...client };
    const started = await startFlow(server, who);
    await setClientStatus(server.ctx, client.clientId, 'inactive');
    await expectJsonError(await authenticate(server, who, started.requestId), 400, 'invalid_client');
    expect(await checkStatus(server, started.requestId)).toEqual({ status: 200, body: { status: 'pending' } });
    expect(await server.ctx.store.requests.find(started.requestId)).toMatchObject({
      status: 'pending',
      agent_id: null,
    });
  });

  it('authentication by a disabled agent is 401 invalid_credentials, the request stays pending, and an active agent can still take it', async () => {
    const disabled = await server.createAgent();
    await setAgentStatus(server.ctx, disabled.agentId, 'disabled');
    const started = await startFlow(server, party);
    await expectJsonError(
      await authenticate(server, { ...party, ...disabled }, started.requestId),
      401,
      'invalid_credentials',
    );
    expect(await server.ctx.store.requests.find(started.requestId)).toMatchObject({
      status: 'pending',
      agent_id: null,
    });
    expect((await authenticate(server, party, started.requestId)).status).toBe(200);
  });
});
