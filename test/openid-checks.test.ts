/**
 * The OpenID Foundation's Basic OP and Config OP checks that apply to an agent-mediated server,
 * written as tests against a real server with a key pair (TOKEN_SIGNING_ALG, docs/design.md §19):
 * RS256, the algorithm OpenID Connect Discovery §3 makes every OP offer, and ES256. The checks
 * that cannot apply here (there is no person's login session: prompt=none, max_age,
 * id_token_hint) are listed, with the reason, in docs/design.md §19.
 */
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

describe.each(['RS256', 'ES256'] as const)('OpenID Basic and Config OP checks, TOKEN_SIGNING_ALG=%s', (alg) => {
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
    // Core §3.1.3.6: at_hash is OPTIONAL when the access token comes from the token endpoint; not sent.
    expect(payload).not.toHaveProperty('at_hash');
    expect(payload).not.toHaveProperty('azp');
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

  it("userinfo by header, GET and POST: sub equals the ID token's; the token in a body instead is refused", async () => {
    const { tokens } = await signIn();
    const { payload } = await verifyIdToken(tokens.id_token!);
    for (const method of ['GET', 'POST']) {
      const response = await fetch(discovery.userinfo_endpoint as string, {
        method,
        headers: { authorization: `Bearer ${tokens.access_token}` },
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await response.json()).toMatchObject({ sub: payload.sub, email: 'ada@example.com', name: 'Ada Lovelace' });
    }
    // RFC 6750 §2.2 lets a server decline the form-body method; agentauth takes the header only.
    const body = await postForm(server, '/userinfo', { access_token: tokens.access_token });
    expect(body.status).toBe(401);
    expect(body.headers.get('www-authenticate')).toBe('Bearer');
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
