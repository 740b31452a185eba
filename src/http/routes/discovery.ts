/** RFC 8414 metadata, OpenID Connect discovery and the (empty) key set (docs/contract.md). */
import type { FastifyInstance } from 'fastify';
import type { Context } from '../../context.ts';
import { SUPPORTED_SCOPES } from '../../domain/scopes.ts';

export function authorizationServerMetadata(issuer: string) {
  return {
    issuer,
    authorization_endpoint: `${issuer}/authorize`,
    token_endpoint: `${issuer}/token`,
    userinfo_endpoint: `${issuer}/userinfo`,
    introspection_endpoint: `${issuer}/introspect`,
    revocation_endpoint: `${issuer}/revoke`,
    jwks_uri: `${issuer}/.well-known/jwks.json`,
    response_types_supported: ['code'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    token_endpoint_auth_methods_supported: ['client_secret_post'],
    code_challenge_methods_supported: ['S256'],
    scopes_supported: [...SUPPORTED_SCOPES],
    authorization_response_iss_parameter_supported: true,
    introspection_endpoint_auth_methods_supported: ['client_secret_post'],
    revocation_endpoint_auth_methods_supported: ['client_secret_post'],
  };
}

export function openIdConfiguration(issuer: string) {
  return {
    ...authorizationServerMetadata(issuer),
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: ['HS256'],
    response_modes_supported: ['query'],
    claims_supported: ['sub', 'iss', 'aud', 'exp', 'iat', 'auth_time', 'nonce', 'email', 'email_verified', 'name'],
    claims_parameter_supported: false,
    request_parameter_supported: false,
    request_uri_parameter_supported: false,
  };
}

export async function discoveryRoutes(app: FastifyInstance, ctx: Context): Promise<void> {
  const metadata = authorizationServerMetadata(ctx.config.baseUrl);
  const openid = openIdConfiguration(ctx.config.baseUrl);
  const cache = { 'cache-control': 'public, max-age=3600' };
  app.get('/.well-known/oauth-authorization-server', async (_request, reply) => reply.headers(cache).send(metadata));
  app.get('/.well-known/openid-configuration', async (_request, reply) => reply.headers(cache).send(openid));
  app.get('/.well-known/jwks.json', async (_request, reply) => reply.headers(cache).send({ keys: [] }));
}
