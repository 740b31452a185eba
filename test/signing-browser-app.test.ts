/**
 * A single-page app gets an ID token with a key pair (docs/design.md §19, docs/guides/browser-apps.md):
 * with TOKEN_SIGNING_ALG=ES256 and PUBLIC_CLIENTS (so CORS is on), Debian's Chromium loads a page
 * of a second loopback origin that uses oidc-client-ts's browser build as a public client asking
 * for `openid email profile` with `loadUserInfo`. It signs in (the test plays the agent over the
 * back channel) and holds an ID token whose profile is the agent's, merged with /userinfo called
 * across origins. oidc-client-ts checks no signature, so the test verifies the ID token as the
 * guide tells an app to: with jose, against the key set at the metadata's jwks_uri.
 */
import { createRemoteJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';
import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerClient } from '../src/domain/clients.ts';
import { closeAll, cspViolations, haveChromium, launchChromium, watchedPage } from './helpers/browser.ts';
import {
  type AppServer,
  appPage,
  recordCalls,
  signInFromApp,
  startAppServer,
  type UserView,
} from './helpers/browser-app.ts';
import type { Party } from './helpers/flow.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';

type App = { app: Record<'refresh' | 'user', () => Promise<UserView>> };

describe.skipIf(!haveChromium)('a single-page app with oidc-client-ts gets an ID token (ES256)', () => {
  let server: TestServer;
  let app: AppServer;
  let browser: Browser;
  let party: Party;

  beforeAll(async () => {
    [server, app, browser] = await Promise.all([
      startTestServer({ env: { TOKEN_SIGNING_ALG: 'ES256', PUBLIC_CLIENTS: 'true' } }),
      startAppServer('127.0.0.1'),
      launchChromium(),
    ]);
    const redirectUri = `${app.origin}/callback`;
    const { client } = await registerClient(server.ctx, { name: 'Notes', redirectUris: [redirectUri], public: true });
    party = { clientId: client.id, clientSecret: '', redirectUri, ...(await server.createAgent()) };
    app.page = appPage({
      authority: server.baseUrl,
      client_id: party.clientId,
      redirect_uri: redirectUri,
      scope: 'openid email profile',
      loadUserInfo: true,
    });
  });

  afterAll(() => closeAll(browser, app, server));

  async function withContext<T>(run: (context: BrowserContext) => Promise<T>): Promise<T> {
    const context = await browser.newContext();
    try {
      return await run(context);
    } finally {
      await context.close();
    }
  }

  it('signs in with openid and refreshes: ID tokens, the agent’s profile, /userinfo across origins', async () => {
    const user = await withContext(async (context) => {
      const watched = await watchedPage(context);
      const { page } = watched;
      const calls = recordCalls(page, server);
      const outcome = await signInFromApp(page, server, party, app);
      expect(outcome, `console: ${watched.console.join('\n')}`).toBe('signed-in');
      const signedIn = await page.evaluate(() => (window as unknown as App).app.user());
      // A refresh brings a new ID token, which oidc-client-ts accepts only for the same sign-in
      // (sub, and auth_time: OpenID Connect Core §12.2).
      const refreshed = await page.evaluate(() => (window as unknown as App).app.refresh());
      expect(refreshed.id_token).toEqual(expect.any(String));
      expect(refreshed.id_token).not.toBe(signedIn.id_token);
      expect(refreshed.profile).toMatchObject({ sub: party.agentId });
      // The profile leaves auth_time out (oidc-client-ts's filterProtocolClaims): read the tokens.
      const authTime = (jwt: string | null) => decodeJwt(jwt!).auth_time;
      expect(authTime(refreshed.id_token)).toEqual(expect.any(Number));
      expect(authTime(refreshed.id_token)).toBe(authTime(signedIn.id_token));

      await expect.poll(() => calls.some((call) => call.path === '/userinfo')).toBe(true);
      await expect.poll(() => calls.filter((call) => call.path === '/token').length).toBe(2);
      const made = calls.map((call) => `${call.method} ${call.path} ${call.status}`);
      expect(made).toEqual(
        expect.arrayContaining(['GET /.well-known/openid-configuration 200', 'POST /token 200', 'GET /userinfo 200']),
      );
      expect(made.filter((call) => call === 'POST /token 200')).toHaveLength(2);
      const userinfo = calls.find((call) => call.path === '/userinfo')!;
      expect(userinfo).toMatchObject({ origin: app.origin, allowOrigin: '*' });
      expect(watched.errors).toEqual([]);
      expect(watched.console.filter((line) => /CORS|blocked/i.test(line))).toEqual([]);
      expect(cspViolations(watched)).toEqual([]);
      return signedIn;
    });

    expect(user).toMatchObject({ token_type: 'Bearer', scope: 'openid email profile' });
    expect(user.id_token).toEqual(expect.any(String));
    // The ID token's claims, then /userinfo's (loadUserInfo), as oidc-client-ts merged them.
    expect(user.profile).toMatchObject({
      iss: server.baseUrl,
      aud: party.clientId,
      sub: party.agentId,
      email: 'ada@example.com',
      email_verified: expect.any(Boolean),
      name: 'Ada Lovelace',
    });
  });

  it('the ID token verifies with jose against jwks_uri, and its kid is the current key of the set', async () => {
    const user = await withContext(async (context) => {
      const { page } = await watchedPage(context);
      expect(await signInFromApp(page, server, party, app)).toBe('signed-in');
      return page.evaluate(() => (window as unknown as App).app.user());
    });

    const metadata = (await (await fetch(`${server.baseUrl}/.well-known/openid-configuration`)).json()) as {
      jwks_uri: string;
      id_token_signing_alg_values_supported: string[];
    };
    expect(metadata.id_token_signing_alg_values_supported).toEqual(['ES256']);
    const { payload, protectedHeader } = await jwtVerify(
      user.id_token!,
      createRemoteJWKSet(new URL(metadata.jwks_uri)),
      {
        issuer: server.baseUrl,
        audience: party.clientId,
        algorithms: ['ES256'],
      },
    );
    expect(protectedHeader).toMatchObject({ alg: 'ES256', typ: 'JWT', kid: expect.any(String) });
    expect(payload).toMatchObject({ sub: party.agentId, email: 'ada@example.com', auth_time: expect.any(Number) });

    const published = (await (await fetch(metadata.jwks_uri)).json()) as { keys: { kid: string }[] };
    expect(published.keys.map((key) => key.kid)).toContain(protectedHeader.kid);
    const current = (await server.ctx.store.signingKeys.list()).filter((key) => key.state === 'current');
    expect(current.map((key) => key.kid)).toEqual([protectedHeader.kid]);
    // The access token is signed by the same key, as RFC 9068 says (typ at+jwt).
    expect(decodeProtectedHeader(user.access_token)).toMatchObject({
      alg: 'ES256',
      typ: 'at+jwt',
      kid: protectedHeader.kid,
    });

    // A token altered in the browser would not pass: the check is the signature, not the decoding.
    const [header, claims, signature] = user.id_token!.split('.');
    const forged = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(claims!, 'base64url').toString()), sub: 'agt_someone_else' }),
    ).toString('base64url');
    await expect(
      jwtVerify(`${header}.${forged}.${signature}`, createRemoteJWKSet(new URL(metadata.jwks_uri))),
    ).rejects.toMatchObject({ code: 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED' });
  });
});
