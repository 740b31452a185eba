/**
 * Response headers as a defence (docs/design.md §4, §6; RFC 6749 §5.1; RFC 9700 §4.2.4, §4.16):
 * clickjacking, caching of secrets, Referer leakage and cross-origin reads.
 *
 * Related tests elsewhere: test/authorize.test.ts "sends the security headers of docs/design.md §4"
 * (authorization page and /authorize error page) and the no-store checks of test/token.test.ts,
 * test/check-status.test.ts and test/resource-endpoints.test.ts. Here every HTML page and every
 * response that carries a token, a code or request state is checked in one place.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  authenticate,
  authorizeUrl,
  continueFlow,
  obtainCode,
  obtainTokens,
  type Party,
  postForm,
  postJson,
  redeem,
  setupParty,
  startFlow,
  type Tokens,
} from '../helpers/flow.ts';
import { createPasswordAccount, signIn } from '../helpers/console.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { corsHeaders } from './support.ts';

let server: TestServer;
let party: Party;
let manual: Party;

beforeAll(async () => {
  server = await startTestServer();
  party = await setupParty(server);
  manual = {
    ...(await server.createAgent({ name: 'Manual bot' })),
    ...(await server.createClient({ approval: 'manual' })),
  };
});
afterAll(() => server?.close());

/** Reads a body that may already have been read (startFlow reads the page). */
const drain = (response: Response) => (response.bodyUsed ? undefined : response.arrayBuffer());

/** Every kind of HTML page the server renders, by name. */
async function htmlPages(): Promise<Array<[string, Response]>> {
  const pages: Array<[string, Response]> = [];
  const started = await startFlow(server, party);
  pages.push(['authorization page (GET /authorize 200)', started.response]);
  pages.push([
    'continue-with-pending page (POST /authorize/continue before the agent)',
    await continueFlow(server, started),
  ]);

  const confirm = await startFlow(server, manual);
  await authenticate(server, manual, confirm.requestId);
  pages.push(['confirmation page (approval=manual)', await continueFlow(server, confirm)]);

  pages.push([
    'error page (GET /authorize 400)',
    await fetch(authorizeUrl(server, { client_id: 'cli_unknown' }), { redirect: 'manual' }),
  ]);
  pages.push([
    'error page (POST /authorize/continue 403, foreign browser)',
    await continueFlow(server, { requestId: started.requestId, cookie: '' }),
  ]);
  pages.push([
    'error page (POST /authorize/continue 400, unknown request)',
    await continueFlow(server, { requestId: 'req_unknown', cookie: started.cookie }),
  ]);
  pages.push(['landing page (GET /)', await fetch(`${server.baseUrl}/`)]);
  pages.push(['console sign-in page', await fetch(`${server.baseUrl}/console/sign-in`)]);
  pages.push(['console 404 page', await fetch(`${server.baseUrl}/console/nothing-here`)]);
  const person = await signIn(server.baseUrl, (await createPasswordAccount(server.ctx, { role: 'admin' })).email);
  for (const path of [
    '/console',
    '/console/account',
    '/console/agents',
    '/console/websites',
    '/console/admin',
    '/console/admin/events',
    '/console/api-keys',
    '/console/admin/webhooks',
  ]) {
    pages.push([
      `console page ${path}`,
      await fetch(`${server.baseUrl}${path}`, {
        headers: { cookie: [...person.cookies].map(([n, v]) => `${n}=${v}`).join('; ') },
      }),
    ]);
  }
  return pages;
}

describe('clickjacking and Referer leakage on HTML pages', () => {
  it('clickjacking: every HTML page (authorization, confirmation, pending, error) has X-Frame-Options DENY and CSP frame-ancestors none', async () => {
    for (const [name, response] of await htmlPages()) {
      expect(response.headers.get('content-type'), name).toMatch(/^text\/html/);
      expect(response.headers.get('x-frame-options'), name).toBe('DENY');
      const csp = response.headers.get('content-security-policy') ?? '';
      // One policy, not several that a browser would intersect or a proxy might drop.
      expect(csp, name).not.toContain(',');
      expect(csp, name).toMatch(/(^|;)\s*frame-ancestors 'none'\s*(;|$)/);
      expect(csp, name).not.toMatch(/unsafe-inline|unsafe-eval|\*/);
      await drain(response);
    }
  });

  it('request_id leakage via Referer: every HTML page, and the 302 to the client, has Referrer-Policy no-referrer', async () => {
    for (const [name, response] of await htmlPages()) {
      expect(response.headers.get('referrer-policy'), name).toBe('no-referrer');
      await drain(response);
    }
    const started = await startFlow(server, party);
    await authenticate(server, party, started.requestId);
    const redirect = await continueFlow(server, started);
    expect(redirect.status).toBe(302);
    expect(redirect.headers.get('referrer-policy')).toBe('no-referrer');
  });

  it('MIME sniffing: HTML pages and JSON answers carry X-Content-Type-Options nosniff', async () => {
    for (const [name, response] of await htmlPages()) {
      expect(response.headers.get('x-content-type-options'), name).toBe('nosniff');
      await drain(response);
    }
    const json = await fetch(`${server.baseUrl}/api/check-status?request_id=req_unknown`);
    expect(json.headers.get('x-content-type-options')).toBe('nosniff');
  });
});

describe('caching of tokens, codes and request state', () => {
  it('Cache-Control no-store on every response that carries a token, a code or request state', async () => {
    const checks: Array<[string, Response]> = [];
    // Pages and redirects carrying a request id or a code.
    const started = await startFlow(server, party);
    checks.push(['GET /authorize (page with request_id)', started.response]);
    checks.push(['POST /api/agent/authenticate 200', await authenticate(server, party, started.requestId)]);
    checks.push([
      'GET /api/check-status 200',
      await fetch(`${server.baseUrl}/api/check-status?request_id=${started.requestId}`),
    ]);
    checks.push(['POST /authorize/continue 302 with code', await continueFlow(server, started)]);
    const cancelled = await startFlow(server, party);
    checks.push(['POST /authorize/continue 302 Cancel', await continueFlow(server, cancelled, { action: 'cancel' })]);
    checks.push([
      'GET /api/check-status 404',
      await fetch(`${server.baseUrl}/api/check-status?request_id=req_unknown`),
    ]);
    checks.push([
      'POST /api/agent/authenticate 401',
      await postJson(server, '/api/agent/authenticate', {
        request_id: started.requestId,
        agent_id: party.agentId,
        agent_secret: 'aas_wrong',
        model: 'm',
      }),
    ]);
    checks.push(['POST /api/agent/authenticate 404', await authenticate(server, party, 'req_unknown')]);
    checks.push(['POST /api/agent/authenticate 409', await authenticate(server, party, started.requestId)]);

    // Token endpoint: success, refresh and errors.
    const { code, verifier } = await obtainCode(server, party);
    const tokenResponse = await redeem(server, party, code, verifier);
    checks.push(['POST /token authorization_code 200', tokenResponse]);
    const tokens = (await tokenResponse.clone().json()) as Tokens;
    checks.push(['POST /token invalid_grant (replay)', await redeem(server, party, code, verifier)]);
    checks.push([
      'POST /token invalid_client',
      await redeem(server, { ...party, clientSecret: 'cls_wrong' }, code, verifier),
    ]);
    checks.push([
      'POST /token unsupported_grant_type',
      await postForm(server, '/token', {
        grant_type: 'password',
        client_id: party.clientId,
        client_secret: party.clientSecret,
      }),
    ]);
    checks.push([
      'POST /token 415',
      await fetch(`${server.baseUrl}/token`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x' }),
    ]);
    const fresh = await obtainTokens(server, party);
    checks.push([
      'POST /token refresh_token 200',
      await postForm(server, '/token', {
        grant_type: 'refresh_token',
        refresh_token: fresh.refresh_token,
        client_id: party.clientId,
        client_secret: party.clientSecret,
      }),
    ]);

    // Introspection, revocation, userinfo.
    checks.push([
      'POST /introspect 200 active',
      await postForm(server, '/introspect', {
        token: fresh.access_token,
        client_id: party.clientId,
        client_secret: party.clientSecret,
      }),
    ]);
    checks.push(['POST /introspect 401', await postForm(server, '/introspect', { token: fresh.access_token })]);
    checks.push([
      'GET /userinfo 200',
      await fetch(`${server.baseUrl}/userinfo`, { headers: { authorization: `Bearer ${fresh.access_token}` } }),
    ]);
    checks.push([
      'POST /userinfo 200',
      await fetch(`${server.baseUrl}/userinfo`, {
        method: 'POST',
        headers: { authorization: `Bearer ${fresh.access_token}` },
      }),
    ]);
    checks.push([
      'GET /userinfo 401',
      await fetch(`${server.baseUrl}/userinfo`, { headers: { authorization: 'Bearer nope' } }),
    ]);
    checks.push([
      'POST /revoke 200',
      await postForm(server, '/revoke', {
        token: tokens.access_token,
        client_id: party.clientId,
        client_secret: party.clientSecret,
      }),
    ]);

    const missing: string[] = [];
    for (const [name, response] of checks) {
      const value = response.headers.get('cache-control') ?? '';
      if (!/(^|,)\s*no-store\s*(,|$)/.test(value))
        missing.push(`${name}: ${response.status} cache-control=${JSON.stringify(value)}`);
      await drain(response);
    }
    expect(missing).toEqual([]);
  });
});

describe('cross-origin reads (CORS)', () => {
  const ORIGIN = 'https://evil.example';

  it('no CORS headers on any endpoint, even with an Origin header and a preflight', async () => {
    const started = await startFlow(server, party);
    const tokens = await obtainTokens(server, party);
    const requests: Array<[string, string, RequestInit]> = [
      [
        'GET /authorize',
        authorizeUrl(server, {
          client_id: party.clientId,
          redirect_uri: party.redirectUri,
          response_type: 'code',
          state: 's',
          code_challenge: 'x'.repeat(43),
          code_challenge_method: 'S256',
        }),
        {},
      ],
      [
        'POST /authorize/continue',
        `${server.baseUrl}/authorize/continue`,
        {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: started.cookie },
          body: `request_id=${started.requestId}`,
        },
      ],
      [
        'POST /api/agent/authenticate',
        `${server.baseUrl}/api/agent/authenticate`,
        {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            request_id: started.requestId,
            agent_id: party.agentId,
            agent_secret: 'aas_wrong',
            model: 'm',
          }),
        },
      ],
      ['GET /api/check-status', `${server.baseUrl}/api/check-status?request_id=${started.requestId}`, {}],
      [
        'POST /token',
        `${server.baseUrl}/token`,
        {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: 'grant_type=authorization_code',
        },
      ],
      ['GET /userinfo', `${server.baseUrl}/userinfo`, { headers: { authorization: `Bearer ${tokens.access_token}` } }],
      [
        'POST /userinfo',
        `${server.baseUrl}/userinfo`,
        { method: 'POST', headers: { authorization: `Bearer ${tokens.access_token}` } },
      ],
      [
        'POST /introspect',
        `${server.baseUrl}/introspect`,
        {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: `token=${tokens.access_token}&client_id=${party.clientId}&client_secret=${party.clientSecret}`,
        },
      ],
      [
        'POST /revoke',
        `${server.baseUrl}/revoke`,
        { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'token=x' },
      ],
      ['GET /.well-known/oauth-authorization-server', `${server.baseUrl}/.well-known/oauth-authorization-server`, {}],
      ['GET /.well-known/openid-configuration', `${server.baseUrl}/.well-known/openid-configuration`, {}],
      ['GET /.well-known/jwks.json', `${server.baseUrl}/.well-known/jwks.json`, {}],
      ['GET /assets/authorize.js', `${server.baseUrl}/assets/authorize.js`, {}],
      ['GET /healthz', `${server.baseUrl}/healthz`, {}],
    ];
    const found: string[] = [];
    for (const [name, url, init] of requests) {
      const headers = { ...(init.headers as Record<string, string> | undefined), origin: ORIGIN };
      const response = await fetch(url, { ...init, headers, redirect: 'manual' });
      await drain(response);
      for (const header of corsHeaders(response)) found.push(`${name}: ${header}`);
      const method = init.method ?? 'GET';
      const preflight = await fetch(url, {
        method: 'OPTIONS',
        headers: {
          origin: ORIGIN,
          'access-control-request-method': method,
          'access-control-request-headers': 'authorization, content-type',
        },
        redirect: 'manual',
      });
      await drain(preflight);
      expect(preflight.status, `OPTIONS for ${name}`).toBeGreaterThanOrEqual(400);
      for (const header of corsHeaders(preflight)) found.push(`OPTIONS for ${name}: ${header}`);
    }
    expect(found).toEqual([]);
  });
});

describe('dynamic registration (DYNAMIC_REGISTRATION=true)', () => {
  const REDIRECT = 'https://app.example/callback';
  const json = (body: unknown, token?: string): RequestInit => ({
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });

  it('every answer of /register and /register/:client_id, success or error, has Cache-Control no-store, Pragma no-cache, nosniff and X-Frame-Options DENY', async () => {
    // Five registrations per address, so that the sixth shows the 429 too.
    const dynamic = await startTestServer({
      env: { DYNAMIC_REGISTRATION: 'true', PUBLIC_CLIENTS: 'true', REGISTRATION_LIMIT_PER_IP: '5' },
    });
    try {
      const url = (path: string) => `${dynamic.baseUrl}${path}`;
      const checks: Array<[string, Response]> = [];
      const created = await fetch(url('/register'), { method: 'POST', ...json({ redirect_uris: [REDIRECT] }) });
      checks.push(['POST /register 201', created]);
      const client = (await created.clone().json()) as { client_id: string; registration_access_token: string };
      const managed = `/register/${client.client_id}`;
      checks.push([
        'POST /register 201 (public)',
        await fetch(url('/register'), {
          method: 'POST',
          ...json({ redirect_uris: ['http://127.0.0.1/cb'], token_endpoint_auth_method: 'none' }),
        }),
      ]);
      checks.push([
        'POST /register 400',
        await fetch(url('/register'), { method: 'POST', ...json({ redirect_uris: ['http://evil.example/'] }) }),
      ]);
      checks.push([
        'POST /register 415',
        await fetch(url('/register'), { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x' }),
      ]);
      checks.push([
        'POST /register 413',
        await fetch(url('/register'), {
          method: 'POST',
          ...json({ redirect_uris: [REDIRECT], padding: 'x'.repeat(70_000) }),
        }),
      ]);
      checks.push([
        'POST /register 429',
        await fetch(url('/register'), { method: 'POST', ...json({ redirect_uris: [REDIRECT] }) }),
      ]);
      checks.push([
        'GET /register/:client_id 200',
        await fetch(url(managed), { headers: { authorization: `Bearer ${client.registration_access_token}` } }),
      ]);
      checks.push(['GET /register/:client_id 401', await fetch(url(managed))]);
      checks.push([
        'PUT /register/:client_id 200',
        await fetch(url(managed), {
          method: 'PUT',
          ...json({ client_id: client.client_id, redirect_uris: [REDIRECT] }, client.registration_access_token),
        }),
      ]);
      checks.push([
        'PUT /register/:client_id 400',
        await fetch(url(managed), {
          method: 'PUT',
          ...json({ client_id: 'cli_other', redirect_uris: [REDIRECT] }, client.registration_access_token),
        }),
      ]);
      checks.push([
        'PUT /register/:client_id 401',
        await fetch(url(managed), {
          method: 'PUT',
          ...json({ client_id: client.client_id, redirect_uris: [REDIRECT] }, 'rat_wrong'),
        }),
      ]);
      checks.push([
        'DELETE /register/:client_id 401',
        await fetch(url(managed), { method: 'DELETE', headers: { authorization: 'Bearer rat_wrong' } }),
      ]);
      checks.push([
        'DELETE /register/:client_id 204',
        await fetch(url(managed), {
          method: 'DELETE',
          headers: { authorization: `Bearer ${client.registration_access_token}` },
        }),
      ]);

      const expected = ['201', '201', '400', '415', '413', '429', '200', '401', '200', '400', '401', '401', '204'];
      expect(checks.map(([name, response]) => `${name}: ${response.status}`)).toEqual(
        checks.map(([name], i) => `${name}: ${expected[i]}`),
      );
      const missing: string[] = [];
      for (const [name, response] of checks) {
        const headers = {
          cacheControl: response.headers.get('cache-control'),
          pragma: response.headers.get('pragma'),
          nosniff: response.headers.get('x-content-type-options'),
          frame: response.headers.get('x-frame-options'),
        };
        if (
          JSON.stringify(headers) !==
          JSON.stringify({ cacheControl: 'no-store', pragma: 'no-cache', nosniff: 'nosniff', frame: 'DENY' })
        )
          missing.push(`${name}: ${JSON.stringify(headers)}`);
        await drain(response);
      }
      expect(missing).toEqual([]);
    } finally {
      await dynamic.close();
    }
  });

  it('no CORS headers on /register or /register/:client_id, even with an Origin header and a preflight', async () => {
    const dynamic = await startTestServer({ env: { DYNAMIC_REGISTRATION: 'true', REGISTRATION_LIMIT_PER_IP: '100' } });
    try {
      const origin = 'https://evil.example';
      const created = await fetch(`${dynamic.baseUrl}/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin },
        body: JSON.stringify({ redirect_uris: [REDIRECT] }),
      });
      expect(created.status).toBe(201);
      const client = (await created.clone().json()) as { client_id: string; registration_access_token: string };
      const found = corsHeaders(created).map((header) => `POST /register: ${header}`);
      const managed = `${dynamic.baseUrl}/register/${client.client_id}`;
      for (const method of ['GET', 'PUT', 'DELETE']) {
        const response = await fetch(managed, {
          method,
          headers: {
            origin,
            authorization: `Bearer ${client.registration_access_token}`,
            'content-type': 'application/json',
          },
          body:
            method === 'PUT' ? JSON.stringify({ client_id: client.client_id, redirect_uris: [REDIRECT] }) : undefined,
        });
        expect(response.status, method).toBeLessThan(300);
        await drain(response);
        for (const header of corsHeaders(response)) found.push(`${method} /register/:client_id: ${header}`);
      }
      for (const [url, method] of [
        [`${dynamic.baseUrl}/register`, 'POST'],
        [managed, 'GET'],
        [managed, 'PUT'],
        [managed, 'DELETE'],
      ] as const) {
        const preflight = await fetch(url, {
          method: 'OPTIONS',
          headers: {
            origin,
            'access-control-request-method': method,
            'access-control-request-headers': 'authorization, content-type',
          },
        });
        await drain(preflight);
        expect(preflight.status, `OPTIONS for ${method}`).toBeGreaterThanOrEqual(400);
        for (const header of corsHeaders(preflight)) found.push(`OPTIONS for ${method} ${url}: ${header}`);
      }
      expect(found).toEqual([]);
    } finally {
      await dynamic.close();
    }
  });
});
