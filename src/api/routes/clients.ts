/**
 * /clients: what an owner (or an admin's key, for everyone) does with clients, which the console
 * calls websites: a door onto the client operations (src/management/clients.ts).
 */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import {
  actionsOf,
  createClient,
  deleteClient,
  getClient,
  listClients,
  revokeClientGrants,
  rotateClientSecret,
  setClientStatus,
  updateClient,
} from '../../management/clients.ts';
import type { ActionType, Approval, ClientRecord, ResourceScope } from '../../store/clients.ts';
import { pageSize, timeCursor, pageOf } from '../conditions.ts';
import { ActionTypeView, ClientView, clientView, Page, RevokedView } from '../../management/views.ts';
import { type ApiScope, callerOf } from './caller.ts';
import {
  AccountIdQuery,
  answerCreation,
  answers,
  IdempotencyHeaders,
  IdParams,
  IfMatchHeaders,
  ifMatch,
  ListQuery,
  RotateBody,
  withTag,
} from './shared.ts';

const ClientRef = Type.Ref(ClientView);
const tags = ['Clients'];

const Uris = (description: string) =>
  Type.Array(Type.String({ minLength: 1, maxLength: 2000 }), { maxItems: 10, description });
const Resources = Type.Array(Type.String({ minLength: 1, maxLength: 1000 }), {
  maxItems: 20,
  description:
    'RFC 8707 resources it serves as a resource server: it may introspect the tokens issued for them. Only an admin’s key that reaches all accounts sets or changes them (403 `insufficient_scope` otherwise).',
});
const Scopes = Type.Array(
  Type.Object(
    {
      name: Type.String({
        minLength: 1,
        maxLength: 64,
        description:
          'The scope value (an RFC 6749 §3.3 scope-token), e.g. `notes:read`; not openid, email, profile or offline_access.',
      }),
      description: Type.String({
        minLength: 1,
        maxLength: 200,
        description: 'What it allows, in plain text a person reads on the sign-in page: "Read your notes".',
      }),
    },
    { additionalProperties: false },
  ),
  {
    maxItems: 20,
    description:
      'The scopes a resource server serves at its resources, granted only with one of them (`resource`). Needs `resources`; the same admin’s right as they.',
  },
);
const KeySet = (description: string) =>
  Type.Object({ keys: Type.Array(Type.Object({}, { additionalProperties: true }), { maxItems: 10 }) }, { description });
const KeySetUri = (description: string) => Type.String({ maxLength: 2048, description });
const ActionTypes = (description: string) =>
  Type.Array(Type.Ref(ActionTypeView), {
    maxItems: 20,
    description: `${description} Needs ACTION_APPROVALS (invalid_request naming it otherwise); not for a public client.`,
  });
const TokenDelivery = (description: string) =>
  Type.Union([Type.Literal('poll'), Type.Literal('ping'), Type.Null()], { description });
const NotificationEndpoint = (description: string) =>
  Type.Union([Type.String({ maxLength: 2000 }), Type.Null()], { description });
const ConfirmationField = Type.Union([Type.Literal('auto'), Type.Literal('manual')], {
  description:
    'Whether the person at the browser confirms a sign-in: auto (default), it goes on as soon as the agent authenticates; manual, the person confirms after seeing who authenticated.',
});

const NewClientBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200, description: 'Shown on the sign-in page.' }),
    redirect_uris: Type.Optional(Uris('Where sign-ins return; required unless `resources` are given.')),
    resources: Type.Optional(Resources),
    scopes: Type.Optional(Scopes),
    type: Type.Optional(
      Type.Union([Type.Literal('confidential'), Type.Literal('public')], {
        description:
          'confidential (default): a website with a server and a secret; public: no secret, PKCE only (only where the server lets public clients sign in).',
      }),
    ),
    confirmation: Type.Optional(ConfirmationField),
    account_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        pattern: '^[!-~]+$',
        description: 'The owning account; only a key reaching all accounts may name another.',
      }),
    ),
    jwks: Type.Optional(
      KeySet(
        'A client that signs with keys (private_key_jwt, RFC 7523): its public keys (RSA ≥ 2048 bits, P-256, Ed25519), instead of a secret. Not with `jwks_uri` or `type: public`; only where the server accepts such clients.',
      ),
    ),
    jwks_uri: Type.Optional(
      KeySetUri(
        'A client that signs with keys (private_key_jwt): the https URL where it publishes its public keys, fetched as metadata documents are. Not with `jwks`.',
      ),
    ),
    action_types: Type.Optional(
      ActionTypes(
        'The actions it may ask an agent’s owner to approve (OpenID CIBA with RFC 9396 authorization details), each with its fields and how it reads in words.',
      ),
    ),
    backchannel_token_delivery_mode: Type.Optional(
      TokenDelivery(
        'How it learns an owner’s answer: poll (the default for a website with action types) or ping (needs `backchannel_client_notification_endpoint`).',
      ),
    ),
    backchannel_client_notification_endpoint: Type.Optional(
      NotificationEndpoint(
        'A ping website’s https endpoint, told when an owner has answered; checked as a webhook’s URL is (no special-use address unless WEBHOOK_ALLOWED_ADDRESSES lists it).',
      ),
    ),
  },
  { additionalProperties: false },
);
type NewClientBody = {
  name: string;
  redirect_uris?: string[];
  resources?: string[];
  scopes?: ResourceScope[];
  type?: 'confidential' | 'public';
  confirmation?: Approval;
  account_id?: string;
  jwks?: { keys: Record<string, unknown>[] };
  jwks_uri?: string;
  action_types?: ActionType[];
  backchannel_token_delivery_mode?: 'poll' | 'ping' | null;
  backchannel_client_notification_endpoint?: string | null;
};

const ClientChangesBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    redirect_uris: Type.Optional(Uris('Replaces every registered redirect URI.')),
    resources: Type.Optional(Resources),
    scopes: Type.Optional(Scopes),
    confirmation: Type.Optional(ConfirmationField),
    jwks: Type.Optional(
      KeySet(
        'A client that signs with keys (private_key_jwt) only: its new public keys, replacing its key set or jwks_uri; assertions signed with the old keys are refused from then on. Not with `jwks_uri`; a dynamically registered client replaces its keys at its registration endpoint (RFC 7592).',
      ),
    ),
    jwks_uri: Type.Optional(
      KeySetUri(
        'A client that signs with keys (private_key_jwt) only: where it publishes its public keys from now on, replacing its key set or jwks_uri. Not with `jwks`.',
      ),
    ),
    action_types: Type.Optional(
      ActionTypes('Replaces every action type it registered; [] for none. Requests already asked keep their words.'),
    ),
    backchannel_token_delivery_mode: Type.Optional(
      TokenDelivery('poll or ping; null for none (a website with action types then polls).'),
    ),
    backchannel_client_notification_endpoint: Type.Optional(
      NotificationEndpoint('A ping website’s https endpoint; null for none (poll, or no mode).'),
    ),
    status: Type.Optional(
      Type.Union([Type.Literal('active'), Type.Literal('inactive')], {
        description: 'inactive: disabled; its sign-ins and tokens are refused until it is active again.',
      }),
    ),
  },
  { additionalProperties: false, minProperties: 1 },
);
type ClientChangesBody = Partial<Omit<NewClientBody, 'type' | 'account_id'>> & { status?: 'active' | 'inactive' };

const WithSecret = Type.Object({
  client: ClientRef,
  client_secret: Type.Union([Type.String(), Type.Null()], {
    description: 'Shown only in this answer (and its idempotent replays); null for a public client.',
  }),
});

/**
 * Mounts /clients on the API's scope.
 *
 * @example
 * await api.register(async (routes) => clientRoutes(routes, { ctx }));
 */
export async function clientRoutes(api: FastifyInstance, { ctx }: ApiScope): Promise<void> {
  const view = (client: ClientRecord) => clientView(client, ctx.clock());

  api.get<{ Querystring: { limit?: string; cursor?: string; account_id?: string } }>(
    '/clients',
    {
      schema: {
        operationId: 'listClients',
        summary: 'List clients (websites)',
        description:
          'Oldest first. A key reaching its own account lists that account’s clients; an admin’s `all` key lists every client, or one account’s with `account_id`.',
        tags,
        querystring: Type.Object({
          ...ListQuery,
          ...AccountIdQuery,
        }),
        response: answers({ 200: Page(ClientRef, 'ClientPage') }),
      },
    },
    async (request) => {
      const limit = pageSize(request.query.limit);
      const cursor = timeCursor(request.query.cursor);
      const rows = await listClients(ctx, callerOf(request), {
        limit: limit + 1,
        accountId: request.query.account_id,
        after: cursor && { created_at: cursor.at, id: cursor.id },
      });
      return pageOf(rows, limit, view);
    },
  );

  api.post<{ Body: NewClientBody }>(
    '/clients',
    {
      schema: {
        operationId: 'createClient',
        summary: 'Register a client (website)',
        description:
          'Answers the client and its secret, once (null for a public client and one that signs with keys). Send an `Idempotency-Key` to retry safely.',
        tags,
        headers: IdempotencyHeaders,
        body: NewClientBody,
        response: answers({ 201: WithSecret }, 403, 404, 409, 422),
      },
    },
    async (request, reply) => {
      const caller = callerOf(request);
      return answerCreation(ctx, caller, request, reply, async () => {
        const { body } = request;
        const { client, secret } = await createClient(ctx, caller, {
          name: body.name,
          redirectUris: body.redirect_uris ?? [],
          resources: body.resources,
          scopes: body.scopes,
          approval: body.confirmation,
          type: body.type,
          accountId: body.account_id,
          ...(body.jwks !== undefined || body.jwks_uri !== undefined
            ? { keys: { jwks: body.jwks, jwksUri: body.jwks_uri } }
            : {}),
          ...actionsOf(body),
        });
        return { location: `clients/${client.id}`, body: { client: view(client), client_secret: secret } };
      });
    },
  );

  api.get<{ Params: IdParams }>(
    '/clients/:id',
    {
      schema: {
        operationId: 'getClient',
        summary: 'Read a client (website)',
        description: 'Answers its `ETag`, for `If-Match` on a change.',
        tags,
        params: IdParams,
        response: answers({ 200: ClientRef }, 404),
      },
    },
    async (request, reply) => withTag(reply, view(await getClient(ctx, callerOf(request), request.params.id))),
  );

  api.patch<{ Params: IdParams; Body: ClientChangesBody }>(
    '/clients/:id',
    {
      schema: {
        operationId: 'updateClient',
        summary: 'Change, disable or enable a client (website)',
        description:
          'Fields left out stay as they are; a list given replaces the old one, and new keys (`jwks` or `jwks_uri`) replace a key-signed client’s keys. Checked as a registration is. A client described by its metadata document is changed by changing the document (its status may still change).',
        tags,
        params: IdParams,
        headers: IfMatchHeaders,
        body: ClientChangesBody,
        response: answers({ 200: ClientRef }, 403, 404, 412),
      },
    },
    async (request, reply) => {
      const caller = callerOf(request);
      const { status, name, redirect_uris, resources, scopes, confirmation, jwks, jwks_uri } = request.body;
      const actions = actionsOf(request.body);
      const changes =
        [name, redirect_uris, resources, scopes, confirmation, jwks, jwks_uri].some((field) => field !== undefined) ||
        actions.actions !== undefined;
      const keys = jwks !== undefined || jwks_uri !== undefined ? { keys: { jwks, jwksUri: jwks_uri } } : {};
      let client = await getClient(ctx, caller, request.params.id);
      const precondition = ifMatch(request, view);
      if (changes)
        client = await updateClient(
          ctx,
          caller,
          client.id,
          { name, redirectUris: redirect_uris, resources, scopes, approval: confirmation, ...keys, ...actions },
          precondition,
        );
      if (status !== undefined)
        client = await setClientStatus(ctx, caller, client.id, status, changes ? undefined : precondition);
      return withTag(reply, view(client));
    },
  );

  api.delete<{ Params: IdParams }>(
    '/clients/:id',
    {
      schema: {
        operationId: 'deleteClient',
        summary: 'Delete a client (website)',
        description:
          'Its credentials stop working and its grants are revoked (their tokens stop working); answers what was revoked.',
        tags,
        params: IdParams,
        headers: IfMatchHeaders,
        response: answers({ 200: Type.Ref(RevokedView) }, 403, 404, 412),
      },
    },
    async (request) => deleteClient(ctx, callerOf(request), request.params.id, ifMatch(request, view)),
  );

  api.post<{ Params: IdParams; Body: { grace_seconds?: number } | undefined }>(
    '/clients/:id/rotate-secret',
    {
      schema: {
        operationId: 'rotateClientSecret',
        summary: 'Issue a new client secret',
        description:
          'The old secret stops at once, or after `grace_seconds`. The new one is shown only in this answer. A public client has no secret (400).',
        tags,
        params: IdParams,
        headers: IfMatchHeaders,
        body: Type.Optional(RotateBody),
        response: answers({ 200: Type.Object({ client: ClientRef, client_secret: Type.String() }) }, 403, 404, 412),
      },
    },
    async (request, reply) => {
      const grace = request.body?.grace_seconds ?? 0;
      const rotated = await rotateClientSecret(
        ctx,
        callerOf(request),
        request.params.id,
        grace,
        ifMatch(request, view),
      );
      reply.header('cache-control', 'no-store');
      return { client: view(rotated.client), client_secret: rotated.secret };
    },
  );

  api.post<{ Params: IdParams }>(
    '/clients/:id/revoke-grants',
    {
      schema: {
        operationId: 'revokeClientGrants',
        summary: 'Revoke every grant of a client (website)',
        description:
          'The refresh and access tokens issued to it stop working; codes not yet redeemed and sign-ins in progress end.',
        tags,
        params: IdParams,
        response: answers({ 200: Type.Ref(RevokedView) }, 403, 404),
      },
    },
    async (request) => revokeClientGrants(ctx, callerOf(request), request.params.id),
  );
}
