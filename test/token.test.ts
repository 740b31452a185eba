/** POST /token (docs/design.md §6): code exchange, PKCE, replay, refresh rotation, token formats. */
import { decodeProtectedHeader, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { digest } from '../src/crypto.ts';
import {
  obtainCode,
  obtainTokens,
  type Party,
  pkcePair,
  postForm,
  postJson,
  redeem,
  setupParty,
  type Tokens,
} from './helpers/flow.ts';
import { startTestServer, TEST_JWT_SECRET, type TestServer } from './helpers/server.ts';

let server: TestServer;
let party: Party;

beforeAll(async () => {
  server = await startTestServer();
  party = await setupParty(server);
});
afterAll(() => server.close());

const introspect = async (token: string, who: Party = party) =>
  (await (
    await postForm(server, '/introspect', { token, client_id: who.clientId, client_secret: who.clientSecret })
  ).json()) as { active: boolean };

function refresh(refreshToken: string, extra: Record<string, string> = {}, who: Party = party) {
  return postForm(server, '/token', {
    grant_type: 'refresh_token',
    refresh_token: refreshToken,
    client_id: who.clientId,
    client_secret: who.clientSecret,
    ...extra,
  });
}

async function expectError(response: Response, status: number, error: string) {
  expect(response.status).toBe(status);
  expect(response.headers.get('cache-control')).toBe('no-store');
  const json = (await response.json()) as Record<string, unknown>;
  expect(json).toEqual({ error, error_description: expect.any(String) });
}

describe('grant_type=authorization_code', () => {
  it('answers the token response with no-store', async () => {
    const { code, verifier } = await obtainCode(server, party, { nonce: 'nonce-1' });
    const response = await redeem(server, party, code, verifier);
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const tokens = (await response.json()) as Tokens;
    expect(Object.keys(tokens).sort()).toEqual([
      'access_token',
      'expires_in',
      'id_token',
      'refresh_token',
      'scope',
      'token_type',
    ]);
    expect(tokens).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'openid email profile' });
    expect(tokens.refresh_token).toMatch(/^rft_[A-Za-z0-9_-]{43}$/);
    expect(await server.ctx.store.codes.find(digest(code))).toMatchObject({ redeemed_at: expect.any(Number) });
  });

  it('issues an at+jwt access token verifiable with JWT_SECRET exactly as configured', async () => {
    const tokens = await obtainTokens(server, party);
    expect(decodeProtectedHeader(tokens.access_token)).toMatchObject({
      alg: 'HS256',
      typ: 'at+jwt',
      kid: expect.any(String),
    });
    const { payload } = await jwtVerify(tokens.access_token, new TextEncoder().encode(TEST_JWT_SECRET), {
      issuer: server.baseUrl,
      audience: party.clientId,
    });
    expect(payload).toEqual({
      iss: server.baseUrl,
      sub: party.agentId,
      aud: party.clientId,
      client_id: party.clientId,
      scope: 'openid email profile',
      iat: expect.any(Number),
      exp: expect.any(Number),
      jti: expect.stringMatching(/^atk_/),
      model: 'test-model',
    });
    expect(payload.exp! - payload.iat!).toBe(3600);
  });

  it('issues an ID token keyed with the client secret, with nonce and claims per scope', async () => {
    const tokens = await obtainTokens(server, party, { nonce: 'n-42', scope: 'openid email' });
    const { payload, protectedHeader } = await jwtVerify(
      tokens.id_token!,
      new TextEncoder().encode(party.clientSecret),
      { issuer: server.baseUrl, audience: party.clientId },
    );
    expect(protectedHeader.alg).toBe('HS256');
    expect(payload).toMatchObject({
      sub: party.agentId,
      nonce: 'n-42',
      email: 'ada@example.com',
      email_verified: false,
      auth_time: expect.any(Number),
    });
    expect(payload.name).toBeUndefined();
  });

  it('without openid there is no ID token', async () => {
    const tokens = await obtainTokens(server, party, { scope: 'email' });
    expect(tokens.id_token).toBeUndefined();
    expect(tokens.scope).toBe('email');
  });

  it('accepts a JSON body too', async () => {
    const { code, verifier } = await obtainCode(server, party);
    const response = await postJson(server, '/token', {
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      client_id: party.clientId,
      client_secret: party.clientSecret,
    });
    expect(response.status).toBe(200);
  });

  it('redirect_uri is optional, and must match when sent', async () => {
    const first = await obtainCode(server, party);
    await expectError(
      await redeem(server, party, first.code, first.verifier, { redirect_uri: 'http://localhost:8080/other' }),
      400,
      'invalid_grant',
    );
    const second = await obtainCode(server, party);
    const response = await postForm(server, '/token', {
      grant_type: 'authorization_code',
      code: second.code,
      code_verifier: second.verifier,
      client_id: party.clientId,
      client_secret: party.clientSecret,
    });
    expect(response.status).toBe(200);
  });

  it('PKCE: a missing, malformed or wrong verifier is refused', async () => {
    const { code } = await obtainCode(server, party);
    await expectError(await redeem(server, party, code, ''), 400, 'invalid_request');
    await expectError(await redeem(server, party, code, 'short'), 400, 'invalid_request');
    await expectError(await redeem(server, party, code, pkcePair().verifier), 400, 'invalid_grant');
  });

  it('a code expires 10 minutes after issue', async () => {
    const { code, verifier } = await obtainCode(server, party);
    server.clock.advance(600);
    await expectError(await redeem(server, party, code, verifier), 400, 'invalid_grant');
    server.clock.advance(-600);
  });

  it("a code is bound to its client: another client's code is invalid_grant", async () => {
    const { code, verifier } = await obtainCode(server, party);
    const other = { ...party, ...(await server.createClient()) };
    await expectError(await redeem(server, other, code, verifier), 400, 'invalid_grant');
    expect((await redeem(server, party, code, verifier)).status).toBe(200);
  });

  it('client authentication: wrong secret, unknown or inactive client are 401 invalid_client', async () => {
    const { code, verifier } = await obtainCode(server, party);
    await expectError(
      await redeem(server, { ...party, clientSecret: 'cls_wrong' }, code, verifier),
      401,
      'invalid_client',
    );
    await expectError(
      await redeem(server, { ...party, clientId: 'cli_nobody' }, code, verifier),
      401,
      'invalid_client',
    );
    await expectError(
      await postForm(server, '/token', { grant_type: 'authorization_code', code, code_verifier: verifier }),
      401,
      'invalid_client',
    );
    const inactive = { ...party, ...(await server.createClient()) };
    await server.ctx.store.clients.update(inactive.clientId, { status: 'inactive' });
    await expectError(await redeem(server, inactive, code, verifier), 401, 'invalid_client');
  });

  it('unsupported_grant_type and missing grant_type', async () => {
    await expectError(
      await postForm(server, '/token', {
        grant_type: 'password',
        client_id: party.clientId,
        client_secret: party.clientSecret,
      }),
      400,
      'unsupported_grant_type',
    );
    await expectError(
      await postForm(server, '/token', { client_id: party.clientId, client_secret: party.clientSecret }),
      400,
      'invalid_request',
    );
  });

  it('a replayed code fails and revokes every token issued from it', async () => {
    const { code, verifier } = await obtainCode(server, party);
    const tokens = (await (await redeem(server, party, code, verifier)).json()) as Tokens;
    expect((await introspect(tokens.access_token)).active).toBe(true);
    await expectError(await redeem(server, party, code, verifier), 400, 'invalid_grant');
    expect((await introspect(tokens.access_token)).active).toBe(false);
    expect((await introspect(tokens.refresh_token)).active).toBe(false);
    await expectError(await refresh(tokens.refresh_token), 400, 'invalid_grant');
  });

  it('a replay with a wrong verifier or another client revokes nothing', async () => {
    const { code, verifier } = await obtainCode(server, party);
    const tokens = (await (await redeem(server, party, code, verifier)).json()) as Tokens;
    await expectError(await redeem(server, party, code, pkcePair().verifier), 400, 'invalid_grant');
    const other = { ...party, ...(await server.createClient()) };
    await expectError(await redeem(server, other, code, verifier), 400, 'invalid_grant');
    expect((await introspect(tokens.access_token)).active).toBe(true);
  });

  it('of 10 concurrent redemptions of one code exactly one succeeds, and the winner is revoked', async () => {
    const { code, verifier } = await obtainCode(server, party);
    const responses = await Promise.all(Array.from({ length: 10 }, () => redeem(server, party, code, verifier)));
    const winners = responses.filter((r) => r.status === 200);
    expect(winners).toHaveLength(1);
    expect(responses.filter((r) => r.status === 400)).toHaveLength(9);
    const tokens = (await winners[0]!.json()) as Tokens;
    expect((await introspect(tokens.access_token)).active).toBe(false);
  });
});

describe('grant_type=refresh_token', () => {
  it('rotates: a new refresh token each time, the old one no longer works', async () => {
    const first = await obtainTokens(server, party);
    const response = await refresh(first.refresh_token);
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const second = (await response.json()) as Tokens;
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect(second.access_token).not.toBe(first.access_token);
    expect(second.id_token).toEqual(expect.any(String));
    expect((await introspect(second.access_token)).active).toBe(true);
    expect((await refresh(second.refresh_token)).status).toBe(200);
  });

  it('reuse of a rotated refresh token revokes the whole grant', async () => {
    const first = await obtainTokens(server, party);
    const second = (await (await refresh(first.refresh_token)).json()) as Tokens;
    await expectError(await refresh(first.refresh_token), 400, 'invalid_grant');
    expect((await introspect(second.access_token)).active).toBe(false);
    expect((await introspect(first.access_token)).active).toBe(false);
    await expectError(await refresh(second.refresh_token), 400, 'invalid_grant');
  });

  it('of 10 concurrent refreshes with one token exactly one succeeds', async () => {
    const tokens = await obtainTokens(server, party);
    const responses = await Promise.all(Array.from({ length: 10 }, () => refresh(tokens.refresh_token)));
    expect(responses.filter((r) => r.status === 200)).toHaveLength(1);
  });

  it('scope may narrow, never widen', async () => {
    const tokens = await obtainTokens(server, party, { scope: 'openid email' });
    await expectError(await refresh(tokens.refresh_token, { scope: 'openid profile' }), 400, 'invalid_scope');
    const narrowed = (await (await refresh(tokens.refresh_token, { scope: 'email' })).json()) as Tokens;
    expect(narrowed.scope).toBe('email');
    expect(narrowed.id_token).toBeUndefined();
    // The grant keeps its scope: the next refresh may ask for all of it again.
    const again = (await (await refresh(narrowed.refresh_token)).json()) as Tokens;
    expect(again.scope).toBe('openid email');
  });

  it("another client's refresh token, an unknown one and an expired one are invalid_grant", async () => {
    const tokens = await obtainTokens(server, party);
    const other = { ...party, ...(await server.createClient()) };
    await expectError(await refresh(tokens.refresh_token, {}, other), 400, 'invalid_grant');
    await expectError(await refresh('rft_unknown'), 400, 'invalid_grant');
    server.clock.advance(2_592_000);
    await expectError(await refresh(tokens.refresh_token), 400, 'invalid_grant');
    server.clock.advance(-2_592_000);
    expect((await refresh(tokens.refresh_token)).status).toBe(200);
  });
});
