/**
 * Attacks on PKCE, authorization codes, refresh tokens and the authorization response
 * (RFC 7636, RFC 9700 §2.1.1, §4.2, §4.4, §4.5, §4.14, RFC 9207; docs/design.md §4, §6).
 *
 * Related tests elsewhere: test/token.test.ts "PKCE: a missing, malformed or wrong verifier is
 * refused", "a code is bound to its client: another client's code is invalid_grant", "a replayed
 * code fails and revokes every token issued from it", "a replay with a wrong verifier or another
 * client revokes nothing", "reuse of a rotated refresh token revokes the whole grant";
 * test/authorize.test.ts "400 invalid_request for code_challenge_method plain (S256 only)";
 * test/continue.test.ts "Cancel redirects with access_denied, state and iss, …";
 * test/discovery.test.ts "GET /.well-known/oauth-authorization-server publishes docs/contract.md values".
 * The tests below restate each as an attack, with the attacker's best inputs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  authenticate,
  authorizeUrl,
  continueFlow,
  obtainCode,
  obtainTokens,
  type Party,
  pkcePair,
  postForm,
  redeem,
  setupParty,
  startFlow,
  type Tokens,
} from '../helpers/flow.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { expectErrorPage, expectJsonError } from './support.ts';

let server: TestServer;
let party: Party;
/** A second client (the attacker's, or an honest one the attacker controls) with the same redirect URI. */
let clientB: Party;

beforeAll(async () => {
  server = await startTestServer();
  party = await setupParty(server);
  clientB = { ...party, ...(await server.createClient()) };
});
afterAll(() => server?.close());

const active = async (token: string, who: Party = party) =>
  (
    (await (
      await postForm(server, '/introspect', { token, client_id: who.clientId, client_secret: who.clientSecret })
    ).json()) as { active: boolean }
  ).active;

const userinfoStatus = async (token: string) =>
  (await fetch(`${server.baseUrl}/userinfo`, { headers: { authorization: `Bearer ${token}` } })).status;

const refresh = (refreshToken: string, who: Party = party) =>
  postForm(server, '/token', {
    grant_type: 'refresh_token',
    refresh_token: refreshToken,
    client_id: who.clientId,
    client_secret: who.clientSecret,
  });

function authorizeParams(extra: Record<string, string | undefined>): Record<string, string | undefined> {
  return {
    client_id: party.clientId,
    redirect_uri: party.redirectUri,
    response_type: 'code',
    state: 'st',
    code_challenge: pkcePair().challenge,
    code_challenge_method: 'S256',
    ...extra,
  };
}

describe('PKCE downgrade and stripping', () => {
  it('PKCE downgrade: code_challenge_method=plain (with the verifier as challenge) gets the 400 page, no request is created', async () => {
    const { verifier } = pkcePair();
    for (const plain of [
      { code_challenge_method: 'plain', code_challenge: verifier },
      { code_challenge_method: 'plain' },
      { code_challenge_method: 'PLAIN' },
      { code_challenge_method: 's256' },
    ]) {
      const response = await fetch(authorizeUrl(server, authorizeParams(plain)), { redirect: 'manual' });
      const { description } = await expectErrorPage(response, 400, 'invalid_request', JSON.stringify(plain));
      expect(description).toMatch(/S256/);
    }
  });

  it('PKCE removal: an authorization request without code_challenge, or without its method, gets the 400 page', async () => {
    for (const missing of ['code_challenge', 'code_challenge_method']) {
      const response = await fetch(authorizeUrl(server, authorizeParams({ [missing]: undefined })), {
        redirect: 'manual',
      });
      const { description } = await expectErrorPage(response, 400, 'invalid_request', missing);
      expect(description).toContain(missing);
    }
  });

  it('PKCE stripping at /token: a code redeemed without code_verifier is invalid_request, and the code stays redeemable by its owner', async () => {
    const { code, verifier } = await obtainCode(server, party);
    const stripped = await postForm(server, '/token', {
      grant_type: 'authorization_code',
      code,
      client_id: party.clientId,
      client_secret: party.clientSecret,
      redirect_uri: party.redirectUri,
    });
    expect((await expectJsonError(stripped, 400, 'invalid_request')).error_description).toMatch(/code_verifier/);
    await expectJsonError(await redeem(server, party, code, ''), 400, 'invalid_request');
    expect((await redeem(server, party, code, verifier)).status).toBe(200);
  });

  it('verifier substitution: the verifier of another flow is invalid_grant, consumes nothing and revokes nothing', async () => {
    const flowA = await obtainCode(server, party);
    const flowB = await obtainCode(server, party);
    // Before A's owner redeems: refused, and the code is not consumed.
    await expectJsonError(await redeem(server, party, flowA.code, flowB.verifier), 400, 'invalid_grant');
    const ownerResponse = await redeem(server, party, flowA.code, flowA.verifier);
    expect(ownerResponse.status).toBe(200);
    const tokens = (await ownerResponse.json()) as Tokens;
    // After: refused, and the owner's tokens are not revoked (a stolen code is no DoS lever).
    await expectJsonError(await redeem(server, party, flowA.code, flowB.verifier), 400, 'invalid_grant');
    expect(await active(tokens.access_token)).toBe(true);
    expect(await active(tokens.refresh_token)).toBe(true);
    // B's own code is untouched by all this.
    expect((await redeem(server, party, flowB.code, flowB.verifier)).status).toBe(200);
  });

  it('PKCE verifier guessing with the challenge itself as the verifier is invalid_grant', async () => {
    const started = await startFlow(server, party);
    await authenticate(server, party, started.requestId);
    const code = new URL((await continueFlow(server, started)).headers.get('location')!).searchParams.get('code')!;
    const stored = (await server.ctx.store.requests.find(started.requestId))!;
    await expectJsonError(await redeem(server, party, code, stored.code_challenge), 400, 'invalid_grant');
    expect((await redeem(server, party, code, started.verifier)).status).toBe(200);
  });
});

describe('authorization code injection and replay', () => {
  it("code injection across clients: client B presenting A's code (with A's verifier and redirect_uri) under B's credentials is invalid_grant; A redeems it afterwards", async () => {
    const { code, verifier } = await obtainCode(server, party);
    await expectJsonError(await redeem(server, clientB, code, verifier), 400, 'invalid_grant');
    await expectJsonError(
      await redeem(server, clientB, code, verifier, { redirect_uri: party.redirectUri }),
      400,
      'invalid_grant',
    );
    // B cannot pretend to be A without A's secret.
    await expectJsonError(
      await redeem(server, { ...party, clientSecret: clientB.clientSecret }, code, verifier),
      401,
      'invalid_client',
    );
    const response = await redeem(server, party, code, verifier);
    expect(response.status).toBe(200);
    const tokens = (await response.json()) as Tokens;
    // And B's attempt after A's redemption revokes nothing either.
    await expectJsonError(await redeem(server, clientB, code, verifier), 400, 'invalid_grant');
    expect(await active(tokens.access_token)).toBe(true);
  });

  it('code replay: a second redemption is invalid_grant and revokes the access and refresh tokens of the first', async () => {
    const { code, verifier } = await obtainCode(server, party);
    const first = (await (await redeem(server, party, code, verifier)).json()) as Tokens;
    expect(await userinfoStatus(first.access_token)).toBe(200);
    await expectJsonError(await redeem(server, party, code, verifier), 400, 'invalid_grant');
    expect(await active(first.access_token)).toBe(false);
    expect(await active(first.refresh_token)).toBe(false);
    expect(await userinfoStatus(first.access_token)).toBe(401);
    await expectJsonError(await refresh(first.refresh_token), 400, 'invalid_grant');
  });

  it('code replay after a refresh: the replay revokes the tokens issued by the refresh too (the whole grant)', async () => {
    const { code, verifier } = await obtainCode(server, party);
    const first = (await (await redeem(server, party, code, verifier)).json()) as Tokens;
    const refreshed = (await (await refresh(first.refresh_token)).json()) as Tokens;
    expect(await active(refreshed.access_token)).toBe(true);
    await expectJsonError(await redeem(server, party, code, verifier), 400, 'invalid_grant');
    expect(await active(refreshed.access_token)).toBe(false);
    expect(await active(refreshed.refresh_token)).toBe(false);
  });

  it('refresh token replay after rotation: presenting the rotated token revokes the grant, so the thief and the holder both lose access', async () => {
    const original = await obtainTokens(server, party);
    const rotated = (await (await refresh(original.refresh_token)).json()) as Tokens;
    // The attacker replays the stolen, already rotated refresh token.
    await expectJsonError(await refresh(original.refresh_token), 400, 'invalid_grant');
    expect(await active(rotated.access_token)).toBe(false);
    expect(await userinfoStatus(rotated.access_token)).toBe(401);
    await expectJsonError(await refresh(rotated.refresh_token), 400, 'invalid_grant');
  });

  it("refresh token theft across clients: another client presenting A's refresh token is invalid_grant and revokes nothing", async () => {
    const tokens = await obtainTokens(server, party);
    await expectJsonError(await refresh(tokens.refresh_token, clientB), 400, 'invalid_grant');
    expect(await active(tokens.access_token)).toBe(true);
    expect((await refresh(tokens.refresh_token)).status).toBe(200);
  });
});

describe('mix-up defence (RFC 9207)', () => {
  it('iss is present once and equal to the issuer in every authorization response (success and Cancel), and the metadata advertises it', async () => {
    const metadata = (await (await fetch(`${server.baseUrl}/.well-known/oauth-authorization-server`)).json()) as Record<
      string,
      unknown
    >;
    expect(metadata.authorization_response_iss_parameter_supported).toBe(true);
    expect(metadata.issuer).toBe(server.baseUrl);
    const openid = (await (await fetch(`${server.baseUrl}/.well-known/openid-configuration`)).json()) as Record<
      string,
      unknown
    >;
    expect(openid.authorization_response_iss_parameter_supported).toBe(true);

    const success = await obtainCode(server, party);
    expect(success.location.searchParams.getAll('iss')).toEqual([metadata.issuer]);

    const cancelled = await startFlow(server, party);
    const cancel = await continueFlow(server, cancelled, { action: 'cancel' });
    expect(cancel.status).toBe(302);
    const location = new URL(cancel.headers.get('location')!);
    expect(location.searchParams.get('error')).toBe('access_denied');
    expect(location.searchParams.getAll('iss')).toEqual([metadata.issuer]);

    // Cancel after the agent authenticated, too.
    const late = await startFlow(server, party);
    await authenticate(server, party, late.requestId);
    const lateCancel = new URL((await continueFlow(server, late, { action: 'cancel' })).headers.get('location')!);
    expect(lateCancel.searchParams.getAll('iss')).toEqual([metadata.issuer]);
    expect(lateCancel.searchParams.get('code')).toBeNull();
  });
});

describe('state integrity (CSRF protection of the client)', () => {
  const ALL_VSCHAR = Array.from({ length: 0x7e - 0x20 + 1 }, (_, i) => String.fromCharCode(0x20 + i)).join('');
  const states: Array<[string, string]> = [
    ['double and single quotes', `"'"'`],
    ['HTML metacharacters', '<script>alert(1)</script>&amp;'],
    ['<>&#%+', '<>&#%+'],
    ['spaces, leading and trailing', '  a b  '],
    ['plus signs and percent escapes that must not be decoded', '+%20%2B%25%00%zz'],
    ['parameter injection into the redirect', 'x&code=attacker&iss=https://evil.example&state=y'],
    ['fragment and query separators', '#frag?q=1/..\\'],
    ['every VSCHAR', ALL_VSCHAR],
    ['2048 characters (the limit)', (ALL_VSCHAR.repeat(22) + 'x'.repeat(2048)).slice(0, 2048)],
  ];

  it.each(states)(
    'state with %s is echoed exactly, once, and cannot inject parameters into the success redirect',
    async (_case, state) => {
      const { location } = await obtainCode(server, party, { state });
      expect(location.searchParams.getAll('state')).toEqual([state]);
      expect(location.searchParams.getAll('code')).toHaveLength(1);
      expect(location.searchParams.get('code')).toMatch(/^cod_/);
      expect(location.searchParams.getAll('iss')).toEqual([server.baseUrl]);
      expect(location.hash).toBe('');
      expect(`${location.origin}${location.pathname}`).toBe(party.redirectUri);
    },
  );

  it('the nastiest state is echoed exactly in the Cancel redirect too', async () => {
    const state = `x&error=none&iss=https://evil.example#${ALL_VSCHAR}`;
    const started = await startFlow(server, party, { state });
    const location = new URL((await continueFlow(server, started, { action: 'cancel' })).headers.get('location')!);
    expect(location.searchParams.getAll('state')).toEqual([state]);
    expect(location.searchParams.getAll('error')).toEqual(['access_denied']);
    expect(location.searchParams.getAll('iss')).toEqual([server.baseUrl]);
    expect(location.hash).toBe('');
  });

  it('a state over 2048 characters, or with control characters, gets the 400 page (other Unicode text is accepted)', async () => {
    for (const state of ['é', 'x'.repeat(2048)])
      expect(
        (await fetch(authorizeUrl(server, authorizeParams({ state })), { redirect: 'manual' })).status,
        state.slice(0, 20),
      ).toBe(200);
    for (const state of ['x'.repeat(2049), 'tab\there', 'nul\u0000', 'line\r\nSet-Cookie: a=b']) {
      const response = await fetch(authorizeUrl(server, authorizeParams({ state })), { redirect: 'manual' });
      await expectErrorPage(response, 400, 'invalid_request', JSON.stringify(state.slice(0, 20)));
    }
  });
});
