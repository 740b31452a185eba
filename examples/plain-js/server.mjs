// "Sign in with your AI agent" on a website in plain JavaScript: Node 20+, node:http and
// openid-client v6 (npm install openid-client), nothing else.
//
//   AGENTAUTH_ISSUER=https://auth.example.com AGENTAUTH_CLIENT_ID=cli_… AGENTAUTH_CLIENT_SECRET=cls_… \
//   PUBLIC_URL=http://localhost:8080 node server.mjs
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import * as oidc from 'openid-client';

const env = process.env;
const port = Number(env.PORT ?? 8080);
const publicUrl = env.PUBLIC_URL ?? `http://localhost:${port}`;
const redirectUri = `${publicUrl}/callback`; // registered with agentauth exactly so
const issuer = new URL(env.AGENTAUTH_ISSUER);
// Plain http only for an agentauth on this machine: elsewhere the ID token's integrity rests on TLS.
const local = issuer.protocol === 'http:' && ['localhost', '127.0.0.1'].includes(issuer.hostname);

// Reads /.well-known/openid-configuration and checks that its issuer is exactly AGENTAUTH_ISSUER.
// A client secret given as a string means client_secret_post at /token and /introspect.
const config = await oidc.discovery(
  issuer,
  env.AGENTAUTH_CLIENT_ID,
  env.AGENTAUTH_CLIENT_SECRET,
  undefined,
  local ? { execute: [oidc.allowInsecureRequests] } : undefined,
);

async function login(session) {
  session.pending = { verifier: oidc.randomPKCECodeVerifier(), state: oidc.randomState(), nonce: oidc.randomNonce() };
  return oidc.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope: 'openid email profile',
    code_challenge: await oidc.calculatePKCECodeChallenge(session.pending.verifier), // PKCE S256 is mandatory
    code_challenge_method: 'S256',
    state: session.pending.state,
    nonce: session.pending.nonce,
  });
}

async function callback(session, query) {
  const pending = session.pending;
  delete session.pending; // one attempt per login: a replayed callback finds nothing to finish
  if (!pending) throw new Error('no sign-in was started in this browser');
  // The registered redirect URI with the query the browser brought: openid-client sends it as redirect_uri.
  const url = new URL(`${redirectUri}${query}`);
  // Checks state and iss (RFC 9207), redeems the code, checks the ID token's iss, aud, exp and nonce.
  const tokens = await oidc.authorizationCodeGrant(config, url, {
    pkceCodeVerifier: pending.verifier,
    expectedState: pending.state,
    expectedNonce: pending.nonce,
    idTokenExpected: true,
  });
  const claims = tokens.claims();
  // The model the agent said it runs is not in the ID token; introspection tells it.
  const { model } = await oidc.tokenIntrospection(config, tokens.access_token);
  return { sub: claims.sub, name: claims.name, email: claims.email, model };
}

// Sessions in memory, keyed by an HttpOnly cookie. SameSite=Lax: the cookie must come back with
// agentauth's redirect to /callback. A real site uses its own session store.
const sessions = new Map();
function sessionOf(request, response, fresh = false) {
  const id = /(?:^|;\s*)sid=([\w-]+)/.exec(request.headers.cookie ?? '')?.[1];
  if (!fresh && sessions.has(id)) return sessions.get(id);
  if (fresh) sessions.delete(id);
  const newId = randomBytes(24).toString('base64url');
  sessions.set(newId, {});
  const secure = publicUrl.startsWith('https:') ? '; Secure' : '';
  response.setHeader('set-cookie', `sid=${newId}; Path=/; HttpOnly; SameSite=Lax${secure}`);
  return sessions.get(newId);
}

// The owner's name and email are text they typed: escaped before they go into the page.
const html = (text) => String(text ?? '').replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
function page(response, status, body) {
  response.writeHead(status, { 'content-type': 'text/html; charset=utf-8' });
  response.end(`<!doctype html><meta charset="utf-8"><title>Example</title>${body}`);
}

createServer(async (request, response) => {
  const url = new URL(request.url, publicUrl);
  try {
    if (url.pathname === '/login') {
      response.writeHead(302, { location: (await login(sessionOf(request, response))).href }).end();
    } else if (url.pathname === '/callback') {
      const user = await callback(sessionOf(request, response), url.search);
      sessionOf(request, response, true).user = user; // a new session id once signed in
      response.writeHead(302, { location: '/' }).end();
    } else if (url.pathname === '/') {
      const user = sessionOf(request, response).user;
      page(
        response,
        200,
        user
          ? `<p id="signed-in">Signed in as ${html(user.name)} (${html(user.email)})</p>
<p>Agent <code id="sub">${html(user.sub)}</code>, model <code id="model">${html(user.model)}</code></p>`
          : '<a href="/login">Sign in with your AI agent</a>',
      );
    } else page(response, 404, 'Not found');
  } catch (error) {
    // The error's code and OAuth error only: never a token or the secret.
    console.error('sign-in failed:', error.code ?? error.name, error.error ?? error.message);
    const cancelled = error instanceof oidc.AuthorizationResponseError && error.error === 'access_denied';
    page(
      response,
      400,
      cancelled ? 'You cancelled the sign-in.' : 'The sign-in failed. <a href="/login">Try again</a>',
    );
  }
}).listen(port, env.HOST ?? '127.0.0.1', () => console.log(`Open ${publicUrl} and sign in with your AI agent`));
