/**
 * Client ID Metadata Documents through the real endpoints (docs/design.md §13): an https
 * client_id is fetched from a real https server on loopback (trusted by this test alone), kept as
 * a public client, shown with its host on the page, and refused when invalid, disabled, served
 * from a special-use address, or while the feature is off.
 */
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setClientStatus } from '../src/domain/clients.ts';
import {
  authorizeUrl,
  continueFlow,
  type Party,
  pkcePair,
  postForm,
  postJson,
  startFlow,
  type Tokens,
} from './helpers/flow.ts';
import { type HttpsTestServer, startHttpsServer, TEST_CA } from './helpers/https.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { expectErrorPage, expectJsonError } from './security/support.ts';

const LOOPBACK = (ip: string) => ip === '127.0.0.1' || ip === '::1';

/** Documents by path, as the client's site serves them. */
const documents = new Map<string, unknown>();
let site: HttpsTestServer;
let server: TestServer;

const send = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'max-age=600' });
  res.end(JSON.stringify(body));
};

beforeAll(async () => {
  site = await startHttpsServer((req, res) => {
    const document = documents.get(req.url ?? '');
    if (document === undefined) send(res, 404, { error: 'not found' });
    else send(res, 200, document);
  });
  server = await startTestServer({
    env: { MCP_AUTHORIZATION: 'true' },
    clientMetadataFetch: { ca: TEST_CA, allowAddress: LOOPBACK },
  });
});
afterAll(async () => {
  await server.close();
  await site.close();
});

/** Publishes a document at `path` whose client_id is its own URL. */
function publish(path: string, fields: Record<string, unknown> = {}): string {
  const clientId = `${site.origin}${path}`;
  documents.set(path, {
    client_id: clientId,
    client_name: 'Notes for MCP',
    redirect_uris: ['http://127.0.0.1/callback'],
    token_endpoint_auth_method: 'none',
    ...fields,
  });
  return clientId;
}

const authorizeWith = (target: TestServer, clientId: string, redirectUri = 'http://127.0.0.1:47000/callback') =>
  fetch(
    authorizeUrl(target, {
      client_id: clientId,
      redirect_uri: redirectUri,
      response_type: 'code',
      state: 's',
      code_challenge: pkcePair().challenge,
      code_challenge_method: 'S256',
    }),
  );

describe('Client ID Metadata Documents', () => {
  it('signs in a client known only by its document: the page names its host and warns of localhost-only redirects', async () => {
    const clientId = publish('/oauth/client.json');
    const agent = await server.createAgent();
    const party: Party = { clientId, clientSecret: '', redirectUri: 'http://127.0.0.1:47000/callback', ...agent };
    const started = await startFlow(server, party);
    expect(started.page).toContain('<span id="client-name">Notes for MCP</span>');
    expect(started.page).toMatch(new RegExp(`id="client-origin">[^<]*<strong>${new URL(site.origin).host}</strong>`));
    expect(started.page).toContain('id="localhost-warning"');

    // What the agent may check before it authenticates: the client's URL and name.
    const view = await fetch(`${server.baseUrl}/api/agent/request?request_id=${started.requestId}`);
    expect(await view.json()).toMatchObject({
      client_id: clientId,
      client_name: 'Notes for MCP',
      redirect_host: '127.0.0.1:47000',
    });

    // The agent names the client it expects by its URL, as it names any client by its id.
    const signedIn = await postJson(server, '/api/agent/authenticate', {
      request_id: started.requestId,
      agent_id: party.agentId,
      agent_secret: party.agentSecret,
      model: 'test-model',
      expected_client_id: clientId,
    });
    expect(signedIn.status).toBe(200);
    const location = new URL((await continueFlow(server, started)).headers.get('location')!);
    const response = await postForm(server, '/token', {
      grant_type: 'authorization_code',
      code: location.searchParams.get('code')!,
      code_verifier: started.verifier,
      client_id: clientId,
      redirect_uri: party.redirectUri,
    });
    expect(response.status).toBe(200);
    const tokens = (await response.json()) as Tokens;
    expect(tokens.id_token).toBeUndefined();
    expect(await server.ctx.store.clients.find(clientId)).toMatchObject({
      source: 'metadata_document',
      token_endpoint_auth_method: 'none',
      name: 'Notes for MCP',
      secret_sealed: '',
    });

    // The client refreshes with its client_id alone.
    const refreshed = await postForm(server, '/token', {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
      client_id: clientId,
    });
    expect(refreshed.status).toBe(200);
  });

  it('shows no localhost warning when the document also redirects to a site', async () => {
    const clientId = publish('/web/client.json', {
      redirect_uris: ['https://notes.example/callback', 'http://127.0.0.1/callback'],
    });
    const response = await authorizeWith(server, clientId, 'https://notes.example/callback');
    expect(response.status).toBe(200);
    expect(await response.text()).not.toContain('id="localhost-warning"');
  });

  it.each([
    ['a client_id that is not its URL', '/bad/mismatch.json', { client_id: 'https://elsewhere.example/client.json' }],
    ['no client_name', '/bad/no-name.json', { client_name: undefined }],
    ['a secret-based auth method', '/bad/secret.json', { token_endpoint_auth_method: 'client_secret_post' }],
    ['a redirect URI that is not https', '/bad/http.json', { redirect_uris: ['http://notes.example/callback'] }],
  ])('refuses a document with %s: a 400 page, nothing stored', async (_name, path, fields) => {
    const clientId = publish(path, fields);
    await expectErrorPage(await authorizeWith(server, clientId), 400, 'invalid_client');
    expect(await server.ctx.store.clients.find(clientId)).toBeUndefined();
  });

  it('escapes a hostile client_name on the page (the name is the document author’s)', async () => {
    const clientId = publish('/hostile.json', { client_name: '<script>alert(1)</script><img src=x onerror=alert(2)>' });
    const response = await authorizeWith(server, clientId);
    expect(response.status).toBe(200);
    const page = await response.text();
    expect(page).not.toContain('<script>alert(1)');
    expect(page).not.toContain('<img src=x');
    expect(page).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
  });

  it('refuses a redirect URI that is not in the document', async () => {
    const clientId = publish('/only-one.json');
    await expectErrorPage(
      await authorizeWith(server, clientId, 'http://127.0.0.1:47000/other'),
      400,
      'invalid_request',
    );
  });

  it('refuses a client_id URL the site answers 404 for', async () => {
    const page = await expectErrorPage(
      await authorizeWith(server, `${site.origin}/missing.json`),
      400,
      'invalid_client',
    );
    expect(page.description).toMatch(/404/);
  });

  it('an operator can disable such a client: refused without asking its site again', async () => {
    const clientId = publish('/disabled.json');
    expect((await authorizeWith(server, clientId)).status).toBe(200);
    await setClientStatus(server.ctx, clientId, 'inactive');
    server.ctx.clientMetadata!.forget(clientId);
    const before = site.requests;
    await expectErrorPage(await authorizeWith(server, clientId), 400, 'invalid_client');
    expect(site.requests).toBe(before);
    // And its tokens endpoint use ends with it.
    await expectJsonError(
      await postForm(server, '/token', { grant_type: 'refresh_token', refresh_token: 'rft_x', client_id: clientId }),
      401,
      'invalid_client',
    );
  });

  it('never fetches from a special-use address in production: the loopback site is refused and receives nothing', async () => {
    const production = await startTestServer({ env: { MCP_AUTHORIZATION: 'true' } });
    try {
      const clientId = publish('/production.json');
      const connections = site.connections;
      const page = await expectErrorPage(await authorizeWith(production, clientId), 400, 'invalid_client');
      expect(page.description).toMatch(/special-use|not allowed|public address/i);
      expect(site.connections).toBe(connections);
    } finally {
      await production.close();
    }
  });

  it('while CLIENT_ID_METADATA_DOCUMENTS is off an https client_id is an unknown client, and nothing is fetched', async () => {
    const off = await startTestServer({
      env: { PUBLIC_CLIENTS: 'true' },
      clientMetadataFetch: { ca: TEST_CA, allowAddress: LOOPBACK },
    });
    try {
      const clientId = publish('/off.json');
      const connections = site.connections;
      await expectErrorPage(await authorizeWith(off, clientId), 400, 'invalid_client');
      expect(site.connections).toBe(connections);
    } finally {
      await off.close();
    }
  });
});
