/**
 * Unauthenticated callers cannot grow the database without bound (docs/design.md §5, §10):
 * /authorize is rate-limited per client address, HEAD creates nothing, throttled attempts
 * write one audit event per key and window, and management API calls without a usable key are
 * limited per client address (§15).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { purgeOnce } from '../../src/server.ts';
import { authorizeUrl, metaContent, type Party, pkcePair, postJson, setupParty } from '../helpers/flow.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { API, accountWithKey } from '../helpers/api.ts';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function authorizeParams(party: Party): Record<string, string> {
  return {
    client_id: party.clientId,
    redirect_uri: party.redirectUri,
    response_type: 'code',
    state: 's',
    code_challenge: pkcePair().challenge,
    code_challenge_method: 'S256',
  };
}

/** Deletes everything expired, and says how many authorization requests there were. */
async function requestRowsPurged(at: TestServer): Promise<number> {
  at.clock.advance(600 + 86_400 + 1);
  try {
    return (await purgeOnce(at.ctx)).requests;
  } finally {
    at.clock.advance(-(600 + 86_400 + 1));
  }
}

describe('GET /authorize is rate-limited per client address', () => {
  it('answers the 429 page with Retry-After past AUTHORIZE_LIMIT_PER_IP, creating nothing; other addresses go on', async () => {
    server = await startTestServer({
      env: { AUTHORIZE_LIMIT_PER_IP: '5', AUTHORIZE_LIMIT_WINDOW: '60', TRUST_PROXY: '1' },
    });
    const party = await setupParty(server);
    const from = (ip: string) =>
      fetch(authorizeUrl(server!, authorizeParams(party)), { headers: { 'x-forwarded-for': ip } });
    for (let i = 0; i < 5; i++) expect((await from('198.51.100.1')).status).toBe(200);
    for (const ip of ['198.51.100.1', '198.51.100.1']) {
      const limited = await from(ip);
      expect(limited.status).toBe(429);
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(limited.headers.get('content-type')).toMatch(/^text\/html/);
      expect(limited.headers.get('set-cookie')).toBeNull();
      const page = await limited.text();
      expect(metaContent(page, 'error')).toBe('too_many_requests');
      expect(metaContent(page, 'request-id')).toBeUndefined();
    }
    // One IPv6 /64 is one client; the next /64 is another.
    for (let i = 1; i <= 5; i++) expect((await from(`2001:db8:7:7::${i}`)).status).toBe(200);
    expect((await from('2001:db8:7:7:ffff::1')).status).toBe(429);
    expect((await from('2001:db8:7:8::1')).status).toBe(200);
    expect((await from('198.51.100.2')).status).toBe(200);
    expect(await requestRowsPurged(server)).toBe(12);
  });

  it('AUTHORIZE_LIMIT_PER_IP=0 turns the limit off', async () => {
    server = await startTestServer({ env: { AUTHORIZE_LIMIT_PER_IP: '0' } });
    const party = await setupParty(server);
    for (let i = 0; i < 30; i++) expect((await fetch(authorizeUrl(server, authorizeParams(party)))).status).toBe(200);
  });
});

describe('the management API without a usable key is rate-limited per client address', () => {
  it('answers 429 with Retry-After in the API’s shape past API_AUTH_FAILURES_PER_IP, whatever the kind of bad key; a usable key goes on', async () => {
    server = await startTestServer({
      env: { API_AUTH_FAILURES_PER_IP: '4', API_RATE_LIMIT_WINDOW: '3600', TRUST_PROXY: '1' },
    });
    const { secret } = await accountWithKey(server);
    const from = (ip: string, authorization?: string) =>
      fetch(`${server!.baseUrl}${API}/agents`, {
        headers: { 'x-forwarded-for': ip, ...(authorization === undefined ? {} : { authorization }) },
      });
    const badKeys = [undefined, 'Bearer aak_neverMadeByTheServer', 'Basic dXNlcjpwYXNz', 'Bearer'];
    for (const authorization of badKeys) {
      const refused = await from('198.51.100.9', authorization);
      expect(refused.status, authorization).toBe(401);
      expect((await refused.json()).error).toBe('invalid_token');
    }
    for (const authorization of badKeys) {
      const limited = await from('198.51.100.9', authorization);
      expect(limited.status, authorization).toBe(429);
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(limited.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await limited.json()).toEqual({
        error: 'too_many_requests',
        error_description: 'Too many calls without a usable API key from this address; wait for Retry-After.',
      });
    }
    // A usable key from the same address is not refused: a key cannot be guessed, and its own limit applies.
    expect((await from('198.51.100.9', `Bearer ${secret}`)).status).toBe(200);
    // One IPv6 /64 is one client; other addresses go on.
    for (let i = 1; i <= 4; i++) expect((await from(`2001:db8:9:9::${i}`)).status).toBe(401);
    expect((await from('2001:db8:9:9:ffff::1')).status).toBe(429);
    expect((await from('2001:db8:9:a::1')).status).toBe(401);
    expect((await from('198.51.100.10')).status).toBe(401);
    // The OpenAPI document needs no key, and is not counted.
    const document = await fetch(`${server.baseUrl}${API}/openapi.json`, {
      headers: { 'x-forwarded-for': '198.51.100.9' },
    });
    expect(document.status).toBe(200);
  });

  it('API_AUTH_FAILURES_PER_IP=0 turns the limit off', async () => {
    server = await startTestServer({ env: { API_AUTH_FAILURES_PER_IP: '0' } });
    for (let i = 0; i < 40; i++) expect((await fetch(`${server.baseUrl}${API}/agents`)).status).toBe(401);
  });
});

describe('HEAD /authorize', () => {
  it('answers the headers GET would, but creates no request and sets no cookie', async () => {
    server = await startTestServer();
    const party = await setupParty(server);
    for (let i = 0; i < 5; i++) {
      const head = await fetch(authorizeUrl(server, authorizeParams(party)), { method: 'HEAD' });
      expect(head.status).toBe(200);
      expect(head.headers.get('content-type')).toMatch(/^text\/html/);
      expect(head.headers.get('set-cookie')).toBeNull();
      expect(head.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    }
    const invalid = await fetch(authorizeUrl(server, { ...authorizeParams(party), code_challenge_method: 'plain' }), {
      method: 'HEAD',
    });
    expect(invalid.status).toBe(400);
    expect(invalid.headers.get('set-cookie')).toBeNull();
    expect((await fetch(authorizeUrl(server, authorizeParams(party)))).status).toBe(200);
    expect(await requestRowsPurged(server)).toBe(1);
  });
});

describe('throttled authentication attempts', () => {
  it('525 attempts from one address over the limit write the failures allowed plus one audit event', async () => {
    server = await startTestServer({
      env: { AUTH_FAILURES_PER_IP: '20', AUTH_FAILURES_PER_AGENT: '1000', AUTH_FAILURE_WINDOW: '300' },
    });
    const statuses = new Map<number, number>();
    const attempt = (n: number) =>
      postJson(server!, '/api/agent/authenticate', {
        request_id: 'req_x',
        agent_id: `agt_guess${n}`,
        agent_secret: 'aas_x',
        model: 'm',
      });
    const count = (response: Response) => statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
    // One at a time until the limit is reached (the limit is checked before it is counted, so
    // attempts in flight together may all pass), then in parallel.
    for (let n = 0; n < 25; n++) count(await attempt(n));
    for (let batch = 0; batch < 10; batch++)
      (await Promise.all(Array.from({ length: 50 }, (_, i) => attempt(100 + batch * 50 + i)))).forEach(count);
    expect(Object.fromEntries(statuses)).toEqual({ 401: 20, 429: 505 });
    const events = await server.ctx.store.signIns.listEvents({ limit: 10_000 });
    expect(events.filter((e) => e.outcome === 'invalid_credentials')).toHaveLength(20);
    expect(events.filter((e) => e.outcome === 'throttled')).toHaveLength(1);
  });
});
