/**
 * client_secret_basic (RFC 6749 §2.3.1, docs/design.md §6): the client's credentials in
 * `Authorization: Basic base64(form-encoded id ":" form-encoded secret)` at /token (both grants),
 * /introspect and /revoke, driven by openid-client v6 and oauth4webapi (whose Basic percent-encodes
 * even the `_` of every client_id, so the form decoding is exercised by the libraries themselves)
 * and by raw requests: malformed headers and wrong credentials are 401 invalid_client with the
 * Basic challenge, two methods at once 400 invalid_request, a public client cannot use Basic,
 * the metadata still advertises the contract's list alone, and no log line holds the header.
 */
import { randomBytes } from 'node:crypto';
import * as oauth4 from 'oauth4webapi';
import * as client from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerClient } from '../src/domain/clients.ts';
import { clientCredentials } from '../src/domain/client-authentication.ts';
import { obtainCode, type Party, postForm, redeem, setupParty, type Tokens } from './helpers/flow.ts';
import { browserSignIn, codeGrant } from './helpers/openid-client.ts';
import { captureLogs, startTestServer, type TestServer } from './helpers/server.ts';
import { expectJsonError } from './security/support.ts';

const captured = captureLogs();
let server: TestServer;
let party: Party;

beforeAll(async () => {
  server = await startTestServer({
    env: { PUBLIC_CLIENTS: 'true', LOG_LEVEL: 'trace', AUTH_FAILURES_PER_IP: '1000' },
    logStream: captured.stream,
  });
  party = await setupParty(server, { name: 'Basic Website' });
});

afterAll(async () => {
  await server?.close();
});

const base64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');
/** Every character percent-encoded: what a form-encoding client may send, decoded to the same credentials. */
const percentEncodedAll = (text: string) =>
  [...Buffer.from(text, 'utf8')].map((byte) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`).join('');
const basic = (id: string, secret: string) =>
  `Basic ${base64(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`)}`;
const partyBasic = () => basic(party.clientId, party.clientSecret);

/** A code and its verifier, for a token request the test writes itself. */
async function freshCode(who = party) {
  const { code, verifier } = await obtainCode(server, who);
  return { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: who.redirectUri };
}

const tokenRequest = (fields: Record<string, string>, authorization?: string) =>
  postForm(server, '/token', fields, authorization === undefined ? {} : { authorization });

/** 401 invalid_client with the Basic challenge, and a description that repeats nothing of the header. */
async function expectBasicRefusal(response: Response, header: string, context: string) {
  expect(response.headers.get('www-authenticate'), context).toMatch(/^Basic realm="[^"]+"/);
  const body = await expectJsonError(response, 401, 'invalid_client', context);
  const encoded = header.slice('Basic '.length);
  if (encoded) expect(body.error_description, context).not.toContain(encoded);
  expect(body.error_description, context).not.toContain(party.clientSecret);
  return body;
}

describe('openid-client v6 with ClientSecretBasic', () => {
  /** The requests the library sent to the token, introspection and revocation endpoints. */
  const sent: Array<{ path: string; authorization: string | null; body: string }> = [];

  async function discover(): Promise<client.Configuration> {
    const config = await client.discovery(
      new URL(server.baseUrl),
      party.clientId,
      { id_token_signed_response_alg: 'HS256' },
      client.ClientSecretBasic(party.clientSecret),
      { execute: [client.allowInsecureRequests] },
    );
    config[client.customFetch] = async (url, options) => {
      const headers = new Headers(options.headers as HeadersInit);
      sent.push({
        path: new URL(url).pathname,
        authorization: headers.get('authorization'),
        body: String(options.body),
      });
      return fetch(url, options as RequestInit);
    };
    return config;
  }

  it('signs in, refreshes, introspects and revokes, the secret only ever in the Authorization header', async () => {
    const config = await discover();
    // Discovery is unchanged: Basic is accepted, not advertised (docs/design.md §6).
    expect(config.serverMetadata().token_endpoint_auth_methods_supported).toEqual(['client_secret_post', 'none']);

    const signIn = await browserSignIn(server, party, config);
    const tokens = await codeGrant(config, signIn);
    expect(tokens.claims()).toMatchObject({ sub: party.agentId, aud: party.clientId, nonce: signIn.expectedNonce });

    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    expect(await client.tokenIntrospection(config, refreshed.access_token)).toMatchObject({
      active: true,
      client_id: party.clientId,
      sub: party.agentId,
    });
    await client.tokenRevocation(config, refreshed.refresh_token!);
    expect((await client.tokenIntrospection(config, refreshed.access_token)).active).toBe(false);

    const paths = sent.map((request) => request.path);
    expect(paths).toEqual(['/token', '/token', '/introspect', '/revoke', '/introspect']);
    for (const request of sent) {
      expect(request.authorization, request.path).toMatch(/^Basic /);
      expect(request.body, request.path).not.toContain('client_secret');
      expect(request.body, request.path).not.toContain(party.clientSecret);
    }
  });
});

describe('oauth4webapi with ClientSecretBasic', () => {
  it('exchanges the code and refreshes', async () => {
    const insecure = { [oauth4.allowInsecureRequests]: true };
    const issuer = new URL(server.baseUrl);
    const as = await oauth4.processDiscoveryResponse(
      issuer,
      await oauth4.discoveryRequest(issuer, { algorithm: 'oidc', ...insecure }),
    );
    const rp: oauth4.Client = { client_id: party.clientId, id_token_signed_response_alg: 'HS256' };
    const clientAuth = oauth4.ClientSecretBasic(party.clientSecret);
    const { location, verifier, state } = await obtainCode(server, party);
    const params = oauth4.validateAuthResponse(as, rp, location, state);
    const result = await oauth4.processAuthorizationCodeResponse(
      as,
      rp,
      await oauth4.authorizationCodeGrantRequest(as, rp, clientAuth, params, party.redirectUri, verifier, insecure),
    );
    expect(result.access_token).toBeTruthy();
    const refreshed = await oauth4.processRefreshTokenResponse(
      as,
      rp,
      await oauth4.refreshTokenGrantRequest(as, rp, clientAuth, result.refresh_token!, insecure),
    );
    expect(refreshed.refresh_token).not.toBe(result.refresh_token);
  });
});

describe('client_secret_basic over raw HTTP', () => {
  it('decodes form-encoded credentials: every character percent-encoded is the same client', async () => {
    const header = `Basic ${base64(`${percentEncodedAll(party.clientId)}:${percentEncodedAll(party.clientSecret)}`)}`;
    const response = await tokenRequest(await freshCode(), header);
    expect(response.status).toBe(200);
    expect(((await response.json()) as Tokens).access_token).toBeTruthy();
  });

  it('accepts the scheme in any case, and a body client_id equal to the header’s (RFC 6749 §3.2.1)', async () => {
    const encoded = partyBasic().slice('Basic '.length);
    expect((await tokenRequest(await freshCode(), `bAsIc ${encoded}`)).status).toBe(200);
    const withId = await tokenRequest({ ...(await freshCode()), client_id: party.clientId }, partyBasic());
    expect(withId.status).toBe(200);
  });

  it('malformed headers and wrong credentials: 401 invalid_client with WWW-Authenticate: Basic', async () => {
    const cases: Array<[string, string]> = [
      ['not base64', 'Basic !!not-base64!!'],
      ['no credentials', 'Basic'],
      ['no colon', `Basic ${base64(party.clientId)}`],
      ['empty id', `Basic ${base64(`:${party.clientSecret}`)}`],
      ['bad percent-encoding', `Basic ${base64(`${party.clientId}%zz:${party.clientSecret}`)}`],
      ['not UTF-8', `Basic ${Buffer.from([0xff, 0xfe, 0x3a, 0x61]).toString('base64')}`],
      ['a control character', `Basic ${base64(`${party.clientId}:${party.clientSecret}%00`)}`],
      ['unknown client', basic('cli_unknown000000', party.clientSecret)],
      ['wrong secret', basic(party.clientId, `${party.clientSecret}x`)],
      ['empty secret', basic(party.clientId, '')],
    ];
    for (const [what, header] of cases) {
      const { code } = await obtainCode(server, party);
      await expectBasicRefusal(
        await tokenRequest({ grant_type: 'authorization_code', code, code_verifier: 'x'.repeat(43) }, header),
        header,
        `/token: ${what}`,
      );
      for (const path of ['/introspect', '/revoke']) {
        const response = await postForm(server, path, { token: 'rft_whatever' }, { authorization: header });
        await expectBasicRefusal(response, header, `${path}: ${what}`);
      }
    }
  });

  it('two methods at once are 400 invalid_request: a client_secret in the body, or a body client_id of another client', async () => {
    const other = await server.createClient({ name: 'Another website' });
    const cases: Array<[string, Record<string, string>]> = [
      ['client_secret beside Basic', { client_secret: party.clientSecret }],
      ['client_id and client_secret beside Basic', { client_id: party.clientId, client_secret: party.clientSecret }],
      ['another client_id beside Basic', { client_id: other.clientId }],
    ];
    for (const [what, extra] of cases) {
      const fields = await freshCode();
      const refused = await tokenRequest({ ...fields, ...extra }, partyBasic());
      const body = await expectJsonError(refused, 400, 'invalid_request', what);
      expect(body.error_description, what).toMatch(/one client authentication method/);
      expect(body.error_description, what).not.toContain(party.clientSecret);
      // The code was not spent: the same request with one method goes through.
      expect((await tokenRequest(fields, partyBasic())).status, what).toBe(200);
    }
    for (const path of ['/introspect', '/revoke']) {
      const response = await postForm(
        server,
        path,
        { token: 'rft_whatever', client_secret: party.clientSecret },
        { authorization: partyBasic() },
      );
      await expectJsonError(response, 400, 'invalid_request', path);
    }
  });

  it('an Authorization header of another scheme is not client authentication: client_secret_post still works', async () => {
    const { code, verifier } = await obtainCode(server, party);
    const withBearer = await postForm(
      server,
      '/token',
      {
        grant_type: 'authorization_code',
        code,
        code_verifier: verifier,
        client_id: party.clientId,
        client_secret: party.clientSecret,
      },
      { authorization: 'Bearer something-else' },
    );
    expect(withBearer.status).toBe(200);
  });

  it('a resource server introspects the tokens for its resource with Basic', async () => {
    const resource = 'https://api.example.com/mcp';
    const { client: resourceServer, secret } = await registerClient(server.ctx, {
      name: 'API',
      redirectUris: [],
      resources: [resource],
    });
    const website = await setupParty(server, { name: 'Website with a resource', resources: [resource] });
    const { code, verifier } = await obtainCode(server, website, { resource });
    const tokens = (await (await redeem(server, website, code, verifier, { resource })).json()) as Tokens;
    const response = await postForm(
      server,
      '/introspect',
      { token: tokens.access_token },
      { authorization: basic(resourceServer.id, secret) },
    );
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ active: true, aud: resource });
  });

  it('a public client cannot use Basic, not even with an empty secret; its client_id alone works as before', async () => {
    const { client: desktop } = await registerClient(server.ctx, {
      name: 'Desktop app',
      redirectUris: ['http://127.0.0.1/callback'],
      public: true,
    });
    const publicParty: Party = {
      clientId: desktop.id,
      clientSecret: '',
      redirectUri: 'http://127.0.0.1/callback',
      ...(await server.createAgent()),
    };
    const fields = await freshCode(publicParty);
    const header = `Basic ${base64(`${desktop.id}:`)}`;
    await expectBasicRefusal(await tokenRequest(fields, header), header, 'public client, empty secret');
    await expectBasicRefusal(
      await postForm(server, '/introspect', { token: 'rft_whatever' }, { authorization: header }),
      header,
      'public client at /introspect',
    );
    // Nothing changed: the code is still good for the client_id alone.
    const response = await tokenRequest({ ...fields, client_id: desktop.id });
    expect(response.status).toBe(200);
  });

  it('logs neither the secret nor the Authorization header', async () => {
    const header = partyBasic();
    const encoded = header.slice('Basic '.length);
    expect((await tokenRequest(await freshCode(), header)).status).toBe(200);
    await tokenRequest(await freshCode(), basic(party.clientId, `${party.clientSecret}x`));
    await tokenRequest({ ...(await freshCode()), client_secret: party.clientSecret }, header);
    const marker = randomBytes(12).toString('hex');
    await postForm(server, '/introspect', { token: 'rft_whatever' }, { authorization: `Basic ${marker}` });
    const logs = captured.text();
    expect(logs).toContain('/token'); // the requests were logged, at trace
    expect(logs).not.toContain(party.clientSecret);
    expect(logs).not.toContain(encoded);
    expect(logs).not.toContain(marker);
  });
});

describe('clientCredentials (the header rules, as a plain function)', () => {
  const read = (header: string | undefined, body = {}) => clientCredentials(header, body);
  const header = (text: string) => `Basic ${base64(text)}`;

  it('splits at the first colon, then form-decodes each part (%3A, +, %20)', () => {
    expect(read(header('cli_a:se:cret'))).toEqual({ client_id: 'cli_a', client_secret: 'se:cret', basic: true });
    expect(read(header('a%3Ab:c%3Ad'))).toEqual({ client_id: 'a:b', client_secret: 'c:d', basic: true });
    expect(read(header('a+b:c%20d+e'))).toEqual({ client_id: 'a b', client_secret: 'c d e', basic: true });
    expect(read(header('cli%5Fa:%25'))).toEqual({ client_id: 'cli_a', client_secret: '%', basic: true });
  });

  it('leaves the body alone without a Basic header', () => {
    expect(read(undefined, { client_id: 'cli_a', client_secret: 's' })).toEqual({
      client_id: 'cli_a',
      client_secret: 's',
      basic: false,
    });
    expect(read('Bearer x', { client_id: 'cli_a' })).toEqual({ client_id: 'cli_a', basic: false });
    expect(read('Basicx', { client_id: 'cli_a' })).toEqual({ client_id: 'cli_a', basic: false });
  });
});
