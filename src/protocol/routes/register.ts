/**
 * POST /register (RFC 7591) and GET|PUT|DELETE /register/:client_id (RFC 7592): JSON only, every
 * answer kept out of caches. Registered by app.ts only while DYNAMIC_REGISTRATION is on; the
 * rules are in src/domain/registration.ts.
 */
import { type Static, type TSchema, Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest, FastifySchemaValidationError } from 'fastify';
import type { Context } from '../../context.ts';
import { MAX_CLIENT_NAME_LENGTH, MAX_REDIRECT_URI_LENGTH } from '../../domain/rules/client.ts';
import {
  authorizeRegistrationAccess,
  deleteDynamicClient,
  readDynamicClient,
  registerDynamicClient,
  updateDynamicClient,
} from '../../domain/registration.ts';
import { InvalidClientMetadata, InvalidRedirectUri, InvalidRequest } from '../../errors.ts';
import { schemaErrorMessage } from '../../http/errors.ts';

/** RFC 7591 §3.2.1, RFC 7592 §3: the answers carry credentials. Errors too, for simplicity. */
const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' };

/** No control characters (NUL among them, which PostgreSQL cannot store). */
const NO_CONTROL = '^[^\\u0000-\\u001f\\u007f]*$';
const Text = (maxLength: number) => Type.String({ maxLength, pattern: NO_CONTROL });
/** Optional, and null counts as absent (RFC 7592 §2.2: omitted and null fields are the same). */
const Nullable = <T extends TSchema>(schema: T) => Type.Optional(Type.Union([schema, Type.Null()]));
const Names = Type.Array(Text(64));

/**
 * The RFC 7591 §2 fields this server reads, with limits; the domain checks their values. Any
 * other field is allowed and ignored (RFC 7591 §2). Counts and emptiness are left to the domain,
 * whose messages say more than a schema's (the body limit bounds the arrays).
 */
const ClientMetadata = {
  redirect_uris: Type.Array(Text(MAX_REDIRECT_URI_LENGTH)),
  client_name: Nullable(Text(MAX_CLIENT_NAME_LENGTH)),
  token_endpoint_auth_method: Nullable(Text(64)),
  grant_types: Nullable(Names),
  response_types: Nullable(Names),
  scope: Nullable(Text(200)),
};
const RegistrationRequest = Type.Object(ClientMetadata);
/** RFC 7592 §2.2: the metadata again, with the client's own client_id (and its secret, if it likes). */
const UpdateRequest = Type.Object({
  ...ClientMetadata,
  client_id: Nullable(Text(512)),
  client_secret: Nullable(Text(512)),
});

interface ClientPath {
  Params: { client_id: string };
}

/**
 * A schema error in the body is a metadata error of RFC 7591 §3.2.2: invalid_redirect_uri when
 * it is in one of the redirect URIs, invalid_client_metadata otherwise.
 */
function metadataSchemaError(errors: FastifySchemaValidationError[], dataVar: string): Error {
  const message = schemaErrorMessage(errors);
  if (dataVar !== 'body') return new InvalidRequest(message);
  return errors[0]?.instancePath.startsWith('/redirect_uris/')
    ? new InvalidRedirectUri(message)
    : new InvalidClientMetadata(message);
}

/** RFC 6750 §2.1: the registration access token in the Authorization header, and nowhere else. */
function bearerToken(request: FastifyRequest): string | undefined {
  return /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i.exec(request.headers.authorization ?? '')?.[1];
}

export async function registrationRoutes(app: FastifyInstance, ctx: Context): Promise<void> {
  app.addHook('onSend', (_request, reply, payload, done) => {
    reply.headers(NO_STORE);
    done(null, payload);
  });

  app.post<{ Body: Static<typeof RegistrationRequest> }>(
    '/register',
    {
      schema: { body: RegistrationRequest },
      schemaErrorFormatter: metadataSchemaError,
      // A flood guard, so it counts every attempt and refuses before the body is read.
      onRequest: async (request) => {
        await ctx.registrationLimit.take(request.ip);
      },
    },
    async (request, reply) => {
      const registered = await registerDynamicClient(ctx, request.body);
      request.log.info(
        { client_id: registered.client_id, token_endpoint_auth_method: registered.token_endpoint_auth_method },
        'client registered dynamically',
      );
      return reply.code(201).send(registered);
    },
  );

  app.get<ClientPath>('/register/:client_id', async (request) =>
    readDynamicClient(ctx, request.params.client_id, bearerToken(request)),
  );

  app.put<ClientPath & { Body: Static<typeof UpdateRequest> }>(
    '/register/:client_id',
    {
      schema: { body: UpdateRequest },
      schemaErrorFormatter: metadataSchemaError,
      // Whoever may not manage the client hears 401 whatever the body: validation comes after.
      // (updateDynamicClient checks again, so it is safe called alone; one more read on a rare request.)
      preValidation: async (request) => {
        await authorizeRegistrationAccess(ctx, request.params.client_id, bearerToken(request));
      },
    },
    async (request) => updateDynamicClient(ctx, request.params.client_id, bearerToken(request), request.body),
  );

  // RFC 7592 §2.3: DELETE has no body. Whatever a client library sends along (an empty body
  // labelled application/json is common) is ignored rather than refused.
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));
    scope.delete<ClientPath>('/register/:client_id', async (request, reply) => {
      await deleteDynamicClient(ctx, request.params.client_id, bearerToken(request));
      request.log.info({ client_id: request.params.client_id }, 'dynamically registered client deleted');
      return reply.code(204).send();
    });
  });
}
