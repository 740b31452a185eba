/**
 * What the MCP hosts people use send, replayed against a real agentauth (MCP_AUTHORIZATION=true):
 * each host's client registration (its Client ID Metadata Document, or its dynamic registration
 * body) and the redirect URI and resource it then sends, as recorded from the hosts' own issue
 * trackers and documents (cited at each shape). The guides in docs/guides/hosts/ say what each
 * host's user configures; this suite is what makes them true. The person's part (the browser
 * and the agent) is played by the test, as everywhere else.
 */
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerClient } from '../src/domain/clients.ts';
import { assertionFields, chatGptDocument, clientAssertion, signingKey } from './helpers/client-keys.ts';
import { authenticate, continueFlow, type Party, postForm, postJson, startFlow, type Tokens } from './helpers/flow.ts';
import { type HttpsTestServer, startHttpsServer, TEST_CA } from './helpers/https.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';

const RESOURCE = 'https://notes.example/mcp';

let server: TestServer;
let documents: HttpsTestServer;
let resourceServer: { id: string; secret: string };
let agent: { agentId: string; agentSecret: string };
/** Served by `documents` at each path: metadata documents and key sets. */
const served = new Map<string, Record<string, unknown>>();

beforeAll(async () => {
  documents = await startHttpsServer((req, res: ServerResponse) => {
    const document = served.get(req.url ?? '');
    if (!document) {
      res.writeHead(404).end();
      return;
    }
    const body = JSON.stringify(document);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) });
    res.end(body);
  });
  server = await startTestServer({
    env: { MCP_AUTHORIZATION: 'true', REGISTRATION_LIMIT_PER_IP: '1000' },
    clientMetadataFetch: { ca: TEST_CA, allowAddress: (ip) => ip === '127.0.0.1' || ip === '::1' },
  });
  const registered = await registerClient(server.ctx, { name: 'Notes MCP', redirectUris: [], resources: [RESOURCE] });
  resourceServer = { id: registered.client.id, secret: registered.secret! };
  agent = await server.createAgent();
});

afterAll(async () => {
  await server?.close();
  await documents?.close();
});

/** Publishes a host's metadata document at `path` of the https test host, its URL as client_id. */
function publish(path: string, document: Record<string, unknown>): string {
  const clientId = `${documents.origin}${path}`;
  served.set(path, { client_id: clientId, ...document });
  return clientId;
}

/** The host's dynamic registration, answered 201; what was registered. */
async function registerDynamically(
  body: Record<string, unknown>,
): Promise<{ client_id: string; redirect_uris: string[] }> {
  const response = await postJson(server, '/register', body);
  const text = await response.text();
  expect(response.status, text).toBe(201);
  return JSON.parse(text) as { client_id: string; redirect_uris: string[] };
}

/**
 * The whole sign-in as the host drives it: /authorize with its redirect URI and resource (the
 * page shown, the agent authenticates, the browser continues), then the code exchanged as a
 * public client. Returns the page and the tokens.
 */
async function signIn(
  clientId: string,
  redirectUri: string,
  extra: Record<string, string> = {},
  authentication: () => Promise<Record<string, string>> = async () => ({ client_id: clientId }),
): Promise<{ page: string; tokens: Tokens }> {
  const party: Party = { clientId, clientSecret: '', redirectUri, ...agent };
  const started = await startFlow(server, party, { resource: RESOURCE, ...extra });
  const authenticated = await authenticate(server, party, started.requestId);
  expect(authenticated.status, await authenticated.clone().text()).toBe(200);
  const redirect = await continueFlow(server, started);
  expect(redirect.status).toBe(302);
  const location = redirect.headers.get('location')!;
  expect(location.startsWith(`${redirectUri}?`), location).toBe(true);
  const code = new URL(location).searchParams.get('code')!;
  const exchanged = await postForm(server, '/token', {
    grant_type: 'authorization_code',
    code,
    code_verifier: started.verifier,
    redirect_uri: redirectUri,
    resource: RESOURCE,
    ...(await authentication()),
  });
  const text = await exchanged.text();
  expect(exchanged.status, text).toBe(200);
  return { page: started.page, tokens: JSON.parse(text) as Tokens };
}

/** Introspected by the MCP server with its own credentials: what it learns of the token. */
async function introspect(token: string): Promise<Record<string, unknown>> {
  const response = await postForm(server, '/introspect', {
    token,
    client_id: resourceServer.id,
    client_secret: resourceServer.secret,
  });
  expect(response.status).toBe(200);
  return (await response.json()) as Record<string, unknown>;
}

describe('Claude Code', () => {
  // Its document (https://claude.ai/oauth/claude-code-client-metadata, as quoted in
  // anthropics/claude-code #41011 and #42301): port-less loopback redirect URIs, while the CLI
  // listens on an ephemeral port (or --callback-port) and sends it in redirect_uri.
  const document = {
    client_name: 'Claude Code',
    redirect_uris: ['http://localhost/callback', 'http://127.0.0.1/callback'],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  };

  it('signs in with its metadata document on an ephemeral port, the token for the MCP server alone', async () => {
    const clientId = publish('/claude-code-client-metadata', document);
    const { page, tokens } = await signIn(clientId, 'http://localhost:53076/callback');
    expect(page).toContain('Claude Code');
    const claims = await introspect(tokens.access_token);
    expect(claims).toMatchObject({ active: true, aud: RESOURCE, client_id: clientId, sub: agent.agentId });
  });

  it('several sessions refreshing one token at once all get the same new pair, and the grant lives', async () => {
    const clientId = publish('/claude-code-client-metadata', document);
    const { tokens } = await signIn(clientId, 'http://127.0.0.1:8080/callback');
    const refresh = () =>
      postForm(server, '/token', {
        grant_type: 'refresh_token',
        refresh_token: tokens.refresh_token!,
        client_id: clientId,
        resource: RESOURCE,
      });
    const answers = await Promise.all(Array.from({ length: 5 }, refresh));
    const bodies = (await Promise.all(answers.map((answer) => answer.json()))) as Tokens[];
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200]);
    expect(new Set(bodies.map((body) => body.refresh_token)).size).toBe(1);
    expect(new Set(bodies.map((body) => body.access_token)).size).toBe(1);
    expect((await introspect(bodies[0]!.access_token)).active).toBe(true);
  });
});

describe('VS Code', () => {
  it('signs in with its metadata document on its default loopback port or another one', async () => {
    // https://vscode.dev/oauth/client-metadata.json (microsoft/vscode #298300, #270811): the
    // loopback URI on port 33418 and the vscode.dev relay; a second window takes another port
    // (microsoft/vscode #278512).
    const clientId = publish('/oauth/client-metadata.json', {
      client_name: 'Visual Studio Code',
      redirect_uris: ['http://127.0.0.1:33418', 'https://vscode.dev/redirect'],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    });
    for (const redirectUri of ['http://127.0.0.1:33418/', 'http://127.0.0.1:59656/']) {
      const { tokens } = await signIn(clientId, redirectUri);
      expect((await introspect(tokens.access_token)).aud).toBe(RESOURCE);
    }
  });

  it('registers dynamically with its four redirect URIs when it does not use a document', async () => {
    // Its registration body (microsoft/vscode #278512).
    const registered = await registerDynamically({
      client_name: 'Visual Studio Code',
      redirect_uris: [
        'https://insiders.vscode.dev/redirect',
        'https://vscode.dev/redirect',
        'http://127.0.0.1/',
        'http://127.0.0.1:33418/',
      ],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    });
    expect(registered.redirect_uris).toHaveLength(4);
    const { tokens } = await signIn(registered.client_id, 'http://127.0.0.1:59656/');
    expect((await introspect(tokens.access_token)).aud).toBe(RESOURCE);
  });
});

describe('Cursor', () => {
  it('registers dynamically with its app-scheme URI among the others, and signs in on localhost:8787', async () => {
    // Its registration (erp-mafia/accounted #2225, Cursor's MCP docs): three URIs in one request;
    // the desktop app listens on http://localhost:8787/callback.
    const registered = await registerDynamically({
      client_name: 'Cursor',
      redirect_uris: [
        'cursor://anysphere.cursor-mcp/oauth/callback',
        'https://www.cursor.com/agents/mcp/oauth/callback',
        'http://localhost:8787/callback',
      ],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    });
    expect(registered.redirect_uris).toEqual([
      'https://www.cursor.com/agents/mcp/oauth/callback',
      'http://localhost:8787/callback',
    ]);
    const { tokens } = await signIn(registered.client_id, 'http://localhost:8787/callback');
    expect((await introspect(tokens.access_token)).aud).toBe(RESOURCE);
  });
});

describe('ChatGPT', () => {
  it('signs in with its metadata document and exchanges the code with an RS256 client assertion', async () => {
    // Its document declares private_key_jwt with an RS256 jwks_uri, and does not fall back
    // (recorded in test/helpers/client-keys.ts).
    const key = await signingKey('RS256', 'chatgpt-1');
    served.set('/oauth/jwks.json', { keys: [key.publicJwk] });
    const document = chatGptDocument(documents.origin, 'g-notes', { newer: true });
    const clientId = document.client_id as string;
    served.set(new URL(clientId).pathname, document);
    const redirectUri = (document.redirect_uris as string[])[0]!;
    const assertion = async () =>
      assertionFields(await clientAssertion(key, clientId, `${server.baseUrl}/token`, Math.floor(Date.now() / 1000)));
    const { page, tokens } = await signIn(clientId, redirectUri, {}, async () => ({
      client_id: clientId,
      ...(await assertion()),
    }));
    expect(page).toContain('ChatGPT');
    expect(await introspect(tokens.access_token)).toMatchObject({ active: true, aud: RESOURCE, client_id: clientId });
    // Without an assertion the code of a key-signed client is not exchanged, nor its token refreshed.
    const refused = await postForm(server, '/token', {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token!,
      client_id: clientId,
    });
    expect(refused.status).toBe(401);
    const refreshed = await postForm(server, '/token', {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token!,
      ...(await assertion()),
    });
    expect(refreshed.status, await refreshed.clone().text()).toBe(200);
  });

  it('registers dynamically with its one https callback, signs in, and reconnects without a scope', async () => {
    // Its connector's callback and the reconnect that sends no scope (community.openai.com,
    // "OAuth missing scopes after reconnect").
    const registered = await registerDynamically({
      client_name: 'ChatGPT',
      redirect_uris: ['https://chatgpt.com/connector_platform_oauth_redirect'],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    });
    const first = await signIn(registered.client_id, 'https://chatgpt.com/connector_platform_oauth_redirect', {
      scope: 'email profile',
    });
    expect(first.tokens.scope).toBe('email profile');
    const again = await signIn(registered.client_id, 'https://chatgpt.com/connector_platform_oauth_redirect');
    expect((await introspect(again.tokens.access_token)).active).toBe(true);
  });
});
