/**
 * A single-page app in a real browser (docs/guides/browser-apps.md): Debian's Chromium, driven by
 * playwright-core, loads a page from a second loopback origin that uses oidc-client-ts's browser
 * build as a public client. It signs in (the test plays the agent over the back channel), then
 * refreshes and revokes, every call from the page across origins under CORS (PUBLIC_CLIENTS turns
 * it on). A page of an origin the client did not register cannot redeem a code it holds, and the
 * code is left for the app.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext, Page, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { digest } from '../src/crypto.ts';
import { registerClient } from '../src/domain/clients.ts';
import {
  ARRIVAL_TIMEOUT,
  closeAll,
  cspViolations,
  haveChromium,
  launchChromium,
  watchedPage,
} from './helpers/browser.ts';
import { authenticate, continueFlow, type Party, postForm, startFlow } from './helpers/flow.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';

const OIDC_CLIENT_TS = readFileSync(
  new URL('../node_modules/oidc-client-ts/dist/browser/oidc-client-ts.min.js', import.meta.url),
  'utf8',
);

/** What the page shows of oidc-client-ts's User. */
interface UserView {
  access_token: string;
  refresh_token: string | null;
  scope: string;
  token_type: string;
  expires_at: number;
}

/**
 * The app's page, at / and at /callback: oidc-client-ts configured as the guide says (a public
 * client: no secret, `email profile`, no ID token to expect), and `window.app` for the test.
 */
function appPage(settings: { authority: string; client_id: string; redirect_uri: string }): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Notes</title>
<script src="/oidc-client-ts.min.js"></script>
<script>
const manager = new oidc.UserManager({ ...${JSON.stringify(settings)}, scope: 'email profile' });
const view = (user) => user && {
  access_token: user.access_token, refresh_token: user.refresh_token ?? null,
  scope: user.scope, token_type: user.token_type, expires_at: user.expires_at,
};
window.app = {
  signIn: () => manager.signinRedirect(),
  refresh: async () => view(await manager.signinSilent()),
  revoke: async () => { await manager.revokeTokens(); return view(await manager.getUser()); },
  user: async () => view(await manager.getUser()),
};
if (location.pathname === '/callback') {
  manager.signinRedirectCallback().then(
    () => { document.body.dataset.outcome = 'signed-in'; },
    (error) => { document.body.dataset.outcome = 'failed: ' + error.message; },
  );
}
</script></head><body><h1>Notes</h1></body></html>`;
}

interface AppServer {
  origin: string;
  /** The page's settings, once the client is registered. */
  page: string;
  close(): Promise<void>;
}

/** A static web server for the app on `host`: its page, and oidc-client-ts's browser build. */
async function startAppServer(host: string): Promise<AppServer> {
  const app = { page: '<!doctype html><title>Elsewhere</title><body>' } as AppServer;
  const server: Server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://app').pathname;
    if (path === '/oidc-client-ts.min.js') {
      response.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' });
      response.end(OIDC_CLIENT_TS);
    } else if (path === '/' || path === '/callback') {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      response.end(app.page);
    } else {
      response.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, resolve);
  });
  app.origin = `http://${host}:${(server.address() as AddressInfo).port}`;
  app.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return app;
}

/** The calls the app's pages make to the server: method, path, the Origin sent, and the answer's CORS. */
interface Call {
  method: string;
  path: string;
  origin: string | undefined;
  status: number;
  allowOrigin: string | undefined;
}

function recordCalls(page: Page, server: TestServer): Call[] {
  const calls: Call[] = [];
  const serverOrigin = new URL(server.baseUrl).origin;
  page.on('requestfinished', (request: Request) => {
    const url = new URL(request.url());
    // The app's calls, not the authorization page's own (which is on the server's origin).
    if (url.origin !== serverOrigin || new URL(request.frame().url()).origin === serverOrigin) return;
    void (async () => {
      const response = await request.response();
      const headers = await request.allHeaders();
      calls.push({
        method: request.method(),
        path: url.pathname,
        origin: headers.origin,
        status: response?.status() ?? 0,
        allowOrigin: (await response?.allHeaders())?.['access-control-allow-origin'],
      });
    })();
  });
  return calls;
}

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
    app.page = appPage({ authority: server.baseUrl, client_id: party.clientId, redirect_uri: redirectUri });
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
      await page.goto(`${app.origin}/`);
      await page.evaluate(() => {
        void (window as unknown as { app: { signIn(): Promise<void> } }).app.signIn();
      });

      // The agent's part: the request id from the authorization page, then the back channel.
      await page.waitForURL((url) => url.pathname === '/authorize');
      const requestId = await page.locator('meta[name="request-id"]').getAttribute('content');
      expect((await authenticate(server, party, requestId!)).status).toBe(200);

      await page.waitForURL((url) => url.origin === app.origin && url.pathname === '/callback', {
        timeout: ARRIVAL_TIMEOUT,
      });
      await page.waitForFunction(() => document.body.dataset.outcome !== undefined, null, { timeout: ARRIVAL_TIMEOUT });
      const outcome = await page.evaluate(() => document.body.dataset.outcome);
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
