/**
 * The admin's webhooks (docs/design.md §11, §15): the list and the form that registers an
 * endpoint, its signing secret shown once, its page with the delivery log, and its actions
 * (save, rotate the secret, disable, enable, delete, send a test event, send a delivery again). Each is an
 * operation of src/management/webhooks.ts, which the API and the CLI call too; a member is answered
 * as if there were no webhook (404), the list with the 403 page, as the rest of the admin area.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Conflict, InvalidField } from '../../errors.ts';
import { type Actor, requireAdmin } from '../../management/actor.ts';
import { noticeFor } from '../pages/shell.ts';
import {
  WEBHOOKS_PATH,
  webhookPage,
  webhookPath,
  webhookSecretPath,
  webhookSecretPage,
  webhooksPage,
} from '../pages/webhooks.ts';
import type { WebhookChanges } from '../../domain/webhooks/endpoints.ts';
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
import { eventsOfForm } from '../webhooks.ts';
import { refusedForm, type ShownState } from './owned.ts';
import type { ConsoleScope, Form } from './scope.ts';

type Params = { id: string };
type Action = FastifyRequest<{ Params: Params; Body: Form }>;

export function webhookRoutes(scope: FastifyInstance, area: ConsoleScope): void {
  const { ctx, guard } = area;

  /** The signed-in admin, or the 403 page. */
  const admin = (request: FastifyRequest): Actor => {
    const actor = area.actor(request);
    requireAdmin(actor);
    return actor;
  };

  const showList = async (request: FastifyRequest, reply: FastifyReply, state: ShownState, status = 200) => {
    const actor = admin(request);
    const page = await area.page(request, reply);
    return area.send(reply, webhooksPage(page, { webhooks: await listWebhooks(ctx, actor), ...state }), status);
  };

  const showWebhook = async (
    request: FastifyRequest<{ Params: Params; Querystring?: Form }>,
    reply: FastifyReply,
    state: ShownState,
    status = 200,
  ) => {
    const actor = area.actor(request);
    const found = await getWebhook(ctx, actor, request.params.id);
    const before = (request.query as Form | undefined)?.before;
    // A cursor not made by the log reads as the first page, as the histories do.
    const log = await listWebhookDeliveries(ctx, actor, found.webhook.id, {
      cursor: before && /^msg_[0-9a-f]{1,60}$/.test(before) ? before : undefined,
    });
    const page = await area.page(request, reply);
    return area.send(
      reply,
      webhookPage(page, {
        webhook: found,
        deliveries: log.data,
        next: log.next_cursor,
        paged: before !== undefined,
        ...state,
      }),
      status,
    );
  };

  scope.get<{ Querystring: Form }>('/admin/webhooks', (request, reply) =>
    showList(request, reply, { notice: noticeFor(request.query.notice) }),
  );

  scope.post<{ Body: Form }>('/admin/webhooks', { preHandler: guard }, async (request, reply) => {
    const actor = admin(request);
    const form = request.body ?? {};
    try {
      const made = await createWebhook(ctx, actor, {
        url: form.url ?? '',
        description: form.description,
        events: eventsOfForm(form),
      });
      return area.redirectOnce(request, reply, webhookSecretPath(made.webhook.webhook.id), {
        secret: made.secret,
        rotated: false,
      });
    } catch (error) {
      if (!(error instanceof InvalidField)) throw error;
      return showList(request, reply, refusedForm(form, error), 400);
    }
  });

  // The signing secret, once: a reload finds the webhook's page with a notice instead.
  scope.get<{ Params: Params }>('/admin/webhooks/:id/secret', async (request, reply) => {
    const found = await getWebhook(ctx, area.actor(request), request.params.id);
    const once = await area.takeOnce<{ secret: string; rotated: boolean }>(
      request,
      webhookSecretPath(found.webhook.id),
    );
    if (!once) return area.redirect(reply, `${webhookPath(found.webhook.id)}?notice=webhook_secret_shown_once`);
    return area.send(
      reply,
      webhookSecretPage(await area.page(request, reply), {
        webhook: found,
        secret: once.secret,
        rotated: once.rotated,
      }),
    );
  });

  scope.get<{ Params: Params; Querystring: Form }>('/admin/webhooks/:id', (request, reply) =>
    showWebhook(request, reply, { notice: noticeFor(request.query.notice) }),
  );

  /** A change of the endpoint, then its page with `notice`; a refused field shows the form again (400). */
  const change =
    (changes: (form: Form) => WebhookChanges, notice: string) => async (request: Action, reply: FastifyReply) => {
      const form = request.body ?? {};
      try {
        const changed = await updateWebhook(ctx, area.actor(request), request.params.id, changes(form));
        return area.redirect(reply, `${webhookPath(changed.webhook.id)}?notice=${notice}`);
      } catch (error) {
        if (!(error instanceof InvalidField)) throw error;
        return showWebhook(request, reply, refusedForm(form, error), 400);
      }
    };

  scope.post<{ Params: Params; Body: Form }>(
    '/admin/webhooks/:id',
    { preHandler: guard },
    change(
      (form) => ({ url: form.url ?? '', description: form.description ?? '', events: eventsOfForm(form) }),
      'webhook_saved',
    ),
  );
  scope.post<{ Params: Params; Body: Form }>(
    '/admin/webhooks/:id/disable',
    { preHandler: guard },
    change(() => ({ status: 'disabled' }), 'webhook_disabled'),
  );
  scope.post<{ Params: Params; Body: Form }>(
    '/admin/webhooks/:id/enable',
    { preHandler: guard },
    change(() => ({ status: 'enabled' }), 'webhook_enabled'),
  );

  scope.post<{ Params: Params }>('/admin/webhooks/:id/rotate-secret', { preHandler: guard }, async (request, reply) => {
    const rotated = await rotateWebhookSecret(ctx, area.actor(request), request.params.id);
    const id = rotated.webhook.webhook.id;
    return area.redirectOnce(request, reply, webhookSecretPath(id), { secret: rotated.secret, rotated: true });
  });

  scope.post<{ Params: Params }>('/admin/webhooks/:id/delete', { preHandler: guard }, async (request, reply) => {
    await deleteWebhook(ctx, area.actor(request), request.params.id);
    return area.redirect(reply, `${WEBHOOKS_PATH}?notice=webhook_deleted`);
  });

  // Send test event: a signed webhook.test through the normal path; the log shows its outcome.
  // A disabled webhook has no button; a post for one anyway meets the 409 page.
  scope.post<{ Params: Params }>('/admin/webhooks/:id/test', { preHandler: guard }, async (request, reply) => {
    const { delivery } = await sendWebhookTestEvent(ctx, area.actor(request), request.params.id);
    return area.redirect(reply, `${webhookPath(delivery.endpoint_id)}?notice=webhook_test_sent#deliveries-heading`);
  });

  scope.post<{ Params: Params & { message: string } }>(
    '/admin/webhooks/:id/deliveries/:message/send-again',
    { preHandler: guard },
    async (request, reply) => {
      let delivery: Awaited<ReturnType<typeof redeliverWebhook>>['delivery'];
      try {
        ({ delivery } = await redeliverWebhook(ctx, area.actor(request), request.params.id, request.params.message));
      } catch (error) {
        // Being sent at this moment: its attempt's answer shows in the log in a moment.
        if (!(error instanceof Conflict)) throw error;
        return area.redirect(
          reply,
          `${webhookPath(request.params.id)}?notice=webhook_delivery_in_flight#deliveries-heading`,
        );
      }
      return area.redirect(reply, `${webhookPath(delivery.endpoint_id)}?notice=webhook_sent_again#deliveries-heading`);
    },
  );
}
