/**
 * The peer: panva's oidc-provider, configured as closely to agentauth as it allows.
 *
 * - one confidential client, token_endpoint_auth_method client_secret_post (also used by
 *   introspection and revocation), PKCE required (S256 is the only method oidc-provider has);
 * - introspection and revocation on; refresh tokens always issued (agentauth issues one with
 *   every code exchange, so `issueRefreshToken` is true rather than tied to offline_access and
 *   prompt=consent) and rotated on every use; they do not end with the browser session;
 * - ID tokens HS256 keyed with the client secret, as agentauth's are (oidc-provider's default
 *   would be RS256, which costs far more CPU);
 * - lifetimes as agentauth's defaults: code 10 min, access and ID token 1 h, refresh 30 days;
 * - the interaction (login + consent) is a route that logs the fixed account in and grants the
 *   requested scopes at once, the way agentauth's agent authentication does, so a browser-less
 *   driver can finish the flow;
 * - the default in-memory adapter (an LRU of about 1000 entries, nothing durable), or with STORE
 *   (sqlite:<path> or a postgres:// URL) a durable adapter on that store
 *   (oidc-provider-store.ts, after the shape of the peer's own example adapters).
 *
 * Not equivalent: access tokens are opaque (looked up in memory) where agentauth's are HS256
 * JWTs also recorded in the database; no audit row is written; nothing survives a restart.
 *
 * Environment: PORT, HOST, CLIENT_ID, CLIENT_SECRET, REDIRECT_URI, STORE (optional).
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import Provider, { type Configuration } from 'oidc-provider';
import { durableAdapter } from './oidc-provider-store.ts';

const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
};

const host = process.env.HOST ?? '127.0.0.1';
const port = Number(env('PORT'));
const issuer = `http://${host}:${port}`;
const ACCOUNT_ID = 'bench-user';
const DAY = 24 * 60 * 60;

// A real signing key, so the provider does not fall back to (and warn about) its development keys.
const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const rsaJwk = { ...privateKey.export({ format: 'jwk' }), alg: 'RS256', use: 'sig' };

const store = process.env.STORE;
const configuration: Configuration = {
  ...(store ? { adapter: durableAdapter(store) } : {}),
  clients: [
    {
      client_id: env('CLIENT_ID'),
      client_secret: env('CLIENT_SECRET'),
      redirect_uris: [env('REDIRECT_URI')],
      response_types: ['code'],
      grant_types: ['authorization_code', 'refresh_token'],
      token_endpoint_auth_method: 'client_secret_post',
      id_token_signed_response_alg: 'HS256',
    },
  ],
  clientAuthMethods: ['client_secret_post'],
  pkce: { required: () => true },
  features: {
    devInteractions: { enabled: false },
    introspection: { enabled: true },
    revocation: { enabled: true },
  },
  rotateRefreshToken: true,
  issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
  expiresWithSession: async () => false,
  claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
  async findAccount(_ctx, sub) {
    return {
      accountId: sub,
      claims: async () => ({ sub, email: 'bench@example.com', email_verified: false, name: 'Bench User' }),
    };
  },
  cookies: { keys: [randomBytes(32).toString('base64url')] },
  jwks: { keys: [rsaJwk as never] },
  enabledJWA: { idTokenSigningAlgValues: ['HS256', 'RS256'] },
  ttl: {
    AccessToken: 3600,
    AuthorizationCode: 600,
    IdToken: 3600,
    RefreshToken: 30 * DAY,
    Interaction: 600,
    Session: 14 * DAY,
    Grant: 30 * DAY,
  },
};

const provider = new Provider(issuer, configuration);
// Errors the provider handles itself (it answers 500 / an OAuth error); the benchmark counts
// the answers, this only shows the cause.
let logged = 0;
const logError = (_ctx: unknown, error: Error) => {
  if (logged++ < 20) process.stderr.write(`oidc-provider: ${error.name}: ${error.message}\n`);
};
provider.on('server_error', logError);
provider.on('grant.error', logError);
provider.on('introspection.error', logError);
provider.on('userinfo.error', logError);
provider.on('authorization.error', logError);

/** Login and consent in one step: the fixed account, every requested OpenID scope. */
async function interaction(request: IncomingMessage, response: ServerResponse): Promise<void> {
  try {
    const details = await provider.interactionDetails(request, response);
    const grant = new provider.Grant({ accountId: ACCOUNT_ID, clientId: String(details.params.client_id) });
    grant.addOIDCScope(String(details.params.scope));
    const grantId = await grant.save();
    await provider.interactionFinished(
      request,
      response,
      { login: { accountId: ACCOUNT_ID }, consent: { grantId } },
      { mergeWithLastSubmission: false },
    );
  } catch (error) {
    logError(undefined, error as Error);
    response.statusCode = 500;
    response.end();
  }
}

const handle = provider.callback();
const server = createServer((request, response) => {
  if (request.method === 'GET' && request.url?.startsWith('/interaction/')) void interaction(request, response);
  else handle(request, response);
});
server.keepAliveTimeout = 72_000; // as Fastify's default, see baseline.ts
server.listen(port, host);

process.once('SIGTERM', () => server.close(() => process.exit(0)));
