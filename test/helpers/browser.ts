/**
 * What the real-browser suites share: Debian's Chromium through playwright-core, a real HTTP
 * server standing in for a website's callback, and pages whose console messages, errors and
 * failed responses are collected.
 */
import { existsSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Browser, type BrowserContext, type CDPSession, chromium, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
export const haveChromium = existsSync(CHROMIUM);
if (!haveChromium) {
  console.warn(
    "browser tests skipped: /usr/bin/chromium not found; install Debian's chromium package (apt-get install -y chromium)",
  );
}

export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** How long the browser may take to reach the callback on its own (the page polls every second). */
export const ARRIVAL_TIMEOUT = 10_000;

// ---------------------------------------------------------------------------------------------
// The client's callback: a tiny real HTTP server that records what it received.

export interface CallbackHit {
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
}

export interface CallbackServer {
  server: Server;
  /** The redirect URI to register: http://127.0.0.1:<port>/callback */
  uri: string;
  origin: string;
  hits: CallbackHit[];
  close(): Promise<void>;
}

export async function startCallbackServer(): Promise<CallbackServer> {
  const hits: CallbackHit[] = [];
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (req.method === 'GET' && url.pathname === '/callback') {
      hits.push({ query: url.searchParams, headers: req.headers });
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Callback</title></head><body><h1 id="callback">Callback received</h1></body></html>',
      );
      return;
    }
    res.writeHead(404, { 'content-type': 'text/plain' });
    res.end('not found');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;
  return {
    server,
    uri: `${origin}/callback`,
    origin,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

// ---------------------------------------------------------------------------------------------
// Pages with their console messages and errors collected.

export interface WatchedPage {
  page: Page;
  console: string[];
  errors: string[];
  /** Responses of 400 and above the page received, as "status url". */
  failed: string[];
}

export async function watchedPage(context: BrowserContext): Promise<WatchedPage> {
  const page = await context.newPage();
  const watched: WatchedPage = { page, console: [], errors: [], failed: [] };
  page.on('console', (message) =>
    watched.console.push(`${message.type()}: ${message.text()} (${message.location().url})`),
  );
  page.on('pageerror', (error) => watched.errors.push(String(error)));
  page.on('response', (response) => {
    if (response.status() >= 400) watched.failed.push(`${response.status()} ${response.url()}`);
  });
  return watched;
}

export function cspViolations(watched: WatchedPage): string[] {
  return watched.console.filter((line) => /Content Security Policy|Refused to|violates/i.test(line));
}

/** Chromium as the suites launch it (headless, no sandbox: CI runs as root). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
}

/**
 * Closes every one of them (a browser, a callback server, a test server) even when one fails to
 * close, then throws the first failure: a suite's afterAll.
 */
export async function closeAll(...things: Array<{ close(): Promise<unknown> } | undefined>): Promise<void> {
  const results = await Promise.allSettled(things.map((thing) => thing?.close()));
  const failed = results.filter((result): result is PromiseRejectedResult => result.status === 'rejected');
  if (failed.length > 0) throw failed[0]!.reason;
}

/**
 * Adds to a page's DevTools session a platform authenticator that holds discoverable credentials
 * and always says yes (Chromium's virtual authenticator), after enabling WebAuthn there.
 */
export async function addVirtualAuthenticator(cdp: CDPSession): Promise<string> {
  await cdp.send('WebAuthn.enable');
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
  return authenticatorId;
}
