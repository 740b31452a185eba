/**
 * The whole flow driven by a real OAuth/OIDC client library (oauth4webapi) over real HTTP:
 * discovery, authorization request, code exchange with PKCE and ID token validation, userinfo,
 * refresh, introspection and revocation. The browser and agent steps are played with fetch.
 */
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authenticate, continueFlow, metaContent, type Party, setupParty } from './helpers/flow.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';

let server: TestServer;
let party: Party;
const insecure = { [oauth.allowInsecureRequests]: true };

beforeAll(async () => {
  server = await startTestServer();
  party = await setupParty(server);
});
afterAll(() => server.close());

describe('oauth4webapi against agentauth', () => {
  it('discovers, authorizes, exchanges, reads userinfo, refreshes, introspects and revokes', async () => {
    const issuer = new URL(server.baseUrl);
    const as = await oauth.processDiscoveryResponse(
      issuer,
      await oauth.discoveryRequest(issuer, { algorithm: 'oidc', ...insecure }),
    );
    expect(as.issuer).toBe(server.baseUrl);
    const client: oauth.Client = { client_id: party.clientId, id_token_signed_response_alg: 'HS256' };
    const clientAuth = oauth.ClientSecretPost(party.clientSecret);

    // The website builds the authorization request.
    const codeVerifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const nonce = oauth.generateRandomNonce();
    const authorizationUrl = new URL(as.authorization_endpoint!);
    authorizationUrl.search = new URLSearchParams({
      client_id: client.client_id,
      redirect_uri: party.redirectUri,
      response_type: 'code',
      scope: 'openid email profile',
      state,
      nonce,
      code_challenge: await oauth.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
    }).toString();

    // The browser opens it; the agent reads the request id and authenticates; the browser continues.
    const pageResponse = await fetch(authorizationUrl);
    expect(pageResponse.status).toBe(200);
    const requestId = metaContent(await pageResponse.text(), 'request-id')!;
    const cookie = pageResponse.headers.get('set-cookie')!.split(';')[0]!;
    expect((await authenticate(server, party, requestId, 'claude-test')).status).toBe(200);
    const redirect = await continueFlow(server, { requestId, cookie });
    expect(redirect.status).toBe(302);

    // The website validates the authorization response (state and RFC 9207 iss) and exchanges the code.
    const params = oauth.validateAuthResponse(as, client, new URL(redirect.headers.get('location')!), state);
    const tokenResponse = await oauth.authorizationCodeGrantRequest(
      as,
      client,
      clientAuth,
      params,
      party.redirectUri,
      codeVerifier,
      insecure,
    );
    const result = await oauth.processAuthorizationCodeResponse(as, client, tokenResponse, {
      expectedNonce: nonce,
      requireIdToken: true,
    });
    expect(result.token_type).toBe('bearer');
    const claims = oauth.getValidatedIdTokenClaims(result)!;
    expect(claims).toMatchObject({
      iss: server.baseUrl,
      sub: party.agentId,
      aud: party.clientId,
      nonce,
      email: 'ada@example.com',
      name: 'Ada Lovelace',
    });

    const userinfo = await oauth.processUserInfoResponse(
      as,
      client,
      claims.sub,
      await oauth.userInfoRequest(as, client, result.access_token, insecure),
    );
    expect(userinfo).toEqual({
      sub: party.agentId,
      email: 'ada@example.com',
      email_verified: false,
      name: 'Ada Lovelace',
    });

    const refreshed = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, clientAuth, result.refresh_token!, insecure),
    );
    expect(refreshed.refresh_token).not.toBe(result.refresh_token);

    const introspection = await oauth.processIntrospectionResponse(
      as,
      client,
      await oauth.introspectionRequest(as, client, clientAuth, refreshed.access_token, insecure),
    );
    expect(introspection).toMatchObject({
      active: true,
      client_id: party.clientId,
      sub: party.agentId,
      scope: 'openid email profile',
    });

    await oauth.processRevocationResponse(
      await oauth.revocationRequest(as, client, clientAuth, refreshed.access_token, insecure),
    );
    const after = await oauth.processIntrospectionResponse(
      as,
      client,
      await oauth.introspectionRequest(as, client, clientAuth, refreshed.access_token, insecure),
    );
    expect(after.active).toBe(false);
    await expect(
      oauth
        .userInfoRequest(as, client, refreshed.access_token, insecure)
        .then((r) => oauth.processUserInfoResponse(as, client, claims.sub, r)),
    ).rejects.toThrow();
  });

  it('rejects an authorization response from another issuer (mix-up defence via iss)', async () => {
    const issuer = new URL(server.baseUrl);
    const as = await oauth.processDiscoveryResponse(
      issuer,
      await oauth.discoveryRequest(issuer, { algorithm: 'oidc', ...insecure }),
    );
    const client: oauth.Client = { client_id: party.clientId };
    const forged = new URL(`${party.redirectUri}?code=cod_x&state=s&iss=${encodeURIComponent('https://evil.example')}`);
    expect(() => oauth.validateAuthResponse(as, client, forged, 's')).toThrow();
  });
});
