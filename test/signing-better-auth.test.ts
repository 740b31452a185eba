/**
 * Better Auth configured by its `discoveryUrl` alone signs people in when a key pair signs
 * (TOKEN_SIGNING_ALG, docs/design.md §19): it verifies the ID token against jwks_uri, which under
 * HS256 is empty and ends every sign-in in `unable_to_get_user_info` (examples-better-auth.test.ts
 * shows that side). Better Auth runs over real HTTP on node:http; the test plays the browser and
 * the agent. No request leaves the machine.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { betterAuth } from 'better-auth';
import { memoryAdapter } from 'better-auth/adapters/memory';
import { toNodeHandler } from 'better-auth/node';
import { genericOAuth } from 'better-auth/plugins';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CookieJar } from './helpers/cookie-jar.ts';
import { metaContent, postJson } from './helpers/flow.ts';
import { freePort } from './helpers/net.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';

process.env.BETTER_AUTH_TELEMETRY = '0';

/** A Better Auth site that knows agentauth only by its discovery document. */
async function discoveringSite(server: TestServer): Promise<{ origin: string; http: Server }> {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const client = await server.createClient({
    name: 'Better Auth Site',
    redirectUris: [`${origin}/api/auth/callback/agentauth`],
  });
  const auth = betterAuth({
    baseURL: origin,
    secret: randomBytes(32).toString('base64url'),
    database: memoryAdapter({ user: [], session: [], account: [], verification: [] }),
    telemetry: { enabled: false },
    logger: { disabled: true },
    plugins: [
      genericOAuth({
        config: [
          {
            providerId: 'agentauth',
            discoveryUrl: `${server.baseUrl}/.well-known/openid-configuration`,
            clientId: client.clientId,
            clientSecret: client.clientSecret,
            tokenEndpointAuth: { method: 'client_secret_post' },
            pkce: true,
            scopes: ['openid', 'email', 'profile'],
          },
        ],
      }),
    ],
  });
  const http = createServer(toNodeHandler(auth.handler));
  await new Promise<void>((resolve) => http.listen(port, '127.0.0.1', resolve));
  return { origin, http };
}

describe.each(['ES256', 'EdDSA', 'RS256'])('Better Auth by discoveryUrl, TOKEN_SIGNING_ALG=%s', (alg) => {
  let server: TestServer;
  let site: { origin: string; http: Server };
  let agent: { agentId: string; agentSecret: string };

  beforeAll(async () => {
    server = await startTestServer({ env: { TOKEN_SIGNING_ALG: alg } });
    agent = await server.createAgent({ ownerEmail: 'grace@example.com', ownerName: 'Grace Hopper' });
    site = await discoveringSite(server);
  });
  afterAll(async () => {
    site?.http.closeAllConnections();
    await new Promise((resolve) => site?.http.close(resolve));
    await server?.close();
  });

  it('signs a person in: the ID token verifies against jwks_uri, the session is the agent owner', async () => {
    const browser = new CookieJar();
    const start = await browser.fetch(`${site.origin}/api/auth/sign-in/social`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: site.origin },
      body: JSON.stringify({ provider: 'agentauth', callbackURL: '/dashboard' }),
    });
    expect(start.status).toBe(200);
    const authorizeUrl = new URL(((await start.json()) as { url: string }).url);
    expect(authorizeUrl.searchParams.get('nonce')).toBeTruthy();
    const page = await browser.fetch(authorizeUrl);
    const requestId = metaContent(await page.text(), 'request-id')!;
    const signedIn = await postJson(server, '/api/agent/authenticate', {
      request_id: requestId,
      agent_id: agent.agentId,
      agent_secret: agent.agentSecret,
      model: 'test-model',
    });
    expect(signedIn.status).toBe(200);
    const continued = await browser.fetch(new URL('/authorize/continue', server.baseUrl), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ request_id: requestId }).toString(),
    });
    expect(continued.status).toBe(302);
    const callback = await browser.fetch(continued.headers.get('location')!);
    expect(callback.status).toBe(302);
    expect(callback.headers.get('location')).toBe('/dashboard');
    const session = await browser.fetch(`${site.origin}/api/auth/get-session`, { headers: { origin: site.origin } });
    expect(((await session.json()) as { user: unknown }).user).toMatchObject({
      email: 'grace@example.com',
      name: 'Grace Hopper',
    });
  });
});
