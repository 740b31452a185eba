/** /userinfo (RFC 6750, OIDC Core §5.3), /introspect (RFC 7662) and /revoke (RFC 7009), docs/design.md §6. */
import { jwtVerify, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rotateAgentSecret, setAgentStatus } from '../src/domain/agents.ts';
import { resealClientSecrets, rotateClientSecret } from '../src/domain/clients.ts';
import { authenticate, obtainTokens, type Party, postForm, postJson, setupParty, startFlow } from './helpers/flow.ts';
import { startTestServer, TEST_JWT_SECRET, type TestServer } from './helpers/server.ts';

let server: TestServer;
let party: Party;
let other: Party;

beforeAll(async () => {
  server = await startTestServer();
  party = await setupParty(server);
  other = { ...party, ...(await server.createClient()) };
});
afterAll(() => server.close());

const userinfo = (token: string, method = 'GET') =>
  fetch(`${server.baseUrl}/userinfo`, { method, headers: { authorization: `Bearer ${token}` } });
const introspect = (token: string, who: Party = party) =>
  postForm(server, '/introspect', { token, client_id: who.clientId, client_secret: who.clientSecret });
const revoke = (token: string, who: Party = party) =>
  postForm(server, '/revoke', { token, client_id: who.clientId, client_secret: who.clientSecret });

describe('GET|POST /userinfo', () => {
  it('returns the owner claims per scope, by GET and by POST', async () => {
    const tokens = await obtainTokens(server, party);
    for (const method of ['GET', 'POST']) {
      const response = await userinfo(tokens.access_token, method);
      expect(response.status).toBe(200);
      expect(response.headers.get('cache-control')).toBe('no-store');
      expect(await response.json()).toEqual({
        sub: party.agentId,
        email: 'ada@example.com',
        email_verified: false,
        name: 'Ada Lovelace',
      });
    }
    const narrow = await obtainTokens(server, party, { scope: 'openid' });
    expect(await (await userinfo(narrow.access_token)).json()).toEqual({ sub: party.agentId });
  });

  it('reports email_verified true for an agent created with a verified email', async () => {
    const verified = { ...party, ...(await server.createAgent({ emailVerified: true })) };
    const tokens = await obtainTokens(server, verified, { scope: 'openid email' });
    expect(await (await userinfo(tokens.access_token)).json()).toEqual({
      sub: verified.agentId,
      email: 'ada@example.com',
      email_verified: true,
    });
  });

  it('401 with WWW-Authenticate: Bearer without a token, and invalid_token for a bad one', async () => {
    const none = await fetch(`${server.baseUrl}/userinfo`);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer');
    expect(await none.json()).toEqual({ error: 'invalid_token', error_description: expect.any(String) });
    const forged = await new SignJWT({ scope: 'openid' })
      .setProtectedHeader({ alg: 'HS256', typ: 'at+jwt' })
      .setJti('atk_x')
      .setIssuer(server.baseUrl)
      .setExpirationTime('1h')
      .sign(new TextEncoder().encode('another-secret-of-32-bytes-or-more!!'));
    for (const token of ['garbage', forged]) {
      const response = await userinfo(token);
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toMatch(/^Bearer error="invalid_token"/);
    }
  });

  it('401 for an expired access token', async () => {
    const tokens = await obtainTokens(server, party);
    server.clock.advance(3600);
    expect((await userinfo(tokens.access_token)).status).toBe(401);
    server.clock.advance(-3600);
  });

  it('403 insufficient_scope for a token without openid', async () => {
    const tokens = await obtainTokens(server, party, { scope: 'email' });
    const response = await userinfo(tokens.access_token);
    expect(response.status).toBe(403);
    expect(response.headers.get('www-authenticate')).toMatch(/^Bearer error="insufficient_scope"/);
  });

  it("401 once the agent is disabled; a signed token isn't enough on its own", async () => {
    const agent = { ...party, ...(await server.createAgent()) };
    const tokens = await obtainTokens(server, agent);
    await setAgentStatus(server.ctx, agent.agentId, 'disabled');
    expect((await userinfo(tokens.access_token)).status).toBe(401);
    expect(await (await introspect(tokens.access_token)).json()).toEqual({ active: false });
    expect(await (await introspect(tokens.refresh_token)).json()).toEqual({ active: false });
  });

  it('ignores whatever body POST /userinfo is sent', async () => {
    const tokens = await obtainTokens(server, party);
    for (const [type, body] of [
      ['application/json', '{broken'],
      ['application/x-www-form-urlencoded', 'a=1&a=2'],
      ['text/plain', 'x'],
    ]) {
      const response = await fetch(`${server.baseUrl}/userinfo`, {
        method: 'POST',
        headers: { authorization: `Bearer ${tokens.access_token}`, 'content-type': type! },
        body,
      });
      expect(response.status).toBe(200);
    }
  });
});

describe('POST /introspect', () => {
  it('describes an active access token of the calling client (form or JSON)', async () => {
    const tokens = await obtainTokens(server, party);
    const response = await introspect(tokens.access_token);
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(await response.json()).toEqual({
      active: true,
      scope: 'openid email profile',
      client_id: party.clientId,
      token_type: 'Bearer',
      exp: expect.any(Number),
      iat: expect.any(Number),
      sub: party.agentId,
      aud: party.clientId,
      iss: server.baseUrl,
      jti: expect.stringMatching(/^atk_/),
      model: 'test-model',
    });
    const json = await postJson(server, '/introspect', {
      token: tokens.access_token,
      client_id: party.clientId,
      client_secret: party.clientSecret,
    });
    expect(((await json.json()) as { active: boolean }).active).toBe(true);
  });

  it('describes an active refresh token', async () => {
    const tokens = await obtainTokens(server, party);
    expect(await (await introspect(tokens.refresh_token)).json()).toMatchObject({
      active: true,
      client_id: party.clientId,
      sub: party.agentId,
      token_type: 'refresh_token',
    });
  });

  it("answers active:false for another client's token, garbage and expired tokens", async () => {
    const tokens = await obtainTokens(server, party);
    expect(await (await introspect(tokens.access_token, other)).json()).toEqual({ active: false });
    expect(await (await introspect(tokens.refresh_token, other)).json()).toEqual({ active: false });
    expect(await (await introspect('not-a-token')).json()).toEqual({ active: false });
    server.clock.advance(3600);
    expect(await (await introspect(tokens.access_token)).json()).toEqual({ active: false });
    server.clock.advance(-3600);
  });

  it('requires client authentication', async () => {
    const tokens = await obtainTokens(server, party);
    const response = await postForm(server, '/introspect', { token: tokens.access_token });
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({ error: 'invalid_client', error_description: expect.any(String) });
  });

  it('400 invalid_request without token', async () => {
    const response = await postForm(server, '/introspect', {
      client_id: party.clientId,
      client_secret: party.clientSecret,
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: 'invalid_request', error_description: 'token is required' });
  });
});

describe('POST /revoke', () => {
  it('revokes an access token: introspection and userinfo see it, the refresh token lives on', async () => {
    const tokens = await obtainTokens(server, party);
    const response = await revoke(tokens.access_token);
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(await (await introspect(tokens.access_token)).json()).toEqual({ active: false });
    expect((await userinfo(tokens.access_token)).status).toBe(401);
    expect((await (await introspect(tokens.refresh_token)).json()) as object).toMatchObject({ active: true });
  });

  it('revoking a refresh token revokes its grant', async () => {
    const tokens = await obtainTokens(server, party);
    expect((await revoke(tokens.refresh_token)).status).toBe(200);
    expect(await (await introspect(tokens.access_token)).json()).toEqual({ active: false });
    const refreshed = await postForm(server, '/token', {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
      client_id: party.clientId,
      client_secret: party.clientSecret,
    });
    expect(refreshed.status).toBe(400);
  });

  it('200 for unknown tokens; 400 unauthorized_client for a token of another client, which stays active', async () => {
    expect((await revoke('rft_unknown')).status).toBe(200);
    expect((await revoke('garbage')).status).toBe(200);
    const tokens = await obtainTokens(server, party);
    for (const token of [tokens.access_token, tokens.refresh_token]) {
      const response = await revoke(token, other);
      expect(response.status).toBe(400);
      expect(await response.json()).toEqual({ error: 'unauthorized_client', error_description: expect.any(String) });
    }
    expect(await (await introspect(tokens.access_token)).json()).toMatchObject({ active: true });
  });

  it('requires client authentication', async () => {
    const tokens = await obtainTokens(server, party);
    expect(
      (
        await postForm(server, '/revoke', {
          token: tokens.access_token,
          client_id: party.clientId,
          client_secret: 'cls_wrong',
        })
      ).status,
    ).toBe(401);
    expect(await (await introspect(tokens.access_token)).json()).toMatchObject({ active: true });
  });

  it('verifies access tokens signed under a previous JWT_SECRET during a rotation', async () => {
    const rotated = await startTestServer({
      databaseUrl: server.databaseUrl,
      env: {
        BASE_URL: server.baseUrl,
        JWT_SECRET: 'the-next-secret-of-at-least-32-bytes!!',
        JWT_PREVIOUS_SECRETS: TEST_JWT_SECRET,
      },
    });
    try {
      // Same issuer, another process: requests go to the rotated server's own address.
      const target = { ...rotated, baseUrl: rotated.url };
      const tokens = await obtainTokens(server, party);
      const response = await fetch(`${target.baseUrl}/userinfo`, {
        headers: { authorization: `Bearer ${tokens.access_token}` },
      });
      expect(response.status).toBe(200);
      // Client secrets sealed under the previous secret still open: the client can authenticate.
      const introspected = await postForm(target, '/introspect', {
        token: tokens.access_token,
        client_id: party.clientId,
        client_secret: party.clientSecret,
      });
      expect(await introspected.json()).toMatchObject({ active: true });
    } finally {
      await rotated.close();
    }
  });

  it('after a rotation, reseal lets the previous JWT_SECRET be dropped; without it a client is 401, never 500', async () => {
    const next = 'the-next-secret-of-at-least-32-bytes!!';
    const stale = await startTestServer({
      databaseUrl: server.databaseUrl,
      env: { BASE_URL: server.baseUrl, JWT_SECRET: next },
    });
    const staleTarget = { ...stale, baseUrl: stale.url };
    const tokens = await obtainTokens(server, party);
    try {
      const refused = await postForm(staleTarget, '/introspect', {
        token: tokens.access_token,
        client_id: party.clientId,
        client_secret: party.clientSecret,
      });
      expect(refused.status).toBe(401);
      expect(await refused.json()).toEqual({ error: 'invalid_client', error_description: expect.any(String) });
    } finally {
      await stale.close();
    }
    const rotating = await startTestServer({
      databaseUrl: server.databaseUrl,
      env: { BASE_URL: server.baseUrl, JWT_SECRET: next, JWT_PREVIOUS_SECRETS: TEST_JWT_SECRET },
    });
    const result = await resealClientSecrets(rotating.ctx);
    expect(result.unreadable).toEqual([]);
    expect(result.resealed).toContain(party.clientId);
    await rotating.close();
    const done = await startTestServer({
      databaseUrl: server.databaseUrl,
      env: { BASE_URL: server.baseUrl, JWT_SECRET: next },
    });
    try {
      const introspected = await postForm({ ...done, baseUrl: done.url }, '/introspect', {
        token: 'x',
        client_id: party.clientId,
        client_secret: party.clientSecret,
      });
      expect(introspected.status).toBe(200);
    } finally {
      await done.close();
    }
  });
});

describe('secret rotation without downtime', () => {
  it('a rotated agent secret keeps working for the grace period only; without grace it stops at once', async () => {
    const agent = { ...party, ...(await server.createAgent()) };
    const newSecret = await rotateAgentSecret(server.ctx, agent.agentId, 600);
    expect((await authenticate(server, agent, (await startFlow(server, agent)).requestId)).status).toBe(200);
    expect(
      (await authenticate(server, { ...agent, agentSecret: newSecret }, (await startFlow(server, agent)).requestId))
        .status,
    ).toBe(200);
    server.clock.advance(600);
    expect((await authenticate(server, agent, (await startFlow(server, agent)).requestId)).status).toBe(401);
    server.clock.advance(-600);
    const immediate = await rotateAgentSecret(server.ctx, agent.agentId);
    expect(
      (await authenticate(server, { ...agent, agentSecret: newSecret }, (await startFlow(server, agent)).requestId))
        .status,
    ).toBe(401);
    expect(
      (await authenticate(server, { ...agent, agentSecret: immediate }, (await startFlow(server, agent)).requestId))
        .status,
    ).toBe(200);
  });

  it('a rotated client secret keeps working for the grace period, and keys the ID token it presented', async () => {
    const client = { ...party, ...(await server.createClient()) };
    const oldSecret = client.clientSecret;
    const newSecret = await rotateClientSecret(server.ctx, client.clientId, 600);
    for (const secret of [oldSecret, newSecret]) {
      const tokens = await obtainTokens(server, { ...client, clientSecret: secret });
      await expect(jwtVerify(tokens.id_token!, new TextEncoder().encode(secret))).resolves.toBeDefined();
    }
    server.clock.advance(600);
    const late = await postForm(server, '/introspect', {
      token: 'x',
      client_id: client.clientId,
      client_secret: oldSecret,
    });
    expect(late.status).toBe(401);
    server.clock.advance(-600);
  });
});
