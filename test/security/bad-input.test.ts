/**
 * Hostile input to every endpoint (docs/design.md §10; docs/reference/endpoints.md): malformed
 * JSON, wrong and missing content types, bodies over 64 KiB, parameters over their length
 * limits, repeated parameters, non-UTF-8 bytes and control characters, huge headers, arrays
 * and objects where strings belong, and __proto__/constructor keys. Whatever arrives, the answer
 * is the documented 4xx shape — JSON { error, error_description }, or the HTML error page for
 * GET /authorize and POST /authorize/continue — never a 5xx, never a stack trace.
 *
 * Errors Node's HTTP parser raises before any route runs (a header section over 16 KiB, a raw
 * control byte in a header) cannot know the route; they answer the JSON shape for every path.
 *
 * The dynamic registration endpoints (POST /register, GET|PUT|DELETE /register/:client_id) exist
 * only with DYNAMIC_REGISTRATION, so their cases, and a fast-check property of POST /register,
 * run against a server of their own at the end.
 *
 * Related: test/properties.test.ts generates inputs for GET /authorize, POST
 * /api/agent/authenticate, /token, /introspect, /revoke, GET /api/check-status and /userinfo;
 * the fast-check properties here cover the two it does not: the continue form and the
 * /.well-known documents.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authorizationServerMetadata, openIdConfiguration } from '../../src/protocol/routes/discovery.ts';
import {
  authenticate,
  authorizeUrl,
  metaContent,
  obtainTokens,
  type Party,
  pkcePair,
  postJson,
  setupParty,
  startFlow,
} from '../helpers/flow.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import {
  corsHeaders,
  expectErrorPage,
  expectJsonError,
  LEAK,
  type RawResponse,
  rawBody,
  rawRequest,
} from './support.ts';

let server: TestServer;
let party: Party;
let accessToken: string;

beforeAll(async () => {
  server = await startTestServer({ env: { AUTH_FAILURES_PER_AGENT: '100000', AUTH_FAILURES_PER_IP: '100000' } });
  party = await setupParty(server);
  accessToken = (await obtainTokens(server, party)).access_token;
});
afterAll(() => server?.close());

// ---------------------------------------------------------------------------------------------
// The endpoints and what a documented answer is for each

type Kind = 'html' | 'json';
interface Endpoint {
  name: string;
  method: 'GET' | 'POST';
  path: string;
  kind: Kind;
  /** What the endpoint does with a body: parse it as form or JSON, JSON only, or ignore it. */
  body: 'form-or-json' | 'json' | 'form' | 'ignored' | 'none';
}

const ENDPOINTS: Endpoint[] = [
  { name: 'GET /authorize', method: 'GET', path: '/authorize', kind: 'html', body: 'none' },
  { name: 'POST /authorize/continue', method: 'POST', path: '/authorize/continue', kind: 'html', body: 'form' },
  { name: 'POST /api/agent/authenticate', method: 'POST', path: '/api/agent/authenticate', kind: 'json', body: 'json' },
  { name: 'GET /api/check-status', method: 'GET', path: '/api/check-status', kind: 'json', body: 'none' },
  { name: 'POST /token', method: 'POST', path: '/token', kind: 'json', body: 'form-or-json' },
  { name: 'GET /userinfo', method: 'GET', path: '/userinfo', kind: 'json', body: 'none' },
  { name: 'POST /userinfo', method: 'POST', path: '/userinfo', kind: 'json', body: 'ignored' },
  { name: 'POST /introspect', method: 'POST', path: '/introspect', kind: 'json', body: 'form-or-json' },
  { name: 'POST /revoke', method: 'POST', path: '/revoke', kind: 'json', body: 'form-or-json' },
  {
    name: 'GET /.well-known/oauth-authorization-server',
    method: 'GET',
    path: '/.well-known/oauth-authorization-server',
    kind: 'json',
    body: 'none',
  },
  {
    name: 'GET /.well-known/openid-configuration',
    method: 'GET',
    path: '/.well-known/openid-configuration',
    kind: 'json',
    body: 'none',
  },
  { name: 'GET /.well-known/jwks.json', method: 'GET', path: '/.well-known/jwks.json', kind: 'json', body: 'none' },
  { name: 'GET /api/agent/request', method: 'GET', path: '/api/agent/request', kind: 'json', body: 'none' },
  { name: 'GET /authorize/agent', method: 'GET', path: '/authorize/agent', kind: 'json', body: 'none' },
];
const POST_ENDPOINTS = ENDPOINTS.filter((e) => e.method === 'POST');
const GET_ENDPOINTS = ENDPOINTS.filter((e) => e.method === 'GET');
const WELL_KNOWN = ENDPOINTS.filter((e) => e.path.startsWith('/.well-known/'));
const BODY_PARSING = POST_ENDPOINTS.filter((e) => e.body !== 'ignored');

function documents(): Record<string, unknown> {
  return {
    '/.well-known/oauth-authorization-server': authorizationServerMetadata(server.baseUrl),
    '/.well-known/openid-configuration': openIdConfiguration(server.baseUrl),
    '/.well-known/jwks.json': { keys: [] },
  };
}

/**
 * The invariant of every answer: below 500, no stack trace, no redirect; an error is the
 * endpoint's documented shape; a /.well-known answer is the document itself.
 */
async function expectDocumented(
  endpoint: Endpoint,
  response: Response,
  context: string,
  statuses?: number[],
): Promise<number> {
  const where = `${endpoint.name} ${context}`;
  if (response.status >= 400) {
    if (endpoint.kind === 'html') await expectErrorPage(response, statuses, undefined, where);
    else await expectJsonError(response, statuses, undefined, where);
    return response.status;
  }
  const text = await response.text();
  const detail = `${where} → ${response.status} ${text.slice(0, 300)}`;
  if (statuses) expect(statuses, detail).toContain(response.status);
  expect(text, detail).not.toMatch(LEAK);
  if (endpoint.path.startsWith('/.well-known/')) {
    expect(response.status, detail).toBe(200);
    expect(JSON.parse(text), detail).toEqual(documents()[endpoint.path]);
  }
  return response.status;
}

/**
 * A raw answer (from the socket) in the documented shape: the endpoint's own shape when the
 * request reached the route, the JSON shape when `endpoint` is undefined (Node's parser
 * refused the request before any route ran).
 */
function expectRawDocumented(
  endpoint: Endpoint | undefined,
  response: RawResponse,
  context: string,
  statuses?: number[],
): void {
  const body = rawBody(response);
  const detail = `${context} → ${response.head.split('\r\n')[0]} ${body.slice(0, 300)}`;
  expect(response.status, detail).toBeGreaterThanOrEqual(200);
  expect(response.status, detail).toBeLessThan(500);
  if (statuses) expect(statuses, detail).toContain(response.status);
  expect(body, detail).not.toMatch(LEAK);
  expect(response.headers.location, detail).toBeUndefined();
  if (response.status < 400) return;
  if (endpoint?.kind === 'html') {
    expect(response.headers['content-type'], detail).toMatch(/^text\/html/);
    expect(metaContent(body, 'error'), detail).toEqual(expect.any(String));
    expect(metaContent(body, 'error-description'), detail).toEqual(expect.any(String));
    return;
  }
  expect(response.headers['content-type'], detail).toMatch(/^application\/json/);
  const json = JSON.parse(body) as Record<string, unknown>;
  expect(Object.keys(json).sort(), detail).toEqual(['error', 'error_description']);
}

function post(
  path: string,
  body: string | Uint8Array,
  contentType: string | undefined,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(`${server.baseUrl}${path}`, {
    method: 'POST',
    headers: { ...(contentType === undefined ? {} : { 'content-type': contentType }), ...headers },
    // A Uint8Array body makes fetch send no Content-Type of its own.
    body: typeof body === 'string' ? new TextEncoder().encode(body) : new Uint8Array(body),
    redirect: 'manual',
  });
}

function get(path: string, query = '', headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${server.baseUrl}${path}${query ? `?${query}` : ''}`, { headers, redirect: 'manual' });
}

/** A valid authorization request's query. */
function authorizeQuery(overrides: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  return {
    client_id: party.clientId,
    redirect_uri: party.redirectUri,
    response_type: 'code',
    state: 'st',
    code_challenge: pkcePair().challenge,
    code_challenge_method: 'S256',
    ...overrides,
  };
}
const query = (params: Record<string, string | undefined>) => new URL(authorizeUrl(server, params)).search.slice(1);

/** A body each endpoint would accept in shape (the values need not be valid). */
function plausibleFields(endpoint: Endpoint): Record<string, string> {
  switch (endpoint.path) {
    case '/authorize/continue':
      return { request_id: 'req_unknown', action: 'approve' };
    case '/api/agent/authenticate':
      return { request_id: 'req_unknown', agent_id: 'agt_unknown', agent_secret: 'aas_unknown', model: 'm' };
    case '/token':
      return {
        grant_type: 'authorization_code',
        code: 'cod_x',
        code_verifier: 'v'.repeat(43),
        client_id: party.clientId,
        client_secret: party.clientSecret,
      };
    default:
      return { token: 'x', client_id: party.clientId, client_secret: party.clientSecret };
  }
}

// ---------------------------------------------------------------------------------------------

describe('malformed JSON', () => {
  const MALFORMED = [
    '{"request_id":',
    "{'request_id':'x'}",
    '[1,2',
    '{"a":1}}',
    'NaN',
    '{"a":"\\x"}',
    '{"a":1,}',
    '\u0000{}',
    '{"a":"\ud800"',
  ];

  it.each(POST_ENDPOINTS.map((e) => [e.name, e] as const))(
    'malformed JSON bodies to %s get the documented 4xx, never a 5xx or stack trace',
    async (_name, endpoint) => {
      for (const body of MALFORMED) {
        const response = await post(endpoint.path, body, 'application/json');
        const status = await expectDocumented(endpoint, response, `body ${JSON.stringify(body)}`);
        if (endpoint.body === 'ignored') expect(status).toBe(401);
        else expect(status, `${endpoint.name} ${JSON.stringify(body)}`).toBe(400);
      }
    },
  );

  it.each(GET_ENDPOINTS.map((e) => [e.name, e] as const))(
    'a malformed JSON body sent with %s is ignored: the documented answer',
    async (_name, endpoint) => {
      const response = await rawRequest(
        server,
        `GET ${endpoint.path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 14\r\nConnection: close\r\n\r\n{"request_id":`,
      );
      expectRawDocumented(endpoint, response, `${endpoint.name} with a JSON body`);
    },
  );

  it('POST to a /.well-known document with malformed JSON or any body is a JSON 4xx', async () => {
    for (const endpoint of WELL_KNOWN) {
      for (const [body, type] of [
        ['{', 'application/json'],
        ['x', 'text/plain'],
        ['a=1', 'application/x-www-form-urlencoded'],
      ] as const) {
        const response = await post(endpoint.path, body, type);
        await expectJsonError(response, [400, 404, 415], undefined, `POST ${endpoint.path} ${type}`);
      }
    }
  });
});

describe('wrong and missing content types', () => {
  const WRONG = [
    undefined,
    'text/plain',
    'text/plain; charset=utf-8',
    'application/xml',
    'multipart/form-data; boundary=x',
    'application/octet-stream',
    'text/html',
    ';;;',
    'application/jsonx',
    'x-www-form-urlencoded',
  ];

  it.each(BODY_PARSING.map((e) => [e.name, e] as const))(
    'wrong or missing Content-Type to %s: 415 in the documented shape',
    async (_name, endpoint) => {
      const fields = plausibleFields(endpoint);
      const types = endpoint.body === 'json' ? [...WRONG, 'application/x-www-form-urlencoded'] : WRONG;
      for (const type of types) {
        const body =
          endpoint.body === 'json' && type === 'application/x-www-form-urlencoded'
            ? new URLSearchParams(fields).toString()
            : JSON.stringify(fields);
        const response = await post(endpoint.path, body, type);
        await expectDocumented(endpoint, response, `Content-Type ${JSON.stringify(type)}`, [415]);
      }
    },
  );

  it('POST /userinfo ignores the body whatever its content type: 401 without a token', async () => {
    const endpoint = ENDPOINTS.find((e) => e.name === 'POST /userinfo')!;
    for (const type of [...WRONG, 'application/json', 'application/x-www-form-urlencoded']) {
      // A Content-Type that is not a media type at all (";;;", no "/") is refused before the route: 415, also documented.
      const malformed = type !== undefined && !type.includes('/');
      await expectDocumented(
        endpoint,
        await post('/userinfo', `access_token=${accessToken}`, type),
        `Content-Type ${JSON.stringify(type)}`,
        malformed ? [401, 415] : [401],
      );
    }
  });

  it.each(GET_ENDPOINTS.map((e) => [e.name, e] as const))(
    'a Content-Type header on %s (no body) changes nothing',
    async (_name, endpoint) => {
      for (const type of ['text/plain', 'application/json', 'multipart/form-data; boundary=x', ';;;']) {
        const response = await get(endpoint.path, '', { 'content-type': type });
        await expectDocumented(
          endpoint,
          response,
          `Content-Type ${type}`,
          endpoint.path.startsWith('/.well-known/') ? [200] : [400, 401],
        );
      }
    },
  );
});

describe('bodies over the 64 KiB limit', () => {
  const big = (endpoint: Endpoint): [string, string] => {
    const fields = { ...plausibleFields(endpoint), padding: 'x'.repeat(70_000) };
    return endpoint.body === 'json' || endpoint.body === 'ignored'
      ? [JSON.stringify(fields), 'application/json']
      : [new URLSearchParams(fields).toString(), 'application/x-www-form-urlencoded'];
  };

  it.each(BODY_PARSING.map((e) => [e.name, e] as const))(
    'a body over 64 KiB to %s is 413 in the documented shape',
    async (_name, endpoint) => {
      const [body, type] = big(endpoint);
      await expectDocumented(endpoint, await post(endpoint.path, body, type), `70 KB ${type}`, [413]);
      if (endpoint.body === 'form-or-json') {
        const fields = { ...plausibleFields(endpoint), padding: 'x'.repeat(70_000) };
        await expectDocumented(
          endpoint,
          await post(endpoint.path, JSON.stringify(fields), 'application/json'),
          '70 KB JSON',
          [413],
        );
      }
    },
  );

  it('a body over 64 KiB to POST /userinfo or a /.well-known document is a documented 4xx', async () => {
    const payload = JSON.stringify({ padding: 'x'.repeat(70_000) });
    await expectDocumented(
      ENDPOINTS.find((e) => e.name === 'POST /userinfo')!,
      await post('/userinfo', payload, 'application/json'),
      '70 KB',
      [401, 413],
    );
    for (const endpoint of WELL_KNOWN)
      await expectJsonError(
        await post(endpoint.path, payload, 'application/json'),
        [404, 413],
        undefined,
        endpoint.path,
      );
  });
});

describe('parameters over their length limits', () => {
  const over = (n: number) => 'a'.repeat(n + 1);

  it.each([
    // 512: a client_id may be the https URL of a Client ID Metadata Document.
    ['client_id', 512],
    ['redirect_uri', 2000],
    ['response_type', 100],
    ['state', 2048],
    ['code_challenge', 128],
    ['code_challenge_method', 100],
    ['scope', 200],
    ['nonce', 512],
  ])('GET /authorize: %s over %i characters gets the 400 page naming it', async (name, limit) => {
    const response = await get('/authorize', query(authorizeQuery({ [name]: over(limit) })));
    const { error, description } = await expectErrorPage(response, 400, undefined, name);
    if (name === 'client_id') expect(error).toBe('invalid_request');
    expect(description).toContain(name);
  });

  it.each([
    ['request_id', 128],
    ['confirmed', 8],
  ])('POST /authorize/continue: %s over %i characters gets the 400 page', async (name, limit) => {
    const response = await post(
      '/authorize/continue',
      new URLSearchParams({ request_id: 'req_x', [name]: over(limit) }).toString(),
      'application/x-www-form-urlencoded',
    );
    const { error, description } = await expectErrorPage(response, 400, 'invalid_request', name);
    expect(error).toBe('invalid_request');
    expect(description).toContain(name);
  });

  it.each([
    ['request_id', 128],
    ['agent_id', 128],
    ['agent_secret', 512],
    ['model', 200],
  ])('POST /api/agent/authenticate: %s over %i characters is 400 invalid_request naming it', async (name, limit) => {
    const body = { request_id: 'req_x', agent_id: 'agt_x', agent_secret: 'aas_x', model: 'm', [name]: over(limit) };
    const { error_description } = await expectJsonError(
      await post('/api/agent/authenticate', JSON.stringify(body), 'application/json'),
      400,
      'invalid_request',
      name,
    );
    expect(error_description).toContain(name);
  });

  it('GET /api/check-status: request_id over 128 characters is 400 invalid_request', async () => {
    const { error_description } = await expectJsonError(
      await get('/api/check-status', `request_id=${over(128)}`),
      400,
      'invalid_request',
    );
    expect(error_description).toContain('request_id');
  });

  it.each([
    ['grant_type', 64],
    ['client_id', 512],
    ['client_secret', 512],
    ['code', 256],
    ['code_verifier', 256],
    ['redirect_uri', 2048],
    ['refresh_token', 256],
    ['scope', 200],
  ])('POST /token: %s over %i characters is 400 invalid_request naming it (form and JSON)', async (name, limit) => {
    const fields = { ...plausibleFields(ENDPOINTS[4]!), [name]: over(limit) };
    for (const [body, type] of [
      [new URLSearchParams(fields).toString(), 'application/x-www-form-urlencoded'],
      [JSON.stringify(fields), 'application/json'],
    ] as const) {
      const { error_description } = await expectJsonError(
        await post('/token', body, type),
        400,
        'invalid_request',
        `${name} ${type}`,
      );
      expect(error_description).toContain(name);
    }
  });

  it.each([
    ['/introspect', 'token', 4096],
    ['/introspect', 'token_type_hint', 64],
    ['/introspect', 'client_id', 512],
    ['/introspect', 'client_secret', 512],
    ['/revoke', 'token', 4096],
    ['/revoke', 'token_type_hint', 64],
    ['/revoke', 'client_id', 512],
    ['/revoke', 'client_secret', 512],
  ])('POST %s: %s over %i characters is 400 invalid_request naming it', async (path, name, limit) => {
    const fields = { token: 'x', client_id: party.clientId, client_secret: party.clientSecret, [name]: over(limit) };
    const { error_description } = await expectJsonError(
      await post(path, new URLSearchParams(fields).toString(), 'application/x-www-form-urlencoded'),
      400,
      'invalid_request',
      name,
    );
    expect(error_description).toContain(name);
  });

  it('GET|POST /userinfo: a 12 KB bearer token is 401 invalid_token', async () => {
    for (const method of ['GET', 'POST']) {
      const response = await fetch(`${server.baseUrl}/userinfo`, {
        method,
        headers: { authorization: `Bearer ${'a'.repeat(12_000)}` },
      });
      await expectJsonError(response, 401, 'invalid_token', method);
    }
  });

  it('a /.well-known document with a long query string is still the document', async () => {
    for (const endpoint of WELL_KNOWN)
      await expectDocumented(endpoint, await get(endpoint.path, `x=${'a'.repeat(10_000)}`), 'long query', [200]);
  });
});

describe('repeated parameters', () => {
  it.each([
    'client_id',
    'redirect_uri',
    'response_type',
    'state',
    'code_challenge',
    'code_challenge_method',
    'scope',
    'nonce',
  ])('GET /authorize with %s given twice (same value) gets the 400 page', async (name) => {
    const params = authorizeQuery({ scope: 'openid', nonce: 'n' });
    const response = await get('/authorize', `${query(params)}&${name}=${encodeURIComponent(params[name]!)}`);
    const { description } = await expectErrorPage(response, 400, 'invalid_request', name);
    expect(description).toContain(name);
  });

  it('POST /authorize/continue with request_id, action or confirmed given twice gets the 400 page', async () => {
    const started = await startFlow(server, party);
    for (const body of [
      `request_id=${started.requestId}&request_id=${started.requestId}`,
      `request_id=${started.requestId}&action=approve&action=cancel`,
      `request_id=${started.requestId}&confirmed=1&confirmed=1`,
    ]) {
      await expectErrorPage(
        await post('/authorize/continue', body, 'application/x-www-form-urlencoded', { cookie: started.cookie }),
        400,
        'invalid_request',
        body,
      );
    }
  });

  it('GET /api/check-status with request_id given twice is 400 invalid_request', async () => {
    const { requestId } = await startFlow(server, party);
    await expectJsonError(
      await get('/api/check-status', `request_id=${requestId}&request_id=${requestId}`),
      400,
      'invalid_request',
    );
  });

  it('POST /token, /introspect and /revoke with any field given twice are 400 invalid_request', async () => {
    for (const endpoint of POST_ENDPOINTS.filter((e) => e.body === 'form-or-json')) {
      const fields = plausibleFields(endpoint);
      for (const name of Object.keys(fields)) {
        const body = `${new URLSearchParams(fields).toString()}&${name}=${encodeURIComponent(fields[name]!)}`;
        await expectJsonError(
          await post(endpoint.path, body, 'application/x-www-form-urlencoded'),
          400,
          'invalid_request',
          `${endpoint.path} ${name}`,
        );
      }
    }
  });

  it('POST /api/agent/authenticate with duplicate JSON keys gets a documented answer (no 5xx)', async () => {
    const body =
      '{"request_id":"req_a","request_id":"req_b","agent_id":"agt_x","agent_id":"agt_y","agent_secret":"s","agent_secret":"t","model":"m","model":"n"}';
    await expectJsonError(await post('/api/agent/authenticate', body, 'application/json'), 401, 'invalid_credentials');
  });

  it('GET /userinfo with two Authorization headers, or a token in the query string, is 401', async () => {
    const endpoint = ENDPOINTS.find((e) => e.name === 'GET /userinfo')!;
    const response = await rawRequest(
      server,
      `GET /userinfo HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer a\r\nAuthorization: Bearer ${accessToken}\r\nConnection: close\r\n\r\n`,
    );
    expectRawDocumented(endpoint, response, 'two Authorization headers', [401]);
    await expectJsonError(
      await get('/userinfo', `access_token=${accessToken}&access_token=${accessToken}`),
      401,
      'invalid_token',
    );
  });

  it('a /.well-known document with repeated query parameters is still the document', async () => {
    for (const endpoint of WELL_KNOWN)
      await expectDocumented(endpoint, await get(endpoint.path, 'a=1&a=2&a=3'), 'repeated', [200]);
  });
});

describe('non-UTF-8 bytes and control characters', () => {
  /** Percent-encoded: invalid UTF-8, an overlong '/', a surrogate, NUL, CRLF, ESC, DEL, C1 NEL. */
  const ENCODED = [
    '%FF%FE',
    '%C0%AF',
    '%ED%A0%80',
    '%00',
    'x%00y',
    '%0D%0ASet-Cookie:%20a=b',
    '%1B[31m',
    '%7F',
    '%C2%85',
    '%E2%80%AE',
    '%',
  ];
  /** Raw in a body. */
  const RAW = [
    Buffer.from([0xff, 0xfe]),
    Buffer.from([0xc0, 0xaf]),
    Buffer.from([0x00]),
    Buffer.from([0x1b, 0x5b]),
    Buffer.from([0xed, 0xa0, 0x80]),
  ];
  /** As JSON escapes. */
  const JSON_ESCAPED = ['\\u0000', 'x\\u0000', '\\u001b', '\\u0085', '\\ud800', '\\u202e', '\\r\\n'];

  it('GET /authorize with each parameter carrying control characters or invalid UTF-8 gets the 400 page or the authorization page', async () => {
    const endpoint = ENDPOINTS[0]!;
    for (const name of [
      'client_id',
      'redirect_uri',
      'response_type',
      'state',
      'code_challenge',
      'code_challenge_method',
      'scope',
      'nonce',
    ]) {
      for (const value of ENCODED) {
        const params = authorizeQuery({ [name]: undefined });
        const response = await get('/authorize', `${query(params)}&${name}=${value}`);
        // A lone '%' is kept as it is, which is a valid state or nonce.
        await expectDocumented(
          endpoint,
          response,
          `${name}=${value}`,
          name === 'state' || name === 'nonce' ? [200, 400] : [400],
        );
      }
    }
  });

  it('POST /authorize/continue with control characters or invalid UTF-8 in the form and the cookie gets the HTML error page', async () => {
    const endpoint = ENDPOINTS[1]!;
    const started = await startFlow(server, party);
    for (const value of ENCODED) {
      await expectDocumented(
        endpoint,
        await post(endpoint.path, `request_id=${value}`, 'application/x-www-form-urlencoded', {
          cookie: started.cookie,
        }),
        `request_id=${value}`,
      );
      await expectDocumented(
        endpoint,
        await post(
          endpoint.path,
          `request_id=${started.requestId}&action=${value}`,
          'application/x-www-form-urlencoded',
          { cookie: started.cookie },
        ),
        `action=${value}`,
      );
    }
    for (const bytes of RAW) {
      const body = Buffer.concat([Buffer.from('request_id=req_'), bytes]);
      await expectDocumented(
        endpoint,
        await post(endpoint.path, new Uint8Array(body), 'application/x-www-form-urlencoded', {
          cookie: started.cookie,
        }),
        `raw ${bytes.toString('hex')}`,
      );
    }
    const cookie = Buffer.concat([Buffer.from('agentauth_browser='), Buffer.from([0xff, 0x80, 0xfe])]).toString(
      'latin1',
    );
    const response = await rawRequest(
      server,
      Buffer.concat([
        Buffer.from(
          `POST /authorize/continue HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${12 + started.requestId.length}\r\nCookie: `,
        ),
        Buffer.from(cookie, 'latin1'),
        Buffer.from(`\r\nConnection: close\r\n\r\nrequest_id=${started.requestId}x`),
      ]),
    );
    expectRawDocumented(endpoint, response, 'cookie with obs-text bytes');
  });

  it('POST /api/agent/authenticate with control characters or invalid UTF-8 in any field gets a documented JSON answer', async () => {
    const endpoint = ENDPOINTS[2]!;
    const { requestId } = await startFlow(server, party);
    const good = { request_id: requestId, agent_id: party.agentId, agent_secret: 'aas_wrong', model: 'm' };
    for (const field of Object.keys(good)) {
      for (const escaped of JSON_ESCAPED) {
        const body = JSON.stringify({ ...good, [field]: 'PLACEHOLDER' }).replace('PLACEHOLDER', `req_${escaped}`);
        await expectDocumented(
          endpoint,
          await post(endpoint.path, body, 'application/json'),
          `${field}=${escaped}`,
          [400, 401, 404],
        );
      }
      for (const bytes of RAW) {
        const [head, tail] = JSON.stringify({ ...good, [field]: 'PLACEHOLDER' }).split('PLACEHOLDER') as [
          string,
          string,
        ];
        const body = Buffer.concat([Buffer.from(head), bytes, Buffer.from(tail)]);
        await expectDocumented(
          endpoint,
          await post(endpoint.path, new Uint8Array(body), 'application/json'),
          `${field} raw ${bytes.toString('hex')}`,
          [400, 401, 404],
        );
      }
    }
    // A User-Agent with obs-text bytes goes into the audit log without trouble.
    const raw = Buffer.concat([
      Buffer.from(
        `POST /api/agent/authenticate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(JSON.stringify(good))}\r\nUser-Agent: `,
      ),
      Buffer.from([0xff, 0xfe, 0x80]),
      Buffer.from(`\r\nConnection: close\r\n\r\n${JSON.stringify(good)}`),
    ]);
    expectRawDocumented(endpoint, await rawRequest(server, raw), 'User-Agent with obs-text', [401]);
  });

  it('GET /api/check-status with control characters or invalid UTF-8 in request_id gets 400 or 404 in the JSON shape', async () => {
    const endpoint = ENDPOINTS[3]!;
    for (const value of ENCODED) {
      await expectDocumented(
        endpoint,
        await get(endpoint.path, `request_id=req_${value}`),
        `request_id=req_${value}`,
        [400, 404],
      );
    }
  });

  it('POST /token, /introspect and /revoke with control characters or invalid UTF-8 in any field get documented JSON answers', async () => {
    for (const endpoint of POST_ENDPOINTS.filter((e) => e.body === 'form-or-json')) {
      const fields = plausibleFields(endpoint);
      for (const name of Object.keys(fields)) {
        for (const value of ENCODED) {
          const body = `${new URLSearchParams({ ...fields, [name]: 'PLACEHOLDER' }).toString().replace('PLACEHOLDER', `x${value}`)}`;
          await expectDocumented(
            endpoint,
            await post(endpoint.path, body, 'application/x-www-form-urlencoded'),
            `${name}=x${value}`,
            [200, 400, 401],
          );
        }
        for (const escaped of JSON_ESCAPED) {
          const body = JSON.stringify({ ...fields, [name]: 'PLACEHOLDER' }).replace('PLACEHOLDER', `x${escaped}`);
          await expectDocumented(
            endpoint,
            await post(endpoint.path, body, 'application/json'),
            `${name}=x${escaped} (JSON)`,
            [200, 400, 401],
          );
        }
        for (const bytes of RAW) {
          const [head, tail] = new URLSearchParams({ ...fields, [name]: 'PLACEHOLDER' })
            .toString()
            .split('PLACEHOLDER') as [string, string];
          const body = Buffer.concat([Buffer.from(head), bytes, Buffer.from(tail)]);
          await expectDocumented(
            endpoint,
            await post(endpoint.path, new Uint8Array(body), 'application/x-www-form-urlencoded'),
            `${name} raw ${bytes.toString('hex')}`,
            [200, 400, 401],
          );
        }
      }
    }
  });

  it('GET|POST /userinfo with control characters or obs-text in the Authorization header, or junk in the query, is 401', async () => {
    for (const method of ['GET', 'POST']) {
      const endpoint = ENDPOINTS.find((e) => e.name === `${method} /userinfo`)!;
      for (const bytes of [Buffer.from([0xff, 0xfe]), Buffer.from([0x80]), Buffer.from('\t')]) {
        const raw = Buffer.concat([
          Buffer.from(`${method} /userinfo HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer a`),
          bytes,
          Buffer.from(`b\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`),
        ]);
        expectRawDocumented(
          endpoint,
          await rawRequest(server, raw),
          `${method} Authorization with ${bytes.toString('hex')}`,
          [401],
        );
      }
    }
    for (const value of ENCODED)
      await expectJsonError(await get('/userinfo', `access_token=${value}`), 401, 'invalid_token', value);
  });

  it('a /.well-known document with control characters or invalid UTF-8 in the query is still the document', async () => {
    for (const endpoint of WELL_KNOWN)
      for (const value of ENCODED)
        await expectDocumented(endpoint, await get(endpoint.path, `x=${value}&${value}=1`), value, [200]);
  });

  it.each(ENDPOINTS.map((e) => [e.name, e] as const))(
    'a raw control byte or invalid UTF-8 in the request line or a header of %s is a 400 in the JSON shape (Node refuses it before routing)',
    async (_name, endpoint) => {
      const line = (target: Buffer) =>
        Buffer.concat([
          Buffer.from(`${endpoint.method} `),
          target,
          Buffer.from(` HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`),
        ]);
      for (const bytes of [Buffer.from([0xff, 0xfe]), Buffer.from([0x01]), Buffer.from([0x7f])]) {
        const response = await rawRequest(server, line(Buffer.concat([Buffer.from(`${endpoint.path}?x=`), bytes])));
        expectRawDocumented(undefined, response, `${endpoint.name} request line with ${bytes.toString('hex')}`, [400]);
      }
      const header = Buffer.from(
        `${endpoint.method} ${endpoint.path} HTTP/1.1\r\nHost: x\r\nX-Test: a\x01b\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`,
      );
      expectRawDocumented(undefined, await rawRequest(server, header), `${endpoint.name} header with 01`, [400]);
    },
  );
});

describe('huge headers', () => {
  it.each(ENDPOINTS.map((e) => [e.name, e] as const))(
    '%s with a 20 KB header answers 431 in the documented JSON shape and closes the connection',
    async (_name, endpoint) => {
      const response = await rawRequest(
        server,
        `${endpoint.method} ${endpoint.path} HTTP/1.1\r\nHost: x\r\nX-Padding: ${'a'.repeat(20_000)}\r\nContent-Length: 0\r\n\r\n`,
      );
      expect(response.status, response.head).toBe(431);
      expect(response.headers['content-type']).toMatch(/^application\/json/);
      expect(response.headers.connection).toBe('close');
      const body = JSON.parse(rawBody(response)) as Record<string, unknown>;
      expect(body).toEqual({ error: 'invalid_request', error_description: expect.any(String) });
      expect(rawBody(response)).not.toMatch(LEAK);
    },
  );

  it('many small headers adding up to 20 KB, and a 20 KB cookie, answer 431 too', async () => {
    const many = Array.from({ length: 400 }, (_, i) => `X-H${i}: ${'b'.repeat(50)}`).join('\r\n');
    expect((await rawRequest(server, `GET /authorize HTTP/1.1\r\nHost: x\r\n${many}\r\n\r\n`)).status).toBe(431);
    expect(
      (
        await rawRequest(
          server,
          `POST /authorize/continue HTTP/1.1\r\nHost: x\r\nCookie: agentauth_browser=${'c'.repeat(20_000)}\r\nContent-Length: 0\r\n\r\n`,
        )
      ).status,
    ).toBe(431);
  });
});

describe('arrays or objects where strings belong', () => {
  const WRONG_TYPES: unknown[] = [['x'], [], { value: 'x' }, {}, 42, 0, true, null, 1e308];

  it.each(BODY_PARSING.map((e) => [e.name, e] as const))(
    '%s with a JSON array, object, number, boolean or null in any string field gets a documented 400',
    async (_name, endpoint) => {
      const fields = plausibleFields(endpoint);
      for (const name of Object.keys(fields)) {
        for (const value of WRONG_TYPES) {
          const response = await post(endpoint.path, JSON.stringify({ ...fields, [name]: value }), 'application/json');
          await expectDocumented(endpoint, response, `${name}=${JSON.stringify(value)}`, [400]);
        }
      }
    },
  );

  it.each(BODY_PARSING.map((e) => [e.name, e] as const))(
    '%s with a JSON body that is not an object gets a documented 400',
    async (_name, endpoint) => {
      for (const body of ['[]', '[{"request_id":"x"}]', '"request_id"', '42', 'true', 'null']) {
        await expectDocumented(endpoint, await post(endpoint.path, body, 'application/json'), `body ${body}`, [400]);
      }
    },
  );

  it('bracketed (PHP/qs style) names in queries and forms are not parsed into objects: documented answers', async () => {
    await expectErrorPage(
      await get('/authorize', `${query(authorizeQuery({ client_id: undefined }))}&client_id[]=${party.clientId}`),
      400,
      'invalid_request',
    );
    await expectErrorPage(
      await get('/authorize', `${query(authorizeQuery({ state: undefined }))}&state[a]=1`),
      400,
      'invalid_request',
    );
    await expectJsonError(await get('/api/check-status', 'request_id[]=req_x'), 400, 'invalid_request');
    await expectErrorPage(
      await post('/authorize/continue', 'request_id[]=req_x', 'application/x-www-form-urlencoded'),
      400,
      'invalid_request',
    );
    await expectJsonError(
      await post(
        '/token',
        `grant_type[]=authorization_code&client_id=${party.clientId}`,
        'application/x-www-form-urlencoded',
      ),
      400,
      'invalid_request',
    );
  });
});

describe('__proto__ and constructor keys (prototype pollution)', () => {
  const polluted = () => ({}) as Record<string, unknown>;
  afterAll(() => {
    // The server runs in this process: any pollution would show here.
    expect(polluted().polluted).toBeUndefined();
    expect(polluted().isAdmin).toBeUndefined();
  });

  it.each(BODY_PARSING.map((e) => [e.name, e] as const))(
    '%s with __proto__ or constructor.prototype in a JSON body gets a documented 400 and pollutes nothing',
    async (_name, endpoint) => {
      const fields = JSON.stringify(plausibleFields(endpoint)).slice(1, -1);
      for (const body of [
        `{"__proto__":{"polluted":"yes","isAdmin":true},${fields}}`,
        `{"constructor":{"prototype":{"polluted":"yes"}},${fields}}`,
        `{${fields},"nested":{"__proto__":{"polluted":"yes"}}}`,
      ]) {
        await expectDocumented(endpoint, await post(endpoint.path, body, 'application/json'), body.slice(0, 60), [400]);
        expect(polluted().polluted).toBeUndefined();
      }
    },
  );

  it('__proto__, constructor, prototype and Object.prototype names in queries and forms get documented answers and pollute nothing', async () => {
    const junk =
      '__proto__=x&__proto__[polluted]=yes&constructor=y&constructor[prototype][polluted]=yes&prototype=z&hasOwnProperty=1&toString=1&valueOf=1&__defineGetter__=1';
    await expectDocumented(
      ENDPOINTS[0]!,
      await get('/authorize', `${junk}&${query(authorizeQuery())}`),
      'authorize + junk',
      [200],
    );
    await expectDocumented(ENDPOINTS[0]!, await get('/authorize', junk), 'authorize junk only', [400]);
    const started = await startFlow(server, party);
    await expectDocumented(
      ENDPOINTS[1]!,
      await post(
        '/authorize/continue',
        `${junk}&request_id=${started.requestId}`,
        'application/x-www-form-urlencoded',
        { cookie: started.cookie },
      ),
      'continue + junk',
      [200],
    );
    await expectDocumented(
      ENDPOINTS[3]!,
      await get('/api/check-status', `${junk}&request_id=${started.requestId}`),
      'check-status + junk',
      [200],
    );
    await expectDocumented(ENDPOINTS[3]!, await get('/api/check-status', junk), 'check-status junk only', [400]);
    for (const endpoint of POST_ENDPOINTS.filter((e) => e.body === 'form-or-json')) {
      await expectDocumented(
        endpoint,
        await post(
          endpoint.path,
          `${junk}&${new URLSearchParams(plausibleFields(endpoint)).toString()}`,
          'application/x-www-form-urlencoded',
        ),
        `${endpoint.path} + junk`,
        [200, 400, 401],
      );
    }
    for (const endpoint of WELL_KNOWN) await expectDocumented(endpoint, await get(endpoint.path, junk), 'junk', [200]);
    await expectJsonError(await get('/userinfo', junk), 401, 'invalid_token');
    // Agent fields named like Object.prototype members.
    const body =
      '{"toString":"x","valueOf":{},"hasOwnProperty":1,"request_id":"req_x","agent_id":"agt_x","agent_secret":"s","model":"m"}';
    await expectJsonError(await post('/api/agent/authenticate', body, 'application/json'), 401, 'invalid_credentials');
    for (const value of ['__proto__', 'constructor', 'toString', 'hasOwnProperty']) {
      await expectJsonError(await get('/api/check-status', `request_id=${value}`), 404, 'not_found', value);
      await expectErrorPage(
        await get('/authorize', query(authorizeQuery({ client_id: value }))),
        400,
        'invalid_client',
        value,
      );
      await expectJsonError(
        await post(
          '/api/agent/authenticate',
          JSON.stringify({ request_id: value, agent_id: value, agent_secret: value, model: value }),
          'application/json',
        ),
        401,
        'invalid_credentials',
        value,
      );
    }
    expect(polluted().polluted).toBeUndefined();
  });

  it('/assets/ names of Object.prototype members are 404, not an empty 200', async () => {
    for (const name of ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf']) {
      await expectJsonError(await get(`/assets/${name}`, ''), 404, 'not_found', name);
    }
    expect((await get('/assets/authorize.js', '')).status).toBe(200);
  });
});

// ---------------------------------------------------------------------------------------------
// Properties for the two endpoints test/properties.test.ts does not generate input for

const printable = (maxLength: number) =>
  fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength });
const anyText = (maxLength: number) =>
  fc.string({
    unit: fc.oneof(
      { weight: 8, arbitrary: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)) },
      { weight: 1, arbitrary: fc.integer({ min: 0, max: 0x9f }).map((c) => String.fromCharCode(c)) },
      { weight: 1, arbitrary: fc.constantFrom('é', '\u202e', '\ufeff', '\ud800', '🙂', '\u2028') },
    ),
    maxLength,
  });

describe('POST /authorize/continue with generated forms, cookies and origins (fast-check)', () => {
  type Kind = 'pending' | 'authenticated' | 'manual' | 'unknown';
  let manualParty: Party;
  beforeAll(async () => {
    manualParty = { ...party, ...(await server.createClient({ approval: 'manual' })) };
  });

  const scenario = fc.record({
    kind: fc.constantFrom<Kind>('pending', 'authenticated', 'authenticated', 'manual', 'unknown'),
    requestId: fc.oneof(
      { weight: 6, arbitrary: fc.constant<'real' | string>('real') },
      { weight: 1, arbitrary: anyText(40) },
      { weight: 1, arbitrary: fc.string({ maxLength: 140 }) },
    ),
    action: fc.oneof(
      { weight: 3, arbitrary: fc.constantFrom<string | undefined>(undefined, 'approve', 'cancel') },
      { weight: 1, arbitrary: anyText(12) },
    ),
    confirmed: fc.oneof(
      { weight: 3, arbitrary: fc.constantFrom<string | undefined>(undefined, '1') },
      { weight: 1, arbitrary: anyText(12) },
    ),
    repeat: fc.option(fc.constantFrom('request_id', 'action', 'confirmed'), { freq: 6, nil: undefined }),
    extra: fc.array(
      fc.tuple(
        fc.oneof(
          fc.constantFrom('__proto__', 'constructor', 'code', 'state', 'redirect_uri', 'toString'),
          printable(10).filter((n) => !['request_id', 'action', 'confirmed'].includes(n)),
        ),
        anyText(20),
      ),
      { maxLength: 3 },
    ),
    cookie: fc.constantFrom('own', 'own', 'own', 'other', 'none', 'garbage', 'digest'),
    origin: fc.constantFrom<string | undefined>(
      undefined,
      undefined,
      'base',
      'null',
      'https://evil.example',
      'http://localhost:8080',
    ),
    site: fc.constantFrom<string | undefined>(
      undefined,
      undefined,
      'same-origin',
      'none',
      'cross-site',
      'same-site',
      'bogus',
    ),
  });

  it('never 5xx; a 302 only for the right browser, from our own site, to the registered redirect URI; otherwise a page or the HTML error page', async () => {
    const bystander = await startFlow(server, party);
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        const who = s.kind === 'manual' ? manualParty : party;
        const started = s.kind === 'unknown' ? undefined : await startFlow(server, who);
        if (started && s.kind !== 'pending')
          expect((await authenticate(server, who, started.requestId)).status).toBe(200);
        const realId = started?.requestId ?? 'req_unknown000000000000000000000000';
        const requestId = s.requestId === 'real' ? realId : s.requestId;

        const form = new URLSearchParams();
        form.append('request_id', requestId);
        if (s.action !== undefined) form.append('action', s.action);
        if (s.confirmed !== undefined) form.append('confirmed', s.confirmed);
        if (s.repeat)
          form.append(s.repeat, s.repeat === 'request_id' ? requestId : s.repeat === 'action' ? 'approve' : '1');
        for (const [name, value] of s.extra) form.append(name, value);

        const cookieName = bystander.cookie.split('=')[0]!;
        const stored = started && (await server.ctx.store.requests.find(started.requestId));
        const cookie = {
          own: started?.cookie,
          other: bystander.cookie,
          none: undefined,
          garbage: `${cookieName}=garbage`,
          digest: stored ? `${cookieName}=${stored.browser_digest}` : undefined,
        }[s.cookie];
        const headers: Record<string, string> = {};
        if (cookie) headers.cookie = cookie;
        if (s.origin) headers.origin = s.origin === 'base' ? new URL(server.baseUrl).origin : s.origin;
        if (s.site) headers['sec-fetch-site'] = s.site;

        const response = await post(
          '/authorize/continue',
          form.toString(),
          'application/x-www-form-urlencoded',
          headers,
        );
        const text = await response.text();
        const context = `${JSON.stringify(s)} headers=${JSON.stringify(headers)}\n→ ${response.status} ${response.headers.get('location') ?? ''} ${text.slice(0, 300)}`;
        expect(response.status, context).toBeLessThan(500);
        expect(text, context).not.toMatch(LEAK);

        // What the rules decide, from the form as sent.
        const wellFormed = (v: string) => Buffer.from(v, 'utf8').toString('utf8');
        const sent = (name: string) => form.getAll(name).map(wellFormed);
        const [ids, actions, confirmations] = [sent('request_id'), sent('action'), sent('confirmed')];
        const schemaOk =
          ids.length === 1 &&
          ids[0]!.length >= 1 &&
          [...ids[0]!].length <= 128 &&
          // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it looks for
          !/[\u0000-\u001f\u007f]/.test(ids[0]!) &&
          actions.length <= 1 &&
          (actions.length === 0 || actions[0] === 'approve' || actions[0] === 'cancel') &&
          confirmations.length <= 1 &&
          (confirmations.length === 0 || [...confirmations[0]!].length <= 8);
        const crossSite =
          (s.site !== undefined && s.site !== 'same-origin' && s.site !== 'none') ||
          (headers.origin !== undefined &&
            headers.origin !== 'null' &&
            headers.origin !== new URL(server.baseUrl).origin);
        const real = started !== undefined && requestId === started.requestId;
        const ownBrowser = s.cookie === 'own' && started !== undefined;

        if (response.status === 302) {
          expect(schemaOk && !crossSite && real && ownBrowser, context).toBe(true);
          const location = response.headers.get('location')!;
          expect(location.startsWith(`${who.redirectUri}?`), context).toBe(true);
          expect(new URL(location).searchParams.get('iss'), context).toBe(server.baseUrl);
          return;
        }
        expect(response.headers.get('location'), context).toBeNull();
        expect(response.headers.get('content-type') ?? '', context).toMatch(/^text\/html/);
        if (response.status === 200) {
          expect(metaContent(text, 'request-id'), context).toBe(started?.requestId);
          expect(schemaOk && !crossSite && real && ownBrowser, context).toBe(true);
        } else {
          expect(
            ['invalid_request', 'access_denied', 'request_already_used', 'invalid_client', 'request_expired'],
            context,
          ).toContain(metaContent(text, 'error'));
          expect(metaContent(text, 'request-id'), context).toBeUndefined();
        }
        // A post from another site is refused before its body is looked at.
        if (crossSite) expect(response.status, context).toBe(403);
        else if (!schemaOk) expect(response.status, context).toBe(400);
        else if (!real) expect([400, 403], context).toContain(response.status);
        else if (!ownBrowser) expect(response.status, context).toBe(403);
        else {
          const action = actions[0] ?? 'approve';
          const expected =
            action === 'cancel'
              ? 302
              : s.kind === 'pending'
                ? 200
                : s.kind === 'manual' && confirmations[0] !== '1'
                  ? 200
                  : 302;
          expect(response.status, context).toBe(expected);
        }
      }),
      { numRuns: 150 },
    );
  });
});

describe('/.well-known documents with generated methods, queries and headers (fast-check)', () => {
  const headerValue = fc.string({
    unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
    maxLength: 60,
  });
  const request = fc.record({
    endpoint: fc.constantFrom(...WELL_KNOWN),
    method: fc.constantFrom('GET', 'GET', 'GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'),
    query: fc.array(fc.tuple(anyText(12), anyText(30)), { maxLength: 4 }),
    rawSuffix: fc.constantFrom('', '', '&', '%', '%zz', '&&=', '#frag', '/..', '/', ';a=b'),
    headers: fc.dictionary(
      fc.constantFrom(
        'accept',
        'origin',
        'cookie',
        'authorization',
        'if-none-match',
        'if-modified-since',
        'range',
        'x-forwarded-host',
        'x-forwarded-proto',
        'accept-language',
        'content-type',
      ),
      headerValue,
      { maxKeys: 4 },
    ),
    body: fc.option(
      fc.oneof(
        anyText(60),
        fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v)),
      ),
      { nil: undefined },
    ),
  });

  it('GET and HEAD answer exactly the document, without CORS headers; other methods a JSON 4xx; never a 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        const params = new URLSearchParams();
        for (const [name, value] of r.query) params.append(name, value);
        const qs = params.toString();
        // '/..' and '/' change the path (404); the others are appended to the query string.
        const otherPath = r.rawSuffix.startsWith('/');
        const url = otherPath
          ? `${server.baseUrl}${r.endpoint.path}${r.rawSuffix}`
          : `${server.baseUrl}${r.endpoint.path}${qs || r.rawSuffix ? `?${qs}${r.rawSuffix}` : ''}`;
        const hasBody = r.body !== undefined && !['GET', 'HEAD'].includes(r.method);
        let response: Response;
        try {
          response = await fetch(url, {
            method: r.method,
            headers: r.headers,
            body: hasBody ? r.body : undefined,
            redirect: 'manual',
          });
        } catch (error) {
          if (error instanceof TypeError && /header|method/i.test(`${error.message} ${String(error.cause)}`)) return; // fetch refused to send it
          throw error;
        }
        const text = await response.text();
        const context = `${r.method} ${url} headers=${JSON.stringify(r.headers)} body=${JSON.stringify(r.body)}\n→ ${response.status} ${text.slice(0, 300)}`;
        expect(response.status, context).toBeLessThan(500);
        expect(text, context).not.toMatch(LEAK);
        expect(corsHeaders(response), context).toEqual([]);
        expect(response.headers.get('location'), context).toBeNull();
        if ((r.method === 'GET' || r.method === 'HEAD') && !otherPath) {
          expect(response.status, context).toBe(200);
          expect(response.headers.get('content-type') ?? '', context).toMatch(/^application\/json/);
          if (r.method === 'GET') expect(JSON.parse(text), context).toEqual(documents()[r.endpoint.path]);
          return;
        }
        if (response.status === 200) {
          expect(r.method === 'GET' || r.method === 'HEAD', context).toBe(true);
          return;
        }
        expect([400, 404, 413, 415], context).toContain(response.status);
        if (r.method !== 'HEAD') {
          const json = JSON.parse(text) as Record<string, unknown>;
          expect(Object.keys(json).sort(), context).toEqual(['error', 'error_description']);
        }
      }),
      { numRuns: 200 },
    );
  });
});

// ---------------------------------------------------------------------------------------------
// Dynamic registration (RFC 7591/7592): its routes exist only with DYNAMIC_REGISTRATION, so they
// get a server of their own rather than a place in ENDPOINTS (whose server runs the defaults).

describe('POST /register and GET|PUT|DELETE /register/:client_id (DYNAMIC_REGISTRATION=true)', () => {
  let dynamic: TestServer;
  /** A registered client, managed with its registration access token. */
  let client: { client_id: string; client_secret: string; registration_access_token: string };
  const REDIRECT = 'https://app.example/callback';

  beforeAll(async () => {
    dynamic = await startTestServer({
      env: { DYNAMIC_REGISTRATION: 'true', PUBLIC_CLIENTS: 'true', REGISTRATION_LIMIT_PER_IP: '100000' },
    });
    const response = await postJson(dynamic, '/register', { redirect_uris: [REDIRECT], client_name: 'Hostile input' });
    expect(response.status).toBe(201);
    client = (await response.json()) as typeof client;
  });
  afterAll(() => dynamic?.close());

  type Method = 'POST' | 'PUT' | 'GET' | 'DELETE';
  const path = (method: Method) => (method === 'POST' ? '/register' : `/register/${client.client_id}`);
  /** The bearer each method is sent with: the real token for PUT (so the body is what is judged), none for POST, a wrong one for GET and DELETE (nothing is deleted). */
  const bearer = (method: Method): Record<string, string> =>
    method === 'PUT'
      ? { authorization: `Bearer ${client.registration_access_token}` }
      : method === 'POST'
        ? {}
        : { authorization: 'Bearer rat_wrong' };
  function send(
    method: Method,
    body: string | Uint8Array | undefined,
    contentType: string | undefined,
    headers: Record<string, string> = {},
  ): Promise<Response> {
    return fetch(`${dynamic.baseUrl}${path(method)}`, {
      method,
      headers: { ...bearer(method), ...(contentType === undefined ? {} : { 'content-type': contentType }), ...headers },
      body:
        body === undefined
          ? undefined
          : typeof body === 'string'
            ? new TextEncoder().encode(body)
            : new Uint8Array(body),
      redirect: 'manual',
    });
  }
  /** A body the endpoint accepts in shape (PUT must name the client). */
  const fields = (method: Method): Record<string, unknown> => ({
    ...(method === 'PUT' ? { client_id: client.client_id } : {}),
    redirect_uris: [REDIRECT],
    client_name: 'Hostile input',
    token_endpoint_auth_method: 'client_secret_post',
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    scope: 'openid',
  });
  const BODY_METHODS: Method[] = ['POST', 'PUT'];
  const ALL_METHODS: Method[] = ['POST', 'PUT', 'GET', 'DELETE'];
  const REGISTRATION_ERRORS = ['invalid_request', 'invalid_client_metadata', 'invalid_redirect_uri'];

  it('the well-formed body of each method is accepted (the cases below differ from it in one thing)', async () => {
    for (const method of BODY_METHODS)
      expect((await send(method, JSON.stringify(fields(method)), 'application/json')).status, method).toBe(
        method === 'POST' ? 201 : 200,
      );
  });

  it.each(BODY_METHODS)(
    '%s: malformed JSON, a body that is not an object, wrong or missing content types, and bodies over 64 KiB get the documented 4xx',
    async (method) => {
      for (const body of [
        '{"redirect_uris":',
        "{'redirect_uris':[]}",
        '[1,2',
        '{"a":1}}',
        'NaN',
        '{"a":"\\x"}',
        '{"a":1,}',
        '\u0000{}',
        '{"a":"\ud800"',
      ]) {
        await expectJsonError(
          await send(method, body, 'application/json'),
          400,
          'invalid_request',
          `${method} ${JSON.stringify(body)}`,
        );
      }
      for (const body of ['[]', '"x"', '42', 'true', 'null', `[${JSON.stringify(fields(method))}]`]) {
        await expectJsonError(
          await send(method, body, 'application/json'),
          400,
          'invalid_client_metadata',
          `${method} ${body}`,
        );
      }
      for (const type of [
        undefined,
        'text/plain',
        'application/xml',
        'multipart/form-data; boundary=x',
        'application/octet-stream',
        ';;;',
        'application/jsonx',
        'application/x-www-form-urlencoded',
      ]) {
        await expectJsonError(
          await send(method, JSON.stringify(fields(method)), type),
          415,
          'invalid_request',
          `${method} ${type}`,
        );
      }
      const big = JSON.stringify({ ...fields(method), padding: 'x'.repeat(70_000) });
      await expectJsonError(await send(method, big, 'application/json'), 413, 'invalid_request', `${method} 70 KB`);
    },
  );

  it.each(BODY_METHODS)(
    '%s: a JSON array, object, number, boolean or wrong-typed element in any known field is a documented 400',
    async (method) => {
      for (const [name, good] of Object.entries(fields(method))) {
        const wrong: unknown[] = Array.isArray(good)
          ? ['x', {}, 42, true, [42], [null], [['x']], [{}]]
          : [['x'], [], {}, 42, 0, true, 1e308];
        for (const value of wrong) {
          const { error } = await expectJsonError(
            await send(method, JSON.stringify({ ...fields(method), [name]: value }), 'application/json'),
            400,
            undefined,
            `${method} ${name}=${JSON.stringify(value)}`,
          );
          expect(REGISTRATION_ERRORS, `${method} ${name}`).toContain(error);
        }
      }
    },
  );

  it.each(BODY_METHODS)(
    '%s: control characters, NUL, unpaired surrogates and over-long values in any string field are a documented 400',
    async (method) => {
      const strings = Object.entries(fields(method)).filter(
        ([, value]) => typeof value === 'string' || Array.isArray(value),
      );
      for (const [name, good] of strings) {
        for (const escaped of ['\\u0000', 'x\\u0000', '\\u001b', '\\u007f', '\\u0085', '\\ud800', '\\r\\n']) {
          const placeholder = Array.isArray(good) ? [`${good[0]}PLACEHOLDER`] : `${good}PLACEHOLDER`;
          const body = JSON.stringify({ ...fields(method), [name]: placeholder }).replace('PLACEHOLDER', escaped);
          const response = await send(method, body, 'application/json');
          const { error } = await expectJsonError(response, 400, undefined, `${method} ${name} with ${escaped}`);
          expect(REGISTRATION_ERRORS).toContain(error);
        }
        for (const bytes of [Buffer.from([0xff, 0xfe]), Buffer.from([0x00]), Buffer.from([0xed, 0xa0, 0x80])]) {
          const [head, tail] = JSON.stringify({
            ...fields(method),
            [name]: Array.isArray(good) ? ['PLACEHOLDER'] : 'PLACEHOLDER',
          }).split('PLACEHOLDER') as [string, string];
          const response = await send(
            method,
            Buffer.concat([Buffer.from(head), bytes, Buffer.from(tail)]),
            'application/json',
          );
          // Invalid UTF-8 is decoded as U+FFFD: a name may hold it, a scope or redirect URI may not.
          expect([200, 201, 400], `${method} ${name} raw ${bytes.toString('hex')}`).toContain(response.status);
          if (response.status >= 400)
            await expectJsonError(response, 400, undefined, `${method} ${name} raw ${bytes.toString('hex')}`);
        }
        const long = Array.isArray(good) ? [`${good[0]}${'a'.repeat(2100)}`] : 'a'.repeat(2100);
        await expectJsonError(
          await send(method, JSON.stringify({ ...fields(method), [name]: long }), 'application/json'),
          400,
          undefined,
          `${method} ${name} over-long`,
        );
      }
    },
  );

  it.each(BODY_METHODS)(
    '%s: __proto__ and constructor.prototype in the body get a documented 400 and pollute nothing; Object.prototype names as fields are ignored',
    async (method) => {
      const inner = JSON.stringify(fields(method)).slice(1, -1);
      for (const body of [
        `{"__proto__":{"polluted":"yes"},${inner}}`,
        `{"constructor":{"prototype":{"polluted":"yes"}},${inner}}`,
        `{${inner},"nested":{"__proto__":{"polluted":"yes"}}}`,
      ]) {
        await expectJsonError(
          await send(method, body, 'application/json'),
          400,
          'invalid_request',
          `${method} ${body.slice(0, 40)}`,
        );
      }
      const named = await send(
        method,
        JSON.stringify({ ...fields(method), toString: 'x', valueOf: {}, hasOwnProperty: 1 }),
        'application/json',
      );
      expect(named.status).toBe(method === 'POST' ? 201 : 200);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    },
  );

  it('GET, PUT and DELETE with hostile client ids and bearer tokens answer 401 invalid_token (or a 4xx for an unusable path), never 5xx', async () => {
    // (No '..': fetch resolves it before sending, so the request would not reach /register.)
    const ids = [
      'x',
      '__proto__',
      'constructor',
      'toString',
      '%00',
      'cli_%00x',
      '%FF%FE',
      '%ED%A0%80',
      '%0D%0ASet-Cookie:%20a=b',
      'a'.repeat(600),
      `${client.client_id}%20`,
      `${client.client_id}/x`,
    ];
    for (const method of ['GET', 'PUT', 'DELETE'] as const) {
      for (const id of ids) {
        const response = await fetch(`${dynamic.baseUrl}/register/${id}`, {
          method,
          headers: {
            authorization: `Bearer ${client.registration_access_token}`,
            ...(method === 'PUT' ? { 'content-type': 'application/json' } : {}),
          },
          body: method === 'PUT' ? JSON.stringify(fields('PUT')) : undefined,
        });
        await expectJsonError(response, [400, 401, 404], undefined, `${method} /register/${id.slice(0, 40)}`);
      }
      for (const authorization of [
        `Bearer ${'a'.repeat(12_000)}`,
        'Bearer',
        'Bearer  ',
        `bearer ${client.registration_access_token} x`,
        `Basic ${client.registration_access_token}`,
        `Bearer ${client.registration_access_token},Bearer x`,
      ]) {
        const response = await fetch(`${dynamic.baseUrl}/register/${client.client_id}`, {
          method,
          headers: { authorization },
        });
        await expectJsonError(response, 401, 'invalid_token', `${method} Authorization ${authorization.slice(0, 30)}`);
      }
      const longPath = await fetch(`${dynamic.baseUrl}/register/${'a'.repeat(2000)}`, {
        method,
        headers: bearer(method),
      });
      await expectJsonError(longPath, [401, 404, 414], undefined, `${method} 2000-character client id`);
    }
    // Two Authorization headers, a raw control byte or obs-text in one: documented answers.
    const twice = await rawRequest(
      dynamic,
      `GET /register/${client.client_id} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer rat_wrong\r\nAuthorization: Bearer ${client.registration_access_token}\r\nConnection: close\r\n\r\n`,
    );
    expect(twice.status).toBe(401);
    for (const bytes of [Buffer.from([0xff, 0xfe]), Buffer.from([0x01])]) {
      const raw = await rawRequest(
        dynamic,
        Buffer.concat([
          Buffer.from(`GET /register/${client.client_id} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer rat_`),
          bytes,
          Buffer.from('\r\nConnection: close\r\n\r\n'),
        ]),
      );
      expect([400, 401], bytes.toString('hex')).toContain(raw.status);
      expect(JSON.parse(rawBody(raw))).toEqual({ error: expect.any(String), error_description: expect.any(String) });
    }
    // The client is untouched.
    expect((await dynamic.ctx.store.clients.find(client.client_id))?.redirect_uris).toEqual([REDIRECT]);
  });

  it.each(ALL_METHODS)(
    '%s: a raw control byte in the request line or a header is a JSON 400; a 20 KB header a JSON 431',
    async (method) => {
      for (const bytes of [Buffer.from([0xff, 0xfe]), Buffer.from([0x01]), Buffer.from([0x7f])]) {
        const raw = await rawRequest(
          dynamic,
          Buffer.concat([
            Buffer.from(`${method} ${path(method)}?x=`),
            bytes,
            Buffer.from(' HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n'),
          ]),
        );
        expect(raw.status, bytes.toString('hex')).toBe(400);
        expect(JSON.parse(rawBody(raw))).toEqual({ error: 'invalid_request', error_description: expect.any(String) });
      }
      const huge = await rawRequest(
        dynamic,
        `${method} ${path(method)} HTTP/1.1\r\nHost: x\r\nX-Padding: ${'a'.repeat(20_000)}\r\nContent-Length: 0\r\n\r\n`,
      );
      expect(huge.status).toBe(431);
      expect(rawBody(huge)).not.toMatch(LEAK);
    },
  );

  it('POST /register with generated metadata (fast-check): never 5xx; 201 with the registered metadata or 400 with an RFC 7591 error', async () => {
    // Mostly plausible values, so that both answers occur; now and then a hostile one.
    const mostly = <T, U>(plausible: fc.Arbitrary<T>, hostile: fc.Arbitrary<U>) =>
      fc.oneof({ weight: 4, arbitrary: plausible }, { weight: 1, arbitrary: hostile });
    const uri = fc.oneof(
      fc.constantFrom(
        REDIRECT,
        'http://127.0.0.1/cb',
        'http://app.example/cb',
        'https://app.example/cb#x',
        'com.app:/cb',
        '',
        'https://a.example/cb?state=1',
      ),
      fc.webUrl({ withFragments: true, withQueryParameters: true }),
      anyText(40),
    );
    const metadata = fc.record(
      {
        redirect_uris: mostly(
          fc.array(
            fc.constantFrom(REDIRECT, 'http://127.0.0.1/cb', 'http://localhost:8080/cb', 'https://app.example/cb?x=1'),
            { minLength: 1, maxLength: 3 },
          ),
          fc.oneof(fc.array(uri, { maxLength: 12 }), fc.jsonValue({ maxDepth: 1 })),
        ),
        client_name: mostly(printable(30), fc.oneof(anyText(30), fc.constant(null), fc.jsonValue({ maxDepth: 1 }))),
        token_endpoint_auth_method: mostly(
          fc.constantFrom('client_secret_post', 'client_secret_basic', 'none'),
          fc.constantFrom('private_key_jwt', '', null, 7),
        ),
        grant_types: mostly(
          fc.constantFrom(['authorization_code'], ['authorization_code', 'refresh_token']),
          fc.oneof(
            fc.subarray(['authorization_code', 'refresh_token', 'implicit', 'client_credentials']),
            fc.constant(null),
          ),
        ),
        response_types: mostly(
          fc.constant(['code']),
          fc.oneof(fc.subarray(['code', 'token', 'id_token']), fc.constant(null)),
        ),
        scope: mostly(
          fc.constantFrom('openid', 'email profile', 'openid email profile'),
          fc.oneof(fc.constantFrom('openid offline_access', '', 'admin'), anyText(20), fc.constant(null)),
        ),
        logo_uri: fc.oneof(
          fc.constantFrom('', 'https://a.example/logo.png', 'javascript:x'),
          fc.jsonValue({ maxDepth: 1 }),
        ),
        an_extension: fc.jsonValue({ maxDepth: 2 }),
      },
      { requiredKeys: [] },
    );
    const seen = new Set<number>();
    await fc.assert(
      fc.asyncProperty(metadata, async (body) => {
        const response = await send('POST', JSON.stringify(body), 'application/json');
        const text = await response.text();
        const context = `${JSON.stringify(body)}\n→ ${response.status} ${text.slice(0, 300)}`;
        expect([201, 400], context).toContain(response.status);
        seen.add(response.status);
        expect(text, context).not.toMatch(LEAK);
        expect(response.headers.get('cache-control'), context).toBe('no-store');
        const json = JSON.parse(text) as Record<string, unknown>;
        if (response.status === 400) {
          expect(Object.keys(json).sort(), context).toEqual(['error', 'error_description']);
          expect(REGISTRATION_ERRORS, context).toContain(json.error);
          return;
        }
        // What was registered: the redirect URIs as sent (each once) less any app-scheme URI, which
        // is left out (a desktop host sends one beside its loopback URI); nothing empty, no display links.
        const webUris = (body.redirect_uris as string[]).filter((each) =>
          ['http:', 'https:'].includes(URL.parse(each)?.protocol ?? ''),
        );
        expect(json.redirect_uris, context).toEqual([...new Set(webUris)]);
        expect(
          Object.values(json).every((value) => value !== ''),
          context,
        ).toBe(true);
        expect(json, context).not.toHaveProperty('logo_uri');
        expect(['client_secret_post', 'none'], context).toContain(json.token_endpoint_auth_method);
      }),
      { numRuns: 150 },
    );
    expect([...seen].sort()).toEqual([201, 400]);
  });
});
