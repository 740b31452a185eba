/** An openid-client v6 website signing in against a test server: the browser's part and the code exchange. */
import * as client from 'openid-client';
import { expect } from 'vitest';
import { authenticate, metaContent, type Party, postForm } from './flow.ts';
import type { TestServer } from './server.ts';

export interface SignIn {
  /** The URL the browser was redirected to, with code, state and iss. */
  callbackUrl: URL;
  pkceCodeVerifier: string;
  expectedState: string;
  expectedNonce: string;
}

/** The website builds the authorization URL; the browser opens it; the agent authenticates; the page continues. */
export async function browserSignIn(server: TestServer, party: Party, config: client.Configuration): Promise<SignIn> {
  const pkceCodeVerifier = client.randomPKCECodeVerifier();
  const expectedState = client.randomState();
  const expectedNonce = client.randomNonce();
  const authorizationUrl = client.buildAuthorizationUrl(config, {
    redirect_uri: party.redirectUri,
    scope: 'openid email profile',
    code_challenge: await client.calculatePKCECodeChallenge(pkceCodeVerifier),
    code_challenge_method: 'S256',
    state: expectedState,
    nonce: expectedNonce,
  });
  const page = await fetch(authorizationUrl);
  expect(page.status).toBe(200);
  const cookie = page.headers.getSetCookie()[0]!.split(';')[0]!;
  const requestId = metaContent(await page.text(), 'request-id')!;
  expect((await authenticate(server, party, requestId)).status).toBe(200);
  const continued = await postForm(server, '/authorize/continue', { request_id: requestId }, { cookie });
  expect(continued.status).toBe(302);
  return { callbackUrl: new URL(continued.headers.get('location')!), pkceCodeVerifier, expectedState, expectedNonce };
}

/** The website redeems the code of `signIn` (at `callbackUrl`, the one the browser came back to by default). */
export function codeGrant(config: client.Configuration, signIn: SignIn, callbackUrl = signIn.callbackUrl) {
  const { pkceCodeVerifier, expectedState, expectedNonce } = signIn;
  return client.authorizationCodeGrant(config, callbackUrl, {
    pkceCodeVerifier,
    expectedState,
    expectedNonce,
    idTokenExpected: true,
  });
}
