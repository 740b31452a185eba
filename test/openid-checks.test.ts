/**
 * The OpenID Foundation's Basic OP and Config OP checks that apply to an agent-mediated server,
 * written as tests against a real server with a key pair (TOKEN_SIGNING_ALG, docs/design.md §19):
 * RS256, the algorithm OpenID Connect Discovery §3 makes every OP offer, ES256 and EdDSA (whose
 * at_hash takes SHA-512); and what stays the contract's under HS256, the default. The checks
 * that cannot apply here (there is no person's login session: prompt=none, max_age,
 * id_token_hint) are listed, with the reason, in docs/design.md §19.
 */
import { createHash } from 'node:crypto';
import { createLocalJWKSet, decodeProtectedHeader, importJWK, type JWK, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  authenticate,
  continueFlow,
  obtainCode,
  type Party,
  postForm,
  redeem,
  setupParty,
  startFlow,
  type Tokens,
} from './helpers/flow.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';

type Json = Record<string, unknown>;

const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k'];

/**
 * OIDC Core §3.1.3.6, computed here on its own: the left half of the hash of the access token's
 * ASCII octets, base64url; the hash is the one of the ID token's alg (SHA-512 for Ed25519, as
 * the OpenID conformance suite computes it).
 */
function expectedAtHash(alg: string, accessToken: string): string {
  const digest = createHash(alg === 'EdDSA' ? 'sha512' : 'sha256')
    .update(Buffer.from(accessToken, 'ascii'))
    .digest();
  return digest.subarray(0, digest.length / 2).toString('base64url');
}

/** RS256, which OpenID Connect Discovery makes every OP offer; ES256; EdDSA, whose at_hash takes SHA-512. */
const ALGORITHMS = ['RS256', 'ES256', 'EdDSA'] as const;

describe.each(ALGORITHMS)('OpenID Basic and Config OP checks, TOKEN_SIGNING_ALG=%s', (alg) => {
  let server: TestServer;
  let party: Party;
  let discovery: Json;
  let jwks: { keys: JWK[] };

  beforeAll(async () => {
    server = await startTestServer({ env: { TOKEN_SIGNING_ALG: alg } });
    party = await setupParty(server, { name: `OpenID checks ${alg}` });
    discovery = (await (await fetch(`${server.baseUrl}/.well-known/openid-configuration`)).json()) as Json;
    jwks = (await (await fetch(discovery.jwks_uri as string)).json()) as { keys: JWK[] };
  });
  afterAll(() => server?.close());

  /** A sign-in through the browser and the agent, and the code redeemed: the tokens and when the agent authenticated. */
  async function signIn(extra: Record<string, string> = {}) {
    const started = await startFlow(server, party, { scope: 'openid email profile', ...extra });
    const before = server.clock();
    expect((await authenticate(server, party, started.requestId)).status).toBe(200);
    const redirect = await continueFlow(server, started);
    const location = new URL(redirect.headers.get('location')!);
    const response = await redeem(server, party, location.searchParams.get('code')!, started.verifier);
    expect(response.status).toBe(200);
    return { tokens: (await response.json()) as Tokens, authenticatedAt: before, location, state: started.state };
  }

  const verifyIdToken = (idToken: string) =>
    jwtVerify(idToken, createLocalJWKSet(jwks), {
      algorithms: [alg],
      issuer: discovery.issuer as string,
      audience: party.clientId,
      currentDate: new Date(server.clock() * 1000),
    });

  it('Config OP: discovery has the required fields, the issuer is where it was fetched, endpoints under it', () => {
    expect(discovery.issuer).toBe(server.baseUrl);
    for (const field of [
      'authorization_endpoint',
      'token_endpoint',
      'userinfo_endpoint',
      'jwks_uri',
      'response_types_supported',
      'subject_types_supported',
      'id_token_signing_alg_values_supported',
    ])
      expect(discovery, field).toHaveProperty(field);
    expect(discovery.response_types_supported).toContain('code');
    expect(discovery.subject_types_supported).toEqual(['public']);
    expect(discovery.scopes_supported).toContain('openid');
    expect(discovery.id_token_signing_alg_values_supported).toEqual([alg]);
    expect(discovery.id_token_signing_alg_values_supported).not.toContain('none');
    for (const field of ['authorization_endpoint', 'token_endpoint', 'userinfo_endpoint', 'jwks_uri'])
      expect((discovery[field] as string).startsWith(`${server.baseUrl}/`), field).toBe(true);
  });

  it('Config OP: the key set is valid, every key has a unique kid, use sig, its alg, and no private member', async () => {
    expect(jwks.keys.length).toBeGreaterThanOrEqual(2);
    expect(new Set(jwks.keys.map((key) => key.kid)).size).toBe(jwks.keys.length);
    for (const key of jwks.keys) {
      expect(key).toMatchObject({ use: 'sig', alg });
      expect(typeof key.kid).toBe('string');
      for (const member of PRIVATE_MEMBERS) expect(key, member).not.toHaveProperty(member);
      const imported = await importJWK(key, alg);
      expect((imported as CryptoKey).type).toBe('public');
    }
  });

  it('ID token: signed by a published key named by kid; iss, aud, sub, exp, iat, nonce, auth_time as required', async () => {
    const { tokens, authenticatedAt } = await signIn({ nonce: 'n-0S6_WzA2Mj' });
    const header = decodeProtectedHeader(tokens.id_token!);
    expect(header.alg).toBe(alg);
    expect(jwks.keys.map((key) => key.kid)).toContain(header.kid);
    const { payload } = await verifyIdToken(tokens.id_token!);
    expect(payload.iss).toBe(server.baseUrl);
    expect(payload.aud).toBe(party.clientId);
    expect(payload.sub).toBe(party.agentId);
    expect((payload.sub as string).length).toBeLessThanOrEqual(255);
    expect(payload.iat).toBe(server.clock());
    expect(payload.exp).toBeGreaterThan(payload.iat!);
    expect(payload.nonce).toBe('n-0S6_WzA2Mj');
    expect(payload.auth_time).toBe(authenticatedAt);
    expect(payload.auth_time as number).toBeLessThanOrEqual(payload.iat!);
    expect(payload).not.toHaveProperty('azp');
  });

  it('at_hash: the left half of the hash of the access token issued with it, at sign-in and at refresh', async () => {
    const { tokens } = await signIn();
    const { payload } = await verifyIdToken(tokens.id_token!);
    const hashLength = alg === 'EdDSA' ? 43 : 22;
    expect(payload.at_hash).toBe(expectedAtHash(alg, tokens.access_token));
    expect((payload.at_hash as string).length).toBe(hashLength);
    const refreshed = await postForm(server, '/token', {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
      client_id: party.clientId,
      client_secret: party.clientSecret,
    });
    const renewed = (await refreshed.json()) as Tokens;
    const renewedClaims = (await verifyIdToken(renewed.id_token!)).payload;
    expect(renewedClaims.at_hash).toBe(expectedAtHash(alg, renewed.access_token));
    expect(renewedClaims.at_hash).not.toBe(payload.at_hash);
  });

  it('nonce: returned unchanged when sent, absent when not; a tampered ID token fails its signature', async () => {
    const { tokens } = await signIn();
    const { payload } = await verifyIdToken(tokens.id_token!);
    expect(payload).not.toHaveProperty('nonce');
    const [h, p, s] = tokens.id_token!.split('.');
    const claims = JSON.parse(Buffer.from(p!, 'base64url').toString()) as Json;
    const forged = `${h}.${Buffer.from(JSON.stringify({ ...claims, nonce: 'other' })).toString('base64url')}.${s}`;
    await expect(verifyIdToken(forged)).rejects.toThrow(/signature/);
  });

  it('the authorization response carries code, state unchanged and iss (RFC 9207)', async () => {
    const { location, state } = await signIn();
    expect(location.searchParams.get('state')).toBe(state);
    expect(location.searchParams.get('iss')).toBe(server.baseUrl);
    expect(location.searchParams.get('code')).toBeTruthy();
  });

  it("userinfo by header, GET and POST: sub equals the ID token's", async () => {
    const { tokens } = await signIn();
    const { payload } = await verifyIdToken(tokens.id_token!);
    for (const method of ['GET', 'POST']) {
      const response = await fetch(discovery.userinfo_endpoint as string, {
        method,
        headers: { authorization: `Bearer ${tokens.access_token}` },
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await response.json()).toMatchObject({
        sub: payload.sub,
        email: 'ada@example.com',
        name: 'Ada Lovelace',
      });
    }
  });

  it("userinfo by form body on POST (RFC 6750 §2.2): sub equals the ID token's; a bad token is invalid_token", async () => {
    const { tokens } = await signIn();
    const { payload } = await verifyIdToken(tokens.id_token!);
    for (const type of ['application/x-www-form-urlencoded', 'application/x-www-form-urlencoded; charset=UTF-8']) {
      const response = await fetch(discovery.userinfo_endpoint as string, {
        method: 'POST',
        headers: { 'content-type': type },
        body: new URLSearchParams({ access_token: tokens.access_token }).toString(),
      });
      expect(response.status, type).toBe(200);
      expect(response.headers.get('cache-control')).toBe('no-store');
      expect(await response.json()).toMatchObject({
        sub: payload.sub,
        email: 'ada@example.com',
        name: 'Ada Lovelace',
      });
    }
    const forged = await postForm(server, '/userinfo', { access_token: `${tokens.access_token.slice(0, -4)}AAAA` });
    expect(forged.status).toBe(401);
    expect(((await forged.json()) as Json).error).toBe('invalid_token');
    expect(forged.headers.get('www-authenticate')).toMatch(/^Bearer error="invalid_token"/);
  });

  it('userinfo: a token in both header and body, twice in the body, or in the URL is invalid_request (RFC 6750 §2)', async () => {
    const { tokens } = await signIn();
    const bearer = { authorization: `Bearer ${tokens.access_token}` };
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    const token = encodeURIComponent(tokens.access_token);
    const refused = [
      fetch(`${server.baseUrl}/userinfo`, {
        method: 'POST',
        headers: { ...bearer, ...form },
        body: `access_token=${token}`,
      }),
      fetch(`${server.baseUrl}/userinfo`, {
        method: 'POST',
        headers: form,
        body: `access_token=${token}&access_token=${token}`,
      }),
      fetch(`${server.baseUrl}/userinfo?access_token=${token}`),
      fetch(`${server.baseUrl}/userinfo?access_token=${token}`, { headers: bearer }),
      fetch(`${server.baseUrl}/userinfo?access_token=${token}`, { method: 'POST', headers: form, body: '' }),
    ];
    for (const response of await Promise.all(refused)) {
      expect(response.status).toBe(400);
      expect(((await response.json()) as Json).error).toBe('invalid_request');
      expect(response.headers.get('www-authenticate')).toMatch(/^Bearer error="invalid_request"/);
    }
    // A body of another content type is no method of presenting a token: ignored, the header counts.
    const json = await fetch(`${server.baseUrl}/userinfo`, {
      method: 'POST',
      headers: { ...bearer, 'content-type': 'application/json' },
      body: JSON.stringify({ access_token: 'x' }),
    });
    expect(json.status).toBe(200);
  });

  it('code reuse: a second redemption is invalid_grant and revokes the tokens of the first', async () => {
    const { code, verifier } = await obtainCode(server, party, { scope: 'openid' });
    const first = await redeem(server, party, code, verifier);
    expect(first.status).toBe(200);
    const tokens = (await first.json()) as Tokens;
    const again = await redeem(server, party, code, verifier);
    expect(again.status).toBe(400);
    expect(((await again.json()) as Json).error).toBe('invalid_grant');
    const userinfo = await fetch(`${server.baseUrl}/userinfo`, {
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });
    expect(userinfo.status).toBe(401);
  });

  it('PKCE: a wrong verifier is invalid_grant; plain and a missing challenge are refused at the authorization endpoint', async () => {
    const { code } = await obtainCode(server, party);
    const wrong = await redeem(server, party, code, 'x'.repeat(43));
    expect(wrong.status).toBe(400);
    expect(((await wrong.json()) as Json).error).toBe('invalid_grant');
    const verifier = 'y'.repeat(43);
    for (const params of [
      { code_challenge: verifier, code_challenge_method: 'plain' },
      { code_challenge: '', code_challenge_method: '' },
    ]) {
      const url = new URL('/authorize', server.baseUrl);
      for (const [name, value] of Object.entries({
        client_id: party.clientId,
        redirect_uri: party.redirectUri,
        response_type: 'code',
        scope: 'openid',
        state: 'xyz',
        ...params,
      }))
        if (value) url.searchParams.set(name, value);
      const response = await fetch(url, { redirect: 'manual' });
      expect(response.status).toBe(400);
    }
  });

  it('refresh: new tokens; the new ID token keeps iss, sub, aud and auth_time, has a new iat and no nonce (Core §12.2)', async () => {
    const { tokens } = await signIn({ nonce: 'refresh-nonce' });
    const original = (await verifyIdToken(tokens.id_token!)).payload;
    server.clock.advance(60);
    const response = await postForm(server, '/token', {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
      client_id: party.clientId,
      client_secret: party.clientSecret,
    });
    expect(response.status).toBe(200);
    const refreshed = (await response.json()) as Tokens;
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    const renewed = (await verifyIdToken(refreshed.id_token!)).payload;
    expect(renewed).toMatchObject({
      iss: original.iss,
      sub: original.sub,
      aud: original.aud,
      auth_time: original.auth_time,
    });
    expect(renewed.iat).toBe((original.iat as number) + 60);
    expect(renewed).not.toHaveProperty('nonce');
  });
});

describe('TOKEN_SIGNING_ALG=HS256, the default: the ID token and userinfo stay the contract’s', () => {
  let server: TestServer;
  let party: Party;
  beforeAll(async () => {
    server = await startTestServer();
    party = await setupParty(server, { name: 'OpenID checks HS256' });
  });
  afterAll(() => server?.close());

  it('no at_hash in the ID token; userinfo takes the header only, a body or a query token is not read', async () => {
    const { code, verifier } = await obtainCode(server, party, { scope: 'openid email' });
    const tokens = (await (await redeem(server, party, code, verifier)).json()) as Tokens;
    const claims = JSON.parse(Buffer.from(tokens.id_token!.split('.')[1]!, 'base64url').toString()) as Json;
    expect(Object.keys(claims).sort()).toEqual(
      ['aud', 'auth_time', 'email', 'email_verified', 'exp', 'iat', 'iss', 'sub'].sort(),
    );
    const body = await postForm(server, '/userinfo', { access_token: tokens.access_token });
    expect(body.status).toBe(401);
    expect(body.headers.get('www-authenticate')).toBe('Bearer');
    const query = await fetch(`${server.baseUrl}/userinfo?access_token=${encodeURIComponent(tokens.access_token)}`);
    expect(query.status).toBe(401);
    expect(query.headers.get('www-authenticate')).toBe('Bearer');
    const header = await fetch(`${server.baseUrl}/userinfo?access_token=x`, {
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });
    expect(header.status).toBe(200);
  });
});
