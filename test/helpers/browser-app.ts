/**
 * A single-page app of another origin for the real-browser suites (docs/guides/browser-apps.md):
 * a static web server on a loopback address serving oidc-client-ts's browser build and one page
 * that configures it as a public client, and a record of the calls the page makes to agentauth
 * with the CORS answer each got.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page, Request } from 'playwright-core';
import { ARRIVAL_TIMEOUT } from './browser.ts';
import { authenticate, type Party } from './flow.ts';
import type { TestServer } from './server.ts';

const OIDC_CLIENT_TS = readFileSync(
  new URL('../../node_modules/oidc-client-ts/dist/browser/oidc-client-ts.min.js', import.meta.url),
  'utf8',
);

/** What the page shows of oidc-client-ts's User (`window.app.user()`, `refresh()`, `revoke()`). */
export interface UserView {
  access_token: string;
  refresh_token: string | null;
  id_token: string | null;
  /** The ID token's claims, merged with /userinfo's when `loadUserInfo` is on. */
  profile: Record<string, unknown>;
  scope: string;
  token_type: string;
  expires_at: number;
}

/** The UserManager's settings the suites choose: oidc-client-ts's own names. */
export interface AppSettings {
  authority: string;
  client_id: string;
  redirect_uri: string;
  scope: string;
  loadUserInfo?: boolean;
}

/**
 * The app's page, at / and at /callback: oidc-client-ts's UserManager with `settings` (a public
 * client: no secret), and `window.app` for the test. /callback completes the sign-in and sets
 * `document.body.dataset.outcome` to `signed-in` or `failed: …`.
 *
 * @example
 * app.page = appPage({ authority: server.baseUrl, client_id, redirect_uri, scope: 'email profile' });
 */
export function appPage(settings: AppSettings): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Notes</title>
<script src="/oidc-client-ts.min.js"></script>
<script>
const manager = new oidc.UserManager(${JSON.stringify(settings)});
const view = (user) => user && {
  access_token: user.access_token, refresh_token: user.refresh_token ?? null,
  id_token: user.id_token ?? null, profile: user.profile,
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

export interface AppServer {
  origin: string;
  /** The HTML served at / and /callback: set it once the client is registered (appPage). */
  page: string;
  close(): Promise<void>;
}

/**
 * A static web server for the app on `host` (a loopback address: another one is another origin):
 * its page, and oidc-client-ts's browser build at /oidc-client-ts.min.js.
 *
 * @example
 * const app = await startAppServer('127.0.0.1'); // app.origin === 'http://127.0.0.1:41234'
 */
export async function startAppServer(host: string): Promise<AppServer> {
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

/** A call an app's page made to the server: method, path, the Origin sent, and the answer's CORS. */
export interface Call {
  method: string;
  path: string;
  origin: string | undefined;
  status: number;
  allowOrigin: string | undefined;
}

/**
 * Records, as they finish, the calls the app's pages in `page` make to `server` (not the
 * authorization page's own, which is on the server's origin).
 *
 * @example
 * const calls = recordCalls(page, server); // later: [{ method: 'POST', path: '/token', status: 200, … }]
 */
export function recordCalls(page: Page, server: TestServer): Call[] {
  const calls: Call[] = [];
  const serverOrigin = new URL(server.baseUrl).origin;
  page.on('requestfinished', (request: Request) => {
    const url = new URL(request.url());
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

/**
 * Signs in from the app's page at / as a person would, the test playing the agent: the page's
 * `window.app.signIn()`, the request id read from agentauth's page, the agent's authentication
 * over the back channel, then the browser's own way back to /callback. Returns the page's outcome
 * (`signed-in`, or `failed: ` and oidc-client-ts's message).
 *
 * @example
 * expect(await signInFromApp(page, server, party, app)).toBe('signed-in');
 */
export async function signInFromApp(page: Page, server: TestServer, party: Party, app: AppServer): Promise<string> {
  await page.goto(`${app.origin}/`);
  await page.evaluate(() => {
    void (window as unknown as { app: { signIn(): Promise<void> } }).app.signIn();
  });
  await page.waitForURL((url) => url.pathname === '/authorize');
  const requestId = await page.locator('meta[name="request-id"]').getAttribute('content');
  const authenticated = await authenticate(server, party, requestId!);
  if (authenticated.status !== 200) throw new Error(`authenticate answered ${authenticated.status}`);
  await page.waitForURL((url) => url.origin === app.origin && url.pathname === '/callback', {
    timeout: ARRIVAL_TIMEOUT,
  });
  await page.waitForFunction(() => document.body.dataset.outcome !== undefined, null, { timeout: ARRIVAL_TIMEOUT });
  return (await page.evaluate(() => document.body.dataset.outcome))!;
}
