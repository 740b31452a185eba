/**
 * The Flask + Authlib website of docs/guides/website.md (examples/python-authlib/app.py), run
 * with a python3 that has Flask, Authlib and requests, against a real agentauth. Authlib
 * authenticates with client_secret_basic by default, and checks the HS256 ID token's signature
 * with the client secret the example gives it as a JWK.
 *
 * The interpreter is $PYTHON, else the first of python3 on PATH and /usr/bin/python3 that imports
 * the three modules (a pyenv python3 often lacks Debian's packages). Without one, every case
 * fails, never skips, saying what to install (CI installs Debian's packages).
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CookieJar } from './helpers/cookie-jar.ts';
import {
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
const APP = join(ROOT, 'examples', 'python-authlib', 'app.py');

function findPython(): string {
  const candidates = process.env.PYTHON ? [process.env.PYTHON] : ['python3', '/usr/bin/python3'];
  const tried: string[] = [];
  for (const candidate of candidates) {
    const probe = spawnSync(candidate, ['-c', 'import authlib, flask, requests'], { encoding: 'utf8' });
    if (probe.status === 0) return candidate;
    tried.push(`${candidate}: ${probe.error?.message ?? probe.stderr.trim().split('\n').pop()}`);
  }
  throw new Error(
    'The Flask + Authlib example needs a python3 with Flask, Authlib and requests: ' +
      'apt-get install python3-authlib python3-flask python3-requests (or pip install flask authlib requests; ' +
      `PYTHON=/path/to/python3 picks the interpreter). Tried ${tried.join('; ')}`,
  );
}

let server: TestServer;
let site: ExampleSite;
let agent: { agentId: string; agentSecret: string };
let clientSecret: string;
let recorder: ReturnType<typeof recordClientAuthentication>;

beforeAll(async () => {
  const python = findPython();
  server = await startTestServer();
  recorder = recordClientAuthentication(server);
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const client = await server.createClient({ name: 'Flask Site', redirectUris: [`${origin}/callback`] });
  clientSecret = client.clientSecret;
  agent = await server.createAgent({ ownerEmail: 'alan@example.com', ownerName: 'Alan Turing' });
  site = await startExampleSite(python, [APP], {
    origin,
    env: {
      AGENTAUTH_ISSUER: server.baseUrl,
      AGENTAUTH_CLIENT_ID: client.clientId,
      AGENTAUTH_CLIENT_SECRET: client.clientSecret,
      FLASK_SECRET_KEY: randomBytes(32).toString('base64url'),
      PORT: String(port),
      PUBLIC_URL: origin,
      PYTHONDONTWRITEBYTECODE: '1',
      PYTHONUNBUFFERED: '1',
    },
  });
});

afterAll(async () => {
  recorder?.stop();
  await site?.close();
  await server?.close();
});

describe('examples/python-authlib: the Flask + Authlib website of the guide', () => {
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
      model: 'claude-test-3',
    });
    expectSignedIn(signedIn, {
      site,
      redirectUri: `${site.origin}/callback`,
      signedInAs: 'Alan Turing (alan@example.com)',
      agentId: agent.agentId,
      model: 'claude-test-3',
    });
    // Authlib's default at /token; the example's requests.post(auth=...) at /introspect.
    expect(recorder.seen()).toEqual([
      { path: '/token', method: 'client_secret_basic' },
      { path: '/introspect', method: 'client_secret_basic' },
    ]);
    expect(site.output()).not.toContain(clientSecret);
  });

  it('signs nobody in from a callback this browser did not start, or one without the issuer', async () => {
    const starter = new CookieJar();
    const start = await starter.fetch(`${site.origin}/login`);
    const state = new URL(start.headers.get('location')!).searchParams.get('state')!;
    const victim = new CookieJar();
    const forged = await victim.fetch(
      `${site.origin}/callback?code=cod_forged&state=${state}&iss=${encodeURIComponent(server.baseUrl)}`,
    );
    expect(forged.status).toBe(400);
    // In the browser that started it, but naming another issuer (a mix-up, RFC 9207).
    const mixedUp = await starter.fetch(`${site.origin}/callback?code=cod_x&state=${state}&iss=https://evil.example`);
    expect(mixedUp.status).toBe(400);
    expect(await (await victim.fetch(`${site.origin}/`)).text()).toContain('Sign in with your AI agent');
    expect(await (await starter.fetch(`${site.origin}/`)).text()).toContain('Sign in with your AI agent');
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
