/**
 * Public clients (docs/design.md §13): no secret, PKCE, rotating refresh tokens, no ID token
 * (nothing to key one with), loopback redirect URIs on any port (RFC 8252 §7.3) for them only,
 * and nothing of it while PUBLIC_CLIENTS is off.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerClient } from '../src/domain/clients.ts';
import {
  authenticate,
  authorizeUrl,
  continueFlow,
  pkcePair,
  postForm,
  startFlow,
  type Party,
  type Tokens,
} from './helpers/flow.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { expectErrorPage, expectJsonError } from './security/support.ts';

const claimsOf = (jwt: string) =>
  JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;

async function publicParty(server: TestServer, redirectUri = 'http://127.0.0.1/callback'): Promise<Party> {
  const { client } = await registerClient(server.ctx, {
    name: 'Desktop MCP client',
    redirectUris: [redirectUri],
    public: true,
  });
  return { clientId: client.id, clientSecret: '', redirectUri, ...(await server.createAgent()) };
}

/** authorize → authenticate → continue, for a redirect URI that may differ from the registered one. */
async function codeFor(server: TestServer, party: Party, extra: Record<string, string> = {}) {
  const started = await startFlow(server, party, extra);
  expect((await authenticate(server, party, started.requestId)).status).toBe(200);
  const redirect = await continueFlow(server, started);
  expect(redirect.status).toBe(302);
  const location = new URL(redirect.headers.get('location')!);
  return { code: location.searchParams.get('code')!, verifier: started.verifier, location, page: started.page };
}

const tokenRequest = (server: TestServer, fields: Record<string, string>) => postForm(server, '/token', fields);

describe('public clients (PUBLIC_CLIENTS=true)', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ env: { PUBLIC_CLIENTS: 'true' } });
  });
  afterAll(() => server.close());

  it('sign in with PKCE and the client_id alone; no ID token; openid left out of the scope; refresh tokens rotate', async () => {
    const party = await publicParty(server);
    const { code, verifier } = await codeFor(server, party);
    const response = await tokenRequest(server, {
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      client_id: party.clientId,
      redirect_uri: party.redirectUri,
    });
    expect(response.status).toBe(200);
    const tokens = (await response.json()) as Tokens;
    expect(tokens.id_token).toBeUndefined();
    expect(tokens.scope).toBe('email profile');
    expect(claimsOf(tokens.access_token)).toMatchObject({
      client_id: party.clientId,
      sub: party.agentId,
      scope: 'email profile',
    });

    const refreshed = await tokenRequest(server, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
      client_id: party.clientId,
    });
    expect(refreshed.status).toBe(200);
    const next = (await refreshed.json()) as Tokens;
    expect(next.refresh_token).not.toBe(tokens.refresh_token);
    expect(next.id_token).toBeUndefined();

    // The rotated token presented again: the whole grant is revoked (RFC 9700 §4.14.2).
    await expectJsonError(
      await tokenRequest(server, {
        grant_type: 'refresh_token',
        refresh_token: tokens.refresh_token,
        client_id: party.clientId,
      }),
      400,
      'invalid_grant',
    );
    await expectJsonError(
      await tokenRequest(server, {
        grant_type: 'refresh_token',
        refresh_token: next.refresh_token,
        client_id: party.clientId,
      }),
      400,
      'invalid_grant',
    );
  });

  it('without PKCE’s verifier the code is refused', async () => {
    const party = await publicParty(server);
    const { code } = await codeFor(server, party);
    await expectJsonError(
      await tokenRequest(server, {
        grant_type: 'authorization_code',
        code,
        client_id: party.clientId,
        redirect_uri: party.redirectUri,
      }),
      400,
      'invalid_request',
    );
    await expectJsonError(
      await tokenRequest(server, {
        grant_type: 'authorization_code',
        code,
        code_verifier: pkcePair().verifier,
        client_id: party.clientId,
        redirect_uri: party.redirectUri,
      }),
      400,
      'invalid_grant',
    );
  });

  it('a public client that sends a client_secret is refused (401 invalid_client)', async () => {
    const party = await publicParty(server);
    const { code, verifier } = await codeFor(server, party);
    await expectJsonError(
      await tokenRequest(server, {
        grant_type: 'authorization_code',
        code,
        code_verifier: verifier,
        client_id: party.clientId,
        client_secret: 'guess',
        redirect_uri: party.redirectUri,
      }),
      401,
      'invalid_client',
    );
  });

  it('asking for openid alone is invalid_scope: there is no ID token to give', async () => {
    const party = await publicParty(server);
    const response = await fetch(
      authorizeUrl(server, {
        client_id: party.clientId,
        redirect_uri: party.redirectUri,
        response_type: 'code',
        state: 's',
        code_challenge: pkcePair().challenge,
        code_challenge_method: 'S256',
        scope: 'openid',
      }),
    );
    await expectErrorPage(response, 400, 'invalid_scope');
    const narrowed = await startFlow(server, party, { scope: 'openid email' });
    expect(narrowed.page).toContain('<meta name="scope" content="email">');
  });

  it('matches a loopback redirect URI on any port, and nothing else loosely', async () => {
    const party = await publicParty(server, 'http://127.0.0.1/callback');
    const { code, verifier, location } = await codeFor(server, {
      ...party,
      redirectUri: 'http://127.0.0.1:53122/callback',
    });
    expect(location.origin).toBe('http://127.0.0.1:53122');
    // The token request must name the redirect URI the authorization request used.
    await expectJsonError(
      await tokenRequest(server, {
        grant_type: 'authorization_code',
        code,
        code_verifier: verifier,
        client_id: party.clientId,
        redirect_uri: party.redirectUri,
      }),
      400,
      'invalid_grant',
    );

    const second = await codeFor(server, { ...party, redirectUri: 'http://127.0.0.1:40000/callback' });
    const ok = await tokenRequest(server, {
      grant_type: 'authorization_code',
      code: second.code,
      code_verifier: second.verifier,
      client_id: party.clientId,
      redirect_uri: 'http://127.0.0.1:40000/callback',
    });
    expect(ok.status).toBe(200);

    const refused = async (redirectUri: string) => {
      const response = await fetch(
        authorizeUrl(server, {
          client_id: party.clientId,
          redirect_uri: redirectUri,
          response_type: 'code',
          state: 's',
          code_challenge: pkcePair().challenge,
          code_challenge_method: 'S256',
        }),
      );
      await expectErrorPage(response, 400, 'invalid_request');
    };
    await refused('http://127.0.0.1:53122/other');
    await refused('http://localhost:53122/callback');
    await refused('http://127.0.0.1:53122/callback?x=1');
    await refused('https://127.0.0.1:53122/callback');
  });

  it('a confidential client’s loopback redirect URI still matches exactly', async () => {
    const { clientId } = await server.createClient({ redirectUris: ['http://127.0.0.1/callback'] });
    const response = await fetch(
      authorizeUrl(server, {
        client_id: clientId,
        redirect_uri: 'http://127.0.0.1:53122/callback',
        response_type: 'code',
        state: 's',
        code_challenge: pkcePair().challenge,
        code_challenge_method: 'S256',
      }),
    );
    await expectErrorPage(response, 400, 'invalid_request');
  });

  it('revokes its own tokens with its client_id; it cannot introspect', async () => {
    const party = await publicParty(server);
    const { code, verifier } = await codeFor(server, party);
    const tokens = (await (
      await tokenRequest(server, {
        grant_type: 'authorization_code',
        code,
        code_verifier: verifier,
        client_id: party.clientId,
        redirect_uri: party.redirectUri,
      })
    ).json()) as Tokens;
    await expectJsonError(
      await postForm(server, '/introspect', { token: tokens.access_token, client_id: party.clientId }),
      401,
      'invalid_client',
    );
    expect((await postForm(server, '/revoke', { token: tokens.refresh_token, client_id: party.clientId })).status).toBe(
      200,
    );
    await expectJsonError(
      await tokenRequest(server, {
        grant_type: 'refresh_token',
        refresh_token: tokens.refresh_token,
        client_id: party.clientId,
      }),
      400,
      'invalid_grant',
    );
  });

  it('a confidential client still needs its secret', async () => {
    const { clientId } = await server.createClient();
    await expectJsonError(
      await postForm(server, '/token', { grant_type: 'refresh_token', refresh_token: 'rft_x', client_id: clientId }),
      401,
      'invalid_client',
    );
  });
});

describe('public clients while PUBLIC_CLIENTS is off (the default)', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server.close());

  it('cannot start a sign-in or use the token endpoint', async () => {
    const party = await publicParty(server);
    const response = await fetch(
      authorizeUrl(server, {
        client_id: party.clientId,
        redirect_uri: party.redirectUri,
        response_type: 'code',
        state: 's',
        code_challenge: pkcePair().challenge,
        code_challenge_method: 'S256',
      }),
    );
    await expectErrorPage(response, 400, 'invalid_client');
    await expectJsonError(
      await postForm(server, '/token', {
        grant_type: 'authorization_code',
        code: 'cod_x',
        code_verifier: pkcePair().verifier,
        client_id: party.clientId,
      }),
      401,
      'invalid_client',
    );
    await expectJsonError(
      await postForm(server, '/revoke', { token: 'rft_x', client_id: party.clientId }),
      401,
      'invalid_client',
    );
  });
});
