/**
 * The purge of self-registered clients (docs/design.md §9 Purge): a client made by a metadata
 * document or dynamic registration goes once unused for SELF_REGISTERED_CLIENT_RETENTION, never
 * while a grant, or a request or code that can still be used, refers to it; its use is written
 * down at most once a day; manual and disabled clients stay. Real HTTP, the engine's database,
 * the test clock moved forward.
 */
import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import type { RegistrationResponse } from '../src/domain/registration.ts';
import { setClientStatus } from '../src/domain/clients.ts';
import { purgeOnce } from '../src/server.ts';
import { authorizeUrl, obtainTokens, type Party, pkcePair, postForm, postJson, startFlow } from './helpers/flow.ts';
import { type HttpsTestServer, startHttpsServer, TEST_CA } from './helpers/https.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { expectJsonError } from './security/support.ts';

const DAY = 86_400;
const LOOPBACK = (ip: string) => ip === '127.0.0.1' || ip === '::1';

const running: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((server) => server.close()));
});

async function serverWith(env: Record<string, string> = {}): Promise<TestServer> {
  const server = await startTestServer({
    env: { MCP_AUTHORIZATION: 'true', ...env },
    clientMetadataFetch: { ca: TEST_CA, allowAddress: LOOPBACK },
  });
  running.push(server);
  return server;
}

async function register(server: TestServer, name = 'Notes'): Promise<RegistrationResponse> {
  const response = await postJson(server, '/register', {
    client_name: name,
    redirect_uris: ['https://app.example/callback'],
  });
  expect(response.status).toBe(201);
  return (await response.json()) as RegistrationResponse;
}

async function partyOf(server: TestServer, client: RegistrationResponse): Promise<Party> {
  return {
    clientId: client.client_id,
    clientSecret: client.client_secret ?? '',
    redirectUri: client.redirect_uris[0]!,
    ...(await server.createAgent()),
  };
}

const readRegistration = (server: TestServer, client: RegistrationResponse) =>
  fetch(`${server.baseUrl}/register/${client.client_id}`, {
    headers: { authorization: `Bearer ${client.registration_access_token}` },
  });

const lastUsed = async (server: TestServer, clientId: string) =>
  (await server.ctx.store.clients.find(clientId))?.last_used_at;

describe('purge of self-registered clients', () => {
  it('purges a dynamically registered client unused for SELF_REGISTERED_CLIENT_RETENTION (30 days), never a manual one; its registration token then names nothing', async () => {
    const server = await serverWith();
    const manual = await server.createClient();
    const dynamic = await register(server);

    server.clock.advance(30 * DAY - 1);
    expect((await purgeOnce(server.ctx)).clients).toBe(0);
    expect(await server.ctx.store.clients.find(dynamic.client_id)).toBeDefined();

    server.clock.advance(2);
    expect((await purgeOnce(server.ctx)).clients).toBe(1);
    expect(await server.ctx.store.clients.find(dynamic.client_id)).toBeUndefined();
    expect(await server.ctx.store.clients.find(manual.clientId)).toBeDefined();
    await expectJsonError(await readRegistration(server, dynamic), 401, 'invalid_token');

    server.clock.advance(365 * DAY);
    expect((await purgeOnce(server.ctx)).clients).toBe(0);
    expect(await server.ctx.store.clients.find(manual.clientId)).toBeDefined();
  });

  it('keeps a client while a grant of it exists, and purges it in the run that purges its last grant', async () => {
    const server = await serverWith({ SELF_REGISTERED_CLIENT_RETENTION: String(DAY) });
    const signedIn = await register(server, 'Signed in');
    const idle = await register(server, 'Idle');
    await obtainTokens(server, await partyOf(server, signedIn));

    server.clock.advance(2 * DAY);
    expect((await purgeOnce(server.ctx)).clients).toBe(1);
    expect(await server.ctx.store.clients.find(idle.client_id)).toBeUndefined();
    expect(await server.ctx.store.clients.find(signedIn.client_id)).toBeDefined();

    // The refresh token (30 days) expires, is kept PURGE_AFTER (1 day), and goes with its grant.
    server.clock.advance(28 * DAY + 1);
    expect(await purgeOnce(server.ctx)).toMatchObject({ grants: 0, clients: 0 });
    server.clock.advance(DAY);
    expect(await purgeOnce(server.ctx)).toMatchObject({ grants: 1, clients: 1 });
    expect(await server.ctx.store.clients.find(signedIn.client_id)).toBeUndefined();
  });

  it('keeps a client while a request of it can still be used; its use is written at most once a day', async () => {
    const server = await serverWith({ SELF_REGISTERED_CLIENT_RETENTION: String(DAY) });
    const client = await register(server);
    const registeredAt = server.clock();
    expect(await lastUsed(server, client.client_id)).toBe(registeredAt);

    // Less than a day after the last written use: this use is not written.
    server.clock.advance(DAY - 1);
    await startFlow(server, await partyOf(server, client));
    expect(await lastUsed(server, client.client_id)).toBe(registeredAt);

    server.clock.advance(2);
    expect((await purgeOnce(server.ctx)).clients).toBe(0);
    server.clock.advance(600); // the request (REQUEST_TTL 600) has expired
    expect((await purgeOnce(server.ctx)).clients).toBe(1);
  });

  it('a use a day after the last one is written down, at /authorize, /token and registration management, and restarts the period; a manual client gets no write', async () => {
    const server = await serverWith({ SELF_REGISTERED_CLIENT_RETENTION: String(2 * DAY) });
    const dynamic = await register(server);
    const party = await partyOf(server, dynamic);
    const manualParty: Party = { ...(await server.createClient()), ...(await server.createAgent()) };

    server.clock.advance(DAY + 1);
    const tokens = await obtainTokens(server, party); // /authorize writes the use
    expect(await lastUsed(server, dynamic.client_id)).toBe(server.clock());
    const manualTokens = await obtainTokens(server, manualParty);

    server.clock.advance(DAY + 1);
    const refresh = (p: Party, refreshToken: string) =>
      postForm(server, '/token', {
        grant_type: 'refresh_token',
        refresh_token: refreshToken,
        client_id: p.clientId,
        client_secret: p.clientSecret,
      });
    expect((await refresh(party, tokens.refresh_token)).status).toBe(200); // /token writes it
    expect(await lastUsed(server, dynamic.client_id)).toBe(server.clock());
    expect((await refresh(manualParty, manualTokens.refresh_token)).status).toBe(200);
    expect(await lastUsed(server, manualParty.clientId)).toBeNull();

    // Registration management (RFC 7592) is use too; a fresh registration is not purged meanwhile.
    const other = await register(server, 'Managed');
    server.clock.advance(DAY + 1);
    expect((await readRegistration(server, other)).status).toBe(200);
    expect(await lastUsed(server, other.client_id)).toBe(server.clock());
    server.clock.advance(DAY + 1);
    expect((await purgeOnce(server.ctx)).clients).toBe(0);
    server.clock.advance(DAY);
    // Now unused for 2 days and 1 second: the managed one goes; the signed-in one has its grant.
    expect((await purgeOnce(server.ctx)).clients).toBe(1);
    expect(await server.ctx.store.clients.find(other.client_id)).toBeUndefined();
  });

  it('never purges a self-registered client an operator disabled (a metadata document one would come back enabled)', async () => {
    const server = await serverWith({ SELF_REGISTERED_CLIENT_RETENTION: String(DAY) });
    const disabled = await register(server, 'Disabled');
    const idle = await register(server, 'Idle');
    await setClientStatus(server.ctx, disabled.client_id, 'inactive');
    server.clock.advance(2 * DAY);
    expect((await purgeOnce(server.ctx)).clients).toBe(1);
    expect(await server.ctx.store.clients.find(idle.client_id)).toBeUndefined();
    expect(await server.ctx.store.clients.find(disabled.client_id)).toMatchObject({ status: 'inactive' });
  });

  describe('a metadata document client', () => {
    let site: HttpsTestServer | undefined;
    afterEach(async () => {
      await site?.close();
      site = undefined;
    });

    it('is purged when unused, and its next /authorize brings it back from its document', async () => {
      site = await startHttpsServer((req, res: ServerResponse) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            client_id: `https://${req.headers.host}${req.url}`,
            client_name: 'Notes for MCP',
            redirect_uris: ['http://127.0.0.1/callback'],
          }),
        );
      });
      const server = await serverWith({ SELF_REGISTERED_CLIENT_RETENTION: String(DAY) });
      const clientId = `${site.origin}/client.json`;
      const authorize = () =>
        fetch(
          authorizeUrl(server, {
            client_id: clientId,
            redirect_uri: 'http://127.0.0.1:47000/callback',
            response_type: 'code',
            state: 's',
            code_challenge: pkcePair().challenge,
            code_challenge_method: 'S256',
          }),
        );

      expect((await authorize()).status).toBe(200);
      expect(await server.ctx.store.clients.find(clientId)).toMatchObject({
        source: 'metadata_document',
        last_used_at: server.clock(),
      });

      server.clock.advance(DAY + 601);
      expect((await purgeOnce(server.ctx)).clients).toBe(1);
      expect(await server.ctx.store.clients.find(clientId)).toBeUndefined();

      const again = await authorize();
      expect(again.status).toBe(200);
      expect(await again.text()).toContain('<span id="client-name">Notes for MCP</span>');
      expect(await server.ctx.store.clients.find(clientId)).toMatchObject({
        source: 'metadata_document',
        status: 'active',
        last_used_at: server.clock(),
      });
    });
  });
});
