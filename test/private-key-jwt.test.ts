/**
 * Clients that sign with keys (RFC 7523 private_key_jwt, docs/design.md §18) through the real
 * endpoints: ChatGPT's metadata document, served over https on loopback (trusted through
 * CLIENT_METADATA_ALLOWED_ADDRESSES and the test CA), signs in and exchanges its code with an
 * RS256 assertion made with jose; every refusal of an assertion; the jwks_uri refetched for an
 * unknown kid at a bounded rate; a replay on another node; registered clients (API, CLI) and
 * dynamic registration.
 */
import { createHmac, createPublicKey, randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../src/management/clients.ts';
import { operator } from '../src/management/actor.ts';
import {
  assertionFields,
  chatGptDocument,
  clientAssertion,
  type SigningKey,
  signingKey,
} from './helpers/client-keys.ts';
import { obtainCode, type Party, postForm, postJson, type Tokens } from './helpers/flow.ts';
import { type HttpsTestServer, startHttpsServer, TEST_CA } from './helpers/https.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { expectJsonError } from './security/support.ts';

/** What the client's site serves, by path. */
const served = new Map<string, unknown>();
let site: HttpsTestServer;
let server: TestServer;
let rsa: SigningKey;

const send = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'max-age=3600' });
  res.end(JSON.stringify(body));
};
const fetchesOf = (path: string) => site.paths.filter((p) => p === path).length;

beforeAll(async () => {
  site = await startHttpsServer((req, res) => {
    const body = served.get(req.url ?? '');
    if (body === undefined) send(res, 404, { error: 'not found' });
    else send(res, 200, body);
  });
  server = await startTestServer({
    env: { MCP_AUTHORIZATION: 'true', CLIENT_METADATA_ALLOWED_ADDRESSES: '127.0.0.1/32,::1/128' },
    // The test CA only: loopback is let through by the setting, as an operator would.
    clientMetadataFetch: { ca: TEST_CA },
  });
  rsa = await signingKey('RS256', 'chatgpt-1');
});
afterAll(async () => {
  await server?.close();
  await site?.close();
});

/** Publishes a ChatGPT-shaped document (and its key set at its own jwks_uri); its client_id. */
function publishChatGpt(id: string, keys: SigningKey[], options: { newer?: boolean } = {}): string {
  const jwksPath = `/oauth/${id}/jwks.json`;
  const document = chatGptDocument(site.origin, id, { ...options, jwksUri: `${site.origin}${jwksPath}` });
  served.set(`/oauth/${id}/client.json`, document);
  served.set(jwksPath, { keys: keys.map((key) => key.publicJwk) });
  return document.client_id as string;
}

const tokenEndpoint = () => `${server.baseUrl}/token`;

async function signedIn(target: TestServer, clientId: string, redirectUri: string) {
  const agent = await target.createAgent();
  const party: Party = { clientId, clientSecret: '', redirectUri, ...agent };
  return { party, ...(await obtainCode(target, party)) };
}

const exchange = (
  target: TestServer,
  clientId: string,
  code: string,
  verifier: string,
  redirectUri: string,
  fields: Record<string, string>,
) =>
  postForm(target, '/token', {
    grant_type: 'authorization_code',
    code,
    code_verifier: verifier,
    redirect_uri: redirectUri,
    client_id: clientId,
    ...fields,
  });

describe('ChatGPT (a metadata document that signs with keys)', () => {
  it('signs in, exchanges its code with an RS256 assertion, refreshes, introspects and revokes', async () => {
    const clientId = publishChatGpt('tU1UVEq8rRTK', [rsa]);
    const redirectUri = 'https://chatgpt.com/connector/oauth/tU1UVEq8rRTK';
    const { code, verifier, page } = await signedIn(server, clientId, redirectUri);
    // The page names the application by the host that identifies it; the name is the document's claim.
    expect(page).toContain('<span id="client-name">ChatGPT</span>');
    expect(page).toMatch(
      new RegExp(`id="client-origin">[^<]*<strong>${new URL(site.origin).host}</strong>, which also chose its name`),
    );

    const assertion = await clientAssertion(rsa, clientId, tokenEndpoint(), server.clock());
    const response = await exchange(server, clientId, code, verifier, redirectUri, assertionFields(assertion));
    expect(response.status).toBe(200);
    const tokens = (await response.json()) as Tokens;
    // No secret to key an ID token with: openid is not granted (docs/design.md §13, §18).
    expect(tokens.id_token).toBeUndefined();
    expect(tokens.scope).toBe('email profile');
    expect(await server.ctx.store.clients.find(clientId)).toMatchObject({
      source: 'metadata_document',
      token_endpoint_auth_method: 'private_key_jwt',
      jwks_uri: `${site.origin}/oauth/tU1UVEq8rRTK/jwks.json`,
      jwks: null,
      secret_sealed: '',
    });

    // Without client_id (RFC 7523 §3: the assertion names the client), audience the issuer.
    const refreshed = await postForm(server, '/token', {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
      ...assertionFields(await clientAssertion(rsa, clientId, server.baseUrl, server.clock())),
    });
    expect(refreshed.status).toBe(200);
    const next = (await refreshed.json()) as Tokens;

    const introspected = await postForm(server, '/introspect', {
      token: next.access_token,
      ...assertionFields(
        await clientAssertion(rsa, clientId, [tokenEndpoint(), 'https://other.example'], server.clock()),
      ),
    });
    expect(await introspected.json()).toMatchObject({ active: true, client_id: clientId });
    const revoked = await postForm(server, '/revoke', {
      token: next.refresh_token,
      client_id: clientId,
      ...assertionFields(await clientAssertion(rsa, clientId, tokenEndpoint(), server.clock())),
    });
    expect(revoked.status).toBe(200);
    const after = await postForm(server, '/token', {
      grant_type: 'refresh_token',
      refresh_token: next.refresh_token,
      ...assertionFields(await clientAssertion(rsa, clientId, tokenEndpoint(), server.clock())),
    });
    await expectJsonError(after, 400, 'invalid_grant');
  });

  it('the newer document (none offered too) is served with private_key_jwt here: the code needs an assertion', async () => {
    const clientId = publishChatGpt('newerCopy01', [rsa], { newer: true });
    const redirectUri = 'https://chatgpt.com/connector/oauth/newerCopy01';
    const { code, verifier } = await signedIn(server, clientId, redirectUri);
    const bare = await exchange(server, clientId, code, verifier, redirectUri, {});
    const refused = await expectJsonError(bare, 401, 'invalid_client');
    expect(refused.error_description).toMatch(/send client_assertion_type=.*jwt-bearer and client_assertion/);
    // The refusal consumed nothing: the code is exchanged with an assertion afterwards.
    const assertion = await clientAssertion(rsa, clientId, tokenEndpoint(), server.clock());
    expect((await exchange(server, clientId, code, verifier, redirectUri, assertionFields(assertion))).status).toBe(
      200,
    );
  });
});

describe('refusals of an assertion (each 401 invalid_client; the code stays usable)', () => {
  let clientId: string;
  let code: string;
  let verifier: string;
  const redirectUri = 'https://chatgpt.com/connector/oauth/refusals001';
  beforeAll(async () => {
    clientId = publishChatGpt('refusals001', [rsa]);
    ({ code, verifier } = await signedIn(server, clientId, redirectUri));
  });
  const tryWith = (assertion: string) =>
    exchange(server, clientId, code, verifier, redirectUri, assertionFields(assertion));
  const refusedWith = async (assertion: string, description: RegExp) => {
    const body = await expectJsonError(await tryWith(assertion), 401, 'invalid_client');
    expect(body.error_description).toMatch(description);
    expect(body.error_description).not.toContain(assertion);
  };
  /** A JWT put together by hand: what jose would refuse to make. */
  const handMade = (header: object, claims: object, sign: (input: string) => string) => {
    const input = `${Buffer.from(JSON.stringify(header)).toString('base64url')}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
    return `${input}.${sign(input)}`;
  };
  const claims = () => ({
    iss: clientId,
    sub: clientId,
    aud: tokenEndpoint(),
    exp: server.clock() + 60,
    jti: randomUUID(),
  });

  it('wrong iss or sub', async () => {
    const now = server.clock();
    await refusedWith(
      await clientAssertion(rsa, clientId, tokenEndpoint(), now, { iss: 'https://evil.example/client.json' }),
      /iss and sub/,
    );
    await refusedWith(
      await clientAssertion(rsa, clientId, tokenEndpoint(), now, { sub: 'cli_someoneelse' }),
      /iss and sub/,
    );
  });

  it('wrong aud: a look-alike issuer, another endpoint', async () => {
    const now = server.clock();
    await refusedWith(await clientAssertion(rsa, clientId, `${server.baseUrl}.evil.example/token`, now), /aud/);
    await refusedWith(await clientAssertion(rsa, clientId, `${server.baseUrl}/introspect`, now), /aud/);
  });

  it('expired, too long-lived, without exp, not yet valid', async () => {
    const now = server.clock();
    await refusedWith(await clientAssertion(rsa, clientId, tokenEndpoint(), now - 400, { exp: now - 31 }), /expired/);
    await refusedWith(await clientAssertion(rsa, clientId, tokenEndpoint(), now, { exp: now + 3600 }), /too long/);
    await refusedWith(await clientAssertion(rsa, clientId, tokenEndpoint(), now, { exp: undefined }), /no exp/);
    await refusedWith(await clientAssertion(rsa, clientId, tokenEndpoint(), now, { nbf: now + 120 }), /not valid yet/);
  });

  it('without a jti, and a replayed one', async () => {
    await refusedWith(await clientAssertion(rsa, clientId, tokenEndpoint(), server.clock(), { jti: undefined }), /jti/);
    const once = await clientAssertion(rsa, clientId, `${server.baseUrl}/token`, server.clock());
    const first = await postForm(server, '/introspect', { token: 'x', ...assertionFields(once) });
    expect(first.status).toBe(200);
    await refusedWith(once, /used already/);
  });

  it('a replay on another node of one database is refused', async () => {
    const other = await startTestServer({
      databaseUrl: server.databaseUrl,
      env: { BASE_URL: server.baseUrl, MCP_AUTHORIZATION: 'true', CLIENT_METADATA_ALLOWED_ADDRESSES: '127.0.0.1/32' },
      clientMetadataFetch: { ca: TEST_CA },
    });
    try {
      const once = await clientAssertion(rsa, clientId, tokenEndpoint(), server.clock());
      const answers = await Promise.all(
        [server, other].map((node) => postForm(node, '/introspect', { token: 'x', ...assertionFields(once) })),
      );
      expect(answers.map((answer) => answer.status).sort()).toEqual([200, 401]);
    } finally {
      await other.close();
    }
  });

  it('alg none, HS256 keyed with the public key, an algorithm the key is not for, another key', async () => {
    await refusedWith(
      handMade({ alg: 'none', kid: rsa.kid }, claims(), () => ''),
      /algorithm/,
    );
    const publicPem = createPublicKey({ key: rsa.publicJwk as never, format: 'jwk' }).export({
      type: 'spki',
      format: 'pem',
    });
    await refusedWith(
      handMade({ alg: 'HS256', kid: rsa.kid }, claims(), (input) =>
        createHmac('sha256', publicPem).update(input).digest('base64url'),
      ),
      /algorithm/,
    );
    const ec = await signingKey('ES256', rsa.kid);
    await refusedWith(await clientAssertion(ec, clientId, tokenEndpoint(), server.clock()), /not for ES256/);
    const impostor = await signingKey('RS256', rsa.kid);
    await refusedWith(await clientAssertion(impostor, clientId, tokenEndpoint(), server.clock()), /signature/);
    await refusedWith('not-a-jwt', /not a JWT/);
  });

  it('two methods at once is invalid_request', async () => {
    const assertion = await clientAssertion(rsa, clientId, tokenEndpoint(), server.clock());
    await expectJsonError(
      await exchange(server, clientId, code, verifier, redirectUri, {
        ...assertionFields(assertion),
        client_secret: 'x',
      }),
      400,
      'invalid_request',
    );
    await expectJsonError(
      await postForm(
        server,
        '/token',
        { grant_type: 'authorization_code', code, code_verifier: verifier, ...assertionFields(assertion) },
        { authorization: `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:x`).toString('base64')}` },
      ),
      400,
      'invalid_request',
    );
    await expectJsonError(
      await exchange(server, clientId, code, verifier, redirectUri, {
        ...assertionFields(assertion),
        client_assertion_type: 'urn:other',
      }),
      401,
      'invalid_client',
    );
  });

  it('the code is still usable after every refusal', async () => {
    const assertion = await clientAssertion(rsa, clientId, tokenEndpoint(), server.clock());
    expect((await tryWith(assertion)).status).toBe(200);
  });
});

describe('the key set at jwks_uri', () => {
  it('an unknown kid fetches it again once, at most once a minute; a rotated key is found', async () => {
    const id = 'rotation0001';
    const jwksPath = `/oauth/${id}/jwks.json`;
    const clientId = publishChatGpt(id, [rsa]);
    const redirectUri = `https://chatgpt.com/connector/oauth/${id}`;
    const flow = await signedIn(server, clientId, redirectUri);
    const first = await exchange(
      server,
      clientId,
      flow.code,
      flow.verifier,
      redirectUri,
      assertionFields(await clientAssertion(rsa, clientId, tokenEndpoint(), server.clock())),
    );
    expect(first.status).toBe(200);
    const tokens = (await first.json()) as Tokens;
    expect(fetchesOf(jwksPath)).toBe(1);

    const introspect = async (key: SigningKey) =>
      postForm(server, '/introspect', {
        token: tokens.access_token,
        ...assertionFields(await clientAssertion(key, clientId, tokenEndpoint(), server.clock())),
      });

    // Within the minute after the fetch, an unknown kid is refused without asking the site again.
    const stranger = await signingKey('RS256', 'unknown-1');
    const body = await expectJsonError(await introspect(stranger), 401, 'invalid_client');
    expect(body.error_description).toMatch(/no key with kid "unknown-1"/);
    expect(fetchesOf(jwksPath)).toBe(1);

    // A minute later: one fetch for the unknown kid, then the refusal; a second unknown kid does not fetch.
    server.clock.advance(61);
    await expectJsonError(await introspect(stranger), 401, 'invalid_client');
    expect(fetchesOf(jwksPath)).toBe(2);
    await expectJsonError(await introspect(await signingKey('RS256', 'unknown-2')), 401, 'invalid_client');
    expect(fetchesOf(jwksPath)).toBe(2);

    // The client rotates its key: a minute on, the new kid is fetched and accepted.
    const rotated = await signingKey('PS256', 'chatgpt-2');
    served.set(jwksPath, { keys: [rsa.publicJwk, rotated.publicJwk] });
    server.clock.advance(61);
    const answer = await introspect(rotated);
    expect(answer.status).toBe(200);
    expect(await answer.json()).toMatchObject({ active: true });
    expect(fetchesOf(jwksPath)).toBe(3);
  });
});

describe('registered and dynamically registered clients', () => {
  it('a client registered with a JWKS through the management API signs with ES256', async () => {
    const key = await signingKey('ES256', 'shop-1');
    const { client, secret } = await createClient(server.ctx, operator(), {
      name: 'Shop with keys',
      redirectUris: ['https://shop.example/callback'],
      keys: { jwks: { keys: [key.publicJwk] } },
    });
    expect(secret).toBeNull();
    expect(client.token_endpoint_auth_method).toBe('private_key_jwt');
    const flow = await signedIn(server, client.id, 'https://shop.example/callback');
    // A secret is not this client's way in; its assertion is.
    await expectJsonError(
      await exchange(server, client.id, flow.code, flow.verifier, 'https://shop.example/callback', {
        client_secret: 'guess',
      }),
      401,
      'invalid_client',
    );
    const ok = await exchange(
      server,
      client.id,
      flow.code,
      flow.verifier,
      'https://shop.example/callback',
      assertionFields(await clientAssertion(key, client.id, tokenEndpoint(), server.clock())),
    );
    expect(ok.status).toBe(200);
  });

  it('dynamic registration with jwks_uri and private_key_jwt (EdDSA)', async () => {
    const key = await signingKey('EdDSA', 'dyn-1');
    served.set('/dynamic/jwks.json', { keys: [key.publicJwk] });
    const registered = await postJson(server, '/register', {
      client_name: 'Dynamic keys',
      redirect_uris: ['https://dyn.example/callback'],
      token_endpoint_auth_method: 'private_key_jwt',
      jwks_uri: `${site.origin}/dynamic/jwks.json`,
    });
    expect(registered.status).toBe(201);
    const info = (await registered.json()) as Record<string, unknown>;
    expect(info).toMatchObject({
      token_endpoint_auth_method: 'private_key_jwt',
      jwks_uri: `${site.origin}/dynamic/jwks.json`,
    });
    expect(info).not.toHaveProperty('client_secret');
    const clientId = info.client_id as string;
    const flow = await signedIn(server, clientId, 'https://dyn.example/callback');
    const ok = await exchange(
      server,
      clientId,
      flow.code,
      flow.verifier,
      'https://dyn.example/callback',
      assertionFields(await clientAssertion(key, clientId, tokenEndpoint(), server.clock())),
    );
    expect(ok.status).toBe(200);
  });

  it('refuses a key set with private material, an unusable key, or both jwks and jwks_uri', async () => {
    const key = await signingKey('RS256', 'bad');
    const register = (fields: Record<string, unknown>) =>
      postJson(server, '/register', {
        redirect_uris: ['https://dyn.example/cb'],
        token_endpoint_auth_method: 'private_key_jwt',
        ...fields,
      });
    await expectJsonError(
      await register({ jwks: { keys: [{ ...key.publicJwk, d: 'AAAA' }] } }),
      400,
      'invalid_client_metadata',
    );
    await expectJsonError(
      await register({ jwks: { keys: [{ kty: 'oct', k: 'c2VjcmV0' }] } }),
      400,
      'invalid_client_metadata',
    );
    await expectJsonError(
      await register({ jwks: { keys: [{ ...key.publicJwk, alg: 'HS256' }] } }),
      400,
      'invalid_client_metadata',
    );
    await expectJsonError(
      await register({ jwks: { keys: [key.publicJwk] }, jwks_uri: `${site.origin}/x.json` }),
      400,
      'invalid_client_metadata',
    );
    await expectJsonError(await register({ jwks_uri: 'http://dyn.example/jwks.json' }), 400, 'invalid_client_metadata');
    await expectJsonError(await register({}), 400, 'invalid_client_metadata');
  });
});

describe('with the feature off (the default)', () => {
  it('a document declaring only private_key_jwt is refused; one offering none too is served as public', async () => {
    const plain = await startTestServer({
      env: {
        PUBLIC_CLIENTS: 'true',
        CLIENT_ID_METADATA_DOCUMENTS: 'true',
        CLIENT_METADATA_ALLOWED_ADDRESSES: '127.0.0.1/32',
      },
      clientMetadataFetch: { ca: TEST_CA },
    });
    try {
      const only = publishChatGpt('offOnly00001', [rsa]);
      const authorize = (clientId: string, redirectUri: string) =>
        fetch(
          `${plain.baseUrl}/authorize?${new URLSearchParams({ client_id: clientId, redirect_uri: redirectUri, response_type: 'code', state: 's', code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256' })}`,
        );
      const refused = await authorize(only, 'https://chatgpt.com/connector/oauth/offOnly00001');
      expect(refused.status).toBe(400);
      expect(await refused.text()).toContain('not enabled on this server (PRIVATE_KEY_JWT)');

      const newer = publishChatGpt('offNewer0001', [rsa], { newer: true });
      const redirectUri = 'https://chatgpt.com/connector/oauth/offNewer0001';
      const flow = await signedIn(plain, newer, redirectUri);
      expect(await plain.ctx.store.clients.find(newer)).toMatchObject({
        token_endpoint_auth_method: 'none',
        jwks_uri: null,
      });
      expect((await exchange(plain, newer, flow.code, flow.verifier, redirectUri, {})).status).toBe(200);
      const metadata = (await (
        await fetch(`${plain.baseUrl}/.well-known/oauth-authorization-server`)
      ).json()) as Record<string, unknown>;
      expect(metadata.token_endpoint_auth_methods_supported).toEqual(['client_secret_post', 'none']);
      expect(metadata).not.toHaveProperty('token_endpoint_auth_signing_alg_values_supported');
    } finally {
      await plain.close();
    }
  });
});
