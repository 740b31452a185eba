/**
 * The official MCP TypeScript SDK client signs in headlessly against a real agentauth
 * (MCP_AUTHORIZATION=true) and the example MCP server (examples/mcp-server), which accepts only
 * tokens issued for its own resource URI. The test plays the person's browser and agent; the
 * SDK does everything else: RFC 9728 discovery, choosing a pre-registered client, a Client ID
 * Metadata Document or dynamic registration, PKCE, the RFC 8707 resource, the token exchange,
 * the bearer on every request, and refresh when the MCP server answers 401.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { auth, type OAuthClientProvider, UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningMcpServer, startMcpServer } from '../examples/mcp-server/server.ts';
import { registerClient } from '../src/domain/clients.ts';
import { continueFlow, metaContent, obtainCode, type Party, postForm, postJson } from './helpers/flow.ts';
import { type HttpsTestServer, startHttpsServer, TEST_CA } from './helpers/https.ts';
import { freePort } from './helpers/net.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';

const SDK_VERSION = '1.32.2';
const REGISTERED_REDIRECT = 'http://127.0.0.1/callback';
const OTHER_RESOURCE = 'https://other-mcp.example/mcp';

const claimsOf = (jwt: string) =>
  JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;

/**
 * An in-memory OAuthClientProvider, as an MCP host keeps one per server. It records every
 * authorization URL it is asked to open and every token set it is asked to save.
 */
class MemoryProvider implements OAuthClientProvider {
  readonly authorizationUrls: URL[] = [];
  readonly savedTokens: OAuthTokens[] = [];
  readonly clientMetadataUrl?: string;
  lastState?: string;
  private information?: OAuthClientInformationMixed;
  private current?: OAuthTokens;
  private verifier?: string;

  constructor(
    private readonly settings: {
      redirectUrl: string;
      clientInformation?: OAuthClientInformationMixed;
      clientMetadataUrl?: string;
    },
  ) {
    this.information = settings.clientInformation;
    if (settings.clientMetadataUrl) this.clientMetadataUrl = settings.clientMetadataUrl;
  }

  get redirectUrl(): string {
    return this.settings.redirectUrl;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'SDK test host',
      redirect_uris: [this.settings.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }

  state(): string {
    this.lastState = randomBytes(16).toString('base64url');
    return this.lastState;
  }

  clientInformation() {
    return this.information;
  }

  saveClientInformation(information: OAuthClientInformationMixed): void {
    this.information = information;
  }

  tokens() {
    return this.current;
  }

  saveTokens(tokens: OAuthTokens): void {
    this.current = tokens;
    this.savedTokens.push(tokens);
  }

  redirectToAuthorization(url: URL): void {
    this.authorizationUrls.push(url);
  }

  saveCodeVerifier(verifier: string): void {
    this.verifier = verifier;
  }

  codeVerifier(): string {
    if (!this.verifier) throw new Error('no code verifier saved');
    return this.verifier;
  }

  invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): void {
    if (scope === 'all' || scope === 'client') this.information = undefined;
    if (scope === 'all' || scope === 'tokens') this.current = undefined;
    if (scope === 'all' || scope === 'verifier') this.verifier = undefined;
  }

  get accessToken(): string {
    if (!this.current) throw new Error('no tokens saved');
    return this.current.access_token;
  }
}

let server: TestServer;
let mcp: RunningMcpServer;
let metadataHost: HttpsTestServer;
let clientDocument: Record<string, unknown> = {};
let agent: { agentId: string; agentSecret: string };
let publicClientId: string;
const clients: Client[] = [];
const extraServers: RunningMcpServer[] = [];

/** A loopback redirect URI on a port other than the registered one (RFC 8252 §7.3). */
const loopbackRedirect = async () => `http://127.0.0.1:${await freePort()}/callback`;

/** Registers a resource-server client for `resources` and starts an example MCP server for the first one. */
async function startExampleMcpServer(
  port: number,
  resources: string[],
  options: Partial<Parameters<typeof startMcpServer>[0]> = {},
): Promise<RunningMcpServer> {
  const { client, secret } = await registerClient(server.ctx, {
    name: 'Example MCP server',
    redirectUris: [],
    resources,
  });
  return startMcpServer({
    issuer: server.baseUrl,
    clientId: client.id,
    clientSecret: secret,
    port,
    publicUrl: resources[0],
    log: () => {},
    ...options,
  });
}

beforeAll(async () => {
  metadataHost = await startHttpsServer((req, res: ServerResponse) => {
    if (req.url !== '/client.json') {
      res.writeHead(404).end();
      return;
    }
    const body = JSON.stringify(clientDocument);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) });
    res.end(body);
  });
  server = await startTestServer({
    env: { MCP_AUTHORIZATION: 'true' },
    clientMetadataFetch: { ca: TEST_CA, allowAddress: (ip) => ip === '127.0.0.1' || ip === '::1' },
  });
  const port = await freePort();
  mcp = await startExampleMcpServer(port, [`http://127.0.0.1:${port}/mcp`]);
  agent = await server.createAgent();
  publicClientId = (
    await registerClient(server.ctx, { name: 'Desktop MCP host', redirectUris: [REGISTERED_REDIRECT], public: true })
  ).client.id;
});

afterAll(async () => {
  await Promise.all(clients.map((client) => client.close().catch(() => {})));
  await Promise.all(extraServers.map((extra) => extra.close()));
  await mcp?.close();
  await server?.close();
  await metadataHost?.close();
});

/**
 * The person's part: the browser opens the authorization URL (keeping the binding cookie), the
 * agent authenticates with the request id from the page, the browser continues and is
 * redirected to the client's redirect URI. Returns the code and the page.
 */
async function browserAndAgent(
  provider: MemoryProvider,
  authorizationUrl: URL,
): Promise<{ code: string; page: string }> {
  const response = await fetch(authorizationUrl, { redirect: 'manual' });
  const page = await response.text();
  expect(response.status, page.slice(0, 500)).toBe(200);
  const cookie = (response.headers.get('set-cookie') ?? '').split(';')[0]!;
  const requestId = metaContent(page, 'request-id')!;
  const authenticated = await postJson(server, '/api/agent/authenticate', {
    request_id: requestId,
    agent_id: agent.agentId,
    agent_secret: agent.agentSecret,
    model: 'mcp-sdk-test',
  });
  expect(authenticated.status).toBe(200);
  const redirect = await continueFlow(server, { requestId, cookie });
  expect(redirect.status).toBe(302);
  const location = new URL(redirect.headers.get('location')!);
  expect(`${location.origin}${location.pathname}`).toBe(provider.redirectUrl);
  expect(location.searchParams.get('state')).toBe(provider.lastState);
  expect(location.searchParams.get('iss')).toBe(server.baseUrl);
  return { code: location.searchParams.get('code')!, page };
}

/** What the SDK put in the authorization request, checked; returns the URL. */
function checkAuthorizationUrl(provider: MemoryProvider, clientId: string): URL {
  const url = provider.authorizationUrls.at(-1)!;
  expect(url.origin + url.pathname).toBe(`${server.baseUrl}/authorize`);
  expect(url.searchParams.get('client_id')).toBe(clientId);
  expect(url.searchParams.get('redirect_uri')).toBe(provider.redirectUrl);
  expect(url.searchParams.get('resource')).toBe(mcp.resource);
  expect(url.searchParams.get('code_challenge_method')).toBe('S256');
  expect(url.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
  expect(url.searchParams.get('response_type')).toBe('code');
  return url;
}

/** auth() → REDIRECT, the person signs in, auth() with the code → AUTHORIZED. */
async function signInWithAuth(
  provider: MemoryProvider,
  clientId: string,
  target: RunningMcpServer = mcp,
): Promise<{ page: string }> {
  expect(await auth(provider, { serverUrl: target.url })).toBe('REDIRECT');
  const { code, page } = await browserAndAgent(provider, checkAuthorizationUrl(provider, clientId));
  expect(await auth(provider, { serverUrl: target.url, authorizationCode: code })).toBe('AUTHORIZED');
  return { page };
}

async function connect(provider: MemoryProvider, target: RunningMcpServer = mcp): Promise<Client> {
  const client = new Client({ name: 'agentauth-mcp-sdk-test', version: '0.0.0' });
  clients.push(client);
  await client.connect(new StreamableHTTPClientTransport(new URL(target.url), { authProvider: provider }));
  return client;
}

interface WhoAmI {
  agent_id: string;
  client_id: string;
  scope: string;
  model: string | null;
  resource: string;
  expires_at: number;
}

async function whoami(client: Client): Promise<WhoAmI> {
  const result = await client.callTool({ name: 'whoami' });
  expect(result.isError ?? false).toBe(false);
  return result.structuredContent as unknown as WhoAmI;
}

const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
});

/** One raw MCP request (initialize) to an MCP server, with or without a bearer. */
function rawMcpRequest(target: RunningMcpServer, token?: string): Promise<Response> {
  return fetch(target.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
    },
    body: INITIALIZE,
  });
}

async function expectInvalidToken(response: Response, target: RunningMcpServer = mcp): Promise<void> {
  expect(response.status).toBe(401);
  const challenge = response.headers.get('www-authenticate') ?? '';
  expect(challenge).toMatch(/^Bearer /);
  expect(challenge).toContain('error="invalid_token"');
  expect(challenge).toContain(`resource_metadata="${target.resourceMetadataUrl}"`);
  expect(await response.json()).toMatchObject({ error: 'invalid_token' });
}

/** The public client's own code → token exchange, by hand (client_id only, PKCE), with an optional resource. */
async function publicClientTokens(resource?: string): Promise<{ access_token: string; refresh_token: string }> {
  const redirectUri = await loopbackRedirect();
  const party: Party = { clientId: publicClientId, clientSecret: '', redirectUri, ...agent };
  const { code, verifier } = await obtainCode(server, party, { resource });
  const response = await postForm(server, '/token', {
    grant_type: 'authorization_code',
    code,
    code_verifier: verifier,
    client_id: publicClientId,
    redirect_uri: redirectUri,
    ...(resource === undefined ? {} : { resource }),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as { access_token: string; refresh_token: string };
}

describe(`MCP TypeScript SDK ${SDK_VERSION} client against agentauth and the example MCP server`, () => {
  it('uses the SDK version this suite was written for', async () => {
    const pkg = JSON.parse(
      readFileSync(new URL('../node_modules/@modelcontextprotocol/sdk/package.json', import.meta.url), 'utf8'),
    ) as { version: string };
    expect(pkg.version).toBe(SDK_VERSION);
  });

  it('a. pre-registered public client: auth() → REDIRECT, the person signs in, auth(code) → AUTHORIZED, whoami is the agent', async () => {
    const provider = new MemoryProvider({
      redirectUrl: await loopbackRedirect(),
      clientInformation: { client_id: publicClientId },
    });
    await signInWithAuth(provider, publicClientId);

    expect(provider.savedTokens).toHaveLength(1);
    const tokens = provider.savedTokens[0]!;
    expect(tokens).toMatchObject({ token_type: 'Bearer', scope: 'email profile' });
    expect(tokens.refresh_token).toMatch(/^rft_/);
    expect(tokens.id_token).toBeUndefined();
    // RFC 8707: the access token is for the MCP server, not for the client.
    expect(claimsOf(tokens.access_token)).toMatchObject({
      aud: mcp.resource,
      client_id: publicClientId,
      sub: agent.agentId,
      iss: server.baseUrl,
    });

    const client = await connect(provider);
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['whoami']);
    expect(await whoami(client)).toMatchObject({
      agent_id: agent.agentId,
      client_id: publicClientId,
      scope: 'email profile',
      model: 'mcp-sdk-test',
      resource: mcp.resource,
    });
  });

  it('b. Client ID Metadata Document: connect → 401 → the SDK uses the document URL as client_id; the page names its host and warns about localhost', async () => {
    const clientId = `${metadataHost.origin}/client.json`;
    clientDocument = {
      client_id: clientId,
      client_name: 'CIMD MCP host',
      client_uri: metadataHost.origin,
      redirect_uris: [REGISTERED_REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
    const provider = new MemoryProvider({ redirectUrl: await loopbackRedirect(), clientMetadataUrl: clientId });

    // The way an MCP host starts: connect, get 401 with resource_metadata, let the SDK discover and redirect.
    const transport = new StreamableHTTPClientTransport(new URL(mcp.url), { authProvider: provider });
    const first = new Client({ name: 'agentauth-mcp-sdk-test', version: '0.0.0' });
    await expect(first.connect(transport)).rejects.toBeInstanceOf(UnauthorizedError);
    expect(provider.clientInformation()).toMatchObject({ client_id: clientId });

    const { code, page } = await browserAndAgent(provider, checkAuthorizationUrl(provider, clientId));
    expect(metadataHost.paths).toContain('/client.json');
    expect(metaContent(page, 'client-name')).toBe('CIMD MCP host');
    expect(page).toMatch(new RegExp(`<p id="client-origin">[^<]*<strong>localhost:${metadataHost.port}</strong>`));
    expect(page).toContain('id="localhost-warning"');
    expect(page).toContain(`<code id="resource">${mcp.resource}</code>`);

    await transport.finishAuth(code);
    expect(claimsOf(provider.accessToken)).toMatchObject({ aud: mcp.resource, client_id: clientId });
    const client = await connect(provider);
    expect(await whoami(client)).toMatchObject({ agent_id: agent.agentId, client_id: clientId });
  });

  it('c. refresh: once the access token has expired, the next tool call refreshes it; a repeat converges, after the window it is refused', async () => {
    const provider = new MemoryProvider({
      redirectUrl: await loopbackRedirect(),
      clientInformation: { client_id: publicClientId },
    });
    await signInWithAuth(provider, publicClientId);
    const client = await connect(provider);
    expect((await whoami(client)).agent_id).toBe(agent.agentId);
    const before = provider.tokens()!;

    // Past ACCESS_TOKEN_TTL (3600 s) on agentauth's clock: the MCP server's introspection says inactive.
    server.clock.advance(3601);
    await expectInvalidToken(await rawMcpRequest(mcp, before.access_token));

    // The SDK transport gets 401, refreshes with the refresh token (and the resource), retries.
    expect(await whoami(client)).toMatchObject({ agent_id: agent.agentId, client_id: publicClientId });
    const after = provider.tokens()!;
    expect(provider.savedTokens).toHaveLength(2);
    expect(after.access_token).not.toBe(before.access_token);
    expect(after.refresh_token).not.toBe(before.refresh_token);
    expect(claimsOf(after.access_token)).toMatchObject({ aud: mcp.resource });
    expect(provider.authorizationUrls).toHaveLength(1); // no second sign-in

    // Within REFRESH_TOKEN_REUSE_WINDOW (30 s under MCP_AUTHORIZATION) another process of the
    // host presenting the old refresh token converges on the same pair...
    const concurrent = await postForm(server, '/token', {
      grant_type: 'refresh_token',
      refresh_token: before.refresh_token!,
      client_id: publicClientId,
    });
    expect(concurrent.status).toBe(200);
    expect(await concurrent.json()).toMatchObject({
      refresh_token: after.refresh_token,
      access_token: after.access_token,
    });
    // ...after it, the old refresh token is refused, and presenting it revokes the grant (RFC 9700 §4.14.2)...
    server.clock.advance(30);
    const replay = await postForm(server, '/token', {
      grant_type: 'refresh_token',
      refresh_token: before.refresh_token!,
      client_id: publicClientId,
    });
    expect(replay.status).toBe(400);
    expect(await replay.json()).toMatchObject({ error: 'invalid_grant' });
    // ...so the new tokens stop working too, and the SDK has to send the person to sign in again.
    await expectInvalidToken(await rawMcpRequest(mcp, after.access_token));
    await expect(client.callTool({ name: 'whoami' })).rejects.toBeInstanceOf(UnauthorizedError);
    expect(provider.authorizationUrls).toHaveLength(2);
  });

  it('c. refresh: an explicit auth() with stored tokens refreshes instead of redirecting', async () => {
    const provider = new MemoryProvider({
      redirectUrl: await loopbackRedirect(),
      clientInformation: { client_id: publicClientId },
    });
    await signInWithAuth(provider, publicClientId);
    const before = provider.tokens()!;
    server.clock.advance(3601);
    expect(await auth(provider, { serverUrl: mcp.url })).toBe('AUTHORIZED');
    const after = provider.tokens()!;
    expect(after.refresh_token).not.toBe(before.refresh_token);
    expect(provider.authorizationUrls).toHaveLength(1);
    expect(await whoami(await connect(provider))).toMatchObject({ agent_id: agent.agentId });
    server.clock.advance(30); // past REFRESH_TOKEN_REUSE_WINDOW: a repeat is reuse
    const replay = await postForm(server, '/token', {
      grant_type: 'refresh_token',
      refresh_token: before.refresh_token!,
      client_id: publicClientId,
    });
    expect(await replay.json()).toMatchObject({ error: 'invalid_grant' });
  });

  it('d. dynamic client registration: without client information or a metadata document URL the SDK registers at /register', async () => {
    const provider = new MemoryProvider({ redirectUrl: await loopbackRedirect() });
    expect(await auth(provider, { serverUrl: mcp.url })).toBe('REDIRECT');
    const registered = provider.clientInformation()!;
    // Registered as a public client (no secret), so the SDK authenticates with its client_id alone.
    expect(registered).toMatchObject({
      client_id: expect.stringMatching(/^cli_/),
      token_endpoint_auth_method: 'none',
      redirect_uris: [provider.redirectUrl],
    });
    expect('client_secret' in registered && registered.client_secret).toBeFalsy();
    const { code, page } = await browserAndAgent(provider, checkAuthorizationUrl(provider, registered.client_id));
    expect(page).toMatch(/<p id="client-origin">This application registered itself/);
    expect(await auth(provider, { serverUrl: mcp.url, authorizationCode: code })).toBe('AUTHORIZED');
    expect(claimsOf(provider.accessToken)).toMatchObject({ aud: mcp.resource, client_id: registered.client_id });
    expect(await whoami(await connect(provider))).toMatchObject({
      agent_id: agent.agentId,
      client_id: registered.client_id,
    });
  });
});

describe('the example MCP server', () => {
  it('publishes its Protected Resource Metadata at the path-inserted and the root well-known URL', async () => {
    const port = new URL(mcp.url).port;
    expect(mcp.resourceMetadataUrl).toBe(`http://127.0.0.1:${port}/.well-known/oauth-protected-resource/mcp`);
    for (const url of [mcp.resourceMetadataUrl, `http://127.0.0.1:${port}/.well-known/oauth-protected-resource`]) {
      const response = await fetch(url);
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({ resource: mcp.resource, authorization_servers: [server.baseUrl] });
    }
  });

  it('refuses a request without a token: 401 with the resource_metadata challenge and no error code', async () => {
    const response = await rawMcpRequest(mcp);
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${mcp.resourceMetadataUrl}"`);
  });

  it('refuses a garbage token and a token issued without a resource (aud = the client)', async () => {
    await expectInvalidToken(await rawMcpRequest(mcp, 'not-a-token'));
    const tokens = await publicClientTokens();
    expect(claimsOf(tokens.access_token).aud).toBe(publicClientId);
    await expectInvalidToken(await rawMcpRequest(mcp, tokens.access_token));
  });

  it('refuses a token issued for another resource, even when agentauth lets it introspect that resource too', async () => {
    // A resource-server registration covering both resources (which also lets tokens be issued
    // for the other one): agentauth answers active, the MCP server's own audience check refuses.
    const port = await freePort();
    const both = await startExampleMcpServer(port, [`http://127.0.0.1:${port}/mcp`, OTHER_RESOURCE]);
    extraServers.push(both);
    const tokens = await publicClientTokens(OTHER_RESOURCE);
    expect(claimsOf(tokens.access_token).aud).toBe(OTHER_RESOURCE);
    await expectInvalidToken(await rawMcpRequest(mcp, tokens.access_token));
    await expectInvalidToken(await rawMcpRequest(both, tokens.access_token), both);
  });

  it('refuses a revoked token; the SDK client then refreshes and carries on', async () => {
    const provider = new MemoryProvider({
      redirectUrl: await loopbackRedirect(),
      clientInformation: { client_id: publicClientId },
    });
    await signInWithAuth(provider, publicClientId);
    const client = await connect(provider);
    expect((await whoami(client)).agent_id).toBe(agent.agentId);
    const revoked = provider.accessToken;
    const revocation = await postForm(server, '/revoke', { token: revoked, client_id: publicClientId });
    expect(revocation.status).toBe(200);

    await expectInvalidToken(await rawMcpRequest(mcp, revoked));
    // Revoking an access token leaves the grant: the SDK refreshes on the 401.
    expect((await whoami(client)).agent_id).toBe(agent.agentId);
    expect(provider.accessToken).not.toBe(revoked);
  });

  it('with an introspection cache, reuses a result for at most its lifetime', async () => {
    let now = Date.now();
    let introspections = 0;
    const counting: typeof fetch = (input, init) => {
      if (String(input).endsWith('/introspect')) introspections += 1;
      return fetch(input, init);
    };
    const port = await freePort();
    const cached = await startExampleMcpServer(port, [`http://127.0.0.1:${port}/mcp`], {
      introspectionCacheSeconds: 30,
      fetch: counting,
      clock: () => now,
    });
    extraServers.push(cached);
    const provider = new MemoryProvider({
      redirectUrl: await loopbackRedirect(),
      clientInformation: { client_id: publicClientId },
    });
    expect(await auth(provider, { serverUrl: cached.url })).toBe('REDIRECT');
    const { code } = await browserAndAgent(provider, provider.authorizationUrls.at(-1)!);
    expect(await auth(provider, { serverUrl: cached.url, authorizationCode: code })).toBe('AUTHORIZED');

    const start = introspections;
    const client = await connect(provider, cached);
    await whoami(client);
    await whoami(client);
    expect(introspections - start).toBe(1);

    // Revoked, but still accepted from the cache until its 30 seconds are up.
    await postForm(server, '/revoke', { token: provider.accessToken, client_id: publicClientId });
    expect((await rawMcpRequest(cached, provider.accessToken)).status).toBe(200);
    now += 30_000;
    await expectInvalidToken(await rawMcpRequest(cached, provider.accessToken), cached);
  });

  it('will not start with credentials agentauth refuses', async () => {
    const { client } = await registerClient(server.ctx, {
      name: 'Example MCP server',
      redirectUris: [],
      resources: ['http://127.0.0.1:1/mcp'],
    });
    await expect(
      startMcpServer({
        issuer: server.baseUrl,
        clientId: client.id,
        clientSecret: 'cls_wrong',
        port: 0,
        log: () => {},
      }),
    ).rejects.toThrow(/refused this MCP server's credentials/);
  });
});
