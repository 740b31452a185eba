/**
 * RFC 8414 metadata, OpenID Connect discovery and the key set: empty with HS256 (docs/contract.md),
 * the published key pairs with TOKEN_SIGNING_ALG (docs/design.md §19).
 */
import type { FastifyInstance } from 'fastify';
import { type Config, JWKS_MAX_AGE } from '../../config.ts';
import type { Context } from '../../context.ts';
import { actionTypeNames } from '../../domain/authorization-details.ts';
import { CLIENT_ASSERTION_ALGORITHMS } from '../../domain/client-keys/key-set.ts';
import { servedGrantTypes } from '../../domain/rules/grant-type-names.ts';
import { OFFLINE_ACCESS, SUPPORTED_SCOPES } from '../../domain/scopes.ts';

/** The optional features that change what the metadata publishes (docs/design.md §13). */
export type MetadataFeatures = Pick<
  Config,
  | 'publicClients'
  | 'clientIdMetadataDocuments'
  | 'dynamicRegistration'
  | 'offlineAccess'
  | 'privateKeyJwt'
  | 'tokenSigningAlg'
  | 'actionApprovals'
>;
const NO_FEATURES: MetadataFeatures = {
  publicClients: false,
  clientIdMetadataDocuments: false,
  dynamicRegistration: false,
  offlineAccess: false,
  privateKeyJwt: false,
  tokenSigningAlg: 'HS256',
  actionApprovals: false,
};

/**
 * RFC 8414 metadata. With every optional feature off (the default) it is exactly what
 * docs/contract.md publishes, plus the additive fields it always had; a feature adds to it
 * only when an operator turns the feature on.
 */
export function authorizationServerMetadata(issuer: string, features: MetadataFeatures = NO_FEATURES) {
  // With PRIVATE_KEY_JWT every method accepted is published (docs/design.md §18): Basic, accepted
  // always (§14), and the signed assertion; without it, exactly the contract's list.
  const authenticated = features.privateKeyJwt
    ? ['client_secret_post', 'client_secret_basic', 'private_key_jwt']
    : ['client_secret_post'];
  const authMethods = features.publicClients ? [...authenticated, 'none'] : authenticated;
  return {
    issuer,
    authorization_endpoint: `${issuer}/authorize`,
    token_endpoint: `${issuer}/token`,
    userinfo_endpoint: `${issuer}/userinfo`,
    introspection_endpoint: `${issuer}/introspect`,
    revocation_endpoint: `${issuer}/revoke`,
    jwks_uri: `${issuer}/.well-known/jwks.json`,
    response_types_supported: ['code'],
    grant_types_supported: servedGrantTypes(features),
    token_endpoint_auth_methods_supported: authMethods,
    code_challenge_methods_supported: ['S256'],
    // The scopes resource servers register are not listed: each belongs to its resource, whose
    // own metadata (RFC 9728) lists it, and a name may mean two things at two resources.
    scopes_supported: features.offlineAccess ? [...SUPPORTED_SCOPES, OFFLINE_ACCESS] : [...SUPPORTED_SCOPES],
    authorization_response_iss_parameter_supported: true,
    introspection_endpoint_auth_methods_supported: authenticated,
    // RFC 7009 §2.1: a public client revokes its own tokens with its client_id alone.
    revocation_endpoint_auth_methods_supported: authMethods,
    ...(features.privateKeyJwt
      ? {
          token_endpoint_auth_signing_alg_values_supported: [...CLIENT_ASSERTION_ALGORITHMS],
          introspection_endpoint_auth_signing_alg_values_supported: [...CLIENT_ASSERTION_ALGORITHMS],
          revocation_endpoint_auth_signing_alg_values_supported: [...CLIENT_ASSERTION_ALGORITHMS],
        }
      : {}),
    ...(features.dynamicRegistration ? { registration_endpoint: `${issuer}/register` } : {}),
    ...(features.clientIdMetadataDocuments ? { client_id_metadata_document_supported: true } : {}),
    // OpenID CIBA Core §4 (docs/design.md §21); authorization_details_types_supported is added
    // per request (the registered types change), by discoveryRoutes.
    ...(features.actionApprovals
      ? {
          backchannel_authentication_endpoint: `${issuer}/bc-authorize`,
          backchannel_token_delivery_modes_supported: ['poll', 'ping'],
          backchannel_user_code_parameter_supported: false,
        }
      : {}),
  };
}

export function openIdConfiguration(issuer: string, features: MetadataFeatures = NO_FEATURES) {
  return {
    ...authorizationServerMetadata(issuer, features),
    subject_types_supported: ['public'],
    // Exactly the algorithm that signs ID tokens now: HS256 (the contract) or the key pairs'.
    id_token_signing_alg_values_supported: [features.tokenSigningAlg],
    response_modes_supported: ['query'],
    claims_supported: ['sub', 'iss', 'aud', 'exp', 'iat', 'auth_time', 'nonce', 'email', 'email_verified', 'name'],
    claims_parameter_supported: false,
    request_parameter_supported: false,
    request_uri_parameter_supported: false,
  };
}

export async function discoveryRoutes(app: FastifyInstance, ctx: Context): Promise<void> {
  const metadata = authorizationServerMetadata(ctx.config.baseUrl, ctx.config);
  const openid = openIdConfiguration(ctx.config.baseUrl, ctx.config);
  const cache = { 'cache-control': 'public, max-age=3600' };
  // With ACTION_APPROVALS, the names of the action types websites registered (RFC 9396 §10),
  // read per request (cached briefly); without it, the fixed documents as they always were.
  const served = <T extends object>(document: T) =>
    ctx.config.actionApprovals
      ? async () => ({ ...document, authorization_details_types_supported: await actionTypeNames(ctx) })
      : () => document;
  const metadataNow = served(metadata);
  const openidNow = served(openid);
  app.get('/.well-known/oauth-authorization-server', async (_request, reply) =>
    reply.headers(cache).send(await metadataNow()),
  );
  app.get('/.well-known/openid-configuration', async (_request, reply) => reply.headers(cache).send(await openidNow()));
  // The next key is published a whole max-age (and a node's reload) before it signs, so no cached
  // set can lack a key that signs; with HS256 and no key left from a key mode, `{"keys":[]}`.
  const jwksCache = { 'cache-control': `public, max-age=${JWKS_MAX_AGE}` };
  app.get('/.well-known/jwks.json', async (_request, reply) =>
    reply.headers(jwksCache).send({ keys: await ctx.signingKeys.published(ctx.clock()) }),
  );
}
