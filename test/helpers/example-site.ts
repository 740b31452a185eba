/**
 * The website examples of docs/guides/website.md run as a developer runs them: a child process
 * (node, next start, python) with its environment, a real agentauth in the test process, and
 * the test as the browser (a cookie jar following redirects) and as the agent (@agentauth/agent).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { IncomingMessage } from 'node:http';
import { AgentAuth } from '@agentauth/agent';
import { expect } from 'vitest';
import type { CookieJar } from './cookie-jar.ts';
import { metaContent } from './flow.ts';
import type { TestServer } from './server.ts';

export interface ExampleSite {
  /** The site's origin, e.g. http://127.0.0.1:41234 (no trailing slash). */
  origin: string;
  /** Everything the process wrote, for failure messages and the check that no secret shows. */
  output(): string;
  close(): Promise<void>;
}

/**
 * Starts `command args` and waits until GET `origin`/ answers (any status below 500). Fails
 * with the process's output if it ends first or is not ready within `timeoutMs`.
 */
export async function startExampleSite(
  command: string,
  args: string[],
  options: { origin: string; env: Record<string, string>; cwd?: string; timeoutMs?: number },
): Promise<ExampleSite> {
  const child: ChildProcess = spawn(command, args, {
    cwd: options.cwd,
    // Nothing of the test's own AGENTAUTH_* settings, no proxy: only what the guide tells the developer to set.
    env: { ...cleanEnv(), ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const site: ExampleSite = {
    origin: options.origin,
    output: () => output,
    async close() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`${command} ${args.join(' ')} ended before it served ${options.origin}:\n${output}`);
    try {
      const response = await fetch(`${options.origin}/`, { signal: AbortSignal.timeout(5000), redirect: 'manual' });
      await response.arrayBuffer();
      if (response.status < 500) return site;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await site.close();
  throw new Error(`${command} ${args.join(' ')} did not serve ${options.origin} in time:\n${output}`);
}

function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env))
    if (!name.startsWith('AGENTAUTH_') && !/_proxy$/i.test(name)) env[name] = value;
  return { ...env, NO_PROXY: '*', no_proxy: '*' };
}

export type ClientAuthentication = 'client_secret_basic' | 'client_secret_post';

/**
 * How clients authenticated at agentauth's /token and /introspect, seen from the server's side
 * (node:http's diagnostics channel, in this process): an Authorization: Basic header, or not
 * (then the secret was in the form body, the only other way agentauth accepts).
 */
export function recordClientAuthentication(server: TestServer): {
  seen(): Array<{ path: string; method: ClientAuthentication }>;
  stop(): void;
} {
  const host = new URL(server.baseUrl).host;
  const seen: Array<{ path: string; method: ClientAuthentication }> = [];
  const listener = (message: unknown) => {
    const request = (message as { request: IncomingMessage }).request;
    const path = (request.url ?? '').split('?')[0]!;
    if (request.headers.host !== host || request.method !== 'POST' || !['/token', '/introspect'].includes(path)) return;
    const basic = /^basic /i.test(request.headers.authorization ?? '');
    seen.push({ path, method: basic ? 'client_secret_basic' : 'client_secret_post' });
  };
  subscribe('http.server.request.start', listener);
  return { seen: () => [...seen], stop: () => unsubscribe('http.server.request.start', listener) };
}

export interface SiteSignIn {
  /** agentauth's /authorize URL the site sent the browser to. */
  authorizeUrl: URL;
  /** Where the browser landed on the site after the callback, and that page's HTML. */
  landedOn: URL;
  page: string;
}

/**
 * The browser's part from the site's sign-in answer (a redirect) onwards: to agentauth's page,
 * where the agent signs in with its SDK (checking the page names this site's host); the page's
 * continue; back to the site's callback and wherever it sends the browser.
 */
export async function completeSignIn(options: {
  server: TestServer;
  agent: { agentId: string; agentSecret: string };
  browser: CookieJar;
  site: ExampleSite;
  /** The site's answer to "sign in": a redirect towards agentauth. */
  start: Response;
  model: string;
}): Promise<SiteSignIn> {
  const { server, browser, site, start } = options;
  expect(start.status, `the site's sign-in answered ${start.status}, not a redirect`).toBeGreaterThanOrEqual(300);
  expect(start.status).toBeLessThan(400);
  const { response: authorizePage, url: authorizeUrl } = await browser.follow(
    new URL(start.headers.get('location')!, site.origin),
  );
  const html = await authorizePage.text();
  expect(authorizeUrl.origin + authorizeUrl.pathname).toBe(`${server.baseUrl}/authorize`);
  expect(authorizePage.status, html.slice(0, 500)).toBe(200);
  const requestId = metaContent(html, 'request-id')!;

  const agent = new AgentAuth({
    issuer: server.baseUrl,
    agentId: options.agent.agentId,
    agentSecret: options.agent.agentSecret,
    model: options.model,
  });
  await agent.signIn({ requestId, expect: { host: new URL(site.origin).host } });

  // What the page's script does once the agent has signed in.
  const continued = await browser.fetch(new URL('/authorize/continue', server.baseUrl), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ request_id: requestId }).toString(),
  });
  expect(continued.status).toBe(302);
  const { response: landed, url: landedOn } = await browser.follow(continued.headers.get('location')!);
  const page = await landed.text();
  expect(landed.status, `${landedOn.href} answered ${landed.status}:\n${page.slice(0, 500)}\n${site.output()}`).toBe(
    200,
  );
  return { authorizeUrl, landedOn, page };
}

/**
 * What every example site must have done in a sign-in: asked agentauth for a code with PKCE S256,
 * state and nonce, for its registered redirect URI; and shown, back home, who signed in (the
 * agent's owner), the agent's id and the model it reported.
 */
export function expectSignedIn(
  { authorizeUrl, landedOn, page }: SiteSignIn,
  expected: { site: ExampleSite; redirectUri: string; signedInAs: string; agentId: string; model: string },
): void {
  const asked = Object.fromEntries(authorizeUrl.searchParams);
  expect(asked).toMatchObject({
    response_type: 'code',
    redirect_uri: expected.redirectUri,
    scope: 'openid email profile',
    code_challenge_method: 'S256',
  });
  expect(asked.state).toBeTruthy();
  expect(asked.nonce).toBeTruthy();
  expect(landedOn.href).toBe(`${expected.site.origin}/`);
  expect(textOf(page, 'signed-in')).toBe(`Signed in as ${expected.signedInAs}`);
  expect(textOf(page, 'sub')).toBe(expected.agentId);
  expect(textOf(page, 'model')).toBe(expected.model);
}

/** The text of the element with this id in a page (the examples mark what they show with ids). */
export function textOf(page: string, id: string): string | undefined {
  const match = new RegExp(`<[a-z]+ id="${id}"[^>]*>([\\s\\S]*?)</[a-z]+>`).exec(page)?.[1];
  // React separates adjacent text with comments (<!-- -->); entities as the browser would read them.
  return match
    ?.replace(/<!-- -->/g, '')
    .replace(/<[^>]+>/g, '')
    .replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code)))
    .replace(/&#x([0-9a-f]+);/gi, (_, code: string) => String.fromCharCode(Number.parseInt(code, 16)))
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

/** The person presses Cancel on agentauth's page: back to the site's callback with error=access_denied. */
export async function cancelSignIn(options: {
  server: TestServer;
  browser: CookieJar;
  site: ExampleSite;
  start: Response;
}): Promise<{ status: number; page: string }> {
  const { server, browser, site, start } = options;
  const { response: authorizePage } = await browser.follow(new URL(start.headers.get('location')!, site.origin));
  const requestId = metaContent(await authorizePage.text(), 'request-id')!;
  const cancelled = await browser.fetch(new URL('/authorize/continue', server.baseUrl), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ request_id: requestId, action: 'cancel' }).toString(),
  });
  expect(cancelled.status).toBe(302);
  expect(new URL(cancelled.headers.get('location')!).searchParams.get('error')).toBe('access_denied');
  const { response } = await browser.follow(cancelled.headers.get('location')!);
  return { status: response.status, page: await response.text() };
}
