/**
 * Better Auth with agentauth as a sign-in provider: the generic OAuth plugin and configuration
 * only, no custom code. Sign-in starts at POST /api/auth/sign-in/social with
 * {"provider": "agentauth"}; agentauth sends the browser back to /api/auth/callback/agentauth.
 * See README.md next to this file for why each setting is what it is.
 */
import { betterAuth } from 'better-auth';
import { memoryAdapter, type MemoryDB } from 'better-auth/adapters/memory';
import { type GenericOAuthConfig, genericOAuth } from 'better-auth/plugins';

export interface AgentAuthSettings {
  /** The agentauth server (its BASE_URL), e.g. https://auth.example.com. */
  issuer: string;
  /** From `agentauth client create --redirect-uri <baseURL>/api/auth/callback/agentauth`. */
  clientId: string;
  clientSecret: string;
}

/** agentauth as one entry of genericOAuth({ config: [...] }). */
export function agentauthProvider({
  issuer,
  clientId,
  clientSecret,
}: AgentAuthSettings): GenericOAuthConfig<'agentauth'> {
  const base = issuer.replace(/\/+$/, '');
  return {
    providerId: 'agentauth',
    name: 'your AI agent',
    // The endpoints themselves, not discoveryUrl: with discovery, Better Auth 1.7 verifies the
    // ID token against the jwks_uri, and agentauth's key set is empty by contract (its ID tokens
    // are HS256, keyed with the client secret), so every sign-in would fail with
    // unable_to_get_user_info. Without discovery, Better Auth reads the ID token's claims as the
    // token endpoint returned them over TLS (OpenID Connect Core §3.1.3.7 item 6).
    authorizationUrl: `${base}/authorize`,
    tokenUrl: `${base}/token`,
    userInfoUrl: `${base}/userinfo`,
    clientId,
    clientSecret,
    // agentauth accepts client_secret_post only (client_id and client_secret in the form body).
    tokenEndpointAuth: { method: 'client_secret_post' },
    pkce: true,
    scopes: ['openid', 'email', 'profile'],
  };
}

export interface AuthOptions {
  /** This site's own URL, e.g. https://app.example.com (BETTER_AUTH_URL). */
  baseURL: string;
  /** At least 32 random bytes (BETTER_AUTH_SECRET); signs Better Auth's cookies and state. */
  secret: string;
  agentauth: AgentAuthSettings;
  /** Better Auth's tables in memory, for trying it out; a real site passes its database adapter instead. */
  memory?: MemoryDB;
}

export function createAuth(options: AuthOptions) {
  return betterAuth({
    baseURL: options.baseURL,
    secret: options.secret,
    database: memoryAdapter(options.memory ?? { user: [], session: [], account: [], verification: [] }),
    // No outbound call to Better Auth's telemetry service (also BETTER_AUTH_TELEMETRY=0).
    telemetry: { enabled: false },
    plugins: [genericOAuth({ config: [agentauthProvider(options.agentauth)] })],
  });
}
