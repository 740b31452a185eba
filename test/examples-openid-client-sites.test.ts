/**
 * The plain JavaScript and the Express websites of docs/guides/website.md
 * (examples/plain-js/server.mjs, examples/express/server.mjs), each run with node as its own
 * process against a real agentauth: the browser's sign-in with redirects and cookies, the agent
 * with @agentauth/agent, and what the site then shows. Both use openid-client v6, plain-js with
 * its default client authentication (client_secret_post), Express with ClientSecretBasic.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CookieJar } from './helpers/cookie-jar.ts';
import {
  type ClientAuthentication,
  cancelSignIn,
  completeSignIn,
  type ExampleSite,
  recordClientAuthentication,
  startExampleSite,
  expectSignedIn,
} from './helpers/example-site.ts';
import { freePort } from './helpers/net.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';

const ROOT = join(import.meta.dirname, '..');

const EXAMPLES: Array<{ name: string; file: string; clientAuthentication: ClientAuthentication }> = [
  {
    name: 'plain JavaScript (node:http)',
    file: 'examples/plain-js/server.mjs',
    clientAuthentication: 'client_secret_post',
  },
  { name: 'Express', file: 'examples/express/server.mjs', clientAuthentication: 'client_secret_basic' },
];

describe.each(EXAMPLES)('$file: the $name website of the guide', ({ file, clientAuthentication }) => {
  let server: TestServer;
  let site: ExampleSite;
  let agent: { agentId: string; agentSecret: string };
  let clientSecret: string;
  let recorder: ReturnType<typeof recordClientAuthentication>;

  beforeAll(async () => {
    server = await startTestServer();
    recorder = recordClientAuthentication(server);
    const port = await freePort();
    const origin = `http://127.0.0.1:${port}`;
    const client = await server.createClient({ name: 'Example Site', redirectUris: [`${origin}/callback`] });
    clientSecret = client.clientSecret;
    agent = await server.createAgent({ ownerEmail: 'ada@example.com', ownerName: 'Ada Lovelace' });
    site = await startExampleSite(process.execPath, [join(ROOT, file)], {
      origin,
      env: {
        AGENTAUTH_ISSUER: server.baseUrl,
        AGENTAUTH_CLIENT_ID: client.clientId,
        AGENTAUTH_CLIENT_SECRET: client.clientSecret,
        SESSION_SECRET: randomBytes(32).toString('base64url'),
        PORT: String(port),
        PUBLIC_URL: origin,
      },
    });
  });

  afterAll(async () => {
    recorder?.stop();
    await site?.close();
    await server?.close();
  });

  it('says where it serves when it starts', () => {
    expect(site.output()).toContain(`Open ${site.origin} and sign in with your AI agent\n`);
  });

  it("signs the agent's owner in and shows the agent's id and model", async () => {
    const browser = new CookieJar();
    const home = await browser.fetch(`${site.origin}/`);
    expect(await home.text()).toContain('<a href="/login">Sign in with your AI agent</a>');

    const signedIn = await completeSignIn({
      server,
      agent,
      browser,
      site,
      start: await browser.fetch(`${site.origin}/login`),
      model: 'claude-test-1',
    });
    expectSignedIn(signedIn, {
      site,
      redirectUri: `${site.origin}/callback`,
      signedInAs: 'Ada Lovelace (ada@example.com)',
      agentId: agent.agentId,
      model: 'claude-test-1',
    });

    // The code was redeemed and the access token introspected, each with the client's secret as the example says.
    expect(recorder.seen()).toEqual([
      { path: '/token', method: clientAuthentication },
      { path: '/introspect', method: clientAuthentication },
    ]);
    expect(site.output()).not.toContain(clientSecret);
  });

  it('signs nobody in from a callback this browser did not start', async () => {
    const starter = new CookieJar();
    const start = await starter.fetch(`${site.origin}/login`);
    const state = new URL(start.headers.get('location')!).searchParams.get('state')!;
    const victim = new CookieJar();
    const callback = await victim.fetch(
      `${site.origin}/callback?code=cod_forged&state=${state}&iss=${encodeURIComponent(server.baseUrl)}`,
    );
    expect(callback.status).toBe(400);
    expect(await (await victim.fetch(`${site.origin}/`)).text()).toContain('Sign in with your AI agent');
  });

  it('tells the person when they cancelled on the agentauth page', async () => {
    const browser = new CookieJar();
    const { status, page } = await cancelSignIn({
      server,
      browser,
      site,
      start: await browser.fetch(`${site.origin}/login`),
    });
    expect(status).toBe(400);
    expect(page).toContain('You cancelled the sign-in.');
  });
});
