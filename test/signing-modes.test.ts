/**
 * Signing modes (docs/design.md §19): with TOKEN_SIGNING_ALG ES256, EdDSA or RS256 the server
 * signs ID and access tokens with key pairs it generates and publishes at jwks_uri, and libraries
 * nobody here wrote verify them offline from there: jose's remote key set, oauth4webapi's RFC 9068
 * resource-server check, openid-client signing in a public client. The private keys are sealed in
 * the database and never logged; a token's alg must be its key's. With the default, HS256, the
 * key set and the metadata are the contract's, byte for byte.
 */
import { createPrivateKey, createPublicKey, createSecretKey, type KeyObject } from 'node:crypto';
import { createLocalJWKSet, createRemoteJWKSet, decodeProtectedHeader, jwtVerify, SignJWT } from 'jose';
import * as oauth from 'oauth4webapi';
import * as client from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerClient } from '../src/domain/clients.ts';
import { obtainTokens, type Party, postForm, setupParty, type Tokens } from './helpers/flow.ts';
import { browserSignIn, codeGrant } from './helpers/openid-client.ts';
import { captureLogs, startTestServer, type TestServer } from './helpers/server.ts';

const ALGORITHMS = ['ES256', 'EdDSA', 'RS256'] as const;

const claimsOf = (jwt: string) =>
  JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;

const userinfo = (server: TestServer, token: string) =>
  fetch(`${server.baseUrl}/userinfo`, { headers: { authorization: `Bearer ${token}` } });

async function introspect(server: TestServer, party: Party, token: string) {
  const response = await postForm(server, '/introspect', {
    token,
    client_id: party.clientId,
    client_secret: party.clientSecret,
  });
  return (await response.json()) as { active: boolean; [claim: string]: unknown };
}

/** The key set as served, and the keys' private halves opened with the server's own secret (for the checks only). */
async function keySet(server: TestServer) {
  const response = await fetch(`${server.baseUrl}/.well-known/jwks.json`);
  return {
    response,
    body: (await response.json()) as { keys: Record<string, unknown>[] },
  };
}

async function privateKeys(server: TestServer): Promise<{ kid: string; pem: string; d: string }[]> {
  return (await server.ctx.store.signingKeys.list()).map((record) => {
    const pem = server.ctx.secrets.signingKeys.openOnce(record.private_key_sealed);
    const jwk = createPrivateKey(pem).export({ format: 'jwk' });
    return { kid: record.kid, pem, d: jwk.d! };
  });
}

describe.each(ALGORITHMS)('TOKEN_SIGNING_ALG=%s', (alg) => {
  let server: TestServer;
  let party: Party;
  let tokens: Tokens;
  const logs = captureLogs();

  beforeAll(async () => {
    server = await startTestServer({
      env: { TOKEN_SIGNING_ALG: alg, PUBLIC_CLIENTS: 'true', LOG_LEVEL: 'trace' },
      logStream: logs.stream,
    });
    party = await setupParty(server, { name: `${alg} Website` });
    tokens = await obtainTokens(server, party, { scope: 'openid email profile', nonce: 'n-0S6_WzA2Mj' });
  });
  afterAll(() => server?.close());

  it('publishes exactly its algorithm, and a key set of the current and the next key, public halves only', async () => {
    const openid = (await (await fetch(`${server.baseUrl}/.well-known/openid-configuration`)).json()) as Record<
      string,
      unknown
    >;
    expect(openid.id_token_signing_alg_values_supported).toEqual([alg]);
    expect(openid).not.toHaveProperty('userinfo_signing_alg_values_supported');
    const { response, body } = await keySet(server);
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('public, max-age=3600');
    expect(body.keys).toHaveLength(2);
    const stored = await server.ctx.store.signingKeys.list();
    expect(stored.map((key) => key.state).sort()).toEqual(['current', 'next']);
    for (const key of body.keys) {
      expect(key).toMatchObject({ alg, use: 'sig', kty: alg === 'ES256' ? 'EC' : alg === 'EdDSA' ? 'OKP' : 'RSA' });
      expect(stored.map((record) => record.kid)).toContain(key.kid);
      for (const secret of ['d', 'p', 'q', 'dp', 'dq', 'qi']) expect(key).not.toHaveProperty(secret);
    }
  });

  it("jose verifies the ID token and the access token from jwks_uri; both carry the current key's kid", async () => {
    const jwks = createRemoteJWKSet(new URL(`${server.baseUrl}/.well-known/jwks.json`));
    const current = (await server.ctx.store.signingKeys.list()).find((key) => key.state === 'current')!;

    const id = await jwtVerify(tokens.id_token!, jwks, { issuer: server.baseUrl, audience: party.clientId });
    expect(id.protectedHeader).toEqual({ alg, typ: 'JWT', kid: current.kid });
    expect(id.payload).toMatchObject({
      iss: server.baseUrl,
      sub: party.agentId,
      aud: party.clientId,
      nonce: 'n-0S6_WzA2Mj',
      email: 'ada@example.com',
      name: 'Ada Lovelace',
    });
    expect(typeof id.payload.auth_time).toBe('number');

    const access = await jwtVerify(tokens.access_token, jwks, {
      issuer: server.baseUrl,
      audience: party.clientId,
      typ: 'at+jwt',
    });
    expect(access.protectedHeader).toEqual({ alg, typ: 'at+jwt', kid: current.kid });
    expect(access.payload).toMatchObject({
      iss: server.baseUrl,
      sub: party.agentId,
      aud: party.clientId,
      client_id: party.clientId,
      scope: 'openid email profile',
      model: 'test-model',
    });
    expect(access.payload.jti).toMatch(/^atk_/);
    expect(access.payload.exp).toBe((access.payload.iat as number) + 3600);
  });

  it("oauth4webapi's RFC 9068 resource-server check accepts the access token, with the metadata from discovery", async () => {
    const issuer = new URL(server.baseUrl);
    const as = await oauth.processDiscoveryResponse(
      issuer,
      await oauth.discoveryRequest(issuer, { algorithm: 'oidc', [oauth.allowInsecureRequests]: true }),
    );
    const request = new Request('https://api.example/notes', {
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });
    const claims = await oauth.validateJwtAccessToken(as, request, party.clientId, {
      [oauth.allowInsecureRequests]: true,
    });
    expect(claims).toMatchObject({ iss: server.baseUrl, sub: party.agentId, client_id: party.clientId });
  });

  it('the server itself accepts its tokens: userinfo, introspection, refresh (with a new ID token)', async () => {
    const info = await userinfo(server, tokens.access_token);
    expect(info.status).toBe(200);
    expect(await info.json()).toEqual({
      sub: party.agentId,
      email: 'ada@example.com',
      email_verified: false,
      name: 'Ada Lovelace',
    });
    expect(await introspect(server, party, tokens.access_token)).toMatchObject({ active: true, sub: party.agentId });
    const refreshed = await postForm(server, '/token', {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
      client_id: party.clientId,
      client_secret: party.clientSecret,
    });
    expect(refreshed.status).toBe(200);
    const body = (await refreshed.json()) as Tokens;
    expect(decodeProtectedHeader(body.access_token)).toMatchObject({ alg, typ: 'at+jwt' });
    expect(decodeProtectedHeader(body.id_token!)).toMatchObject({ alg, typ: 'JWT' });
  });

  it('openid-client signs a public client in and verifies its ID token against jwks_uri', async () => {
    const { client: registered } = await registerClient(server.ctx, {
      name: 'Browser app',
      redirectUris: ['http://localhost:5173/callback'],
      public: true,
    });
    const publicParty: Party = {
      clientId: registered.id,
      clientSecret: '',
      redirectUri: 'http://localhost:5173/callback',
      ...(await server.createAgent()),
    };
    const config = await client.discovery(
      new URL(server.baseUrl),
      registered.id,
      { id_token_signed_response_alg: alg },
      client.None(),
      { execute: [client.allowInsecureRequests] },
    );
    // openid-client checks the ID token's signature against jwks_uri only when asked to.
    client.enableNonRepudiationChecks(config);
    const signIn = await browserSignIn(server, publicParty, config);
    const granted = await codeGrant(config, signIn);
    expect(granted.scope).toBe('openid email profile');
    expect(granted.claims()).toMatchObject({ iss: server.baseUrl, sub: publicParty.agentId, aud: registered.id });
    const info = await client.fetchUserInfo(config, granted.access_token, publicParty.agentId);
    expect(info.sub).toBe(publicParty.agentId);
  });

  it("refuses a token whose alg is not its key's: HS256 keyed with the public key, none, another algorithm", async () => {
    const { body } = await keySet(server);
    const current = body.keys[0]!;
    const publicPem = createPublicKey({ key: current as never, format: 'jwk' }).export({ type: 'spki', format: 'pem' });
    const claims = claimsOf(tokens.access_token);
    const forged = async (header: Record<string, unknown>, key: KeyObject | Uint8Array) =>
      new SignJWT(claims).setProtectedHeader(header as never).sign(key);

    const hmacWithPublicKey = await forged(
      { alg: 'HS256', typ: 'at+jwt', kid: current.kid },
      createSecretKey(Buffer.from(publicPem as string)),
    );
    const [header, payload] = tokens.access_token.split('.');
    const none = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'at+jwt', kid: current.kid })).toString('base64url')}.${payload}.`;
    const otherAlg = `${Buffer.from(
      JSON.stringify({
        ...JSON.parse(Buffer.from(header!, 'base64url').toString()),
        alg: alg === 'RS256' ? 'PS256' : 'RS256',
      }),
    ).toString('base64url')}.${tokens.access_token.split('.').slice(1).join('.')}`;
    const idTokenAsAccess = tokens.id_token!;
    for (const token of [hmacWithPublicKey, none, otherAlg, idTokenAsAccess]) {
      const answer = await userinfo(server, token);
      expect(answer.status).toBe(401);
      expect(answer.headers.get('www-authenticate')).toContain('error="invalid_token"');
      expect(await introspect(server, party, token)).toEqual({ active: false });
    }
  });

  it('the database holds each private key only sealed, and no log line holds any of it', async () => {
    const stored = await server.ctx.store.signingKeys.list();
    const opened = await privateKeys(server);
    expect(stored.length).toBeGreaterThanOrEqual(2);
    for (const record of stored) {
      const row = JSON.stringify(record);
      expect(row).not.toContain('PRIVATE KEY');
      expect(() => createPrivateKey(record.private_key_sealed)).toThrow();
      expect(record.private_key_sealed).toMatch(/^v1\./);
      expect(JSON.parse(record.public_jwk)).not.toHaveProperty('d');
    }
    const text = logs.text();
    expect(text.length).toBeGreaterThan(0);
    for (const key of opened) {
      expect(stored.map((record) => JSON.stringify(record)).join('')).not.toContain(key.d);
      const body = key.pem.split('\n').slice(1, -2).join('');
      expect(text).not.toContain(key.d);
      expect(text).not.toContain(body.slice(0, 40));
    }
    expect(text).not.toContain('PRIVATE KEY');
  });
});

describe('TOKEN_SIGNING_ALG=HS256, the default: the contract, byte for byte', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server?.close());

  it('serves {"keys":[]} with the cache header as before, HS256 in the metadata, and keeps no key', async () => {
    const response = await fetch(`${server.baseUrl}/.well-known/jwks.json`);
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('public, max-age=3600');
    expect(await response.text()).toBe('{"keys":[]}');
    const openid = (await (await fetch(`${server.baseUrl}/.well-known/openid-configuration`)).json()) as Record<
      string,
      unknown
    >;
    expect(openid.id_token_signing_alg_values_supported).toEqual(['HS256']);
    expect(await server.ctx.store.signingKeys.list()).toEqual([]);
  });

  it('signs the access token with JWT_SECRET and the ID token with the client secret, as before', async () => {
    const party = await setupParty(server);
    const tokens = await obtainTokens(server, party, { scope: 'openid' });
    expect(decodeProtectedHeader(tokens.access_token)).toMatchObject({ alg: 'HS256', typ: 'at+jwt' });
    expect(decodeProtectedHeader(tokens.id_token!)).toEqual({ alg: 'HS256', typ: 'JWT' });
    await jwtVerify(tokens.id_token!, new TextEncoder().encode(party.clientSecret), { audience: party.clientId });
    const empty = createLocalJWKSet({ keys: [] });
    await expect(jwtVerify(tokens.access_token, empty)).rejects.toThrow();
  });
});
