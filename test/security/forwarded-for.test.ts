/**
 * Forged X-Forwarded-For (docs/design.md §10): behind a proxy the client IP is taken from a
 * configured number of hops or trusted proxy addresses, never from what the client wrote
 * first. Observed where it matters: the IP of the audit event of a failed authentication,
 * and the per-IP throttle.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { postJson } from '../helpers/flow.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

const fakeRequestId = () => `req_${randomBytes(24).toString('base64url')}`;

/** A failed authentication (wrong secret) with these headers; the IP its audit event records. */
async function auditedIp(server: TestServer, headers: Record<string, string>): Promise<string | null> {
  const { agentId } = await server.createAgent();
  const response = await postJson(
    server,
    '/api/agent/authenticate',
    {
      request_id: fakeRequestId(),
      agent_id: agentId,
      agent_secret: `aas_${randomBytes(32).toString('base64url')}`,
      model: 'm',
    },
    headers,
  );
  expect(response.status).toBe(401);
  const events = await server.ctx.store.signIns.listEvents({ agent_id: agentId, limit: 10 });
  expect(events).toHaveLength(1);
  return events[0]!.ip;
}

const FORGED = { 'x-forwarded-for': '6.6.6.6, 10.0.0.7' };

describe('X-Forwarded-For', () => {
  it.each([
    ['TRUST_PROXY=1 (one proxy)', '10.0.0.7', '1'],
    ['TRUST_PROXY=127.0.0.1 (the proxy by address)', '10.0.0.7', '127.0.0.1'],
    ['TRUST_PROXY=127.0.0.0/8,10.0.0.0/8 (two proxies by CIDR)', '6.6.6.6', '127.0.0.0/8,10.0.0.0/8'],
    ['TRUST_PROXY=2 (two proxies)', '6.6.6.6', '2'],
    ['TRUST_PROXY unset', '127.0.0.1', undefined],
    ['TRUST_PROXY=false', '127.0.0.1', 'false'],
    ['TRUST_PROXY=10.0.0.0/8 (the socket is not a trusted proxy)', '127.0.0.1', '10.0.0.0/8'],
  ])('with %s, "X-Forwarded-For: 6.6.6.6, 10.0.0.7" is audited as %s', async (_name, expected, trust) => {
    const server = await startTestServer({ env: trust === undefined ? {} : { TRUST_PROXY: trust } });
    try {
      expect(await auditedIp(server, FORGED)).toBe(expected);
    } finally {
      await server.close();
    }
  });

  it('with TRUST_PROXY=1, a client that varies the left-most entry is still throttled per IP', async () => {
    const server = await startTestServer({
      env: { TRUST_PROXY: '1', AUTH_FAILURES_PER_IP: '3', AUTH_FAILURES_PER_AGENT: '100', AUTH_FAILURE_WINDOW: '60' },
    });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) {
        const response = await postJson(
          server,
          '/api/agent/authenticate',
          {
            request_id: fakeRequestId(),
            agent_id: `agt_${randomBytes(12).toString('base64url')}`,
            agent_secret: 'aas_x',
            model: 'm',
          },
          { 'x-forwarded-for': `203.0.113.${i + 1}, 10.0.0.7` },
        );
        statuses.push(response.status);
      }
      expect(statuses).toEqual([401, 401, 401, 429, 429]);
    } finally {
      await server.close();
    }
  });
});
