/**
 * A single-page app in a real browser (docs/guides/browser-apps.md): Debian's Chromium, driven by
 * playwright-core, loads a page from a second loopback origin that uses oidc-client-ts's browser
 * build as a public client. It signs in (the test plays the agent over the back channel), then
 * refreshes and revokes, every call from the page across origins under CORS (PUBLIC_CLIENTS turns
 * it on). A page of an origin the client did not register cannot redeem a code it holds, and the
 * code is left for the app.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { digest } from '../src/crypto.ts';
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
import { authenticate, continueFlow, type Party, postForm, startFlow } from './helpers/flow.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';

describe.skipIf(!haveChromium)('a single-page app with oidc-client-ts in Chromium (CORS)', () => {
  let server: TestServer;
  let app: AppServer;
  let elsewhere: AppServer;
  let browser: Browser;
  let party: Party;

  beforeAll(async () => {
    [server, app, elsewhere, browser] = await Promise.all([
      startTestServer({ env: { PUBLIC_CLIENTS: 'true' } }),
      startAppServer('127.0.0.1'),
      // Another loopback address is another origin, and not one a loopback redirect URI admits.
      startAppServer('127.0.0.2'),
      launchChromium(),
    ]);
    const redirectUri = `${app.origin}/callback`;
    const { client } = await registerClient(server.ctx, { name: 'Notes', redirectUris: [redirectUri], public: true });
    party = { clientId: client.id, clientSecret: '', redirectUri, ...(await server.createAgent()) };
    // As the guide says for HS256: no openid, so no ID token to expect.
    app.page = appPage({
      authority: server.baseUrl,
      client_id: party.clientId,
      redirect_uri: redirectUri,
      scope: 'email profile',
    });
  });

  afterAll(() => closeAll(browser, app, elsewhere, server));

  async function withContext<T>(run: (context: BrowserContext) => Promise<T>): Promise<T> {
    const context = await browser.newContext();
    try {
      return await run(context);
    } finally {
      await context.close();
    }
  }

  it('signs in, refreshes and revokes from the page, every call across origins', async () => {
    await withContext(async (context) => {
      const watched = await watchedPage(context);
      const { page } = watched;
      const calls = recordCalls(page, server);
      const outcome = await signInFromApp(page, server, party, app);
      expect(outcome, `console: ${watched.console.join('\n')}`).toBe('signed-in');

      type App = { app: Record<'refresh' | 'revoke' | 'user', () => Promise<UserView>> };
      const signedIn = await page.evaluate(() => (window as unknown as App).app.user());
      expect(signedIn).toMatchObject({ token_type: 'Bearer', scope: 'email profile' });
      const claims = JSON.parse(Buffer.from(signedIn.access_token.split('.')[1]!, 'base64url').toString());
      expect(claims).toMatchObject({ sub: party.agentId, client_id: party.clientId, scope: 'email profile' });

      const refreshed = await page.evaluate(() => (window as unknown as App).app.refresh());
      expect(refreshed.refresh_token).toEqual(expect.any(String));
      expect(refreshed.refresh_token).not.toBe(signedIn.refresh_token);
      expect(refreshed.access_token).not.toBe(signedIn.access_token);
      expect((await server.ctx.store.refreshTokens.find(digest(signedIn.refresh_token!)))?.used_at).not.toBeNull();

      const revoked = await page.evaluate(() => (window as unknown as App).app.revoke());
      expect(revoked.refresh_token).toBeNull();
      const grantId = (await server.ctx.store.refreshTokens.find(digest(refreshed.refresh_token!)))!.grant_id;
      expect((await server.ctx.store.grants.find(grantId))?.revoked_at).not.toBeNull();
      const again = await postForm(server, '/token', {
        grant_type: 'refresh_token',
        refresh_token: refreshed.refresh_token!,
        client_id: party.clientId,
      });
      expect(again.status).toBe(400);

      // Every call the page made went across origins, and each answer was the page's to read.
      await expect.poll(() => calls.filter((call) => call.path === '/revoke').length).toBe(2);
      const made = calls.map((call) => `${call.method} ${call.path} ${call.status}`);
      expect(made).toEqual(
        expect.arrayContaining(['GET /.well-known/openid-configuration 200', 'POST /token 200', 'POST /revoke 200']),
      );
      expect(made.filter((call) => call === 'POST /token 200')).toHaveLength(2);
      // The metadata is cacheable: the callback page may read it from the browser's cache.
      expect(calls[0]).toMatchObject({ path: '/.well-known/openid-configuration', origin: app.origin });
      for (const call of calls) {
        if (call.method === 'POST') expect(call.origin, call.path).toBe(app.origin);
        expect(call.allowOrigin, call.path).toBe(call.path.startsWith('/.well-known/') ? '*' : app.origin);
      }
      expect(watched.errors).toEqual([]);
      expect(watched.console.filter((line) => /CORS|blocked/i.test(line))).toEqual([]);
      expect(cspViolations(watched)).toEqual([]);
    });
  });

  it('a page of another origin holding a code cannot redeem it; the app then does', async () => {
    const started = await startFlow(server, party, { scope: 'email profile' });
    expect((await authenticate(server, party, started.requestId)).status).toBe(200);
    const redirect = await continueFlow(server, started);
    const code = new URL(redirect.headers.get('location')!).searchParams.get('code')!;
    const form = {
      grant_type: 'authorization_code',
      code,
      code_verifier: started.verifier,
      client_id: party.clientId,
      redirect_uri: party.redirectUri,
    };
    const tokenCall = async (page: Page) =>
      page.evaluate(
        async ({ url, body }) => {
          try {
            const response = await fetch(url, { method: 'POST', body: new URLSearchParams(body) });
            return { status: response.status, body: (await response.json()) as Record<string, unknown> };
          } catch (error) {
            return { failed: String(error) };
          }
        },
        { url: `${server.baseUrl}/token`, body: form },
      );

    await withContext(async (context) => {
      const page = await context.newPage();
      await page.goto(`${elsewhere.origin}/`);
      // The browser withholds the refusal from the page: all it sees is a failed fetch.
      expect(await tokenCall(page)).toEqual({ failed: expect.stringMatching(/TypeError: Failed to fetch/) });
      expect((await server.ctx.store.codes.find(digest(code)))?.redeemed_at).toBeNull();

      await page.goto(`${app.origin}/`);
      const honest = await tokenCall(page);
      expect(honest).toMatchObject({ status: 200, body: { token_type: 'Bearer', scope: 'email profile' } });
    });
  });
});
