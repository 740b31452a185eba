// "Sign in with your AI agent" in an Express 5 site: express-session keeps the sign-in in
// progress and who signed in; openid-client v6 does the OpenID Connect part.
//   npm install express express-session openid-client
//
//   AGENTAUTH_ISSUER=https://auth.example.com AGENTAUTH_CLIENT_ID=cli_… AGENTAUTH_CLIENT_SECRET=cls_… \
//   SESSION_SECRET=… PUBLIC_URL=http://localhost:8080 node server.mjs
import express from 'express';
import session from 'express-session';
import * as oidc from 'openid-client';

const env = process.env;
const port = Number(env.PORT ?? 8080);
const publicUrl = env.PUBLIC_URL ?? `http://localhost:${port}`;
const redirectUri = `${publicUrl}/callback`; // registered with agentauth exactly so
const issuer = new URL(env.AGENTAUTH_ISSUER);
// Plain http only for an agentauth on this machine: elsewhere the ID token's integrity rests on TLS.
const local = issuer.protocol === 'http:' && ['localhost', '127.0.0.1'].includes(issuer.hostname);

// Discovery checks that the issuer is exactly AGENTAUTH_ISSUER. ClientSecretBasic: the secret in an
// Authorization header at /token and /introspect (openid-client's default would be the form body).
const config = await oidc.discovery(
  issuer,
  env.AGENTAUTH_CLIENT_ID,
  undefined,
  oidc.ClientSecretBasic(env.AGENTAUTH_CLIENT_SECRET),
  local ? { execute: [oidc.allowInsecureRequests] } : undefined,
);

const app = express();
app.use(
  session({
    secret: env.SESSION_SECRET,
    resave: false,
    saveUninitialized: false,
    // SameSite=Lax: the cookie must come back with agentauth's redirect to /callback.
    cookie: { httpOnly: true, sameSite: 'lax', secure: publicUrl.startsWith('https:') },
  }),
);

app.get('/login', async (req, res) => {
  const pending = { verifier: oidc.randomPKCECodeVerifier(), state: oidc.randomState(), nonce: oidc.randomNonce() };
  req.session.pending = pending;
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope: 'openid email profile',
    code_challenge: await oidc.calculatePKCECodeChallenge(pending.verifier), // PKCE S256 is mandatory
    code_challenge_method: 'S256',
    state: pending.state,
    nonce: pending.nonce,
  });
  res.redirect(url.href);
});

app.get('/callback', async (req, res) => {
  const pending = req.session.pending;
  delete req.session.pending; // one attempt per login: a replayed callback finds nothing to finish
  if (!pending) return res.status(400).send('This sign-in was not started in this browser.');
  let tokens;
  try {
    // The registered redirect URI with the query the browser brought: openid-client sends it as
    // redirect_uri. It checks state and iss (RFC 9207), and the ID token's iss, aud, exp and nonce.
    tokens = await oidc.authorizationCodeGrant(config, new URL(req.originalUrl, publicUrl), {
      pkceCodeVerifier: pending.verifier,
      expectedState: pending.state,
      expectedNonce: pending.nonce,
      idTokenExpected: true,
    });
  } catch (error) {
    // The error's code and OAuth error only: never a token or the secret.
    console.error('sign-in failed:', error.code ?? error.name, error.error ?? error.message);
    const cancelled = error instanceof oidc.AuthorizationResponseError && error.error === 'access_denied';
    return res.status(400).send(cancelled ? 'You cancelled the sign-in.' : 'The sign-in failed.');
  }
  const claims = tokens.claims();
  // The model the agent said it runs is not in the ID token; introspection tells it.
  const { model } = await oidc.tokenIntrospection(config, tokens.access_token);
  // A new session id once signed in (no session fixation).
  req.session.regenerate((error) => {
    if (error) return res.status(500).send('Something went wrong.');
    req.session.user = { sub: claims.sub, name: claims.name, email: claims.email, model };
    res.redirect('/');
  });
});

// The owner's name and email are text they typed: escaped before they go into the page.
const html = (text) => String(text ?? '').replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
app.get('/', (req, res) => {
  const user = req.session.user;
  res.send(
    user
      ? `<p id="signed-in">Signed in as ${html(user.name)} (${html(user.email)})</p>
<p>Agent <code id="sub">${html(user.sub)}</code>, model <code id="model">${html(user.model)}</code></p>
<form method="post" action="/logout"><button>Sign out</button></form>`
      : '<a href="/login">Sign in with your AI agent</a>',
  );
});

app.post('/logout', (req, res) => req.session.destroy(() => res.redirect('/')));

app.listen(port, env.HOST ?? '127.0.0.1', () => console.log(`Open ${publicUrl} and sign in with your AI agent`));
