/**
 * "Sign in with your AI agent": the whole OpenID Connect part of the example website, with the
 * stock openid-client (panva). Everything else in examples/website (HTTP routing, cookies,
 * sessions, HTML, the button) is ordinary website plumbing kept in other files.
 *
 * Lines of sign-in logic: 20. Counted honestly: every line below that holds code, from the
 * `export interface` to the last `}`; only imports, comments and blank lines are left out.
 *
 * What openid-client checks at the callback: `state` and `iss` (RFC 9207) of the redirect, the
 * token response, and the ID token's alg (HS256), iss, aud, exp, iat and nonce. It does not
 * check the HS256 signature: it takes the ID token straight from the token endpoint over TLS,
 * which OpenID Connect Core §3.1.3.7 item 6 allows (docs/guides/website.md).
 */
import * as oidc from 'openid-client';
import type { Session } from './sessions.ts';

export interface SignInSettings {
  issuer: URL;
  clientId: string;
  clientSecret: string;
  redirectUri: string;
  allowHttp: boolean;
}

export async function agentSignIn(settings: SignInSettings) {
  // agentauth authenticates clients with client_secret_post and signs ID tokens with HS256 keyed by the client secret.
  const config = await oidc.discovery(
    settings.issuer,
    settings.clientId,
    { id_token_signed_response_alg: 'HS256' },
    oidc.ClientSecretPost(settings.clientSecret),
    settings.allowHttp ? { execute: [oidc.allowInsecureRequests] } : undefined,
  );
  return {
    /** GET /login: a fresh PKCE verifier, state and nonce kept in this browser's session; the URL to send it to. */
    async login(session: Session): Promise<URL> {
      const pending = (session.pending = {
        verifier: oidc.randomPKCECodeVerifier(),
        state: oidc.randomState(),
        nonce: oidc.randomNonce(),
      });
      return oidc.buildAuthorizationUrl(config, {
        redirect_uri: settings.redirectUri,
        scope: 'openid email profile',
        code_challenge: await oidc.calculatePKCECodeChallenge(pending.verifier),
        code_challenge_method: 'S256',
        state: pending.state,
        nonce: pending.nonce,
      });
    },
    /** GET /callback: the code for tokens, the ID token checked, and who signed in kept in the session. */
    async callback(session: Session, callbackUrl: URL): Promise<void> {
      const pending = session.pending;
      delete session.pending; // one attempt per login: a replayed callback finds nothing to finish
      if (!pending) throw new Error('no sign-in was started in this browser');
      const tokens = await oidc.authorizationCodeGrant(config, callbackUrl, {
        pkceCodeVerifier: pending.verifier,
        expectedState: pending.state,
        expectedNonce: pending.nonce,
        idTokenExpected: true,
      });
      const claims = tokens.claims()!;
      session.user = { sub: claims.sub, name: String(claims.name ?? claims.sub), email: String(claims.email ?? '') };
    },
  };
}
