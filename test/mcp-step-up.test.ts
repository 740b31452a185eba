/**
 * Step-up with the official MCP TypeScript SDK 1.x, `@modelcontextprotocol/sdk` 1.32.2 (issue 36,
 * item 2; docs/guides/mcp-servers.md): the example MCP server serves its own scopes (notes:read,
 * notes:write), registered at agentauth with its resource. Its 401 challenge names notes:read, so
 * the SDK's client signs in for that alone; a tool that needs notes:write answers 403
 * `insufficient_scope` (RFC 6750 §3.1), the SDK asks again with the wider scope, the person's
 * agent signs in again, and the same call then succeeds. The test plays the browser and the
 * agent; the SDK does the rest.
 *
 * SDK 1.32.2 tries a refresh first when it holds a refresh token, which cannot widen a scope
 * (RFC 6749 §6), so it gives up with "403 after trying upscoping"
 * (modelcontextprotocol/typescript-sdk#2255). A host that keeps no refresh token steps up through
 * the transport alone; one that keeps it drops its tokens and calls the SDK's auth() with the
 * challenge's scope. Both are shown here, as the hosts on 1.x behave. The v2 client,
 * `@modelcontextprotocol/client` 2.4.0, steps up by itself while keeping its refresh token
 * (SEP-2350: the union of granted and challenged scopes, a new authorization when the union is
 * wider, one re-authorization per request): test/mcp-step-up-v2.test.ts.
 */
import { randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  auth,
  extractWWWAuthenticateParams,
  type OAuthClientProvider,
  UnauthorizedError,
} from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientInformationMixed, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NOTE_SCOPES, type RunningMcpServer, startMcpServer } from '../examples/mcp-server/server.ts';
import { registerClient } from '../src/domain/clients.ts';
import { continueFlow, metaContent, postForm, postJson } from './helpers/flow.ts';
import { freePort } from './helpers/net.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';

const REDIRECT = 'http://127.0.0.1/callback';

/** A host's token store for one server, in memory, with a registered public client. */
class HostProvider implements OAuthClientProvider {
  readonly authorizationUrls: URL[] = [];
  lastState?: string;
  private current?: OAuthTokens;
  private verifier?: string;
  constructor(
    private readonly information: OAuthClientInformationMixed,
    /** Whether the host keeps the refresh token (most do); without it the SDK re-authorizes at once. */
    private readonly keepRefreshToken: boolean,
  ) {}
  get redirectUrl() {
    return REDIRECT;
  }
  get clientMetadata() {
    return { client_name: 'Step-up host', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' };
  }
  state() {
    this.lastState = randomBytes(16).toString('base64url');
    return this.lastState;
  }
  clientInformation() {
    return this.information;
  }
  tokens() {
    return this.current;
  }
  saveTokens(tokens: OAuthTokens) {
    this.current = this.keepRefreshToken ? tokens : { ...tokens, refresh_token: undefined };
  }
  /** What a host does when it decides to sign in again: forget the tokens it holds. */
  forgetTokens() {
    this.current = undefined;
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
}

let server: TestServer;
let mcp: RunningMcpServer;
let rs: { clientId: string; clientSecret: string };
let agent: { agentId: string; agentSecret: string };
let hostClientId: string;
const clients: Client[] = [];

beforeAll(async () => {
  server = await startTestServer({ env: { MCP_AUTHORIZATION: 'true' } });
  const port = await freePort();
  const resource = `http://127.0.0.1:${port}/mcp`;
  const registered = await registerClient(server.ctx, {
    name: 'Notes MCP server',
    redirectUris: [],
    resources: [resource],
    scopes: Object.entries(NOTE_SCOPES).map(([name, description]) => ({ name, description })),
  });
  rs = { clientId: registered.client.id, clientSecret: registered.secret };
  mcp = await startMcpServer({
    issuer: server.baseUrl,
    clientId: rs.clientId,
    clientSecret: rs.clientSecret,
    port,
    publicUrl: resource,
    scopes: true,
    log: () => {},
  });
  agent = await server.createAgent();
  hostClientId = (
    await registerClient(server.ctx, { name: 'Desktop MCP host', redirectUris: [REDIRECT], public: true })
  ).client.id;
});

afterAll(async () => {
  await Promise.all(clients.map((client) => client.close().catch(() => {})));
  await mcp?.close();
  await server?.close();
});

/** The person's browser and agent: the page (returned), the agent's authentication, the redirect's code. */
async function signIn(provider: HostProvider): Promise<{ code: string; page: string }> {
  const response = await fetch(provider.authorizationUrls.at(-1)!, { redirect: 'manual' });
  const page = await response.text();
  expect(response.status, page.slice(0, 300)).toBe(200);
  const cookie = (response.headers.get('set-cookie') ?? '').split(';')[0]!;
  const requestId = metaContent(page, 'request-id')!;
  const authenticated = await postJson(server, '/api/agent/authenticate', {
    request_id: requestId,
    agent_id: agent.agentId,
    agent_secret: agent.agentSecret,
    model: 'step-up-test',
  });
  expect(authenticated.status).toBe(200);
  const redirect = await continueFlow(server, { requestId, cookie });
  expect(redirect.status).toBe(302);
  const location = new URL(redirect.headers.get('location')!);
  expect(location.searchParams.get('state')).toBe(provider.lastState);
  return { code: location.searchParams.get('code')!, page };
}

const introspectedScope = async (token: string) =>
  (
    (await (
      await postForm(server, '/introspect', { token, client_id: rs.clientId, client_secret: rs.clientSecret })
    ).json()) as { scope?: string }
  ).scope;

describe('step-up with the official MCP SDK', () => {
  it('publishes scopes_supported and names notes:read in its 401 challenge', async () => {
    const metadata = (await (await fetch(mcp.resourceMetadataUrl)).json()) as Record<string, unknown>;
    expect(metadata).toMatchObject({ resource: mcp.resource, scopes_supported: ['notes:read', 'notes:write'] });
    const challenge = await fetch(mcp.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(challenge.status).toBe(401);
    expect(challenge.headers.get('www-authenticate')).toBe(
      `Bearer scope="notes:read", resource_metadata="${mcp.resourceMetadataUrl}"`,
    );
  });

  /** First sign-in through the transport's 401: the challenge's scope, notes:read alone. Returns the connected client. */
  async function connected(provider: HostProvider) {
    const first = new StreamableHTTPClientTransport(new URL(mcp.url), { authProvider: provider });
    await expect(new Client({ name: 'host', version: '0.0.0' }).connect(first)).rejects.toThrow(UnauthorizedError);
    const initial = provider.authorizationUrls.at(-1)!;
    expect(initial.searchParams.get('scope')).toBe('notes:read');
    expect(initial.searchParams.get('resource')).toBe(mcp.resource);
    const firstSignIn = await signIn(provider);
    // The page says in words what the MCP server gets.
    expect(firstSignIn.page).toContain('Read your notes');
    await first.finishAuth(firstSignIn.code);
    expect(provider.tokens()?.scope).toBe('notes:read');

    const transport = new StreamableHTTPClientTransport(new URL(mcp.url), { authProvider: provider });
    const client = new Client({ name: 'host', version: '0.0.0' });
    clients.push(client);
    await client.connect(transport);
    expect((await client.callTool({ name: 'read_notes' })).structuredContent).toEqual({ notes: expect.any(Array) });
    return { client, transport };
  }

  /** The second sign-in, for the step-up's URL; its tokens then carry both scopes. */
  async function steppedUp(provider: HostProvider) {
    const stepUp = provider.authorizationUrls.at(-1)!;
    expect(provider.authorizationUrls).toHaveLength(2);
    expect(stepUp.searchParams.get('scope')).toBe('notes:read notes:write');
    const second = await signIn(provider);
    expect(second.page).toContain('Add notes');
    return second.code;
  }

  async function addsNote(client: Client, provider: HostProvider, text: string) {
    expect(provider.tokens()?.scope).toBe('notes:read notes:write');
    expect(await introspectedScope(provider.tokens()!.access_token)).toBe('notes:read notes:write');
    const added = await client.callTool({ name: 'add_note', arguments: { text } });
    expect(added.isError ?? false).toBe(false);
    const { notes } = added.structuredContent as { notes: string[] };
    expect(notes.at(-1)).toBe(text);
    expect((await client.callTool({ name: 'read_notes' })).structuredContent).toEqual({ notes });
  }

  it('answers a tool whose scope the token lacks with 403 insufficient_scope, naming the scopes it needs', async () => {
    const provider = new HostProvider({ client_id: hostClientId }, true);
    await connected(provider);
    const raw = await fetch(mcp.url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${provider.tokens()!.access_token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 9,
        method: 'tools/call',
        params: { name: 'add_note', arguments: { text: 'x' } },
      }),
    });
    expect(raw.status).toBe(403);
    expect(raw.headers.get('www-authenticate')).toBe(
      `Bearer error="insufficient_scope", scope="notes:read notes:write", resource_metadata="${mcp.resourceMetadataUrl}", error_description="This tool needs the scope notes:write"`,
    );
    expect(await raw.json()).toEqual({
      error: 'insufficient_scope',
      error_description: 'This tool needs the scope notes:write.',
    });
  });

  it('a host without a refresh token: the SDK’s transport steps up by itself, and the call then succeeds', async () => {
    const provider = new HostProvider({ client_id: hostClientId }, false);
    const { client, transport } = await connected(provider);
    await expect(client.callTool({ name: 'add_note', arguments: { text: 'Buy milk' } })).rejects.toThrow(
      UnauthorizedError,
    );
    await transport.finishAuth(await steppedUp(provider));
    await addsNote(client, provider, 'Buy milk');
  });

  it('a host that keeps its refresh token: SDK 1.32.2 refreshes and stops; auth() with the challenge’s scope steps up', async () => {
    const provider = new HostProvider({ client_id: hostClientId }, true);
    const { client } = await connected(provider);
    const refused = await client.callTool({ name: 'add_note', arguments: { text: 'Call Ada' } }).catch((e) => e);
    // The refresh kept notes:read alone (RFC 6749 §6: a refresh never widens), so the SDK gave up.
    expect(refused).toBeInstanceOf(StreamableHTTPError);
    expect(String(refused.message)).toMatch(/403 after trying upscoping/);
    expect(provider.authorizationUrls).toHaveLength(1);
    expect(provider.tokens()?.scope).toBe('notes:read');

    // The host reads the challenge as the SDK does, forgets its tokens and signs in again for it.
    const challenge = await fetch(mcp.url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${provider.tokens()!.access_token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'add_note' } }),
    });
    const { scope, resourceMetadataUrl } = extractWWWAuthenticateParams(challenge);
    provider.forgetTokens();
    expect(await auth(provider, { serverUrl: mcp.url, scope, resourceMetadataUrl })).toBe('REDIRECT');
    const code = await steppedUp(provider);
    expect(await auth(provider, { serverUrl: mcp.url, authorizationCode: code, resourceMetadataUrl })).toBe(
      'AUTHORIZED',
    );
    await addsNote(client, provider, 'Call Ada');
  });
});
