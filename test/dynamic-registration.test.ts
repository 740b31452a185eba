/**
 * Dynamic Client Registration (RFC 7591) and its management protocol (RFC 7592), opt-in with
 * DYNAMIC_REGISTRATION (docs/reference/dynamic-registration.md): registration of confidential and public
 * clients that then sign in end to end, metadata checks, reading, updating and deleting with the
 * registration access token, what deletion revokes, throttling, and the routes' absence when the
 * setting is off.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { digest } from '../src/crypto.ts';
import {
  deleteDynamicClient,
  readDynamicClient,
  registerDynamicClient,
  type RegistrationResponse,
  updateDynamicClient,
} from '../src/domain/registration.ts';
import {
  authenticate,
  authorizeUrl,
  continueFlow,
  obtainCode,
  obtainTokens,
  type Party,
  pkcePair,
  postForm,
  postJson,
  redeem,
  startFlow,
  type Tokens,
} from './helpers/flow.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { expectErrorPage, expectJsonError } from './security/support.ts';

const ENV = { DYNAMIC_REGISTRATION: 'true', PUBLIC_CLIENTS: 'true', REGISTRATION_LIMIT_PER_IP: '100000' };
const REDIRECT_URI = 'https://app.example/callback';
const GRANT_TYPES = ['authorization_code', 'refresh_token'];

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ env: ENV });
});
afterAll(() => server?.close());

const register = (target: TestServer, metadata: unknown) => postJson(target, '/register', metadata);

/** GET, PUT or DELETE on a client's configuration endpoint, with the token as a bearer when given. */
function manage(
  target: TestServer,
  method: 'GET' | 'PUT' | 'DELETE',
  clientId: string,
  token?: string,
  body?: unknown,
): Promise<Response> {
  return fetch(`${target.baseUrl}/register/${encodeURIComponent(clientId)}`, {
    method,
    headers: {
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

async function registered(metadata: Record<string, unknown>, target = server): Promise<RegistrationResponse> {
  const response = await register(target, metadata);
  const text = await response.text();
  expect(response.status, text).toBe(201);
  return JSON.parse(text) as RegistrationResponse;
}

/** Every string anywhere in the answer is non-empty: a stock client rejects "" where a URI belongs. */
function expectNoEmptyStrings(value: unknown, path = 'body'): void {
  if (typeof value === 'string') expect(value, path).not.toBe('');
  else if (Array.isArray(value))
    for (const [index, item] of value.entries()) expectNoEmptyStrings(item, `${path}[${index}]`);
  else if (typeof value === 'object' && value !== null)
    for (const [key, item] of Object.entries(value)) expectNoEmptyStrings(item, `${path}.${key}`);
}

function expectNoStore(response: Response, what = ''): void {
  expect(response.headers.get('cache-control'), what).toBe('no-store');
  expect(response.headers.get('pragma'), what).toBe('no-cache');
}

/** What GET and PUT answer: the registration response without the secret, which is shown once. */
const withoutSecret = ({ client_secret: _secret, ...rest }: RegistrationResponse) => rest;

async function partyOf(client: RegistrationResponse, redirectUri = client.redirect_uris[0]!): Promise<Party> {
  return {
    clientId: client.client_id,
    clientSecret: client.client_secret ?? '',
    redirectUri,
    ...(await server.createAgent()),
  };
}

describe('registration (RFC 7591)', () => {
  it('registers a confidential client: 201 with the registered metadata, its secret and registration access token, no empty strings; it signs in end to end', async () => {
    const response = await register(server, {
      redirect_uris: [REDIRECT_URI],
      client_name: 'Acme Notes',
      grant_types: GRANT_TYPES,
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_post',
      scope: 'openid email',
      // Accepted and not registered: none of them comes back, and never as "".
      client_uri: 'https://app.example',
      logo_uri: '',
      tos_uri: 'not a url',
      policy_uri: null,
      contacts: ['ops@app.example'],
      software_id: 'acme-notes',
      jwks: { keys: [] },
      an_extension: { nested: [1, 2] },
    });
    expect(response.status).toBe(201);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expectNoStore(response);
    const client = (await response.json()) as RegistrationResponse;
    expect(client).toEqual({
      client_id: expect.stringMatching(/^cli_[\w-]+$/),
      client_secret: expect.stringMatching(/^cls_[\w-]{43}$/),
      client_id_issued_at: server.clock(),
      client_secret_expires_at: 0,
      registration_access_token: expect.stringMatching(/^rat_[\w-]{43}$/),
      registration_client_uri: `${server.baseUrl}/register/${client.client_id}`,
      client_name: 'Acme Notes',
      redirect_uris: [REDIRECT_URI],
      grant_types: GRANT_TYPES,
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_post',
      scope: 'openid email profile',
    });
    expectNoEmptyStrings(client);

    const record = await server.ctx.store.clients.find(client.client_id);
    expect(record).toMatchObject({
      name: 'Acme Notes',
      source: 'dynamic',
      status: 'active',
      approval: 'auto',
      token_endpoint_auth_method: 'client_secret_post',
      registration_token_digest: digest(client.registration_access_token),
    });
    expect(JSON.stringify(record)).not.toContain(client.registration_access_token);
    expect(JSON.stringify(record)).not.toContain(client.client_secret);

    const tokens = await obtainTokens(server, await partyOf(client));
    expect(tokens.id_token).toEqual(expect.any(String));
    expect(tokens.scope).toBe('openid email profile');
  });

  it('registers a public client (none) while PUBLIC_CLIENTS is on: no secret; it signs in and refreshes with its client_id alone', async () => {
    const client = await registered({
      redirect_uris: ['http://127.0.0.1/callback'],
      token_endpoint_auth_method: 'none',
      client_name: 'Desktop MCP client',
    });
    expect(client.token_endpoint_auth_method).toBe('none');
    expect(client).not.toHaveProperty('client_secret');
    expect(client).not.toHaveProperty('client_secret_expires_at');
    expectNoEmptyStrings(client);

    const party = await partyOf(client);
    const started = await startFlow(server, party);
    expect((await authenticate(server, party, started.requestId)).status).toBe(200);
    const redirect = await continueFlow(server, started);
    expect(redirect.status).toBe(302);
    const code = new URL(redirect.headers.get('location')!).searchParams.get('code')!;
    const exchanged = await postForm(server, '/token', {
      grant_type: 'authorization_code',
      code,
      code_verifier: started.verifier,
      client_id: client.client_id,
      redirect_uri: party.redirectUri,
    });
    expect(exchanged.status).toBe(200);
    const tokens = (await exchanged.json()) as Tokens;
    const refreshed = await postForm(server, '/token', {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
      client_id: client.client_id,
    });
    expect(refreshed.status).toBe(200);
    // What it is registered for says what it gets: no openid for a public client.
    expect(client.scope).toBe('email profile');
    expect(tokens.scope).toBe('email profile');
  });

  it("leaves an app-scheme redirect URI out when others remain (Cursor's registration) and signs in on the loopback one", async () => {
    // What Cursor's dynamic registration sends (its MCP OAuth flow, 2026): an app scheme, its
    // hosted callback and a loopback one, in one request.
    const client = await registered({
      client_name: 'Cursor',
      redirect_uris: [
        'cursor://anysphere.cursor-mcp/oauth/callback',
        'https://www.cursor.com/agents/mcp/oauth/callback',
        'http://localhost:8787/callback',
      ],
      grant_types: GRANT_TYPES,
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    });
    expect(client.redirect_uris).toEqual([
      'https://www.cursor.com/agents/mcp/oauth/callback',
      'http://localhost:8787/callback',
    ]);
    const stored = await server.ctx.store.clients.find(client.client_id);
    expect(stored?.redirect_uris).toEqual(client.redirect_uris);

    const party = await partyOf(client, 'http://localhost:8787/callback');
    const started = await startFlow(server, party);
    expect((await authenticate(server, party, started.requestId)).status).toBe(200);
    const redirect = await continueFlow(server, started);
    expect(redirect.status).toBe(302);
    expect(redirect.headers.get('location')).toMatch(/^http:\/\/localhost:8787\/callback\?code=/);

    // The app-scheme URI itself was not registered: /authorize refuses it on a page, never a redirect.
    const refused = await fetch(
      authorizeUrl(server, {
        response_type: 'code',
        client_id: client.client_id,
        redirect_uri: 'cursor://anysphere.cursor-mcp/oauth/callback',
        state: 'st',
        code_challenge: pkcePair().challenge,
        code_challenge_method: 'S256',
      }),
      { redirect: 'manual' },
    );
    expect(refused.status).toBe(400);
    expect(refused.headers.get('location')).toBeNull();
  });

  it('still refuses a set of app-scheme URIs only, and an http URI on a public host beside them', async () => {
    for (const redirect_uris of [
      ['cursor://anysphere.cursor-mcp/oauth/callback'],
      ['cursor://anysphere.cursor-mcp/oauth/callback', 'http://evil.example/cb'],
    ]) {
      const response = await register(server, { redirect_uris, token_endpoint_auth_method: 'none' });
      await expectJsonError(response, 400, 'invalid_redirect_uri');
    }
  });

  it('registers a client that asks for scopes this server does not issue, answering the scope it registered', async () => {
    const client = await registered({ redirect_uris: [REDIRECT_URI], scope: 'openid email offline_access mcp:tools' });
    expect(client.scope).toBe('openid email profile');
  });

  it('defaults: the redirect host as client_name, client_secret_post when no method is named; client_secret_basic is answered with client_secret_post (RFC 7591 §3.2.1)', async () => {
    const plain = await registered({ redirect_uris: ['https://notes.example/cb', 'https://notes.example/cb'] });
    expect(plain).toMatchObject({
      client_name: 'notes.example',
      redirect_uris: ['https://notes.example/cb'],
      token_endpoint_auth_method: 'client_secret_post',
      grant_types: GRANT_TYPES,
      response_types: ['code'],
    });
    expect(plain.client_secret).toMatch(/^cls_/);

    const basic = await registered({
      redirect_uris: [REDIRECT_URI],
      token_endpoint_auth_method: 'client_secret_basic',
      client_name: '   ',
    });
    expect(basic.token_endpoint_auth_method).toBe('client_secret_post');
    expect(basic.client_name).toBe('app.example');
    expect((await server.ctx.store.clients.find(basic.client_id))?.token_endpoint_auth_method).toBe(
      'client_secret_post',
    );
    // The secret works as the answer says: in the body.
    expect((await obtainTokens(server, await partyOf(basic))).access_token).toEqual(expect.any(String));

    // Any displayable name, emoji included, is kept as sent (trimmed).
    expect((await registered({ redirect_uris: [REDIRECT_URI], client_name: '  Ünïcode Notes 📝 ' })).client_name).toBe(
      'Ünïcode Notes 📝',
    );

    // grant_types [authorization_code] alone: every client gets refresh tokens, and the answer says so.
    expect(
      (await registered({ redirect_uris: [REDIRECT_URI], grant_types: ['authorization_code'] })).grant_types,
    ).toEqual(GRANT_TYPES);
  });

  it('refuses bad metadata with 400 invalid_redirect_uri or invalid_client_metadata, and registers nothing', async () => {
    const before = (await server.ctx.store.clients.list()).length;
    const uri = { redirect_uris: [REDIRECT_URI] };
    const cases: Array<[string, unknown, string]> = [
      ['no redirect_uris', { client_name: 'x' }, 'invalid_client_metadata'],
      ['redirect_uris empty', { redirect_uris: [] }, 'invalid_client_metadata'],
      ['redirect_uris a string', { redirect_uris: REDIRECT_URI }, 'invalid_client_metadata'],
      ['redirect_uris null', { redirect_uris: null }, 'invalid_client_metadata'],
      [
        'eleven redirect URIs',
        { redirect_uris: Array.from({ length: 11 }, (_, i) => `https://app.example/cb${i}`) },
        'invalid_client_metadata',
      ],
      ['http on a public host', { redirect_uris: ['http://app.example/cb'] }, 'invalid_redirect_uri'],
      ['a fragment', { redirect_uris: ['https://app.example/cb#top'] }, 'invalid_redirect_uri'],
      ['user information', { redirect_uris: ['https://user:pw@app.example/cb'] }, 'invalid_redirect_uri'],
      ['a relative URI', { redirect_uris: ['/callback'] }, 'invalid_redirect_uri'],
      ['a javascript: URI', { redirect_uris: ['javascript:alert(1)'] }, 'invalid_redirect_uri'],
      ['a custom scheme', { redirect_uris: ['com.example.app:/callback'] }, 'invalid_redirect_uri'],
      ['a query carrying code', { redirect_uris: ['https://app.example/cb?code=x'] }, 'invalid_redirect_uri'],
      ['a second URI that is bad', { redirect_uris: [REDIRECT_URI, 'http://evil.example/'] }, 'invalid_redirect_uri'],
      [
        'a URI over 2000 characters',
        { redirect_uris: [`https://app.example/${'a'.repeat(2000)}`] },
        'invalid_redirect_uri',
      ],
      ['NUL in a redirect URI', { redirect_uris: ['https://app.example/\u0000cb'] }, 'invalid_redirect_uri'],
      [
        'grant_types with client_credentials',
        { ...uri, grant_types: ['authorization_code', 'client_credentials'] },
        'invalid_client_metadata',
      ],
      ['grant_types implicit', { ...uri, grant_types: ['implicit'] }, 'invalid_client_metadata'],
      ['grant_types refresh_token alone', { ...uri, grant_types: ['refresh_token'] }, 'invalid_client_metadata'],
      ['grant_types empty', { ...uri, grant_types: [] }, 'invalid_client_metadata'],
      ['grant_types a string', { ...uri, grant_types: 'authorization_code' }, 'invalid_client_metadata'],
      ['response_types token', { ...uri, response_types: ['token'] }, 'invalid_client_metadata'],
      ['response_types code id_token', { ...uri, response_types: ['code', 'id_token'] }, 'invalid_client_metadata'],
      ['response_types empty', { ...uri, response_types: [] }, 'invalid_client_metadata'],
      ['private_key_jwt', { ...uri, token_endpoint_auth_method: 'private_key_jwt' }, 'invalid_client_metadata'],
      ['client_secret_jwt', { ...uri, token_endpoint_auth_method: 'client_secret_jwt' }, 'invalid_client_metadata'],
      ['tls_client_auth', { ...uri, token_endpoint_auth_method: 'tls_client_auth' }, 'invalid_client_metadata'],
      ['an unknown method', { ...uri, token_endpoint_auth_method: 'magic' }, 'invalid_client_metadata'],
      ['a scope that is not a string', { ...uri, scope: ['openid'] }, 'invalid_client_metadata'],
      ['a client_name over 200 characters', { ...uri, client_name: 'a'.repeat(201) }, 'invalid_client_metadata'],
      [
        'a client_name with a text-direction override',
        { ...uri, client_name: 'Bank \u202etxet' },
        'invalid_client_metadata',
      ],
      ['a client_name with NUL', { ...uri, client_name: 'App\u0000' }, 'invalid_client_metadata'],
      ['a client_name with an unpaired surrogate', { ...uri, client_name: 'App \ud800' }, 'invalid_client_metadata'],
      ['a client_name that is a number', { ...uri, client_name: 42 }, 'invalid_client_metadata'],
      ['a JSON array', [REDIRECT_URI], 'invalid_client_metadata'],
      ['JSON null', null, 'invalid_client_metadata'],
      ['a JSON string', 'redirect_uris', 'invalid_client_metadata'],
    ];
    for (const [what, body, error] of cases) {
      const response = await register(server, JSON.stringify(body));
      expectNoStore(response, what);
      await expectJsonError(response, 400, error, what);
    }
    expect((await server.ctx.store.clients.list()).length).toBe(before);
  });

  it('refuses token_endpoint_auth_method none while PUBLIC_CLIENTS is off (and registers confidential clients there)', async () => {
    const confidentialOnly = await startTestServer({ env: { DYNAMIC_REGISTRATION: 'true', PUBLIC_CLIENTS: 'false' } });
    try {
      const { error_description } = await expectJsonError(
        await register(confidentialOnly, {
          redirect_uris: ['http://127.0.0.1/cb'],
          token_endpoint_auth_method: 'none',
        }),
        400,
        'invalid_client_metadata',
      );
      expect(error_description).toContain('PUBLIC_CLIENTS');
      expect(await confidentialOnly.ctx.store.clients.list()).toEqual([]);
      const client = await registered({ redirect_uris: ['http://127.0.0.1/cb'] }, confidentialOnly);
      expect(client.token_endpoint_auth_method).toBe('client_secret_post');
    } finally {
      await confidentialOnly.close();
    }
  });

  it('the rules are plain functions: registerDynamicClient, readDynamicClient, updateDynamicClient, deleteDynamicClient', async () => {
    const client = await registerDynamicClient(server.ctx, { redirect_uris: [REDIRECT_URI], client_name: 'Direct' });
    const token = client.registration_access_token;
    expect(await readDynamicClient(server.ctx, client.client_id, token)).toEqual(withoutSecret(client));
    const updated = await updateDynamicClient(server.ctx, client.client_id, token, {
      client_id: client.client_id,
      redirect_uris: [REDIRECT_URI],
      client_name: 'Direct 2',
    });
    expect(updated.client_name).toBe('Direct 2');
    await expect(readDynamicClient(server.ctx, client.client_id, 'rat_wrong')).rejects.toMatchObject({
      error: 'invalid_token',
      statusCode: 401,
    });
    await deleteDynamicClient(server.ctx, client.client_id, token);
    await expect(readDynamicClient(server.ctx, client.client_id, token)).rejects.toMatchObject({
      error: 'invalid_token',
      statusCode: 401,
    });
  });
});

describe('the client configuration endpoint (RFC 7592)', () => {
  it('GET with the registration access token: 200, the registered metadata and the same token, without the secret', async () => {
    const client = await registered({ redirect_uris: [REDIRECT_URI], client_name: 'Reader' });
    const response = await manage(server, 'GET', client.client_id, client.registration_access_token);
    expect(response.status).toBe(200);
    expectNoStore(response);
    const read = (await response.json()) as RegistrationResponse;
    expect(read).toEqual(withoutSecret(client));
    expectNoEmptyStrings(read);
    // The registration_client_uri is where it was read from.
    expect(
      (
        await fetch(client.registration_client_uri, {
          headers: { authorization: `Bearer ${client.registration_access_token}` },
        })
      ).status,
    ).toBe(200);
  });

  it("GET, PUT and DELETE without a token, with a wrong one or with another client's: 401 invalid_token, one answer for all", async () => {
    const client = await registered({ redirect_uris: [REDIRECT_URI] });
    const other = await registered({ redirect_uris: [REDIRECT_URI] });
    const body = { client_id: client.client_id, redirect_uris: ['https://evil.example/cb'] };
    const descriptions = new Set<string>();
    for (const method of ['GET', 'PUT', 'DELETE'] as const) {
      const missing = await manage(server, method, client.client_id, undefined, method === 'PUT' ? body : undefined);
      expect(missing.headers.get('www-authenticate'), method).toBe('Bearer');
      expectNoStore(missing, method);
      await expectJsonError(missing, 401, 'invalid_token', `${method} without a token`);
      for (const [what, token] of [
        ['a wrong token', `rat_${'A'.repeat(43)}`],
        ["another client's token", other.registration_access_token],
        ['the client secret', client.client_secret!],
        ['a token with a character more', `${client.registration_access_token}A`],
      ] as const) {
        const response = await manage(server, method, client.client_id, token, method === 'PUT' ? body : undefined);
        expect(response.headers.get('www-authenticate'), `${method} ${what}`).toMatch(/^Bearer error="invalid_token"/);
        expectNoStore(response, `${method} ${what}`);
        descriptions.add(
          (await expectJsonError(response, 401, 'invalid_token', `${method} with ${what}`)).error_description,
        );
      }
      // The token elsewhere than the Authorization header, or not as a bearer, counts as no token.
      const inQuery = await fetch(
        `${client.registration_client_uri}?access_token=${client.registration_access_token}`,
        { method },
      );
      await expectJsonError(inQuery, 401, 'invalid_token', `${method} with the token in the query`);
      const basic = await fetch(client.registration_client_uri, {
        method,
        headers: {
          authorization: `Basic ${Buffer.from(`${client.client_id}:${client.registration_access_token}`).toString('base64')}`,
        },
      });
      await expectJsonError(basic, 401, 'invalid_token', `${method} with Basic`);
    }
    // An unknown client id, and one no server issues, answer exactly as a wrong token does.
    for (const clientId of ['cli_unknown', 'https://app.example/client.json', 'x'.repeat(600), 'a b', 'ü']) {
      const response = await manage(server, 'GET', clientId, client.registration_access_token);
      descriptions.add(
        (await expectJsonError(response, 401, 'invalid_token', clientId.slice(0, 40))).error_description,
      );
    }
    expect(descriptions.size).toBe(1);
    // Nothing happened to either client.
    expect((await manage(server, 'GET', client.client_id, client.registration_access_token)).status).toBe(200);
    expect((await server.ctx.store.clients.find(client.client_id))?.redirect_uris).toEqual([REDIRECT_URI]);
  });

  it('a client made with the CLI or the console cannot be managed, whatever the bearer', async () => {
    const manual = await server.createClient();
    const dynamic = await registered({ redirect_uris: [REDIRECT_URI] });
    for (const token of [dynamic.registration_access_token, manual.clientSecret, `rat_${'B'.repeat(43)}`, 'x']) {
      for (const method of ['GET', 'PUT', 'DELETE'] as const) {
        const response = await manage(
          server,
          method,
          manual.clientId,
          token,
          method === 'PUT' ? { client_id: manual.clientId, redirect_uris: [REDIRECT_URI] } : undefined,
        );
        await expectJsonError(response, 401, 'invalid_token', `${method} ${token.slice(0, 8)}`);
      }
    }
    expect(await server.ctx.store.clients.find(manual.clientId)).toMatchObject({
      source: 'manual',
      redirect_uris: [manual.redirectUri],
    });
  });

  it('PUT replaces the metadata (RFC 7592 §2.2): new redirect URIs and name take effect at once; secret and token are kept', async () => {
    const client = await registered({ redirect_uris: [REDIRECT_URI], client_name: 'Before' });
    const newRedirect = 'https://app.example/new-callback';
    const update = {
      client_id: client.client_id,
      redirect_uris: [newRedirect, 'http://localhost:9000/cb'],
      client_name: 'After',
      token_endpoint_auth_method: 'client_secret_post',
      grant_types: GRANT_TYPES,
      response_types: ['code'],
      scope: 'openid',
      client_uri: 'https://app.example',
    };
    const response = await manage(server, 'PUT', client.client_id, client.registration_access_token, update);
    expect(response.status).toBe(200);
    expectNoStore(response);
    const updated = (await response.json()) as RegistrationResponse;
    expect(updated).toEqual({
      ...withoutSecret(client),
      client_name: 'After',
      redirect_uris: [newRedirect, 'http://localhost:9000/cb'],
    });
    expectNoEmptyStrings(updated);
    expect(await (await manage(server, 'GET', client.client_id, client.registration_access_token)).json()).toEqual(
      updated,
    );

    // The new redirect URI signs in with the unchanged secret; the old one is refused.
    await obtainTokens(server, await partyOf(client, newRedirect));
    const old = await fetch(
      authorizeUrl(server, {
        client_id: client.client_id,
        redirect_uri: REDIRECT_URI,
        response_type: 'code',
        state: 's',
        code_challenge: pkcePair().challenge,
        code_challenge_method: 'S256',
      }),
    );
    await expectErrorPage(old, 400);
    expect((await startFlow(server, await partyOf(client, newRedirect))).page).toContain('After');

    // Omitted fields take their defaults (the name), except the method, which stays.
    const minimal = await manage(server, 'PUT', client.client_id, client.registration_access_token, {
      client_id: client.client_id,
      redirect_uris: [newRedirect],
    });
    expect(await minimal.json()).toMatchObject({
      client_name: 'app.example',
      token_endpoint_auth_method: 'client_secret_post',
      redirect_uris: [newRedirect],
    });
  });

  it('PUT checks the body: client_id, client_secret, server-managed fields and metadata, and changes nothing when refused', async () => {
    const client = await registered({ redirect_uris: [REDIRECT_URI], client_name: 'Kept' });
    const base = { client_id: client.client_id, redirect_uris: [REDIRECT_URI], client_name: 'Changed' };
    const cases: Array<[string, unknown, string]> = [
      ['mismatched client_id', { ...base, client_id: 'cli_other' }, 'invalid_request'],
      ['no client_id', { ...base, client_id: undefined }, 'invalid_request'],
      [
        'a client_secret that is not the current one',
        { ...base, client_secret: 'cls_chosen-by-the-client' },
        'invalid_request',
      ],
      [
        'registration_access_token',
        { ...base, registration_access_token: client.registration_access_token },
        'invalid_request',
      ],
      [
        'registration_client_uri',
        { ...base, registration_client_uri: client.registration_client_uri },
        'invalid_request',
      ],
      ['client_secret_expires_at', { ...base, client_secret_expires_at: 0 }, 'invalid_request'],
      ['client_id_issued_at', { ...base, client_id_issued_at: client.client_id_issued_at }, 'invalid_request'],
      ['no redirect_uris', { client_id: client.client_id, client_name: 'Changed' }, 'invalid_client_metadata'],
      ['an http redirect URI', { ...base, redirect_uris: ['http://evil.example/cb'] }, 'invalid_redirect_uri'],
      ['a fragment', { ...base, redirect_uris: ['https://app.example/cb#x'] }, 'invalid_redirect_uri'],
      ['a client_name with a control character', { ...base, client_name: 'a\u0007b' }, 'invalid_client_metadata'],
      ['grant_types implicit', { ...base, grant_types: ['implicit'] }, 'invalid_client_metadata'],
      ['a switch to a public client', { ...base, token_endpoint_auth_method: 'none' }, 'invalid_client_metadata'],
      ['a JSON array', [base], 'invalid_client_metadata'],
    ];
    for (const [what, body, error] of cases) {
      const response = await manage(server, 'PUT', client.client_id, client.registration_access_token, body);
      expectNoStore(response, what);
      await expectJsonError(response, 400, error, what);
    }
    expect(await server.ctx.store.clients.find(client.client_id)).toMatchObject({
      name: 'Kept',
      redirect_uris: [REDIRECT_URI],
      token_endpoint_auth_method: 'client_secret_post',
    });
    // The current secret may be sent back; so may client_secret_basic, read as client_secret_post.
    const withSecret = await manage(server, 'PUT', client.client_id, client.registration_access_token, {
      ...base,
      client_secret: client.client_secret,
      token_endpoint_auth_method: 'client_secret_basic',
    });
    expect(withSecret.status).toBe(200);
    expect(await withSecret.json()).not.toHaveProperty('client_secret');
    // A public client has no secret to send.
    const publicClient = await registered({
      redirect_uris: ['http://127.0.0.1/cb'],
      token_endpoint_auth_method: 'none',
    });
    await expectJsonError(
      await manage(server, 'PUT', publicClient.client_id, publicClient.registration_access_token, {
        client_id: publicClient.client_id,
        redirect_uris: ['http://127.0.0.1/cb'],
        client_secret: 'anything',
      }),
      400,
      'invalid_request',
    );
    await expectJsonError(
      await manage(server, 'PUT', publicClient.client_id, publicClient.registration_access_token, {
        client_id: publicClient.client_id,
        redirect_uris: ['http://127.0.0.1/cb'],
        token_endpoint_auth_method: 'client_secret_post',
      }),
      400,
      'invalid_client_metadata',
    );
  });

  it('PUT without a valid token is 401 even when the body is invalid too', async () => {
    const client = await registered({ redirect_uris: [REDIRECT_URI] });
    await expectJsonError(
      await manage(server, 'PUT', client.client_id, 'rat_wrong', { redirect_uris: 'not an array', client_name: 42 }),
      401,
      'invalid_token',
    );
    await expectJsonError(await manage(server, 'PUT', client.client_id, undefined, []), 401, 'invalid_token');
  });

  it('DELETE: 204; then the token opens nothing, the client cannot authenticate at /token (401 invalid_client), and its grants and tokens are revoked', async () => {
    const client = await registered({ redirect_uris: [REDIRECT_URI], client_name: 'Short-lived' });
    const party = await partyOf(client);
    const tokens = await obtainTokens(server, party);
    const pendingCode = await obtainCode(server, party);

    const deleted = await manage(server, 'DELETE', client.client_id, client.registration_access_token);
    expect(deleted.status).toBe(204);
    expectNoStore(deleted);
    expect(await deleted.text()).toBe('');
    expect(await server.ctx.store.clients.find(client.client_id)).toBeUndefined();

    for (const method of ['GET', 'PUT', 'DELETE'] as const) {
      const response = await manage(
        server,
        method,
        client.client_id,
        client.registration_access_token,
        method === 'PUT' ? { client_id: client.client_id, redirect_uris: [REDIRECT_URI] } : undefined,
      );
      expect(response.headers.get('www-authenticate'), method).toMatch(/^Bearer error="invalid_token"/);
      await expectJsonError(response, 401, 'invalid_token', `${method} after DELETE`);
    }

    // The token endpoint: the refresh token and the code answer invalid_client, as any unknown client does.
    await expectJsonError(
      await postForm(server, '/token', {
        grant_type: 'refresh_token',
        refresh_token: tokens.refresh_token,
        client_id: client.client_id,
        client_secret: client.client_secret!,
      }),
      401,
      'invalid_client',
    );
    await expectJsonError(await redeem(server, party, pendingCode.code, pendingCode.verifier), 401, 'invalid_client');
    await expectJsonError(
      await postForm(server, '/introspect', {
        token: tokens.access_token,
        client_id: client.client_id,
        client_secret: client.client_secret!,
      }),
      401,
      'invalid_client',
    );
    // The grant is revoked in the database, and the access token is refused where it is checked.
    const refresh = await server.ctx.store.refreshTokens.findContext(digest(tokens.refresh_token));
    expect(refresh?.grant.revoked_at).toEqual(expect.any(Number));
    await expectJsonError(
      await fetch(`${server.baseUrl}/userinfo`, { headers: { authorization: `Bearer ${tokens.access_token}` } }),
      401,
      'invalid_token',
    );
    // And /authorize no longer knows the client.
    await expectErrorPage(
      await fetch(
        authorizeUrl(server, {
          client_id: client.client_id,
          redirect_uri: REDIRECT_URI,
          response_type: 'code',
          state: 's',
          code_challenge: pkcePair().challenge,
          code_challenge_method: 'S256',
        }),
      ),
      400,
      'invalid_client',
    );
  });
});

describe('the endpoints as HTTP', () => {
  it('takes JSON only: a form, text or no content type is 415; malformed JSON 400; a 100 KB body 413; all in the JSON error shape, never 5xx', async () => {
    const client = await registered({ redirect_uris: [REDIRECT_URI] });
    const send = (method: 'POST' | 'PUT', path: string, body: string, type: string | undefined, token?: string) =>
      fetch(`${server.baseUrl}${path}`, {
        method,
        headers: {
          ...(type === undefined ? {} : { 'content-type': type }),
          ...(token ? { authorization: `Bearer ${token}` } : {}),
        },
        body: new TextEncoder().encode(body),
      });
    const targets = [
      ['POST', '/register', undefined],
      ['PUT', `/register/${client.client_id}`, client.registration_access_token],
    ] as const;
    for (const [method, path, token] of targets) {
      const json = JSON.stringify({ client_id: client.client_id, redirect_uris: [REDIRECT_URI] });
      for (const type of [
        'application/x-www-form-urlencoded',
        'text/plain',
        'multipart/form-data; boundary=x',
        undefined,
      ]) {
        const body =
          type === 'application/x-www-form-urlencoded' ? `redirect_uris=${encodeURIComponent(REDIRECT_URI)}` : json;
        const response = await send(method, path, body, type, token);
        expectNoStore(response, `${method} ${type}`);
        await expectJsonError(response, 415, 'invalid_request', `${method} ${type}`);
      }
      await expectJsonError(
        await send(method, path, '{"redirect_uris":[', 'application/json', token),
        400,
        'invalid_request',
        `${method} malformed`,
      );
      const big = JSON.stringify({
        client_id: client.client_id,
        redirect_uris: [REDIRECT_URI],
        padding: 'x'.repeat(100_000),
      });
      const tooBig = await send(method, path, big, 'application/json', token);
      expectNoStore(tooBig, `${method} 100 KB`);
      await expectJsonError(tooBig, 413, 'invalid_request', `${method} 100 KB`);
      await expectJsonError(
        await send(
          method,
          path,
          '{"__proto__":{"polluted":true},"redirect_uris":["https://app.example/cb"]}',
          'application/json',
          token,
        ),
        400,
        undefined,
        `${method} __proto__`,
      );
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    }
    // GET and DELETE take no body: a content type, or a body, sent along is ignored.
    expect(
      (
        await fetch(client.registration_client_uri, {
          headers: { authorization: `Bearer ${client.registration_access_token}`, 'content-type': 'text/plain' },
        })
      ).status,
    ).toBe(200);
    const deleted = await fetch(client.registration_client_uri, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${client.registration_access_token}`, 'content-type': 'application/json' },
    });
    expect(deleted.status).toBe(204);
    const other = await registered({ redirect_uris: [REDIRECT_URI] });
    const withBody = await fetch(other.registration_client_uri, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${other.registration_access_token}`, 'content-type': 'application/json' },
      body: '{"not": "json"',
    });
    expect(withBody.status).toBe(204);
  });

  it('over-long fields are 400 naming the field', async () => {
    for (const [field, value] of [
      ['client_name', 'n'.repeat(201)],
      ['scope', 'openid '.repeat(40)],
      ['token_endpoint_auth_method', 'm'.repeat(65)],
    ] as const) {
      const { error_description } = await expectJsonError(
        await register(server, { redirect_uris: [REDIRECT_URI], [field]: value }),
        400,
        'invalid_client_metadata',
        field,
      );
      expect(error_description).toContain(field);
    }
  });

  it('the metadata names the registration endpoint', async () => {
    const metadata = (await (await fetch(`${server.baseUrl}/.well-known/oauth-authorization-server`)).json()) as Record<
      string,
      unknown
    >;
    expect(metadata.registration_endpoint).toBe(`${server.baseUrl}/register`);
  });

  it('throttles registrations per client address: with REGISTRATION_LIMIT_PER_IP=2 the third POST is 429 with Retry-After', async () => {
    const throttled = await startTestServer({ env: { DYNAMIC_REGISTRATION: 'true', REGISTRATION_LIMIT_PER_IP: '2' } });
    try {
      expect((await register(throttled, { redirect_uris: [REDIRECT_URI] })).status).toBe(201);
      // A refused registration counts too: the limit guards against floods, not only successes.
      expect((await register(throttled, { redirect_uris: ['http://evil.example/'] })).status).toBe(400);
      const third = await register(throttled, { redirect_uris: [REDIRECT_URI] });
      expect(Number(third.headers.get('retry-after'))).toBeGreaterThan(0);
      expectNoStore(third);
      await expectJsonError(third, 429, 'too_many_requests');
      expect(await throttled.ctx.store.clients.list()).toHaveLength(1);
    } finally {
      await throttled.close();
    }
  });

  it('without DYNAMIC_REGISTRATION the routes do not exist: 404 as any unknown path, and no registration_endpoint', async () => {
    const closed = await startTestServer();
    try {
      await expectJsonError(await register(closed, { redirect_uris: [REDIRECT_URI] }), 404, 'not_found');
      const manual = await closed.createClient();
      for (const method of ['GET', 'PUT', 'DELETE'] as const) {
        await expectJsonError(
          await manage(
            closed,
            method,
            manual.clientId,
            'rat_x',
            method === 'PUT' ? { client_id: manual.clientId, redirect_uris: [REDIRECT_URI] } : undefined,
          ),
          404,
          'not_found',
          method,
        );
      }
      const metadata = (await (
        await fetch(`${closed.baseUrl}/.well-known/oauth-authorization-server`)
      ).json()) as Record<string, unknown>;
      expect(metadata).not.toHaveProperty('registration_endpoint');
      expect(await closed.ctx.store.clients.list()).toHaveLength(1);
    } finally {
      await closed.close();
    }
  });
});
