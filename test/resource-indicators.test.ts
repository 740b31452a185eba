/**
 * RFC 8707 resource indicators (docs/design.md §13): `resource` at /authorize and /token, bound
 * to the code and the grant, the access token's `aud`, kept on refresh, reported by
 * introspection, readable by the resource server it is for; invalid_target for a bad one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerClient } from '../src/domain/clients.ts';
import {
  authenticate,
  authorizeUrl,
  continueFlow,
  obtainCode,
  type Party,
  pkcePair,
  postForm,
  redeem,
  setupParty,
  startFlow,
  type Tokens,
} from './helpers/flow.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { expectErrorPage, expectJsonError } from './security/support.ts';

const RESOURCE = 'https://mcp.example.com/mcp';

const claimsOf = (jwt: string) =>
  JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;

let server: TestServer;
let party: Party;
beforeAll(async () => {
  server = await startTestServer();
  party = await setupParty(server);
  // By default a resource is only one the operator registered (docs/design.md §13).
  await registerClient(server.ctx, { name: 'Docs MCP server', redirectUris: [], resources: [RESOURCE] });
});
afterAll(() => server.close());

/** GET /authorize for the party with a valid challenge, plus `extra`. */
const authorizeFor = (target: TestServer, who: Party, extra: Record<string, string> = {}) =>
  fetch(
    authorizeUrl(target, {
      client_id: who.clientId,
      redirect_uri: who.redirectUri,
      response_type: 'code',
      state: 's',
      code_challenge: pkcePair().challenge,
      code_challenge_method: 'S256',
      ...extra,
    }),
  );

async function tokensFor(extra: Record<string, string> = {}, tokenExtra: Record<string, string> = {}): Promise<Tokens> {
  const { code, verifier } = await obtainCode(server, party, extra);
  const response = await redeem(server, party, code, verifier, tokenExtra);
  expect(response.status).toBe(200);
  return (await response.json()) as Tokens;
}

const introspect = async (token: string, clientId = party.clientId, clientSecret = party.clientSecret) =>
  (
    await postForm(server, '/introspect', { token, client_id: clientId, client_secret: clientSecret })
  ).json() as Promise<Record<string, unknown>>;

describe('resource indicators (RFC 8707)', () => {
  it('binds the resource to the code and the grant: the access token is for it, introspection says so, refresh keeps it', async () => {
    const started = await startFlow(server, party, { resource: RESOURCE });
    // The person reads, in words, that another service gets access, and which one.
    expect(started.page).toContain(
      'also asks for access to another service: <strong id="resource-host">mcp.example.com</strong>',
    );
    expect(started.page).toContain(`<code id="resource">${RESOURCE}</code>`);
    expect(started.page).toContain(`<meta name="resource" content="${RESOURCE}">`);
    expect((await authenticate(server, party, started.requestId)).status).toBe(200);
    const location = new URL((await continueFlow(server, started)).headers.get('location')!);
    const response = await redeem(server, party, location.searchParams.get('code')!, started.verifier);
    expect(response.status).toBe(200);
    const tokens = (await response.json()) as Tokens;

    expect(claimsOf(tokens.access_token)).toMatchObject({
      aud: RESOURCE,
      client_id: party.clientId,
      sub: party.agentId,
    });
    expect(await introspect(tokens.access_token)).toMatchObject({
      active: true,
      aud: RESOURCE,
      client_id: party.clientId,
    });
    expect(await introspect(tokens.refresh_token)).toMatchObject({
      active: true,
      aud: RESOURCE,
      token_type: 'refresh_token',
    });

    const refreshed = await postForm(server, '/token', {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
      client_id: party.clientId,
      client_secret: party.clientSecret,
    });
    expect(refreshed.status).toBe(200);
    const next = (await refreshed.json()) as Tokens;
    expect(claimsOf(next.access_token).aud).toBe(RESOURCE);

    // Naming the same resource again is fine; another one is not.
    const same = await postForm(server, '/token', {
      grant_type: 'refresh_token',
      refresh_token: next.refresh_token,
      client_id: party.clientId,
      client_secret: party.clientSecret,
      resource: RESOURCE,
    });
    expect(same.status).toBe(200);
    const other = await postForm(server, '/token', {
      grant_type: 'refresh_token',
      refresh_token: ((await same.json()) as Tokens).refresh_token,
      client_id: party.clientId,
      client_secret: party.clientSecret,
      resource: 'https://other.example.com/api',
    });
    await expectJsonError(other, 400, 'invalid_target');
  });

  it('without a resource, tokens are for the client as before', async () => {
    const tokens = await tokensFor();
    expect(claimsOf(tokens.access_token).aud).toBe(party.clientId);
    const introspection = await introspect(tokens.access_token);
    expect(introspection.aud).toBe(party.clientId);
    expect((await introspect(tokens.refresh_token)).aud).toBeUndefined();
    const userinfo = await fetch(`${server.baseUrl}/userinfo`, {
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });
    expect(userinfo.status).toBe(200);
  });

  it('a token for a resource server is not accepted at userinfo', async () => {
    const tokens = await tokensFor({ resource: RESOURCE });
    const userinfo = await fetch(`${server.baseUrl}/userinfo`, {
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });
    await expectJsonError(userinfo, 401, 'invalid_token');
  });

  it.each([
    ['a relative reference', '/mcp'],
    ['a fragment', 'https://mcp.example.com/mcp#part'],
    ['an empty value', ''],
    ['no scheme', 'mcp.example.com/mcp'],
  ])('refuses %s at /authorize with invalid_target, on the page', async (_name, resource) => {
    await expectErrorPage(await authorizeFor(server, party, { resource }), 400, 'invalid_target');
  });

  it('refuses two resources in one request with invalid_target', async () => {
    const twice = `${authorizeUrl(server, { client_id: party.clientId, redirect_uri: party.redirectUri, response_type: 'code', state: 's', code_challenge: pkcePair().challenge, code_challenge_method: 'S256', resource: RESOURCE })}&resource=${encodeURIComponent('https://other.example.com/')}`;
    await expectErrorPage(await fetch(twice), 400, 'invalid_target');
  });

  it('at /token, a resource other than the code’s is invalid_target and leaves the code usable', async () => {
    const { code, verifier } = await obtainCode(server, party, { resource: RESOURCE });
    await expectJsonError(
      await redeem(server, party, code, verifier, { resource: 'https://other.example.com/api' }),
      400,
      'invalid_target',
    );
    const response = await redeem(server, party, code, verifier, { resource: RESOURCE });
    expect(response.status).toBe(200);
    expect(claimsOf(((await response.json()) as Tokens).access_token).aud).toBe(RESOURCE);
  });

  it('at /token, a resource for a code that had none is invalid_target', async () => {
    const { code, verifier } = await obtainCode(server, party);
    await expectJsonError(await redeem(server, party, code, verifier, { resource: RESOURCE }), 400, 'invalid_target');
  });

  it('the resource server registered for a resource may introspect its tokens, and only those', async () => {
    const { client: resourceServer, secret } = await registerClient(server.ctx, {
      name: 'Docs MCP server',
      redirectUris: [],
      resources: [RESOURCE],
    });
    const { client: otherServer, secret: otherSecret } = await registerClient(server.ctx, {
      name: 'Other API',
      redirectUris: [],
      resources: ['https://other.example.com/api'],
    });
    const forResource = await tokensFor({ resource: RESOURCE });
    const forClient = await tokensFor();

    expect(await introspect(forResource.access_token, resourceServer.id, secret)).toMatchObject({
      active: true,
      aud: RESOURCE,
      sub: party.agentId,
      client_id: party.clientId,
    });
    expect(await introspect(forClient.access_token, resourceServer.id, secret)).toEqual({ active: false });
    expect(await introspect(forResource.refresh_token, resourceServer.id, secret)).toEqual({ active: false });
    expect(await introspect(forResource.access_token, otherServer.id, otherSecret)).toEqual({ active: false });

    // A resource server has no redirect URI: it cannot start a sign-in.
    await expectErrorPage(
      await authorizeFor(server, { ...party, clientId: resourceServer.id }),
      400,
      'invalid_request',
    );
  });
});

describe('which resources tokens may be for', () => {
  it('takes a registered resource in another spelling (host case, default port, a bare slash) as that resource: the token is for it as registered', async () => {
    const bare = 'https://notes-mcp.example.com';
    await registerClient(server.ctx, { name: 'Notes MCP server', redirectUris: [], resources: [bare] });
    // What clients built on the WHATWG URL parser send: the host in any case, a port, a slash.
    for (const [asked, registered, atRefresh] of [
      ['HTTPS://Notes-MCP.example.com:443/', bare, `${bare}/`],
      [`${bare}/`, bare, 'https://NOTES-MCP.example.com'],
      ['https://MCP.EXAMPLE.COM:443/mcp', RESOURCE, 'https://mcp.example.com:443/mcp'],
    ] as const) {
      const tokens = await tokensFor({ resource: asked }, { resource: asked });
      expect(claimsOf(tokens.access_token).aud).toBe(registered);
      expect(await introspect(tokens.access_token)).toMatchObject({ active: true, aud: registered });
      // At /token, any spelling of the grant's resource is that resource; another one is not.
      const refreshed = await postForm(server, '/token', {
        grant_type: 'refresh_token',
        refresh_token: tokens.refresh_token,
        client_id: party.clientId,
        client_secret: party.clientSecret,
        resource: atRefresh,
      });
      expect(refreshed.status).toBe(200);
      expect(claimsOf(((await refreshed.json()) as Tokens).access_token).aud).toBe(registered);
    }
  });

  it('keeps a path’s trailing slash: /mcp/ is not /mcp, whose server may serve another thing there', async () => {
    await expectErrorPage(await authorizeFor(server, party, { resource: `${RESOURCE}/` }), 400, 'invalid_target');
  });

  it('by default refuses a resource nobody registered, whoever the client is (invalid_target on the page)', async () => {
    const response = await authorizeFor(server, party, { resource: 'https://rs.example/mcp' });
    await expectErrorPage(response, 400, 'invalid_target');
  });

  it('by default refuses a path below a registered resource: the registration names one audience exactly', async () => {
    await expectErrorPage(await authorizeFor(server, party, { resource: `${RESOURCE}/admin` }), 400, 'invalid_target');
  });

  it('stops allowing a resource once its resource server is disabled', async () => {
    const resource = 'https://disabled-rs.example/mcp';
    const { client } = await registerClient(server.ctx, {
      name: 'Soon disabled',
      redirectUris: [],
      resources: [resource],
    });
    expect((await authorizeFor(server, party, { resource })).status).toBe(200);
    await server.ctx.store.clients.update(client.id, { status: 'inactive' });
    await expectErrorPage(await authorizeFor(server, party, { resource }), 400, 'invalid_target');
  });

  it('ALLOWED_RESOURCES=* allows any resource, as an explicit choice of the operator', async () => {
    const open = await startTestServer({ env: { ALLOWED_RESOURCES: '*' } });
    try {
      const openParty = await setupParty(open);
      expect((await authorizeFor(open, openParty, { resource: 'https://rs.example/mcp' })).status).toBe(200);
    } finally {
      await open.close();
    }
  });
});

describe('ALLOWED_RESOURCES', () => {
  let restricted: TestServer;
  let restrictedParty: Party;
  beforeAll(async () => {
    restricted = await startTestServer({
      env: { ALLOWED_RESOURCES: 'https://mcp.example.com https://api.example.com/v1/' },
    });
    restrictedParty = await setupParty(restricted);
  });
  afterAll(() => restricted.close());

  it.each([
    ['https://mcp.example.com/mcp', 200],
    ['https://mcp.example.com', 200],
    ['https://api.example.com/v1/notes', 200],
    ['https://api.example.com/v2/notes', 400],
    ['https://mcp.example.com.evil.example/mcp', 400],
    ['http://mcp.example.com/mcp', 400],
    ['https://other.example/', 400],
  ])('%s answers %i', async (resource, status) => {
    const response = await authorizeFor(restricted, restrictedParty, { resource });
    if (status === 200) expect(response.status).toBe(200);
    else await expectErrorPage(response, 400, 'invalid_target');
  });
});
