/**
 * npm run demo: the whole agentauth flow over real HTTP, in one process.
 *
 * Starts an agentauth server on a temporary SQLite database and a free port, plus a tiny
 * callback server standing in for the client's redirect_uri; registers a demo client and a
 * demo agent; then plays the browser, the AI agent and the client website in turn and
 * prints every step. Secrets, codes and tokens are shortened, never printed in full.
 * Exits 0 when every step answered as expected, 1 otherwise.
 *
 * With --website (npm run demo -- --website) it shows the same flow in a browser instead: the
 * example website with its "Sign in with your AI agent" button, running until Ctrl-C
 * (scripts/demo-website.ts).
 */
import { freePort } from '../test/helpers/net.ts';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/config.ts';
import { registerAgent } from '../src/domain/agents.ts';
import { registerClient } from '../src/domain/clients.ts';
import { type RunningServer, startServer } from '../src/server.ts';

class DemoFailure extends Error {}

// ---------------------------------------------------------------------------------------------
// Printing

/** `cod_AbC…`: the prefix and a few characters of a secret value, never the whole of it. */
function short(value: string | null | undefined, keep = 6): string {
  if (value === null || value === undefined) return String(value);
  if (/^eyJ[\w-]*\.[\w-]+\.[\w-]+$/.test(value)) {
    // A JWT: every one starts with the same header, so name it by its jti (an identifier, not a secret).
    const jti = (jwtParts(value).claims as { jti?: unknown }).jti;
    return `${value.slice(0, keep)}… (JWT${typeof jti === 'string' ? `, jti ${jti}` : ''})`;
  }
  const prefix = /^[a-z]{3}_/.exec(value)?.[0] ?? '';
  const rest = value.slice(prefix.length);
  return rest.length <= keep ? `${prefix}${'*'.repeat(rest.length)}` : `${prefix}${rest.slice(0, keep)}…`;
}

/** Fields whose values are secrets, codes or tokens. */
const SECRET_FIELDS = new Set([
  'access_token',
  'refresh_token',
  'id_token',
  'code',
  'code_verifier',
  'client_secret',
  'agent_secret',
  'token',
]);

function redact(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redact);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, SECRET_FIELDS.has(k) && typeof v === 'string' ? short(v) : redact(v)]),
    );
  }
  return value;
}

function indent(text: string, by = '      '): string {
  return text
    .split('\n')
    .map((line) => by + line)
    .join('\n');
}

function json(value: unknown): string {
  return JSON.stringify(redact(value), null, 2);
}

let stepNumber = 0;
function step(title: string): void {
  stepNumber += 1;
  process.stdout.write(`\n${String(stepNumber).padStart(2)}. ${title}\n`);
}
const line = (text: string) => process.stdout.write(`    ${text}\n`);
const sent = (text: string) => line(`→ ${text}`);
const got = (text: string) => line(`← ${text}`);
const block = (value: unknown) => process.stdout.write(`${indent(typeof value === 'string' ? value : json(value))}\n`);

/** The claims of a JWT, for display only (verification is the server's job). */
function jwtParts(token: string): { header: unknown; claims: unknown } {
  const [header, payload] = token.split('.');
  const decode = (part: string | undefined) =>
    JSON.parse(Buffer.from(part ?? '', 'base64url').toString('utf8')) as unknown;
  return { header: decode(header), claims: decode(payload) };
}

// ---------------------------------------------------------------------------------------------
// HTTP helpers

async function expectStatus(response: Response, expected: number, what: string): Promise<Response> {
  if (response.status !== expected) {
    const body = await response.text().catch(() => '');
    throw new DemoFailure(`${what}: expected HTTP ${expected}, got ${response.status}\n${indent(body.slice(0, 800))}`);
  }
  return response;
}

async function jsonOf<T = Record<string, unknown>>(response: Response): Promise<T> {
  return (await response.json()) as T;
}

function expectEqual(actual: unknown, expected: unknown, what: string): void {
  if (actual !== expected)
    throw new DemoFailure(`${what}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
}

const TIMEOUT_MS = 5000;
const http = (url: string | URL, init: RequestInit = {}) =>
  fetch(url, { signal: AbortSignal.timeout(TIMEOUT_MS), ...init });
const postForm = (url: string, fields: Record<string, string>, headers: Record<string, string> = {}) =>
  http(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(fields).toString(),
    redirect: 'manual',
  });
const postJson = (url: string, body: unknown) =>
  http(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

function metaContent(page: string, name: string): string | undefined {
  const raw = new RegExp(`<meta name="${name}" content="([^"]*)">`).exec(page)?.[1];
  return raw
    ?.replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

/** The client website's redirect_uri: records what the browser brings back. */
async function startCallbackServer(): Promise<{ server: Server; url: string; received: Promise<URLSearchParams> }> {
  let deliver!: (query: URLSearchParams) => void;
  const received = new Promise<URLSearchParams>((resolve) => (deliver = resolve));
  const server = createHttpServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    if (url.pathname !== '/callback') {
      response.writeHead(404).end();
      return;
    }
    deliver(url.searchParams);
    response
      .writeHead(200, { 'content-type': 'text/plain; charset=utf-8', connection: 'close' })
      .end('Signed in. You can close this window.\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return { server, url: `http://127.0.0.1:${port}/callback`, received };
}

// ---------------------------------------------------------------------------------------------
// The demo

async function run(
  base: string,
  server: RunningServer,
  callback: Awaited<ReturnType<typeof startCallbackServer>>,
): Promise<void> {
  const { client, secret: clientSecret } = await registerClient(server.ctx, {
    name: 'Demo Website',
    redirectUris: [callback.url],
  });
  const { agent, secret: agentSecret } = await registerAgent(server.ctx, {
    ownerEmail: 'ada@example.com',
    ownerName: 'Ada Lovelace',
    name: 'Demo agent',
  });
  line(`client "${client.name}"  client_id ${client.id}  client_secret ${short(clientSecret)}`);
  line(`                       redirect_uri ${callback.url}`);
  line(`agent  "${agent.name}"    agent_id  ${agent.id}  agent_secret  ${short(agentSecret)}`);

  // 1. Discovery
  step('Client: discovery metadata');
  sent('GET /.well-known/oauth-authorization-server');
  const metadataResponse = await expectStatus(
    await http(`${base}/.well-known/oauth-authorization-server`),
    200,
    'discovery',
  );
  const metadata = await jsonOf<Record<string, string>>(metadataResponse);
  got('200 application/json');
  for (const key of [
    'issuer',
    'authorization_endpoint',
    'token_endpoint',
    'userinfo_endpoint',
    'introspection_endpoint',
    'revocation_endpoint',
  ]) {
    line(`  ${key.padEnd(24)} ${metadata[key]}`);
  }
  expectEqual(metadata.issuer, base, 'issuer');

  // 2. The browser opens /authorize
  step('Browser: GET /authorize (PKCE S256, state)');
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  const state = randomBytes(16).toString('base64url');
  const authorizeUrl = new URL(metadata.authorization_endpoint!);
  authorizeUrl.search = new URLSearchParams({
    client_id: client.id,
    redirect_uri: callback.url,
    response_type: 'code',
    scope: 'openid email profile',
    state,
    code_challenge: challenge,
    code_challenge_method: 'S256',
  }).toString();
  line(`code_verifier ${short(verifier)}  (kept by the client)`);
  line(`code_challenge = BASE64URL(SHA-256(code_verifier)) = ${challenge}`);
  sent(`GET /authorize?client_id=${client.id}&redirect_uri=${encodeURIComponent(callback.url)}&response_type=code`);
  line(
    `      &scope=openid+email+profile&state=${state}&code_challenge=${challenge.slice(0, 8)}…&code_challenge_method=S256`,
  );
  const pageResponse = await expectStatus(await http(authorizeUrl), 200, 'GET /authorize');
  const page = await pageResponse.text();
  const cookie = pageResponse.headers
    .getSetCookie()
    .map((c) => c.split(';')[0]!)
    .find((c) => c.startsWith('agentauth_browser='));
  if (!cookie) throw new DemoFailure('GET /authorize: no browser binding cookie (agentauth_browser) was set');
  const [cookieName, cookieValue] = cookie.split('=') as [string, string];
  const requestId = metaContent(page, 'request-id');
  if (!requestId) throw new DemoFailure('GET /authorize: the page has no <meta name="request-id">');
  got(`200 ${pageResponse.headers.get('content-type')}, ${page.length} bytes`);
  line(`Set-Cookie: ${cookieName}=${short(cookieValue)}; HttpOnly; SameSite=Lax  (binds the request to this browser)`);
  line('The page carries, for the agent:');
  for (const name of [
    'request-id',
    'agent-authenticate-endpoint',
    'agent-status-endpoint',
    'client-name',
    'redirect-host',
    'scope',
  ]) {
    line(`  <meta name="${name}" content="${metaContent(page, name)}">`);
  }

  // 3. The agent polls: pending
  const statusUrl = metaContent(page, 'agent-status-endpoint')!;
  const checkStatus = async (expected: string) => {
    sent(`GET /api/check-status?request_id=${requestId}`);
    const response = await expectStatus(
      await http(`${statusUrl}?request_id=${encodeURIComponent(requestId)}`),
      200,
      'GET /api/check-status',
    );
    const body = await jsonOf(response);
    got(`200 ${JSON.stringify(body)}`);
    expectEqual(body.status, expected, 'status');
  };
  step('Agent: polls the status');
  await checkStatus('pending');

  // 4. The agent authenticates over the back channel
  step('Agent: authenticates over the back channel');
  line(
    `checks client-name "${metaContent(page, 'client-name')}" and redirect-host "${metaContent(page, 'redirect-host')}" are what it expected`,
  );
  const authenticateBody = {
    request_id: requestId,
    agent_id: agent.id,
    agent_secret: agentSecret,
    model: 'demo-model-1',
  };
  sent('POST /api/agent/authenticate  (application/json)');
  block(authenticateBody);
  const authResponse = await expectStatus(
    await postJson(metaContent(page, 'agent-authenticate-endpoint')!, authenticateBody),
    200,
    'POST /api/agent/authenticate',
  );
  const authResult = await jsonOf(authResponse);
  got('200');
  block(authResult);
  expectEqual(authResult.status, 'authenticated', 'authenticate status');

  // 5. Status: authenticated
  step('Agent: polls the status again');
  await checkStatus('authenticated');

  // 6. The browser continues and is redirected with the code
  step('Browser: the page posts its continue form');
  sent(
    `POST /authorize/continue  (form: request_id=${requestId}, action=approve; Cookie: ${cookieName}=${short(cookieValue)})`,
  );
  const continueResponse = await expectStatus(
    await postForm(`${base}/authorize/continue`, { request_id: requestId, action: 'approve' }, { cookie }),
    302,
    'POST /authorize/continue',
  );
  const location = new URL(continueResponse.headers.get('location') ?? '');
  got(
    `302 Location: ${location.origin}${location.pathname}?code=${short(location.searchParams.get('code'))}&state=${location.searchParams.get('state')}&iss=${encodeURIComponent(location.searchParams.get('iss') ?? '')}`,
  );
  line('The browser follows the redirect to the client website:');
  sent(`GET ${location.origin}${location.pathname}?code=…&state=…&iss=…`);
  const landing = await expectStatus(await http(location), 200, 'GET callback');
  got(`200 ${(await landing.text()).trim()}`);
  const callbackQuery = await callback.received;
  const code = callbackQuery.get('code');
  if (!code) throw new DemoFailure('the callback received no code');
  line(
    `callback server received code=${short(code)}, state=${callbackQuery.get('state')}, iss=${callbackQuery.get('iss')}`,
  );
  expectEqual(callbackQuery.get('state'), state, 'state returned to the callback');
  expectEqual(callbackQuery.get('iss'), metadata.issuer, 'iss returned to the callback');
  line('state matches the one the client sent; iss matches the issuer');

  // 7. Status: completed
  step('Agent: polls the status once more (the code is never part of it)');
  await checkStatus('completed');

  // 8. Token exchange
  step('Client: exchanges the code at /token (client_secret_post)');
  const tokenFields = {
    grant_type: 'authorization_code',
    code,
    code_verifier: verifier,
    redirect_uri: callback.url,
    client_id: client.id,
    client_secret: clientSecret,
  };
  sent('POST /token  (application/x-www-form-urlencoded)');
  block(tokenFields);
  const tokenResponse = await expectStatus(
    await postForm(metadata.token_endpoint!, tokenFields),
    200,
    'POST /token (authorization_code)',
  );
  const tokens = await jsonOf<Record<string, string>>(tokenResponse);
  got(`200 (Cache-Control: ${tokenResponse.headers.get('cache-control')})`);
  block(tokens);
  const access = jwtParts(tokens.access_token!);
  line('access token header and claims (HS256 with JWT_SECRET):');
  block({ header: access.header, claims: access.claims });
  if (tokens.id_token) {
    line("ID token claims (HS256 keyed with the client's secret):");
    block(jwtParts(tokens.id_token).claims);
  }

  // 9. Userinfo
  step('Client: GET /userinfo with the access token');
  sent(`GET /userinfo  (Authorization: Bearer ${short(tokens.access_token)})`);
  const userinfoResponse = await expectStatus(
    await http(metadata.userinfo_endpoint!, { headers: { authorization: `Bearer ${tokens.access_token}` } }),
    200,
    'GET /userinfo',
  );
  const userinfo = await jsonOf(userinfoResponse);
  got('200');
  process.stdout.write(`${indent(JSON.stringify(userinfo, null, 2))}\n`);
  expectEqual(userinfo.sub, agent.id, 'userinfo sub');

  // 10. Introspection
  const introspect = async (token: string, what: string) => {
    sent(`POST /introspect  (form: token=${short(token)}, client_id, client_secret)`);
    const response = await expectStatus(
      await postForm(metadata.introspection_endpoint!, { token, client_id: client.id, client_secret: clientSecret }),
      200,
      `POST /introspect (${what})`,
    );
    return jsonOf(response);
  };
  step('Client (or a resource server): POST /introspect the access token');
  const introspection = await introspect(tokens.access_token!, 'access token');
  got('200');
  block(introspection);
  expectEqual(introspection.active, true, 'introspection of the new access token');

  // 11. Refresh (rotation)
  step('Client: refreshes at /token (the refresh token rotates)');
  const refreshFields = {
    grant_type: 'refresh_token',
    refresh_token: tokens.refresh_token!,
    client_id: client.id,
    client_secret: clientSecret,
  };
  sent('POST /token  (application/x-www-form-urlencoded)');
  block(refreshFields);
  const refreshed = await jsonOf<Record<string, string>>(
    await expectStatus(await postForm(metadata.token_endpoint!, refreshFields), 200, 'POST /token (refresh_token)'),
  );
  got('200');
  block(refreshed);
  if (refreshed.refresh_token === tokens.refresh_token) throw new DemoFailure('the refresh token was not rotated');
  const oldRefresh = await introspect(tokens.refresh_token!, 'old refresh token');
  got(`200 ${JSON.stringify(oldRefresh)}  (the old refresh token is spent)`);
  expectEqual(oldRefresh.active, false, 'introspection of the rotated refresh token');

  // 12. Revocation
  step('Client: revokes the new access token');
  sent(`POST /revoke  (form: token=${short(refreshed.access_token)}, client_id, client_secret)`);
  const revokeResponse = await expectStatus(
    await postForm(metadata.revocation_endpoint!, {
      token: refreshed.access_token!,
      client_id: client.id,
      client_secret: clientSecret,
    }),
    200,
    'POST /revoke',
  );
  got(`200 ${await revokeResponse.text()}`);
  const afterRevoke = await introspect(refreshed.access_token!, 'revoked access token');
  got(`200 ${JSON.stringify(afterRevoke)}`);
  expectEqual(afterRevoke.active, false, 'introspection of the revoked access token');
}

async function main(): Promise<number> {
  const started = Date.now();
  const dir = mkdtempSync(join(tmpdir(), 'agentauth-demo-'));
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  let server: RunningServer | undefined;
  let callback: Awaited<ReturnType<typeof startCallbackServer>> | undefined;
  let ok = false;
  try {
    const config = loadConfig({
      PORT: String(port),
      HOST: '127.0.0.1',
      BASE_URL: base,
      DATABASE_URL: `sqlite:${join(dir, 'agentauth.db')}`,
      JWT_SECRET: randomBytes(48).toString('base64url'),
      LOG_LEVEL: 'silent',
    });
    server = await startServer(config, { warn: () => {} });
    callback = await startCallbackServer();
    process.stdout.write(`agentauth demo: server ${base} (SQLite in ${dir}), callback ${callback.url}\n`);
    await run(base, server, callback);
    ok = true;
  } catch (error) {
    const message =
      error instanceof DemoFailure
        ? error.message
        : error instanceof Error
          ? (error.stack ?? error.message)
          : String(error);
    process.stdout.write(`\nFAILED at step ${stepNumber}: ${message}\n`);
  } finally {
    if (callback) await new Promise<void>((resolve) => callback!.server.close(() => resolve()));
    await server?.close().catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  }
  if (ok)
    process.stdout.write(
      `\nDone: all ${stepNumber} steps answered as expected in ${Date.now() - started} ms. Server stopped, ${dir} removed.\n`,
    );
  return ok ? 0 : 1;
}

const demo = process.argv.includes('--website') ? (await import('./demo-website.ts')).runWebsiteDemo : main;

demo().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`agentauth demo: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
