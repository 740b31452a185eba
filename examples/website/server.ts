/**
 * An example website with "Sign in with your AI agent", on plain node:http. The OpenID Connect
 * part is sign-in.ts (20 lines); this file is the website around it: routes, configuration,
 * error pages.
 *
 *   AGENTAUTH_ISSUER=http://localhost:3000 AGENTAUTH_CLIENT_ID=cli_… AGENTAUTH_CLIENT_SECRET=cls_… \
 *   PORT=8080 PUBLIC_URL=http://localhost:8080 node --import tsx examples/website/server.ts
 *
 * Tests and the demo start it with startWebsite() instead.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import * as oidc from 'openid-client';
import { BUTTON_CSS, errorPage, homePage, SITE_CSS } from './pages.ts';
import { SessionStore } from './sessions.ts';
import { agentSignIn } from './sign-in.ts';

export interface WebsiteOptions {
  /** The agentauth server (its BASE_URL). https, or http on localhost / 127.0.0.1 only. */
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** The port to listen on; 0 picks a free one. */
  port: number;
  /** The address to listen on; 127.0.0.1 unless given. */
  host?: string;
  /** The site's own origin as browsers reach it; the redirect URI is `${publicUrl}/callback`. Default http://localhost:<port>. */
  publicUrl?: string;
  /** Where a failed sign-in is reported (its error code, never a token or secret). Default: stderr. */
  log?: (line: string) => void;
}

export interface RunningWebsite {
  /** The home page, as browsers reach it (publicUrl). */
  url: string;
  /** The redirect URI to register with agentauth. */
  redirectUri: string;
  close(): Promise<void>;
}

/** Plain http is allowed only for an issuer on this machine; anything else must be https. */
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1']);

export function issuerUrl(issuer: string): { url: URL; allowHttp: boolean } {
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    throw new Error(`AGENTAUTH_ISSUER is not a URL: ${issuer}`);
  }
  if (url.protocol === 'https:') return { url, allowHttp: false };
  if (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname)) return { url, allowHttp: true };
  throw new Error(`AGENTAUTH_ISSUER must be https (plain http only for localhost or 127.0.0.1): ${issuer}`);
}

function siteOrigin(publicUrl: string): string {
  const url = new URL(publicUrl);
  if (url.pathname.replace(/\/$/, '') !== '' || url.search || url.hash)
    throw new Error(
      `PUBLIC_URL must be an origin such as https://app.example (the site serves /callback at its root): ${publicUrl}`,
    );
  return url.origin;
}

export async function startWebsite(options: WebsiteOptions): Promise<RunningWebsite> {
  const { url: issuer, allowHttp } = issuerUrl(options.issuer);
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host ?? '127.0.0.1', resolve);
  });
  try {
    const origin = siteOrigin(options.publicUrl ?? `http://localhost:${(server.address() as AddressInfo).port}`);
    const redirectUri = `${origin}/callback`;
    const signIn = await agentSignIn({
      issuer,
      clientId: options.clientId,
      clientSecret: options.clientSecret,
      redirectUri,
      allowHttp,
    });
    const sessions = new SessionStore({ secureCookie: origin.startsWith('https:') });

    async function route(request: IncomingMessage, response: ServerResponse): Promise<void> {
      const url = new URL(request.url ?? '/', origin);
      switch (`${request.method} ${url.pathname}`) {
        case 'GET /':
          return send(response, 200, 'text/html', homePage(sessions.of(request, response)));
        case 'GET /agentauth-button.css':
          return send(response, 200, 'text/css', BUTTON_CSS);
        case 'GET /site.css':
          return send(response, 200, 'text/css', SITE_CSS);
        case 'GET /login':
          return redirect(response, (await signIn.login(sessions.of(request, response))).href);
        case 'GET /callback': {
          const session = sessions.of(request, response);
          const started = session.pending !== undefined;
          // The registered redirect URI with the query the browser brought: what openid-client checks against.
          const callbackUrl = new URL(redirectUri);
          callbackUrl.search = url.search;
          try {
            await signIn.callback(session, callbackUrl);
          } catch (error) {
            log(
              `example website: sign-in failed: ${started ? errorCode(error) : 'no sign-in in progress in this browser'}`,
            );
            return send(response, 400, 'text/html', errorPage(started ? explain(error) : NOT_STARTED));
          }
          sessions.renew(request, response, session);
          return redirect(response, '/');
        }
        case 'POST /logout':
          sessions.end(request, response);
          return redirect(response, '/');
        default:
          return send(response, 404, 'text/plain', 'Not found\n');
      }
    }

    server.on('request', (request: IncomingMessage, response: ServerResponse) => {
      route(request, response).catch((error: unknown) => {
        log(`example website: ${request.method} ${request.url?.split('?')[0]} failed: ${errorCode(error)}`);
        if (!response.headersSent)
          send(response, 500, 'text/html', errorPage('Something went wrong on this website. Please try again.'));
      });
    });
    return {
      url: `${origin}/`,
      redirectUri,
      close: () => closeServer(server),
    };
  } catch (error) {
    await closeServer(server);
    throw error;
  }
}

const NOT_STARTED = 'This sign-in was not started in this browser, or it has already finished. Please sign in again.';

/** What the person is told; the details stay in the log. */
function explain(error: unknown): string {
  if (error instanceof oidc.AuthorizationResponseError && error.error === 'access_denied')
    return 'You cancelled the sign-in.';
  return 'The sign-in could not be completed. Please sign in again.';
}

/** An error's code for the log: openid-client's codes, OAuth error codes and its messages carry no token or secret. */
function errorCode(error: unknown): string {
  if (error instanceof oidc.AuthorizationResponseError || error instanceof oidc.ResponseBodyError)
    return `${error.code}: ${error.error}`;
  if (error instanceof oidc.ClientError) return `${error.code ?? error.name}: ${error.message}`;
  return error instanceof Error ? `${error.name}: ${error.message}` : 'unknown error';
}

const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'none'; style-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
};

function send(response: ServerResponse, status: number, type: string, body: string): void {
  response.writeHead(status, {
    ...SECURITY_HEADERS,
    'content-type': `${type}; charset=utf-8`,
    'cache-control': type === 'text/css' ? 'public, max-age=300' : 'no-store',
  });
  response.end(body);
}

function redirect(response: ServerResponse, location: string): void {
  response.writeHead(303, { ...SECURITY_HEADERS, location, 'cache-control': 'no-store' });
  response.end();
}

function closeServer(server: ReturnType<typeof createServer>): Promise<void> {
  return new Promise((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
}

// ---------------------------------------------------------------------------------------------
// node --import tsx examples/website/server.ts: configured by the environment.

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required (see examples/website/README.md)`);
  return value;
}

async function main(): Promise<void> {
  const port = Number(process.env.PORT ?? 8080);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`PORT must be a port number (got "${process.env.PORT}")`);
  const issuer = required('AGENTAUTH_ISSUER');
  const website = await startWebsite({
    issuer,
    clientId: required('AGENTAUTH_CLIENT_ID'),
    clientSecret: required('AGENTAUTH_CLIENT_SECRET'),
    port,
    host: process.env.HOST,
    publicUrl: process.env.PUBLIC_URL ?? `http://localhost:${port}`,
  });
  process.stdout.write(
    `Example website on ${website.url} (signs in with ${issuer}; redirect URI ${website.redirectUri}). Ctrl-C stops it.\n`,
  );
  const stop = () => website.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    process.stderr.write(`example website: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
