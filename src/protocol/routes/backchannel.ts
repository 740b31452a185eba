/**
 * POST /bc-authorize (OpenID CIBA Core 1.0 §7, docs/design.md §21), mounted only while
 * ACTION_APPROVALS is on: a website asks an agent's owner to approve an action. A form body, the
 * client authenticated as at /token (client_secret_basic or _post, private_key_jwt where on);
 * the rule is askAction. Cache-Control: no-store, as the token endpoint's answers.
 */
import formbody from '@fastify/formbody';
import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { Context } from '../../context.ts';
import { askAction } from '../../domain/action-requests/ask.ts';
import { clientCredentials } from '../../domain/client-authentication.ts';
import { MAX_CLIENT_ASSERTION_LENGTH } from '../../domain/client-keys/assertion.ts';
import { MAX_CLIENT_ID_LENGTH } from '../../domain/rules/client.ts';
import { Token } from '../../http/schemas.ts';

const param = (maxLength: number) => Type.Optional(Type.String({ maxLength }));

// Lengths generous enough for the rule to answer in its own words (binding_message's 100
// characters, the notification token's 1024), bounded so no parameter is unbounded.
const BackchannelBody = Type.Object({
  client_id: Type.Optional(Token(MAX_CLIENT_ID_LENGTH)),
  client_secret: Type.Optional(Token(512)),
  client_assertion_type: param(128),
  client_assertion: Type.Optional(Token(MAX_CLIENT_ASSERTION_LENGTH)),
  scope: param(1000),
  login_hint: param(512),
  id_token_hint: param(8192),
  login_hint_token: param(8192),
  binding_message: param(1000),
  authorization_details: param(20_000),
  requested_expiry: param(16),
  client_notification_token: param(4096),
  user_code: param(512),
  acr_values: param(512),
  request: param(20_000),
  request_uri: param(2048),
});

const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' };

export async function backchannelRoutes(app: FastifyInstance, ctx: Context): Promise<void> {
  await app.register(formbody);
  app.post<{ Body: Static<typeof BackchannelBody> }>(
    '/bc-authorize',
    { schema: { body: BackchannelBody } },
    async (request, reply) => {
      const credentials = clientCredentials(request.headers.authorization, request.body);
      const answer = await askAction(ctx, credentials, request.body, { ip: request.ip, log: request.log });
      return reply.headers(NO_STORE).send(answer);
    },
  );
}
