/**
 * Attacks from a browser page of another origin while CORS is on (docs/design.md §13, "CORS";
 * SECURITY.md): a page that holds a public client's code or refresh token but cannot read the
 * answer must not be able to spend it either. A call from an origin the client did not register
 * is refused (401 invalid_client) before the code is redeemed, the refresh token rotated or
 * anything revoked, and the honest app can still use them afterwards. A confidential client is
 * refused from every browser. The answer never allows credentials, and tells no client from
 * another. Related: test/cors.test.ts (what a browser app is allowed).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { digest } from '../../src/crypto.ts';
import { registerClient, setClientStatus } from '../../src/domain/clients.ts';
import {
  authenticate,
  continueFlow,
  obtainCode,
  postForm,
  redeem,
  startFlow,
  type Party,
  type Tokens,
} from '../helpers/flow.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { expectJsonError } from './support.ts';

const APP_ORIGIN = 'https://notes.example';
const REFUSAL =
  'client authentication failed: a browser may call this endpoint only for a public client, from the origin of one of its redirect URIs';

let server: TestServer;
let party: Party;

beforeAll(async () => {
  server = await startTestServer({ env: { PUBLIC_CLIENTS: 'true' } });
  const { client } = await registerClient(server.ctx, {
    name: 'Notes SPA',
    redirectUris: [`${APP_ORIGIN}/callback`],
    public: true,
  });
  party = {
    clientId: client.id,
    clientSecret: '',
    redirectUri: `${APP_ORIGIN}/callback`,
    ...(await server.createAgent()),
  };
});
afterAll(() => server?.close());

async function codeFor(who: Party) {
  const started = await startFlow(server, who, who.clientSecret ? {} : { scope: 'email profile' });
  expect((await authenticate(server, who, started.requestId)).status).toBe(200);
  const redirect = await continueFlow(server, started);
  return { code: new URL(redirect.headers.get('location')!).searchParams.get('code')!, verifier: started.verifier };
}

const exchange = (grant: { code: string; verifier: string }, headers: Record<string, string> = {}) =>
  postForm(
    server,
    '/token',
    {
      grant_type: 'authorization_code',
      code: grant.code,
      code_verifier: grant.verifier,
      client_id: party.clientId,
      redirect_uri: party.redirectUri,
    },
    headers,
  );

const refresh = (refreshToken: string, headers: Record<string, string> = {}) =>
  postForm(
    server,
    '/token',
    { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: party.clientId },
    headers,
  );

/** A refusal of a browser's call: 401 invalid_client in the documented shape, nothing for the page to read. */
async function expectRefused(response: Response, context = '') {
  expect(response.headers.get('access-control-allow-origin'), context).toBeNull();
  expect(response.headers.get('access-control-allow-credentials'), context).toBeNull();
  const body = await expectJsonError(response, 401, 'invalid_client', context);
  expect(body.error_description, context).toBe(REFUSAL);
}

async function tokensFor(): Promise<Tokens> {
  const response = await exchange(await codeFor(party), { origin: APP_ORIGIN });
  expect(response.status).toBe(200);
  return (await response.json()) as Tokens;
}

describe('a page of another origin cannot spend what it cannot read', () => {
  it('a foreign origin’s code exchange is refused before the code is redeemed; the app then redeems it', async () => {
    const grant = await codeFor(party);
    await expectRefused(await exchange(grant, { origin: 'https://evil.example' }));
    const stored = await server.ctx.store.codes.find(digest(grant.code));
    expect(stored?.redeemed_at).toBeNull();
    expect(stored?.grant_id).toBeNull();

    const honest = await exchange(grant, { origin: APP_ORIGIN });
    expect(honest.status).toBe(200);
    expect(honest.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
  });

  it.each([
    ['another host', 'https://evil.example'],
    ['a look-alike host', 'https://notes.example.evil.example'],
    ['another port', 'https://notes.example:8443'],
    ['http instead of https', 'http://notes.example'],
    ['an origin not as browsers write it', 'https://NOTES.example'],
    ['an origin with a path', 'https://notes.example/callback'],
    ['the opaque origin (a sandboxed frame, a file)', 'null'],
  ])('%s (%s) is refused and burns nothing', async (_case, origin) => {
    const grant = await codeFor(party);
    await expectRefused(await exchange(grant, { origin }), origin);
    expect((await server.ctx.store.codes.find(digest(grant.code)))?.redeemed_at).toBeNull();
  });

  it('a foreign origin cannot rotate a refresh token: refused, the token unused, and it still refreshes (no reuse detected)', async () => {
    const tokens = await tokensFor();
    await expectRefused(await refresh(tokens.refresh_token, { origin: 'https://evil.example' }));
    expect((await server.ctx.store.refreshTokens.find(digest(tokens.refresh_token)))?.used_at).toBeNull();

    // REFRESH_TOKEN_REUSE_WINDOW is 0 here: had the refused call rotated it, this would revoke the grant.
    const honest = await refresh(tokens.refresh_token, { origin: APP_ORIGIN });
    expect(honest.status).toBe(200);
    const next = (await honest.json()) as Tokens;
    expect((await refresh(next.refresh_token)).status).toBe(200);
  });

  it('a foreign origin cannot revoke the app’s grant', async () => {
    const tokens = await tokensFor();
    const grantId = (await server.ctx.store.refreshTokens.find(digest(tokens.refresh_token)))!.grant_id;
    for (const token of [tokens.refresh_token, tokens.access_token]) {
      await expectRefused(
        await postForm(server, '/revoke', { token, client_id: party.clientId }, { origin: 'https://evil.example' }),
      );
    }
    expect((await server.ctx.store.grants.find(grantId))?.revoked_at).toBeNull();
    expect((await refresh(tokens.refresh_token, { origin: APP_ORIGIN })).status).toBe(200);
  });

  it('a disabled public client is refused from its own origin, with the same answer', async () => {
    const { client } = await registerClient(server.ctx, {
      name: 'Disabled SPA',
      redirectUris: [`${APP_ORIGIN}/other`],
      public: true,
    });
    await setClientStatus(server.ctx, client.id, 'inactive');
    await expectRefused(
      await postForm(
        server,
        '/token',
        { grant_type: 'refresh_token', refresh_token: 'rft_x', client_id: client.id },
        { origin: APP_ORIGIN },
      ),
    );
  });
});

describe('a confidential client is refused from every browser: its secret must not live in one', () => {
  it('even from its redirect URI’s origin with its right secret, in the body or Basic; the code then works from its server', async () => {
    const confidential = await server.createClient({ redirectUris: [`${APP_ORIGIN}/server-callback`] });
    const who: Party = { ...party, ...confidential };
    const { code, verifier } = await obtainCode(server, who);

    await expectRefused(await redeemFrom(who, code, verifier));
    const basic = await postForm(
      server,
      '/token',
      { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: who.redirectUri },
      {
        origin: APP_ORIGIN,
        authorization: `Basic ${Buffer.from(`${who.clientId}:${who.clientSecret}`).toString('base64')}`,
      },
    );
    expect(basic.headers.get('www-authenticate')).toMatch(/^Basic /);
    await expectRefused(basic);
    expect((await server.ctx.store.codes.find(digest(code)))?.redeemed_at).toBeNull();

    expect((await redeem(server, who, code, verifier)).status).toBe(200);
  });

  it('an unknown client, or none, hears the same answer as a confidential client and a foreign origin', async () => {
    await expectRefused(
      await postForm(
        server,
        '/token',
        { grant_type: 'refresh_token', refresh_token: 'rft_x', client_id: 'cli_unknown' },
        { origin: APP_ORIGIN },
      ),
    );
    await expectRefused(
      await postForm(server, '/token', { grant_type: 'refresh_token', refresh_token: 'rft_x' }, { origin: APP_ORIGIN }),
    );
    await expectRefused(
      await postForm(server, '/revoke', { token: 'rft_x', client_id: 'x'.repeat(5000) }, { origin: APP_ORIGIN }),
    );
  });
});

/** The confidential client's exchange as its own page would send it: client_secret_post, with Origin. */
function redeemFrom(who: Party, code: string, verifier: string) {
  return postForm(
    server,
    '/token',
    {
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      client_id: who.clientId,
      client_secret: who.clientSecret,
      redirect_uri: who.redirectUri,
    },
    { origin: APP_ORIGIN },
  );
}
