/**
 * Step-up with the MCP SDK's v2 client, `@modelcontextprotocol/client` 2.4.0, for a host that
 * keeps its refresh token (issue 36, item 2; docs/guides/mcp-servers.md). Its transport follows
 * SEP-2350: on 403 `insufficient_scope` it asks for the union of the scope the token holds and
 * the scope challenged, and when that union is wider than the token's it skips the refresh (which
 * cannot widen, RFC 6749 §6) and starts a new authorization; it re-authorizes at most
 * `maxStepUpRetries` (1) times per request. SDK 1.32.2 refreshes instead and stops
 * (modelcontextprotocol/typescript-sdk#2255): test/mcp-step-up.test.ts keeps that host.
 *
 * The example MCP server serves notes:read and notes:write; the test plays the person's browser
 * and agent, the SDK does the rest. A second instance is registered at agentauth with notes:read
 * alone, so its challenge for notes:write names a scope its resource never registered. A third
 * server, written here, is a broken one that challenges for a scope its tokens already hold: the
 * SDK refreshes once and gives up instead of looping.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import {
  Client,
  type OAuthClientProvider,
  SdkHttpError,
  type OAuthDiscoveryState,
  type StoredOAuthTokens,
  StreamableHTTPClientTransport,
  UnauthorizedError,
} from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NOTE_SCOPES, type RunningMcpServer, startMcpServer } from '../examples/mcp-server/server.ts';
import { registerClient } from '../src/domain/clients.ts';
import { expectErrorPage } from './security/support.ts';
import { continueFlow, metaContent, postForm, postJson } from './helpers/flow.ts';
import { freePort } from './helpers/net.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';

const REDIRECT = 'http://127.0.0.1/callback';

/** A host's token store for one MCP server, in memory: it keeps the refresh token, as most hosts do. */
class HostProvider implements OAuthClientProvider {
  readonly authorizationUrls: URL[] = [];
  lastState?: string;
  private current?: StoredOAuthTokens;
  private verifier?: string;
  private discovery?: OAuthDiscoveryState;
  constructor(
    private readonly clientId: string,
    /**
     * Whether the host declares the refresh_token grant in its metadata (SEP-2207): the SDK then
     * adds offline_access, which agentauth publishes under MCP_AUTHORIZATION, to what it asks.
     */
    private readonly declaresRefresh: boolean,
  ) {}
  get redirectUrl() {
    return REDIRECT;
  }
  get clientMetadata() {
    return {
      client_name: 'Step-up host',
      redirect_uris: [REDIRECT],
      token_endpoint_auth_method: 'none',
      ...(this.declaresRefresh ? { grant_types: ['authorization_code', 'refresh_token'] } : {}),
    };
  }
  state() {
    this.lastState = randomBytes(16).toString('base64url');
    return this.lastState;
  }
  clientInformation() {
    return { client_id: this.clientId };
  }
  tokens() {
    return this.current;
  }
  saveTokens(tokens: StoredOAuthTokens) {
    this.current = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrls.push(url);
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    if (!this.verifier) throw new Error('no code verifier saved');
    return this.verifier;
  }
  /** Kept beside the code verifier: the SDK checks the callback comes from the same authorization server (SEP-2352). */
  saveDiscoveryState(state: OAuthDiscoveryState) {
    this.discovery = state;
  }
  discoveryState() {
    return this.discovery;
  }
}

/** A fetch that records what the SDK asks of whom: the MCP server's tool calls and agentauth's /token. */
function recordingFetch() {
  const requests: Array<{ url: string; tool?: string; grantType?: string }> = [];
  const recorded: typeof fetch = async (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    const entry: (typeof requests)[number] = { url };
    if (typeof init?.body === 'string' && init.body.startsWith('{')) {
      const message = JSON.parse(init.body) as { method?: string; params?: { name?: string } };
      if (message.method === 'tools/call') entry.tool = message.params?.name;
    } else if (init?.body instanceof URLSearchParams) {
      entry.grantType = init.body.get('grant_type') ?? undefined;
    }
    requests.push(entry);
    return fetch(input, init);
  };
  return { fetch: recorded, requests };
}

let server: TestServer;
/** Registered at agentauth with both scopes it serves. */
let notes: RunningMcpServer;
/** The same server, registered with notes:read alone: its notes:write is no scope of its resource. */
let underRegistered: RunningMcpServer;
/** A broken MCP server: it challenges every token with insufficient_scope for notes:read, which the token holds. */
let broken: { url: string; server: Server; toolPosts: number; clientId: string; clientSecret: string };
let introspector: { clientId: string; clientSecret: string };
let hostClientId: string;
const clients: Client[] = [];

/** Registers a resource server for a free port with `scopes` and starts the example MCP server there. */
async function startNotesServer(name: string, scopes: Array<keyof typeof NOTE_SCOPES>) {
  const port = await freePort();
  const resource = `http://127.0.0.1:${port}/mcp`;
  const registered = await registerClient(server.ctx, {
    name,
    redirectUris: [],
    resources: [resource],
    scopes: scopes.map((scope) => ({ name: scope, description: NOTE_SCOPES[scope] })),
  });
  const credentials = { clientId: registered.client.id, clientSecret: registered.secret };
  const running = await startMcpServer({
    issuer: server.baseUrl,
    ...credentials,
    port,
    publicUrl: resource,
    scopes: true,
    log: () => {},
  });
  return { running, credentials };
}

/**
 * Registers a resource with notes:read and serves, at it, what a misconfigured MCP server answers:
 * its metadata, a 401 naming notes:read without a token, and with any token 403
 * `insufficient_scope` naming notes:read again (it checks the wrong claim, say).
 */
async function startBrokenServer() {
  const port = await freePort();
  const resource = `http://127.0.0.1:${port}/mcp`;
  const registered = await registerClient(server.ctx, {
    name: 'Broken MCP server',
    redirectUris: [],
    resources: [resource],
    scopes: [{ name: 'notes:read', description: NOTE_SCOPES['notes:read'] }],
  });
  const metadataUrl = `http://127.0.0.1:${port}/.well-known/oauth-protected-resource/mcp`;
  const state = {
    url: resource,
    toolPosts: 0,
    server: createServer(),
    clientId: registered.client.id,
    clientSecret: registered.secret,
  };
  state.server.on('request', (request, response) => {
    if (request.url === '/.well-known/oauth-protected-resource/mcp') {
      response.setHeader('content-type', 'application/json');
      response.end(
        JSON.stringify({ resource, authorization_servers: [server.baseUrl], scopes_supported: ['notes:read'] }),
      );
      return;
    }
    if (request.method !== 'POST' || request.url !== '/mcp') {
      response.statusCode = 404;
      response.end();
      return;
    }
    request.resume();
    response.setHeader('content-type', 'application/json');
    if (request.headers.authorization === undefined) {
      response.statusCode = 401;
      response.setHeader('www-authenticate', `Bearer scope="notes:read", resource_metadata="${metadataUrl}"`);
    } else {
      state.toolPosts++;
      response.statusCode = 403;
      response.setHeader(
        'www-authenticate',
        `Bearer error="insufficient_scope", scope="notes:read", resource_metadata="${metadataUrl}"`,
      );
    }
    response.end('{"error":"see WWW-Authenticate"}');
  });
  await new Promise<void>((resolve) => state.server.listen(port, '127.0.0.1', resolve));
  return state;
}

beforeAll(async () => {
  server = await startTestServer({ env: { MCP_AUTHORIZATION: 'true' } });
  const full = await startNotesServer('Notes MCP server', ['notes:read', 'notes:write']);
  notes = full.running;
  introspector = full.credentials;
  underRegistered = (await startNotesServer('Notes MCP server, read only', ['notes:read'])).running;
  broken = await startBrokenServer();
  hostClientId = (
    await registerClient(server.ctx, { name: 'Desktop MCP host', redirectUris: [REDIRECT], public: true })
  ).client.id;
});

afterAll(async () => {
  await Promise.all(clients.map((client) => client.close().catch(() => {})));
  await notes?.close();
  await underRegistered?.close();
  broken?.server.closeAllConnections();
  await new Promise((resolve) => broken?.server.close(resolve));
  await server?.close();
});

/** The person's browser and agent for the provider's last authorization URL: the redirect's parameters and the page. */
async function signIn(
  provider: HostProvider,
  agent: { agentId: string; agentSecret: string },
): Promise<{ callback: URLSearchParams; page: string }> {
  const response = await fetch(provider.authorizationUrls.at(-1)!, { redirect: 'manual' });
  const page = await response.text();
  expect(response.status, page.slice(0, 300)).toBe(200);
  const cookie = (response.headers.get('set-cookie') ?? '').split(';')[0]!;
  const requestId = metaContent(page, 'request-id')!;
  const authenticated = await postJson(server, '/api/agent/authenticate', {
    request_id: requestId,
    agent_id: agent.agentId,
    agent_secret: agent.agentSecret,
    model: 'step-up-v2-test',
  });
  expect(authenticated.status).toBe(200);
  const redirect = await continueFlow(server, { requestId, cookie });
  expect(redirect.status).toBe(302);
  const callback = new URL(redirect.headers.get('location')!).searchParams;
  // The SDK leaves state to the host (its finishAuth says so).
  expect(callback.get('state')).toBe(provider.lastState);
  return { callback, page };
}

/** Introspection by a resource server (the notes server's unless another is named). */
const introspect = async (token: string, by = introspector) =>
  (await (
    await postForm(server, '/introspect', { token, client_id: by.clientId, client_secret: by.clientSecret })
  ).json()) as { active: boolean; scope?: string; aud?: string };

/** What a host asks for, in the order the SDK builds it: `scope`, then offline_access where it declares refresh. */
const asked = (scope: string, declaresRefresh: boolean) => (declaresRefresh ? `${scope} offline_access` : scope);

/**
 * A host connected to `mcp` with a token for notes:read, signed in through the transport's 401
 * (whose challenge names notes:read), holding a refresh token.
 */
async function connectedHost(
  mcp: RunningMcpServer,
  agent: { agentId: string; agentSecret: string },
  declaresRefresh = false,
) {
  const provider = new HostProvider(hostClientId, declaresRefresh);
  const recorder = recordingFetch();
  const options = { authProvider: provider, fetch: recorder.fetch };
  const first = new StreamableHTTPClientTransport(new URL(mcp.url), options);
  await expect(new Client({ name: 'host', version: '0.0.0' }).connect(first)).rejects.toThrow(UnauthorizedError);
  const initial = provider.authorizationUrls.at(-1)!;
  expect(initial.searchParams.get('scope')).toBe(asked('notes:read', declaresRefresh));
  expect(initial.searchParams.get('resource')).toBe(mcp.resource);
  await first.finishAuth((await signIn(provider, agent)).callback);
  expect(provider.tokens()).toMatchObject({
    scope: asked('notes:read', declaresRefresh),
    refresh_token: expect.any(String),
  });

  const transport = new StreamableHTTPClientTransport(new URL(mcp.url), options);
  const client = new Client({ name: 'host', version: '0.0.0' });
  clients.push(client);
  await client.connect(transport);
  expect((await client.callTool({ name: 'read_notes' })).structuredContent).toEqual({ notes: [] });
  return { provider, client, transport, requests: recorder.requests };
}

describe('step-up with the MCP SDK v2 client (@modelcontextprotocol/client), refresh token kept', () => {
  it.each([
    { host: 'a pre-registered host', declaresRefresh: false },
    { host: 'a host declaring the refresh_token grant (SDK adds offline_access)', declaresRefresh: true },
  ])(
    '$host: asks for the union of granted and challenged scopes in a new authorization; the same call then succeeds',
    async ({ declaresRefresh }) => {
      const agent = await server.createAgent();
      const { provider, client, transport, requests } = await connectedHost(notes, agent, declaresRefresh);
      const before = provider.tokens()!;
      const granted = asked('notes:read', declaresRefresh);
      const union = `${granted} notes:write`;
      const tokenRequestsBefore = requests.filter((request) => request.grantType).length;

      // The tool needs notes:write: 403 insufficient_scope, and the SDK asks agentauth again.
      await expect(client.callTool({ name: 'add_note', arguments: { text: 'Buy milk' } })).rejects.toThrow(
        UnauthorizedError,
      );
      expect(provider.authorizationUrls).toHaveLength(2);
      const stepUp = provider.authorizationUrls[1]!;
      expect(stepUp.origin + stepUp.pathname).toBe(`${server.baseUrl}/authorize`);
      expect(stepUp.searchParams.get('scope')).toBe(union);
      expect(stepUp.searchParams.get('resource')).toBe(notes.resource);
      expect(stepUp.searchParams.get('code_challenge_method')).toBe('S256');
      // No refresh was tried (it could not widen the scope), and the held tokens are unchanged.
      expect(requests.filter((request) => request.grantType).length).toBe(tokenRequestsBefore);
      expect(provider.tokens()).toEqual(before);

      const { callback, page } = await signIn(provider, agent);
      // The page says in words what the MCP server gets, the new scope included.
      expect(page).toContain('Read your notes');
      expect(page).toContain('Add notes');
      await transport.finishAuth(callback);

      const after = provider.tokens()!;
      expect(after.scope).toBe(union);
      expect(after.refresh_token).toEqual(expect.any(String));
      expect(after.refresh_token).not.toBe(before.refresh_token);
      expect(await introspect(after.access_token)).toMatchObject({ active: true, scope: union, aud: notes.resource });
      const added = await client.callTool({ name: 'add_note', arguments: { text: 'Buy milk' } });
      expect(added.isError ?? false).toBe(false);
      expect(added.structuredContent).toEqual({ notes: ['Buy milk'] });
      expect((await client.callTool({ name: 'read_notes' })).structuredContent).toEqual({ notes: ['Buy milk'] });

      // A step-up is a new grant (docs/design.md §13): the old one keeps its scope and its tokens.
      // (Both were made within one second, so their order in the list is not theirs in time.)
      const grants = await server.ctx.store.grants.list({ limit: 10, agentId: agent.agentId });
      const byScope = grants.map(({ scope, revoked_at, resource }) => ({ scope, revoked_at, resource }));
      expect(byScope.sort((a, b) => a.scope.length - b.scope.length)).toEqual([
        { scope: granted, revoked_at: null, resource: notes.resource },
        { scope: union, revoked_at: null, resource: notes.resource },
      ]);
      expect(await introspect(before.access_token)).toMatchObject({ active: true, scope: granted });
      const refreshed = await postForm(server, '/token', {
        grant_type: 'refresh_token',
        refresh_token: before.refresh_token!,
        client_id: hostClientId,
      });
      expect(refreshed.status).toBe(200);
      expect(((await refreshed.json()) as { scope: string }).scope).toBe(granted);
    },
  );

  it('a challenge for a scope the resource did not register ends as invalid_scope on the page, and the client does not loop', async () => {
    const agent = await server.createAgent();
    const { provider, client, requests } = await connectedHost(underRegistered, agent);
    const before = provider.tokens()!;
    const start = requests.length;

    await expect(client.callTool({ name: 'add_note', arguments: { text: 'Call Ada' } })).rejects.toThrow(
      UnauthorizedError,
    );
    // One tool call, one 403, one authorization URL for the union, and nothing else: no refresh,
    // no second attempt by itself.
    expect(requests.slice(start).filter((request) => request.tool === 'add_note')).toHaveLength(1);
    expect(requests.slice(start).filter((request) => request.grantType)).toHaveLength(0);
    expect(provider.authorizationUrls).toHaveLength(2);
    const stepUp = provider.authorizationUrls[1]!;
    expect(stepUp.searchParams.get('scope')).toBe('notes:read notes:write');
    expect(stepUp.searchParams.get('resource')).toBe(underRegistered.resource);

    // agentauth refuses it on its own page: no redirect back to the host, so no code to redeem.
    const refused = await fetch(stepUp, { redirect: 'manual' });
    expect(refused.headers.get('location')).toBeNull();
    const { description } = await expectErrorPage(refused, 400, 'invalid_scope');
    // notes:write is the other server's scope, hence the second sentence.
    expect(description).toBe(
      'Unknown scope notes:write; allowed values are openid, email, profile, offline_access, notes:read. A resource server’s scope is granted only with the resource that registered it.',
    );

    // The host still holds its token for notes:read, which still works, and no grant was added.
    expect(provider.tokens()).toEqual(before);
    expect((await client.callTool({ name: 'read_notes' })).structuredContent).toEqual({ notes: [] });
    const grants = await server.ctx.store.grants.list({ limit: 10, agentId: agent.agentId });
    expect(grants.map(({ scope, revoked_at }) => ({ scope, revoked_at }))).toEqual([
      { scope: 'notes:read', revoked_at: null },
    ]);
  });

  it('a server that challenges for a scope the token holds: the SDK refreshes once, then stops at its retry cap', async () => {
    const agent = await server.createAgent();
    const provider = new HostProvider(hostClientId, false);
    const recorder = recordingFetch();
    const options = { authProvider: provider, fetch: recorder.fetch };
    const first = new StreamableHTTPClientTransport(new URL(broken.url), options);
    await expect(new Client({ name: 'host', version: '0.0.0' }).connect(first)).rejects.toThrow(UnauthorizedError);
    await first.finishAuth((await signIn(provider, agent)).callback);
    const before = provider.tokens()!;
    expect(before.scope).toBe('notes:read');
    const start = recorder.requests.length;

    const failed = await new Client({ name: 'host', version: '0.0.0' })
      .connect(new StreamableHTTPClientTransport(new URL(broken.url), options))
      .catch((error: unknown) => error);
    // The union (notes:read) is no wider than the token's scope, so the SDK refreshes rather than
    // asking the person again; the retried request is refused again and the SDK stops.
    expect(failed).toBeInstanceOf(SdkHttpError);
    expect((failed as SdkHttpError).message).toMatch(/403 insufficient_scope after step-up re-authorization/);
    const after = recorder.requests.slice(start);
    expect(after.filter((request) => request.url === broken.url)).toHaveLength(2);
    expect(broken.toolPosts).toBe(2);
    expect(after.filter((request) => request.grantType === 'refresh_token')).toHaveLength(1);
    expect(provider.authorizationUrls).toHaveLength(1);
    // The refresh was an ordinary rotation: the grant lives, with the scope it had.
    const refreshed = provider.tokens()!;
    expect(refreshed.refresh_token).not.toBe(before.refresh_token);
    expect(await introspect(refreshed.access_token, broken)).toMatchObject({ active: true, scope: 'notes:read' });
    const grants = await server.ctx.store.grants.list({ limit: 10, agentId: agent.agentId });
    expect(grants.map(({ scope, revoked_at }) => ({ scope, revoked_at }))).toEqual([
      { scope: 'notes:read', revoked_at: null },
    ]);
  });
});
