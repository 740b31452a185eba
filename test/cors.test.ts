/**
 * CORS for browser apps (docs/design.md §13, docs/guides/browser-apps.md), over real HTTP with the
 * Origin header a browser sends: the metadata, the key set, /userinfo and /register answer any
 * origin; /token and /revoke answer a public client's own origins; preflights; the headers a
 * browser app reads; no CORS anywhere else; and, with CORS off, nothing of it at all.
 * The attacks (a foreign origin burning a code, rotating or revoking a token) are in
 * test/security/cross-origin.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerClient } from '../src/domain/clients.ts';
import { authenticate, continueFlow, postForm, postJson, startFlow, type Party, type Tokens } from './helpers/flow.ts';
import { startHttpsServer, TEST_CA } from './helpers/https.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { expectJsonError } from './security/support.ts';

const APP_ORIGIN = 'https://notes.example';
const APP_REDIRECT_URI = `${APP_ORIGIN}/callback`;

/** The response's CORS headers (Access-Control-*), by name. */
function corsHeaders(response: Response): Record<string, string> {
  return Object.fromEntries([...response.headers].filter(([name]) => name.startsWith('access-control-')));
}

/** A preflight as Chromium sends it before a call it may not make without asking. */
function preflight(server: TestServer, path: string, method: string, headers = 'authorization', origin = APP_ORIGIN) {
  return fetch(`${server.baseUrl}${path}`, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': headers },
  });
}

async function publicParty(server: TestServer, redirectUri = APP_REDIRECT_URI): Promise<Party> {
  const { client } = await registerClient(server.ctx, { name: 'Notes SPA', redirectUris: [redirectUri], public: true });
  return { clientId: client.id, clientSecret: '', redirectUri, ...(await server.createAgent()) };
}

/** authorize → authenticate → continue: a code for a public client, and its verifier. */
async function codeFor(server: TestServer, party: Party) {
  const started = await startFlow(server, party, { scope: 'email profile' });
  expect((await authenticate(server, party, started.requestId)).status).toBe(200);
  const redirect = await continueFlow(server, started);
  const code = new URL(redirect.headers.get('location')!).searchParams.get('code')!;
  return { code, verifier: started.verifier };
}

const fromOrigin = (origin: string | undefined): Record<string, string> => (origin === undefined ? {} : { origin });

function exchange(server: TestServer, party: Party, grant: { code: string; verifier: string }, origin?: string) {
  return postForm(
    server,
    '/token',
    {
      grant_type: 'authorization_code',
      code: grant.code,
      code_verifier: grant.verifier,
      client_id: party.clientId,
      redirect_uri: party.redirectUri,
    },
    fromOrigin(origin),
  );
}

describe('CORS on (PUBLIC_CLIENTS=true turns it on)', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({
      env: { PUBLIC_CLIENTS: 'true', DYNAMIC_REGISTRATION: 'true', REGISTRATION_LIMIT_PER_IP: '100000' },
    });
  });
  afterAll(() => server.close());

  it.each(['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration', '/.well-known/jwks.json'])(
    '%s answers any origin, and its preflight too (the MCP SDK sends MCP-Protocol-Version)',
    async (path) => {
      const response = await fetch(`${server.baseUrl}${path}`, { headers: { origin: 'https://anyone.example' } });
      expect(response.status).toBe(200);
      expect(corsHeaders(response)).toEqual({
        'access-control-allow-origin': '*',
        'access-control-expose-headers': 'WWW-Authenticate, Retry-After',
      });
      expect(response.headers.get('cache-control')).toBe('public, max-age=3600');

      const asked = await preflight(server, path, 'GET', 'mcp-protocol-version', 'http://localhost:6274');
      expect(asked.status).toBe(204);
      expect(corsHeaders(asked)).toEqual({
        'access-control-allow-origin': '*',
        'access-control-allow-methods': 'GET',
        'access-control-allow-headers': 'Authorization, Content-Type, MCP-Protocol-Version',
        'access-control-expose-headers': 'WWW-Authenticate, Retry-After',
        'access-control-max-age': '7200',
      });
    },
  );

  it('a preflight of /token or /revoke is answered for any origin: it carries no client_id', async () => {
    for (const path of ['/token', '/revoke']) {
      const asked = await preflight(server, path, 'POST', 'content-type', 'https://unknown.example');
      expect(asked.status).toBe(204);
      expect(corsHeaders(asked)).toMatchObject({
        'access-control-allow-origin': '*',
        'access-control-allow-methods': 'POST',
        'access-control-allow-headers': 'Authorization, Content-Type, MCP-Protocol-Version',
        'access-control-max-age': '7200',
      });
      expect(asked.headers.get('access-control-allow-credentials')).toBeNull();
    }
  });

  it('a public client’s app exchanges its code, refreshes and revokes from its redirect URI’s origin, and reads every answer', async () => {
    const party = await publicParty(server);
    const exchanged = await exchange(server, party, await codeFor(server, party), APP_ORIGIN);
    expect(exchanged.status).toBe(200);
    expect(corsHeaders(exchanged)).toEqual({
      'access-control-allow-origin': APP_ORIGIN,
      'access-control-expose-headers': 'WWW-Authenticate, Retry-After',
    });
    expect(exchanged.headers.get('vary')).toMatch(/\bOrigin\b/);
    expect(exchanged.headers.get('cache-control')).toBe('no-store');
    const tokens = (await exchanged.json()) as Tokens;
    expect(tokens).toMatchObject({ token_type: 'Bearer', scope: 'email profile' });

    const refreshed = await postForm(
      server,
      '/token',
      { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: party.clientId },
      { origin: APP_ORIGIN },
    );
    expect(refreshed.status).toBe(200);
    expect(refreshed.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
    const next = (await refreshed.json()) as Tokens;
    expect(next.refresh_token).not.toBe(tokens.refresh_token);

    // An error after the client is admitted is the app's to read too (an expired or used token).
    const reused = await postForm(
      server,
      '/token',
      { grant_type: 'refresh_token', refresh_token: 'not-a-refresh-token', client_id: party.clientId },
      { origin: APP_ORIGIN },
    );
    expect(reused.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
    await expectJsonError(reused, 400, 'invalid_grant');

    const revoked = await postForm(
      server,
      '/revoke',
      { token: next.refresh_token, client_id: party.clientId },
      { origin: APP_ORIGIN },
    );
    expect(revoked.status).toBe(200);
    expect(revoked.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
    await expectJsonError(
      await postForm(server, '/token', {
        grant_type: 'refresh_token',
        refresh_token: next.refresh_token,
        client_id: party.clientId,
      }),
      400,
      'invalid_grant',
    );
  });

  it('a loopback redirect URI admits its host on any port (RFC 8252 §7.3), and not another loopback host', async () => {
    const party = await publicParty(server, 'http://127.0.0.1/callback');
    const admitted = await exchange(server, party, await codeFor(server, party), 'http://127.0.0.1:5173');
    expect(admitted.status).toBe(200);
    expect(admitted.headers.get('access-control-allow-origin')).toBe('http://127.0.0.1:5173');

    const other = await exchange(server, party, await codeFor(server, party), 'http://localhost:5173');
    expect(corsHeaders(other)).toEqual({});
    await expectJsonError(other, 401, 'invalid_client');
  });

  it('a server’s call (no Origin) is answered as without CORS: no CORS header', async () => {
    const party = await publicParty(server);
    const response = await exchange(server, party, await codeFor(server, party));
    expect(response.status).toBe(200);
    expect(corsHeaders(response)).toEqual({});
  });

  it('/userinfo answers any origin, its refusals too, with WWW-Authenticate readable; its preflight allows Authorization', async () => {
    const party = await publicParty(server);
    const tokens = (await (await exchange(server, party, await codeFor(server, party))).json()) as Tokens;
    const asked = await preflight(server, '/userinfo', 'GET', 'authorization', 'https://elsewhere.example');
    expect(asked.status).toBe(204);
    expect(corsHeaders(asked)).toMatchObject({
      'access-control-allow-origin': '*',
      'access-control-allow-methods': 'GET, POST',
      'access-control-allow-headers': 'Authorization, Content-Type, MCP-Protocol-Version',
    });

    // A public client is never granted openid (no ID token to give), so its token is not for
    // /userinfo: the app reads why from the challenge.
    const claims = await fetch(`${server.baseUrl}/userinfo`, {
      headers: { origin: APP_ORIGIN, authorization: `Bearer ${tokens.access_token}` },
    });
    expect(claims.headers.get('www-authenticate')).toMatch(/error="insufficient_scope"/);
    expect(corsHeaders(claims)).toEqual({
      'access-control-allow-origin': '*',
      'access-control-expose-headers': 'WWW-Authenticate, Retry-After',
    });
    await expectJsonError(claims, 403, 'insufficient_scope');

    const refused = await fetch(`${server.baseUrl}/userinfo`, {
      method: 'POST',
      headers: { origin: APP_ORIGIN, authorization: 'Bearer not-a-token' },
    });
    expect(refused.headers.get('www-authenticate')).toMatch(/^Bearer /);
    expect(refused.headers.get('access-control-allow-origin')).toBe('*');
    await expectJsonError(refused, 401, 'invalid_token');
  });

  it('/register answers any origin, its metadata errors too; /register/{client_id} as well', async () => {
    const asked = await preflight(server, '/register', 'POST', 'content-type', 'http://localhost:6274');
    expect(asked.status).toBe(204);
    expect(asked.headers.get('access-control-allow-methods')).toBe('POST');
    const registered = await postJson(
      server,
      '/register',
      { redirect_uris: [APP_REDIRECT_URI], token_endpoint_auth_method: 'none', client_name: 'Notes SPA' },
      { origin: APP_ORIGIN },
    );
    expect(registered.status).toBe(201);
    expect(registered.headers.get('access-control-allow-origin')).toBe('*');
    const client = (await registered.json()) as { client_id: string; registration_access_token: string };

    const wrong = await postJson(server, '/register', { redirect_uris: ['ftp://x'] }, { origin: APP_ORIGIN });
    expect(wrong.headers.get('access-control-allow-origin')).toBe('*');
    await expectJsonError(wrong, 400, 'invalid_redirect_uri');

    const managed = await preflight(server, `/register/${client.client_id}`, 'DELETE', 'authorization');
    expect(managed.status).toBe(204);
    expect(managed.headers.get('access-control-allow-methods')).toBe('GET, PUT, DELETE');
    const read = await fetch(`${server.baseUrl}/register/${client.client_id}`, {
      headers: { origin: APP_ORIGIN, authorization: `Bearer ${client.registration_access_token}` },
    });
    expect(read.status).toBe(200);
    expect(read.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('no CORS header, and no preflight, on /introspect, /authorize, the agent back channel, the management API or the console', async () => {
    const party = await publicParty(server);
    const started = await startFlow(server, party, { scope: 'email profile' });
    const origin = { origin: APP_ORIGIN };
    const calls: Array<[string, Promise<Response>]> = [
      ['/introspect', postForm(server, '/introspect', { token: 'x', client_id: party.clientId }, origin)],
      [
        '/authorize',
        fetch(`${server.baseUrl}/authorize?client_id=${encodeURIComponent(party.clientId)}`, { headers: origin }),
      ],
      ['/api/agent/authenticate', postJson(server, '/api/agent/authenticate', { request_id: 'req_x' }, origin)],
      [
        '/api/check-status',
        fetch(`${server.baseUrl}/api/check-status?request_id=${started.requestId}`, { headers: origin }),
      ],
      ['/api/admin/v1/agents', fetch(`${server.baseUrl}/api/admin/v1/agents`, { headers: origin })],
      ['/console/sign-in', fetch(`${server.baseUrl}/console/sign-in`, { headers: origin })],
      ['/', fetch(`${server.baseUrl}/`, { headers: origin })],
    ];
    for (const [path, call] of calls) {
      const response = await call;
      expect(corsHeaders(response), path).toEqual({});
      expect(response.headers.get('vary') ?? '', path).not.toMatch(/Origin/);
    }
    for (const [path, method] of [
      ['/introspect', 'POST'],
      ['/authorize', 'GET'],
      ['/authorize/continue', 'POST'],
      ['/api/agent/authenticate', 'POST'],
      ['/api/check-status', 'GET'],
      ['/api/admin/v1/agents', 'GET'],
      ['/console/sign-in', 'POST'],
    ] as const) {
      // Refused as an unknown route is: the browser then makes no call.
      const asked = await preflight(server, path, method, 'content-type');
      expect(asked.status, path).toBe(404);
      expect(corsHeaders(asked), path).toEqual({});
    }
  });

  it('an OPTIONS that is no preflight (no Origin or no Access-Control-Request-Method) is a 404 as before', async () => {
    const noMethod = await fetch(`${server.baseUrl}/token`, { method: 'OPTIONS', headers: { origin: APP_ORIGIN } });
    expect(corsHeaders(noMethod)).toEqual({});
    await expectJsonError(noMethod, 404, 'not_found');
    const noOrigin = await fetch(`${server.baseUrl}/.well-known/jwks.json`, {
      method: 'OPTIONS',
      headers: { 'access-control-request-method': 'GET' },
    });
    expect(corsHeaders(noOrigin)).toEqual({});
    await expectJsonError(noOrigin, 404, 'not_found');
  });
});

describe('CORS for a client known by its metadata document (MCP_AUTHORIZATION)', () => {
  it('admits the origin of the document’s redirect URIs, not that of the document’s own host', async () => {
    const site = await startHttpsServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({
          client_id: `${siteOrigin}/client.json`,
          client_name: 'Notes for MCP',
          redirect_uris: [APP_REDIRECT_URI],
          token_endpoint_auth_method: 'none',
        }),
      );
    });
    const siteOrigin = site.origin;
    const server = await startTestServer({
      env: { MCP_AUTHORIZATION: 'true' },
      clientMetadataFetch: { ca: TEST_CA, allowAddress: (ip) => ip === '127.0.0.1' || ip === '::1' },
    });
    try {
      const party: Party = {
        clientId: `${siteOrigin}/client.json`,
        clientSecret: '',
        redirectUri: APP_REDIRECT_URI,
        ...(await server.createAgent()),
      };
      const grant = await codeFor(server, party);
      const fromDocumentHost = await exchange(server, party, grant, siteOrigin);
      expect(corsHeaders(fromDocumentHost)).toEqual({});
      await expectJsonError(fromDocumentHost, 401, 'invalid_client');

      const fromApp = await exchange(server, party, grant, APP_ORIGIN);
      expect(fromApp.status).toBe(200);
      expect(fromApp.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
    } finally {
      await server.close();
      await site.close();
    }
  });
});

describe('CORS off', () => {
  /** What a browser app would call, and the pages that never have CORS, each with an Origin. */
  const PATHS = [
    '/.well-known/oauth-authorization-server',
    '/.well-known/openid-configuration',
    '/.well-known/jwks.json',
    '/userinfo',
  ];

  /** The headers of a response whose values do not change from one request to the next. */
  const stableHeaders = (response: Response) =>
    Object.fromEntries([...response.headers].filter(([name]) => name !== 'date' && name !== 'keep-alive'));

  it.each([
    ['by default', {}],
    ['with public clients but CORS=false', { PUBLIC_CLIENTS: 'true', DYNAMIC_REGISTRATION: 'true', CORS: 'false' }],
  ])('%s: an Origin changes no header of any answer, and a preflight is a 404', async (_case, env) => {
    const server = await startTestServer({ env });
    try {
      for (const path of PATHS) {
        const plain = await fetch(`${server.baseUrl}${path}`);
        const withOrigin = await fetch(`${server.baseUrl}${path}`, { headers: { origin: APP_ORIGIN } });
        expect(withOrigin.status, path).toBe(plain.status);
        expect(stableHeaders(withOrigin), path).toEqual(stableHeaders(plain));
        expect(corsHeaders(withOrigin), path).toEqual({});
        expect(withOrigin.headers.get('vary'), path).toBeNull();
      }
      for (const path of [...PATHS, '/token', '/revoke', '/register']) {
        const asked = await preflight(server, path, 'POST');
        expect(corsHeaders(asked), path).toEqual({});
        await expectJsonError(asked, 404, 'not_found', path);
      }
    } finally {
      await server.close();
    }
  });

  it('with CORS=false a browser’s call to /token is answered as before CORS existed: nothing refused, no CORS header', async () => {
    const server = await startTestServer({ env: { PUBLIC_CLIENTS: 'true', CORS: 'false' } });
    try {
      const party = await publicParty(server);
      const response = await exchange(server, party, await codeFor(server, party), 'https://elsewhere.example');
      expect(response.status).toBe(200);
      expect(corsHeaders(response)).toEqual({});
      expect(response.headers.get('vary')).toBeNull();
    } finally {
      await server.close();
    }
  });
});
