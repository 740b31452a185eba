/**
 * `agentauth webhook …`: signed webhooks (docs/reference/webhooks.md), on the local database,
 * by the rules of src/domain/webhooks/endpoints.ts. The CLI acts as an admin: the one named by
 * --admin-email, or else the first active admin (who is told by mail should a webhook made here
 * be disabled for failing).
 */
import type { Command } from 'commander';
import type { Context } from '../../context.ts';
import {
  createWebhook,
  deleteWebhook,
  listDeliveries,
  listWebhooks,
  reachableWebhook,
  redeliver,
  rotateWebhookSecret,
  updateWebhook,
  type WebhookChanges,
} from '../../domain/webhooks/endpoints.ts';
import type { AccountRecord } from '../../store/console-types.ts';
import type { WebhookWithEvents } from '../../store/webhook-types.ts';
import { recordConsoleEvent } from '../../console/events.ts';
import { collect, isoTime, print, withContext } from '../common.ts';
import { accountByEmail } from './account.ts';

/** The admin the CLI acts as. */
async function cliAdmin(ctx: Context, email?: string): Promise<AccountRecord> {
  if (email !== undefined) {
    const account = await accountByEmail(ctx, email);
    if (account.role !== 'admin' || account.status !== 'active')
      throw new Error(`${email} is not an active admin: only admins manage webhooks`);
    return account;
  }
  const admin = (await ctx.store.console.listAccounts()).find((a) => a.role === 'admin' && a.status === 'active');
  if (!admin) throw new Error('webhooks belong to an admin: make one first (agentauth account create --role admin)');
  return admin;
}

const publicWebhook = ({ webhook, events }: WebhookWithEvents) => ({
  id: webhook.id,
  url: webhook.url,
  description: webhook.description,
  events,
  status: webhook.status,
  disabled_reason: webhook.disabled_reason,
  consecutive_failures: webhook.consecutive_failures,
  created_at: isoTime(webhook.created_at),
  updated_at: isoTime(webhook.updated_at),
});

const line = ({ webhook, events }: WebhookWithEvents) =>
  `${webhook.id}  ${webhook.status.padEnd(8)}  ${webhook.url}  [${events.join(', ')}]${webhook.disabled_reason ? `  (${webhook.disabled_reason})` : ''}`;

type AdminOption = { adminEmail?: string; json?: boolean };

/** Runs `work` as the CLI's admin on the local database; a change (`action`) goes into the console's activity. */
const asAdmin = <T>(
  options: AdminOption,
  work: (ctx: Context, admin: AccountRecord) => Promise<T>,
  action?: { name: string; target: (result: T) => string },
) =>
  withContext(async (ctx) => {
    const admin = await cliAdmin(ctx, options.adminEmail);
    const result = await work(ctx, admin);
    if (action)
      await recordConsoleEvent(
        ctx,
        null,
        `webhook.${action.name}`,
        action.target(result),
        null,
        `cli as ${admin.email}`,
      );
    return result;
  });

export function webhookCommand(program: Command): void {
  const webhook = program.command('webhook').description('manage signed webhooks (admins)');
  const adminOption = (command: Command) =>
    command
      .option('--admin-email <email>', 'act as this admin (default: the first active admin)')
      .option('--json', 'print JSON');

  adminOption(
    webhook
      .command('create')
      .description('register a webhook endpoint; prints its signing secret (whsec_…) once')
      .requiredOption('--url <url>', 'the https URL deliveries are POSTed to')
      .requiredOption('--event <type>', "an event type to receive (repeat; '*' for all)", collect, [])
      .option('--description <text>', 'what it is for'),
  ).action(async (options: AdminOption & { url: string; event: string[]; description?: string }) => {
    const { webhook: made, secret } = await asAdmin(
      options,
      (ctx, admin) =>
        createWebhook(ctx, admin, { url: options.url, events: options.event, description: options.description }),
      { name: 'create', target: (result) => result.webhook.webhook.id },
    );
    print(
      !!options.json,
      { ...publicWebhook(made), secret },
      `webhook: ${made.webhook.id}\nsecret:  ${secret}\n(the secret is shown only now; give it to the receiver to verify signatures)`,
    );
  });

  adminOption(webhook.command('list').description('list webhook endpoints')).action(async (options: AdminOption) => {
    const all = await asAdmin(options, (ctx, admin) => listWebhooks(ctx, admin));
    print(!!options.json, { webhooks: all.map(publicWebhook) }, all.map(line).join('\n') || '(no webhooks)');
  });

  adminOption(webhook.command('show <id>').description('show a webhook endpoint')).action(
    async (id: string, options: AdminOption) => {
      const found = await asAdmin(options, (ctx, admin) => reachableWebhook(ctx, admin, id));
      print(!!options.json, publicWebhook(found), line(found));
    },
  );

  adminOption(
    webhook
      .command('update <id>')
      .description("change a webhook's URL, events or description")
      .option('--url <url>', 'a new https URL')
      .option('--event <type>', 'the event types from now on (repeat)', collect, [])
      .option('--description <text>', 'a new description'),
  ).action(async (id: string, options: AdminOption & { url?: string; event: string[]; description?: string }) => {
    const changes: WebhookChanges = {
      url: options.url,
      description: options.description,
      events: options.event.length > 0 ? options.event : undefined,
    };
    const changed = await asAdmin(options, (ctx, admin) => updateWebhook(ctx, admin, id, changes), {
      name: 'update',
      target: () => id,
    });
    print(!!options.json, publicWebhook(changed), line(changed));
  });

  for (const [name, status] of [
    ['disable', 'disabled'],
    ['enable', 'enabled'],
  ] as const)
    adminOption(webhook.command(`${name} <id>`).description(`${name} a webhook endpoint`)).action(
      async (id: string, options: AdminOption) => {
        const changed = await asAdmin(options, (ctx, admin) => updateWebhook(ctx, admin, id, { status }), {
          name,
          target: () => id,
        });
        print(!!options.json, publicWebhook(changed), `${id} is ${status}`);
      },
    );

  adminOption(webhook.command('delete <id>').description('delete a webhook endpoint and its delivery log')).action(
    async (id: string, options: AdminOption) => {
      const deleted = await asAdmin(options, (ctx, admin) => deleteWebhook(ctx, admin, id), {
        name: 'delete',
        target: () => id,
      });
      print(!!options.json, { ...publicWebhook(deleted), deleted: true }, `${id} deleted`);
    },
  );

  adminOption(webhook.command('rotate-secret <id>').description('issue a new signing secret; prints it once')).action(
    async (id: string, options: AdminOption) => {
      const { webhook: rotated, secret } = await asAdmin(options, (ctx, admin) => rotateWebhookSecret(ctx, admin, id), {
        name: 'rotate_secret',
        target: () => id,
      });
      print(!!options.json, { ...publicWebhook(rotated), secret }, `webhook: ${id}\nsecret:  ${secret}`);
    },
  );

  adminOption(
    webhook
      .command('deliveries <id>')
      .description("a webhook's delivery log, newest first")
      .option('--limit <n>', 'how many (1 to 100)', '20'),
  ).action(async (id: string, options: AdminOption & { limit: string }) => {
    const { data } = await asAdmin(options, (ctx, admin) =>
      listDeliveries(ctx, admin, id, { limit: Number(options.limit) }),
    );
    const rows = data.map(({ delivery, attempts }) => ({
      message_id: delivery.message_id,
      event_type: delivery.event_type,
      status: delivery.status,
      attempts: delivery.attempts,
      last_status_code: delivery.last_status_code,
      last_error: delivery.last_error,
      created_at: new Date(delivery.created_at).toISOString(),
      attempt_log: attempts.map((a) => ({
        attempt: a.attempt,
        at: new Date(a.at).toISOString(),
        status_code: a.status_code,
        error: a.error,
      })),
    }));
    print(
      !!options.json,
      { deliveries: rows },
      rows
        .map(
          (r) =>
            `${r.message_id}  ${r.status.padEnd(10)}  ${r.event_type}  attempts ${r.attempts}${r.last_status_code === null ? '' : `  HTTP ${r.last_status_code}`}${r.last_error ? `  ${r.last_error}` : ''}`,
        )
        .join('\n') || '(no deliveries)',
    );
  });

  adminOption(
    webhook.command('redeliver <id> <message_id>').description('send a delivery again, with its id, now'),
  ).action(async (id: string, messageId: string, options: AdminOption) => {
    const delivery = await asAdmin(options, (ctx, admin) => redeliver(ctx, admin, id, messageId), {
      name: 'redeliver',
      target: () => id,
    });
    print(
      !!options.json,
      { message_id: delivery.message_id, status: delivery.status },
      `${delivery.message_id} will be sent again now (by the running server)`,
    );
  });
}
