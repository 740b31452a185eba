/**
 * Scopes of resource servers (issue 36, item 2; docs/design.md §13), over real HTTP: a resource
 * server registers the scopes it serves, each with a description; /authorize grants one only
 * with the resource that registered it (invalid_scope otherwise), the page says in words what
 * each allows (escaped), the token, refresh and introspection carry it, /token narrows and never
 * widens. offline_access is accepted and published where OFFLINE_ACCESS (MCP_AUTHORIZATION) is
 * on, and is invalid_scope where it is off, as before.
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

const NOTES = 'https://notes.example/mcp';
const FILES = 'https://files.example/mcp';
const HOSTILE = '<script>alert(1)</script> & "Delete" <b>everything</b>';

const claimsOf = (jwt: string) =>
  JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;

let server: TestServer;
let party: Party;
let notesServer: { clientId: string; clientSecret: string };
beforeAll(async () => {
  server = await startTestServer();
  party = await setupParty(server, { name: 'Notes app' });
  const notes = await registerClient(server.ctx, {
    name: 'Notes MCP server',
    redirectUris: [],
    resources: [NOTES],
    scopes: [
      { name: 'notes:read', description: 'Read your notes' },
      { name: 'notes:write', description: HOSTILE },
    ],
  });
  notesServer = { clientId: notes.client.id, clientSecret: notes.secret };
  // Another resource that serves a scope of the same name: scopes are per resource.
  await registerClient(server.ctx, {
    name: 'Files MCP server',
    redirectUris: [],
    resources: [FILES],
    scopes: [
      { name: 'files:read', description: 'Read your files' },
      { name: 'notes:read', description: 'Read the notes attached to your files' },
    ],
  });
});
afterAll(() => server.close());

const authorize = (target: TestServer, who: Party, extra: Record<string, string>) =>
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

const introspect = async (token: string, caller: { clientId: string; clientSecret: string }) =>
  (
    await postForm(server, '/introspect', { token, client_id: caller.clientId, client_secret: caller.clientSecret })
  ).json() as Promise<Record<string, unknown>>;

const refresh = (refreshToken: string, extra: Record<string, string> = {}) =>
  postForm(server, '/token', {
    grant_type: 'refresh_token',
    refresh_token: refreshToken,
    client_id: party.clientId,
    client_secret: party.clientSecret,
    ...extra,
  });

describe('scopes of resource servers', () => {
  it('a resource scope is granted with its resource: the page says it in words, escaped; the token, introspection and refresh carry it', async () => {
    const started = await startFlow(server, party, { scope: 'openid notes:read notes:write', resource: NOTES });
    // What each scope allows, as the resource server registered it, beside the standard wording.
    expect(started.page).toContain('Sign in with the identity of your AI agent');
    expect(started.page).toMatch(
      /<li class="resource-scope" data-scope="notes:read">Read your notes <span class="muted">at notes\.example \(<code>notes:read<\/code>\)/,
    );
    // A description is plain text: escaped, never markup.
    expect(started.page).toContain(
      '&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;Delete&quot; &lt;b&gt;everything&lt;/b&gt;',
    );
    expect(started.page).not.toContain('<script>alert(1)');
    expect(started.page).not.toContain('<b>everything</b>');
    expect(started.page).toContain('<meta name="scope" content="openid notes:read notes:write">');

    expect((await authenticate(server, party, started.requestId)).status).toBe(200);
    const location = new URL((await continueFlow(server, started)).headers.get('location')!);
    const response = await redeem(server, party, location.searchParams.get('code')!, started.verifier);
    expect(response.status).toBe(200);
    const tokens = (await response.json()) as Tokens;
    expect(tokens.scope).toBe('openid notes:read notes:write');
    expect(tokens.id_token).toEqual(expect.any(String));
    expect(claimsOf(tokens.access_token)).toMatchObject({ scope: 'openid notes:read notes:write', aud: NOTES });

    // The resource server introspects it and reads the scope it checks.
    expect(await introspect(tokens.access_token, notesServer)).toMatchObject({
      active: true,
      scope: 'openid notes:read notes:write',
      aud: NOTES,
      client_id: party.clientId,
    });

    // Refresh narrows (RFC 6749 §6) and never widens; the resource stays the grant's.
    const narrowed = await refresh(tokens.refresh_token, { scope: 'notes:read' });
    expect(narrowed.status).toBe(200);
    const next = (await narrowed.json()) as Tokens;
    expect(next.scope).toBe('notes:read');
    expect(next.id_token).toBeUndefined();
    expect(await introspect(next.access_token, notesServer)).toMatchObject({ active: true, scope: 'notes:read' });
    await expectJsonError(await refresh(next.refresh_token, { scope: 'notes:read files:read' }), 400, 'invalid_scope');
    await expectJsonError(
      await refresh(next.refresh_token, { scope: 'notes:read', resource: FILES }),
      400,
      'invalid_target',
    );
    // The refused attempts consumed nothing: the grant's full scope is still there.
    const whole = await refresh(next.refresh_token);
    expect(whole.status).toBe(200);
    expect(((await whole.json()) as Tokens).scope).toBe('openid notes:read notes:write');
  });

  it('a resource scope without its resource, or with another resource, is invalid_scope on the page', async () => {
    const without = await expectErrorPage(
      await authorize(server, party, { scope: 'openid notes:read' }),
      400,
      'invalid_scope',
    );
    expect(without.description).toBe(
      'Unknown scope notes:read; allowed values are openid, email, profile. A resource server’s scope is granted only with its resource: name it in resource.',
    );
    const elsewhere = await expectErrorPage(
      await authorize(server, party, { scope: 'openid notes:write', resource: FILES }),
      400,
      'invalid_scope',
    );
    expect(elsewhere.description).toBe(
      'Unknown scope notes:write; allowed values are openid, email, profile, files:read, notes:read. A resource server’s scope is granted only with the resource that registered it.',
    );
    // A scope nobody registered reads as before.
    const unknown = await expectErrorPage(
      await authorize(server, party, { scope: 'openid admin', resource: NOTES }),
      400,
      'invalid_scope',
    );
    expect(unknown.description).toBe(
      'Unknown scope admin; allowed values are openid, email, profile, notes:read, notes:write.',
    );
  });

  it('the same name at two resources is two scopes: each shown with its own resource’s words, and its token is for that resource only', async () => {
    const started = await startFlow(server, party, { scope: 'notes:read', resource: 'https://FILES.example/mcp' });
    expect(started.page).toContain('Read the notes attached to your files');
    expect(started.page).not.toContain('Read your notes');
    expect((await authenticate(server, party, started.requestId)).status).toBe(200);
    const location = new URL((await continueFlow(server, started)).headers.get('location')!);
    const tokens = (await (
      await redeem(server, party, location.searchParams.get('code')!, started.verifier)
    ).json()) as Tokens;
    expect(claimsOf(tokens.access_token)).toMatchObject({ aud: FILES, scope: 'notes:read' });
    // The notes server cannot read a token for the files server, whatever its scope says.
    expect(await introspect(tokens.access_token, notesServer)).toEqual({ active: false });
  });

  it('/token with another resource is invalid_target and leaves the code usable; with the same one in another spelling it is served', async () => {
    const { code, verifier } = await obtainCode(server, party, { scope: 'notes:read', resource: NOTES });
    await expectJsonError(await redeem(server, party, code, verifier, { resource: FILES }), 400, 'invalid_target');
    const served = await redeem(server, party, code, verifier, { resource: 'https://NOTES.example:443/mcp' });
    expect(served.status).toBe(200);
    expect(((await served.json()) as Tokens).scope).toBe('notes:read');
  });

  it('a disabled resource server’s scopes are no longer granted', async () => {
    const resource = 'https://paused.example/mcp';
    const paused = await registerClient(server.ctx, {
      name: 'Paused',
      redirectUris: [],
      resources: [resource],
      scopes: [{ name: 'paused:use', description: 'Use the paused service' }],
    });
    expect((await startFlow(server, party, { scope: 'paused:use', resource })).response.status).toBe(200);
    await server.ctx.store.clients.update(paused.client.id, { status: 'inactive' });
    await expectErrorPage(await authorize(server, party, { scope: 'paused:use', resource }), 400, 'invalid_scope');
  });

  it('offline_access is invalid_scope while OFFLINE_ACCESS is off, and the metadata lists the contract’s scopes only', async () => {
    const refused = await expectErrorPage(
      await authorize(server, party, { scope: 'openid offline_access' }),
      400,
      'invalid_scope',
    );
    expect(refused.description).toBe('Unknown scope offline_access; allowed values are openid, email, profile.');
    const metadata = (await (await fetch(`${server.url}/.well-known/oauth-authorization-server`)).json()) as {
      scopes_supported: string[];
    };
    // Registered resource scopes are the resources' to publish (RFC 9728), not listed here.
    expect(metadata.scopes_supported).toEqual(['openid', 'email', 'profile']);
  });
});

describe('offline_access with MCP_AUTHORIZATION', () => {
  let mcp: TestServer;
  let mcpParty: Party;
  beforeAll(async () => {
    mcp = await startTestServer({ env: { MCP_AUTHORIZATION: 'true' } });
    mcpParty = await setupParty(mcp);
  });
  afterAll(() => mcp.close());

  it('is published, accepted and granted (a refresh token, as every client gets), also beside a resource scope', async () => {
    for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']) {
      const metadata = (await (await fetch(`${mcp.url}${path}`)).json()) as { scopes_supported: string[] };
      expect(metadata.scopes_supported, path).toEqual(['openid', 'email', 'profile', 'offline_access']);
    }
    const { code, verifier, page } = await obtainCode(mcp, mcpParty, { scope: 'offline_access email openid' });
    expect(page).toContain('Access that lasts after you leave');
    const tokens = (await (await redeem(mcp, mcpParty, code, verifier)).json()) as Tokens;
    expect(tokens.scope).toBe('openid email offline_access');
    expect(tokens.refresh_token).toEqual(expect.any(String));
    expect(claimsOf(tokens.access_token).scope).toBe('openid email offline_access');

    await registerClient(mcp.ctx, {
      name: 'Notes',
      redirectUris: [],
      resources: [NOTES],
      scopes: [{ name: 'notes:read', description: 'Read your notes' }],
    });
    const withResource = await obtainCode(mcp, mcpParty, { scope: 'notes:read offline_access', resource: NOTES });
    const resourceTokens = (await (
      await redeem(mcp, mcpParty, withResource.code, withResource.verifier)
    ).json()) as Tokens;
    expect(resourceTokens.scope).toBe('notes:read offline_access');
  });
});
