/**
 * /webhooks and /webhook-event-types: signed webhooks (docs/reference/webhooks.md), for an
 * admin's key that reaches all accounts, by the rules of src/domain/webhooks/endpoints.ts.
 */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { WebhookChanges } from '../../domain/webhooks/endpoints.ts';
import { requireAdmin } from '../../management/actor.ts';
import {
  createWebhook,
  deleteWebhook,
  getWebhook,
  listWebhookDeliveries,
  listWebhooks,
  redeliverWebhook,
  rotateWebhookSecret,
  sendWebhookTestEvent,
  updateWebhook,
} from '../../management/webhooks.ts';
import { eventTypeList } from '../../domain/webhooks/event-types.ts';
import { pageSize } from '../conditions.ts';
import {
  DeliveryView,
  deliveryView,
  Page,
  WebhookEventTypeView,
  WebhookView,
  webhookView,
} from '../../management/views.ts';
import { callerOf, type ApiScope } from './caller.ts';
import { answerCreation, answers, IdempotencyHeaders, IdParams, IfMatchHeaders, ifMatch, withTag } from './shared.ts';

const WebhookRef = Type.Ref(WebhookView);
const tags = ['Webhooks'];

const Events = Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
  minItems: 1,
  maxItems: 100,
  description: "Event types (GET /webhook-event-types), or ['*'] for all.",
});
const NewWebhookBody = Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: 2048, description: 'https only; no user name, password or fragment.' }),
    events: Events,
    description: Type.Optional(Type.String({ maxLength: 500 })),
  },
  { additionalProperties: false },
);
const WebhookChangesBody = Type.Object(
  {
    url: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
    events: Type.Optional(Events),
    description: Type.Optional(Type.String({ maxLength: 500 })),
    status: Type.Optional(
      Type.Union([Type.Literal('enabled'), Type.Literal('disabled')], {
        description: 'Enabling starts its count of failures afresh and sends what waited.',
      }),
    ),
  },
  { additionalProperties: false, minProperties: 1 },
);
const WithSecret = Type.Object({
  webhook: WebhookRef,
  secret: Type.String({
    description: 'The signing secret (whsec_…), shown only in this answer (and its idempotent replays).',
  }),
});
const MessageParams = Type.Object({
  id: IdParams.properties.id,
  message_id: Type.String({ minLength: 1, maxLength: 64, pattern: '^[!-~]+$' }),
});

export async function webhookRoutes(api: FastifyInstance, { ctx }: ApiScope): Promise<void> {
  api.get(
    '/webhook-event-types',
    {
      schema: {
        operationId: 'listWebhookEventTypes',
        summary: 'List the webhook event types',
        tags,
        response: answers({ 200: Type.Object({ data: Type.Array(Type.Ref(WebhookEventTypeView)) }) }, 403),
      },
    },
    async (request) => {
      requireAdmin(callerOf(request));
      return { data: eventTypeList() };
    },
  );

  api.get(
    '/webhooks',
    {
      schema: {
        operationId: 'listWebhooks',
        summary: 'List webhooks',
        description: 'Every webhook endpoint, oldest first.',
        tags,
        response: answers({ 200: Type.Object({ data: Type.Array(WebhookRef) }, { title: 'WebhookList' }) }, 403),
      },
    },
    async (request) => ({ data: (await listWebhooks(ctx, callerOf(request))).map(webhookView) }),
  );

  api.post<{ Body: { url: string; events: string[]; description?: string } }>(
    '/webhooks',
    {
      schema: {
        operationId: 'createWebhook',
        summary: 'Create a webhook',
        description: 'Answers the webhook and its signing secret, once. Send an `Idempotency-Key` to retry safely.',
        tags,
        headers: IdempotencyHeaders,
        body: NewWebhookBody,
        response: answers({ 201: WithSecret }, 403, 409, 422),
      },
    },
    async (request, reply) => {
      const caller = callerOf(request);
      return answerCreation(ctx, caller, request, reply, async () => {
        const { webhook, secret } = await createWebhook(ctx, caller, request.body);
        return { location: `webhooks/${webhook.webhook.id}`, body: { webhook: webhookView(webhook), secret } };
      });
    },
  );

  api.get<{ Params: IdParams }>(
    '/webhooks/:id',
    {
      schema: {
        operationId: 'getWebhook',
        summary: 'Read a webhook',
        description: 'Answers its `ETag`, for `If-Match` on a change.',
        tags,
        params: IdParams,
        response: answers({ 200: WebhookRef }, 403, 404),
      },
    },
    async (request, reply) => withTag(reply, webhookView(await getWebhook(ctx, callerOf(request), request.params.id))),
  );

  api.patch<{ Params: IdParams; Body: WebhookChanges }>(
    '/webhooks/:id',
    {
      schema: {
        operationId: 'updateWebhook',
        summary: 'Change, disable or enable a webhook',
        tags,
        params: IdParams,
        headers: IfMatchHeaders,
        body: WebhookChangesBody,
        response: answers({ 200: WebhookRef }, 403, 404, 412),
      },
    },
    async (request, reply) => {
      const precondition = ifMatch(request, webhookView);
      const changed = await updateWebhook(ctx, callerOf(request), request.params.id, request.body, precondition);
      return withTag(reply, webhookView(changed));
    },
  );

  api.delete<{ Params: IdParams }>(
    '/webhooks/:id',
    {
      schema: {
        operationId: 'deleteWebhook',
        summary: 'Delete a webhook',
        description: 'With its deliveries and their log; answers the webhook as it was.',
        tags,
        params: IdParams,
        headers: IfMatchHeaders,
        response: answers({ 200: WebhookRef }, 403, 404, 412),
      },
    },
    async (request) => {
      return webhookView(await deleteWebhook(ctx, callerOf(request), request.params.id, ifMatch(request, webhookView)));
    },
  );

  api.post<{ Params: IdParams }>(
    '/webhooks/:id/rotate-secret',
    {
      schema: {
        operationId: 'rotateWebhookSecret',
        summary: 'Issue a new signing secret',
        description: 'Deliveries are signed with the new secret from now on; it is shown only in this answer.',
        tags,
        params: IdParams,
        headers: IfMatchHeaders,
        response: answers({ 200: WithSecret }, 403, 404, 412),
      },
    },
    async (request, reply) => {
      const precondition = ifMatch(request, webhookView);
      const { webhook, secret } = await rotateWebhookSecret(ctx, callerOf(request), request.params.id, precondition);
      reply.header('cache-control', 'no-store');
      return { webhook: webhookView(webhook), secret };
    },
  );

  api.get<{ Params: IdParams; Querystring: { limit?: string; cursor?: string } }>(
    '/webhooks/:id/deliveries',
    {
      schema: {
        operationId: 'listWebhookDeliveries',
        summary: "A webhook's delivery log",
        description: 'Newest first, each with its attempts and the receiver’s answers.',
        tags,
        params: IdParams,
        querystring: Type.Object({
          limit: Type.Optional(Type.String({ pattern: '^[0-9]{1,3}$', description: '1 to 100; default 20.' })),
          cursor: Type.Optional(Type.String({ maxLength: 64, description: 'next_cursor of the previous page.' })),
        }),
        response: answers({ 200: Page(Type.Ref(DeliveryView), 'WebhookDeliveryPage') }, 403, 404),
      },
    },
    async (request) => {
      const { data, next_cursor } = await listWebhookDeliveries(ctx, callerOf(request), request.params.id, {
        limit: pageSize(request.query.limit),
        cursor: request.query.cursor,
      });
      return { data: data.map(deliveryView), next_cursor };
    },
  );

  api.post<{ Params: IdParams }>(
    '/webhooks/:id/test',
    {
      schema: {
        operationId: 'sendWebhookTestEvent',
        summary: 'Send a test event',
        description:
          'Sends a signed `webhook.test` event to this webhook now, whatever it subscribes to, through the normal delivery path; its outcome (the receiver’s answer, or what failed) shows in the delivery log. 409 while the webhook is disabled.',
        tags,
        params: IdParams,
        response: answers({ 202: Type.Ref(DeliveryView) }, 403, 404, 409),
      },
    },
    async (request, reply) => {
      const sent = await sendWebhookTestEvent(ctx, callerOf(request), request.params.id);
      return reply.code(202).send(deliveryView(sent));
    },
  );

  api.post<{ Params: { id: string; message_id: string } }>(
    '/webhooks/:id/deliveries/:message_id/retry',
    {
      schema: {
        operationId: 'retryWebhookDelivery',
        summary: 'Send a delivery again',
        description: 'The same message, with its id, attempted now (while the webhook is enabled).',
        tags,
        params: MessageParams,
        response: answers({ 202: Type.Ref(DeliveryView) }, 403, 404, 409),
      },
    },
    async (request, reply) => {
      const { delivery } = await redeliverWebhook(ctx, callerOf(request), request.params.id, request.params.message_id);
      return reply.code(202).send(deliveryView({ delivery, attempts: [] }));
    },
  );
}
