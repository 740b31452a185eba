/**
 * POST /token, /introspect and /revoke: form-encoded (RFC 6749) or JSON bodies, client
 * authentication client_secret_post, client_secret_basic (the Authorization header) or an RFC 7523
 * assertion (private_key_jwt), read by clientCredentials, Cache-Control: no-store (docs/design.md §6).
 */
import formbody from '@fastify/formbody';
import { type Static, type TSchema, Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { Context } from '../../context.ts';
import { authenticateClient, clientCredentials } from '../../domain/client-authentication.ts';
import { MAX_CLIENT_ASSERTION_LENGTH } from '../../domain/client-keys/assertion.ts';
import { grantFor } from '../../domain/grant-types.ts';
import { MAX_CLIENT_ID_LENGTH } from '../../domain/rules/client.ts';
import { servedGrantTypes } from '../../domain/rules/grant-type-names.ts';
import { introspect, revoke } from '../../domain/tokens.ts';
import { UnsupportedGrantType } from '../../errors.ts';
import { Token } from '../../http/schemas.ts';

const param = (maxLength = 2048) => Type.Optional(Type.String({ maxLength }));
const token = (maxLength: number) => Type.Optional(Token(maxLength));
// A client_id may be the https URL of a Client ID Metadata Document (docs/design.md §13).
// All optional: a public client sends no secret, client_secret_basic sends neither here, and a
// private_key_jwt client (RFC 7523) its assertion, with or without its client_id.
const ClientCredentials = {
  client_id: token(MAX_CLIENT_ID_LENGTH),
  client_secret: token(512),
  client_assertion_type: param(128),
  client_assertion: token(MAX_CLIENT_ASSERTION_LENGTH),
};
/** RFC 8707: repeated, it is an array, which the rule answers with invalid_target rather than a schema error. */
const Resource = Type.Optional(
  Type.Union([Type.String({ maxLength: 2048 }), Type.Array(Type.String({ maxLength: 2048 }), { maxItems: 10 })]),
);

const TokenBody = Type.Object({
  grant_type: Type.String({ minLength: 1, maxLength: 64 }),
  ...ClientCredentials,
  code: token(256),
  code_verifier: token(256),
  redirect_uri: param(2048),
  refresh_token: token(256),
  // CIBA's (ACTION_APPROVALS): 32 random bytes, base64url; longer ones are simply unknown.
  auth_req_id: token(256),
  scope: param(200),
  resource: Resource,
});

const TokenRequest = Type.Object({
  token: Token(4096),
  token_type_hint: param(64),
  ...ClientCredentials,
});

const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' };

function schema<T extends TSchema>(body: T) {
  return { schema: { body } };
}

export async function tokenRoutes(app: FastifyInstance, ctx: Context): Promise<void> {
  await app.register(formbody);

  app.post<{ Body: Static<typeof TokenBody> }>('/token', schema(TokenBody), async (request, reply) => {
    const credentials = clientCredentials(request.headers.authorization, request.body);
    const body = { ...request.body, ...credentials };
    const log = (message: string) => request.log.error(message);
    // Each grant authenticates the client from the same read as its code or refresh token (tokens.ts).
    const grant = grantFor(body.grant_type, ctx.config);
    if (!grant) {
      await authenticateClient(ctx, credentials, log);
      throw new UnsupportedGrantType(`grant_type must be ${servedGrantTypes(ctx.config).join(' or ')}.`);
    }
    return reply.headers(NO_STORE).send(await grant(ctx, body, log));
  });

  app.post<{ Body: Static<typeof TokenRequest> }>('/introspect', schema(TokenRequest), async (request, reply) => {
    const credentials = clientCredentials(request.headers.authorization, request.body);
    const response = await introspect(ctx, credentials, request.body.token, (m) => request.log.error(m));
    return reply.headers(NO_STORE).send(response);
  });

  app.post<{ Body: Static<typeof TokenRequest> }>('/revoke', schema(TokenRequest), async (request, reply) => {
    const credentials = clientCredentials(request.headers.authorization, request.body);
    const client = await authenticateClient(ctx, credentials, (m) => request.log.error(m));
    await revoke(ctx, client, request.body.token, request.body.token_type_hint);
    return reply.headers(NO_STORE).code(200).send({});
  });
}
