/**
 * A stock OpenID Connect relying party, openid-client v6 (panva), signs a website in against a
 * real agentauth: discovery, PKCE S256, state, nonce, the `iss` of the redirect (RFC 9207), the
 * ID token, userinfo, refresh with rotation, introspection and revocation. The test plays the
 * browser (the page, its binding cookie, the continue form) and the agent (the back channel).
 */
import { errors as joseErrors, jwtVerify } from 'jose';
import * as client from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Party, setupParty } from './helpers/flow.ts';
import { browserSignIn, codeGrant } from './helpers/openid-client.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';

let server: TestServer;
let party: Party;

beforeAll(async () => {
  server = await startTestServer();
  party = await setupParty(server, { name: 'OIDC Website' });
});

afterAll(async () => {
  await server?.close();
});

/** What a website configures: discovery from the issuer, client_secret_post, HS256 ID tokens; http only because the test server is on 127.0.0.1. */
function discover(clientSecret = party.clientSecret): Promise<client.Configuration> {
  return client.discovery(
    new URL(server.baseUrl),
    party.clientId,
    { id_token_signed_response_alg: 'HS256' },
    client.ClientSecretPost(clientSecret),
    {
      execute: [client.allowInsecureRequests],
    },
  );
}

/** The token endpoint's answer with its ID token rewritten on the way, as a network attacker (without TLS) could. */
function rewriteIdToken(config: client.Configuration, rewrite: (idToken: string) => string | undefined): void {
  config[client.customFetch] = async (url, options) => {
    const response = await fetch(url, options as RequestInit);
    if (new URL(url).pathname !== '/token') return response;
    const body = (await response.json()) as Record<string, unknown>;
    const idToken = rewrite(body.id_token as string);
    return Response.json(idToken === undefined ? { ...body, id_token: undefined } : { ...body, id_token: idToken }, {
      status: response.status,
    });
  };
}

function withClaims(idToken: string, change: Record<string, unknown>): string {
  const [header, payload, signature] = idToken.split('.');
  const claims = { ...JSON.parse(Buffer.from(payload!, 'base64url').toString('utf8')), ...change };
  return `${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${signature}`;
}

const key = (secret: string) => new TextEncoder().encode(secret);

/** Why openid-client refused: its error code and the detailed reason it keeps as the cause. */
async function refusal(attempt: Promise<unknown>): Promise<string> {
  try {
    await attempt;
  } catch (error) {
    const { code, message, cause } = error as { code?: string; message: string; cause?: { message?: string } };
    return `${code}: ${cause?.message ?? message}`;
  }
  throw new Error('openid-client accepted what it should have refused');
}

describe('openid-client v6 signs a website in with agentauth', () => {
  it('discovers the issuer from its base URL, with what a relying party needs', async () => {
    const config = await discover();
    const metadata = config.serverMetadata();
    expect(metadata.issuer).toBe(server.baseUrl);
    expect(metadata.token_endpoint_auth_methods_supported).toEqual(['client_secret_post']);
    expect(metadata.id_token_signing_alg_values_supported).toEqual(['HS256']);
    expect(metadata.authorization_response_iss_parameter_supported).toBe(true);
    expect(config.serverMetadata().supportsPKCE()).toBe(true);
  });

  it('signs in: the code for tokens, an ID token about the agent owner checked for iss, aud and nonce', async () => {
    const config = await discover();
    const signIn = await browserSignIn(server, party, config);
    expect(signIn.callbackUrl.searchParams.get('iss')).toBe(server.baseUrl);
    const tokens = await codeGrant(config, signIn);

    expect(tokens.token_type).toBe('bearer');
    expect(tokens.scope).toBe('openid email profile');
    expect(tokens.expiresIn()).toBeGreaterThan(0);
    expect(tokens.claims()).toMatchObject({
      iss: server.baseUrl,
      sub: party.agentId,
      aud: party.clientId,
      nonce: signIn.expectedNonce,
      email: 'ada@example.com',
      email_verified: false,
      name: 'Ada Lovelace',
    });
  });

  it('the ID token is HS256, signed with the client secret: it verifies with that secret and no other', async () => {
    const config = await discover();
    const tokens = await codeGrant(config, await browserSignIn(server, party, config));
    const idToken = tokens.id_token!;
    const checks = { algorithms: ['HS256'], issuer: server.baseUrl, audience: party.clientId };

    const { payload, protectedHeader } = await jwtVerify(idToken, key(party.clientSecret), checks);
    expect(protectedHeader.alg).toBe('HS256');
    expect(payload.sub).toBe(party.agentId);
    await expect(jwtVerify(idToken, key(`${party.clientSecret}x`), checks)).rejects.toBeInstanceOf(
      joseErrors.JWSSignatureVerificationFailed,
    );
    const other = await server.createClient({ name: 'Another website' });
    await expect(jwtVerify(idToken, key(other.clientSecret), checks)).rejects.toBeInstanceOf(
      joseErrors.JWSSignatureVerificationFailed,
    );
    await expect(
      jwtVerify(withClaims(idToken, { email: 'mallory@example.com' }), key(party.clientSecret), checks),
    ).rejects.toBeInstanceOf(joseErrors.JWSSignatureVerificationFailed);
  });

  it('refuses an ID token for another nonce, audience or issuer, and a token response without one', async () => {
    const cases: Array<[string, (idToken: string) => string | undefined, RegExp]> = [
      ['nonce', (t) => withClaims(t, { nonce: client.randomNonce() }), /nonce/],
      ['aud', (t) => withClaims(t, { aud: 'cli_someone_else' }), /aud/],
      ['iss', (t) => withClaims(t, { iss: 'https://evil.example' }), /iss/],
      ['missing', () => undefined, /id_token/],
    ];
    for (const [name, rewrite, message] of cases) {
      const config = await discover();
      rewriteIdToken(config, rewrite);
      expect(await refusal(codeGrant(config, await browserSignIn(server, party, config))), name).toMatch(message);
    }
  });

  it('does not check the HS256 signature itself: it relies on TLS to the token endpoint (OIDC Core §3.1.3.7 item 6)', async () => {
    // What a website must know: openid-client takes the ID token straight from the token endpoint
    // and checks its claims, not its HMAC; enableNonRepudiationChecks cannot be used, since it
    // supports only public-key signatures (agentauth's JWKS is empty by contract). A site that
    // wants the signature checked verifies it with the client secret, as the test above does.
    const config = await discover();
    rewriteIdToken(config, (t) => `${t.slice(0, t.lastIndexOf('.'))}.${Buffer.alloc(32).toString('base64url')}`);
    await expect(codeGrant(config, await browserSignIn(server, party, config))).resolves.toBeDefined();

    const strict = await discover();
    client.enableNonRepudiationChecks(strict);
    await expect(codeGrant(strict, await browserSignIn(server, party, strict))).rejects.toMatchObject({
      code: 'OAUTH_UNSUPPORTED_OPERATION',
    });
  });

  it('refuses a redirect whose iss is not the issuer or is missing (RFC 9207), before the code is spent', async () => {
    const config = await discover();
    const signIn = await browserSignIn(server, party, config);
    for (const iss of ['https://evil.example', undefined]) {
      const forged = new URL(signIn.callbackUrl);
      if (iss === undefined) forged.searchParams.delete('iss');
      else forged.searchParams.set('iss', iss);
      expect(await refusal(codeGrant(config, signIn, forged))).toMatch(/iss/);
    }
    // Neither attempt reached the token endpoint: the genuine redirect still signs in.
    await expect(codeGrant(config, signIn)).resolves.toBeDefined();
  });

  it('refuses a redirect that answers another sign-in (state)', async () => {
    const config = await discover();
    const signIn = await browserSignIn(server, party, config);
    expect(await refusal(codeGrant(config, { ...signIn, expectedState: client.randomState() }))).toMatch(/state/);
  });

  it('a wrong client secret is refused at the token endpoint (client_secret_post): invalid_client', async () => {
    const config = await discover('cls_not-the-secret');
    await expect(codeGrant(config, await browserSignIn(server, party, config))).rejects.toMatchObject({
      error: 'invalid_client',
      status: 401,
    });
  });

  it('reads userinfo for the signed-in agent, and refuses it for an unexpected subject', async () => {
    const config = await discover();
    const tokens = await codeGrant(config, await browserSignIn(server, party, config));
    expect(await client.fetchUserInfo(config, tokens.access_token, party.agentId)).toEqual({
      sub: party.agentId,
      email: 'ada@example.com',
      email_verified: false,
      name: 'Ada Lovelace',
    });
    expect(await refusal(client.fetchUserInfo(config, tokens.access_token, 'agt_someone_else'))).toMatch(/sub/);
  });

  it('refreshes with rotation: new tokens, the old refresh token refused, and its reuse ends the grant', async () => {
    const config = await discover();
    const first = await codeGrant(config, await browserSignIn(server, party, config));
    const second = await client.refreshTokenGrant(config, first.refresh_token!);
    expect(second.refresh_token).toBeDefined();
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect(second.access_token).not.toBe(first.access_token);
    // A fresh ID token on refresh: same subject, no nonce.
    expect(second.claims()).toMatchObject({ sub: party.agentId, aud: party.clientId, iss: server.baseUrl });
    expect(second.claims()?.nonce).toBeUndefined();
    expect((await client.tokenIntrospection(config, second.access_token)).active).toBe(true);

    await expect(client.refreshTokenGrant(config, first.refresh_token!)).rejects.toMatchObject({
      error: 'invalid_grant',
    });
    // Reuse of a rotated token means it leaked: the whole grant is revoked (RFC 9700 §4.14), the new tokens too.
    expect((await client.tokenIntrospection(config, second.refresh_token!)).active).toBe(false);
    expect((await client.tokenIntrospection(config, second.access_token)).active).toBe(false);
  });

  it('introspects its tokens, and a revoked token introspects inactive and stops working', async () => {
    const config = await discover();
    const tokens = await codeGrant(config, await browserSignIn(server, party, config));

    const access = await client.tokenIntrospection(config, tokens.access_token);
    expect(access).toMatchObject({
      active: true,
      sub: party.agentId,
      client_id: party.clientId,
      scope: 'openid email profile',
      token_type: 'Bearer',
      iss: server.baseUrl,
    });
    expect((await client.tokenIntrospection(config, tokens.refresh_token!)).active).toBe(true);

    await client.tokenRevocation(config, tokens.access_token);
    expect(await client.tokenIntrospection(config, tokens.access_token)).toEqual({ active: false });
    await expect(client.fetchUserInfo(config, tokens.access_token, party.agentId)).rejects.toThrow();

    // Revoking the refresh token ends the grant: no more refreshes.
    await client.tokenRevocation(config, tokens.refresh_token!);
    await expect(client.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({
      error: 'invalid_grant',
    });
  });
});
