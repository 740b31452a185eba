/**
 * The Next.js website of docs/guides/website.md (examples/nextjs: Auth.js, next-auth v5) as a
 * developer runs it: a copy of the example built with `next build` and served by `next start`,
 * against a real agentauth. The browser's part is driven without a browser: the page's sign-in
 * button is a server-action form, which Next.js renders as a plain POST form (progressive
 * enhancement) and answers with a redirect, so a cookie jar following redirects presses it.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CookieJar } from './helpers/cookie-jar.ts';
import {
  completeSignIn,
  type ExampleSite,
  recordClientAuthentication,
  startExampleSite,
  expectSignedIn,
} from './helpers/example-site.ts';
import { freePort } from './helpers/net.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';

const ROOT = join(import.meta.dirname, '..');
const NEXT = join(ROOT, 'node_modules', 'next', 'dist', 'bin', 'next');
/** Inside the repository, so that the copy resolves next, next-auth and react from its node_modules (gitignored). */
const BUILDS = join(ROOT, '.test-builds');
const ENV = { NEXT_TELEMETRY_DISABLED: '1' };

let server: TestServer;
let site: ExampleSite;
let appDir: string;
let agent: { agentId: string; agentSecret: string };
let clientSecret: string;
let recorder: ReturnType<typeof recordClientAuthentication>;

beforeAll(async () => {
  mkdirSync(BUILDS, { recursive: true });
  appDir = mkdtempSync(join(BUILDS, 'nextjs-'));
  cpSync(join(ROOT, 'examples', 'nextjs'), appDir, { recursive: true });
  const build = spawnSync(process.execPath, [NEXT, 'build'], {
    cwd: appDir,
    env: { ...process.env, ...ENV },
    encoding: 'utf8',
    timeout: 120_000,
  });
  if (build.status !== 0) throw new Error(`next build failed (${build.status}):\n${build.stdout}\n${build.stderr}`);

  server = await startTestServer();
  recorder = recordClientAuthentication(server);
  const port = await freePort();
  // Next.js names 127.0.0.1 "localhost" in the URLs it gives Auth.js, so the site is localhost to
  // everyone, as the guide says; it listens on 127.0.0.1.
  const origin = `http://localhost:${port}`;
  const client = await server.createClient({
    name: 'Next.js Site',
    redirectUris: [`${origin}/api/auth/callback/agentauth`],
  });
  clientSecret = client.clientSecret;
  agent = await server.createAgent({ ownerEmail: 'grace@example.com', ownerName: 'Grace Hopper' });
  site = await startExampleSite(process.execPath, [NEXT, 'start', '-p', String(port), '-H', '127.0.0.1'], {
    origin,
    cwd: appDir,
    env: {
      ...ENV,
      AGENTAUTH_ISSUER: server.baseUrl,
      AGENTAUTH_CLIENT_ID: client.clientId,
      AGENTAUTH_CLIENT_SECRET: client.clientSecret,
      AUTH_SECRET: randomBytes(32).toString('base64url'),
      AUTH_URL: origin,
    },
  });
}, 180_000);

afterAll(async () => {
  recorder?.stop();
  await site?.close();
  await server?.close();
  if (appDir) rmSync(appDir, { recursive: true, force: true });
});

/** Presses the page's server-action button the way a browser without script submits the form. */
async function pressButton(browser: CookieJar, label: string): Promise<Response> {
  const home = await (await browser.fetch(`${site.origin}/`)).text();
  const form = [...home.matchAll(/<form[^>]*>([\s\S]*?)<\/form>/g)].find((match) => match[1]!.includes(label));
  expect(form, `no form with a "${label}" button on the page:\n${home.slice(0, 2000)}`).toBeDefined();
  const fields = new FormData();
  for (const input of form![1]!.matchAll(/<input type="hidden" name="([^"]+)"(?: value="([^"]*)")?/g))
    fields.append(input[1]!, input[2] ?? '');
  return browser.fetch(`${site.origin}/`, { method: 'POST', headers: { origin: site.origin }, body: fields });
}

describe('examples/nextjs: the Next.js (Auth.js) website of the guide, built and started', () => {
  it("signs the agent's owner in and shows the agent's id and model", async () => {
    const browser = new CookieJar();
    const signedIn = await completeSignIn({
      server,
      agent,
      browser,
      site,
      start: await pressButton(browser, 'Sign in with your AI agent'),
      model: 'claude-test-2',
    });
    expectSignedIn(signedIn, {
      site,
      redirectUri: `${site.origin}/api/auth/callback/agentauth`,
      signedInAs: 'Grace Hopper (grace@example.com)',
      agentId: agent.agentId,
      model: 'claude-test-2',
    });
    // Auth.js's default client authentication, and the example's introspection, both Basic.
    expect(recorder.seen()).toEqual([
      { path: '/token', method: 'client_secret_basic' },
      { path: '/introspect', method: 'client_secret_basic' },
    ]);
    expect(site.output()).not.toContain(clientSecret);

    // Sign out: the session cookie goes, the button is back.
    const out = await pressButton(browser, 'Sign out');
    expect(out.status).toBeLessThan(400);
    expect(await (await browser.fetch(`${site.origin}/`)).text()).toContain('Sign in with your AI agent');
  });

  it('signs nobody in from a callback this browser did not start', async () => {
    const starter = new CookieJar();
    const start = await pressButton(starter, 'Sign in with your AI agent');
    const state = new URL(start.headers.get('location')!).searchParams.get('state')!;
    const victim = new CookieJar();
    const callback = await victim.fetch(
      `${site.origin}/api/auth/callback/agentauth?code=cod_forged&state=${state}&iss=${encodeURIComponent(server.baseUrl)}`,
    );
    expect(callback.status).toBe(302);
    expect(callback.headers.get('location')).toMatch(/\/api\/auth\/error\?error=/);
    expect(await (await victim.fetch(`${site.origin}/`)).text()).toContain('Sign in with your AI agent');
  });
});
