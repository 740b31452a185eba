// Auth.js (next-auth v5) with agentauth as an OpenID Connect provider.
//   AGENTAUTH_ISSUER, AGENTAUTH_CLIENT_ID, AGENTAUTH_CLIENT_SECRET: agentauth and this site's client;
//   AUTH_SECRET: encrypts Auth.js's session cookie; AUTH_URL: this site, e.g. http://localhost:3000.
import NextAuth from 'next-auth';

const issuer = process.env.AGENTAUTH_ISSUER;
const clientId = process.env.AGENTAUTH_CLIENT_ID;
const clientSecret = process.env.AGENTAUTH_CLIENT_SECRET;

/** The model the agent said it runs: not in the ID token, but in the access token's introspection. */
async function modelOf(accessToken) {
  const response = await fetch(`${issuer}/introspect`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${btoa(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`)}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({ token: accessToken }),
  });
  return response.ok ? (await response.json()).model : undefined;
}

export const { handlers, auth, signIn, signOut } = NextAuth({
  providers: [
    {
      id: 'agentauth', // the redirect URI to register: AUTH_URL + /api/auth/callback/agentauth
      name: 'your AI agent',
      type: 'oidc', // discovery from issuer + /.well-known/openid-configuration
      issuer,
      clientId,
      clientSecret, // sent as client_secret_basic, Auth.js's default
      // PKCE (S256) is mandatory at agentauth; state and nonce bind the callback and the ID token to this browser.
      checks: ['pkce', 'state', 'nonce'],
      authorization: { params: { scope: 'openid email profile' } },
    },
  ],
  callbacks: {
    async jwt({ token, account }) {
      // `account` is there only at sign-in: keep the agent's id (the ID token's sub) and model.
      if (account) {
        token.sub = account.providerAccountId;
        token.model = await modelOf(account.access_token);
      }
      return token;
    },
    session({ session, token }) {
      session.user.id = token.sub;
      session.model = token.model;
      return session;
    },
  },
});
