/**
 * `agentauth webhook …`: signed webhooks (docs/reference/webhooks.md), by the rules of
 * src/domain/webhooks/endpoints.ts, on the database or a remote server (../target.ts). Webhooks
 * are an admin's: on the database the CLI acts as the admin named by --admin-email, or else the
 * first active admin (who is told by mail should a webhook made here be disabled for failing);
 * on a remote server, as the API key's account. The endpoint's address is --endpoint: --url
 * names the server to act on, as for every management command.
 */
import type { Command } from 'commander';
import { collect, print } from '../common.ts';
import type { Webhook, WebhookChanges, WebhookDelivery } from '../management.ts';
import { withManagement } from '../target.ts';

const line = (webhook: Webhook) =>
  `${webhook.id}  ${webhook.status.padEnd(8)}  ${webhook.url}  [${webhook.events.join(', ')}]${webhook.disabled_reason ? `  (${webhook.disabled_reason})` : ''}${webhook.paused_until ? `  (paused until ${webhook.paused_until}: ${webhook.paused_reason})` : ''}`;

const deliveryLine = (delivery: WebhookDelivery) =>
  `${delivery.message_id}  ${delivery.status.padEnd(10)}  ${delivery.event_type}  attempts ${delivery.attempts}${delivery.last_status_code === null ? '' : `  HTTP ${delivery.last_status_code}`}${delivery.last_error ? `  ${delivery.last_error}` : ''}`;

/** The request a delivery's latest attempt was sent as: its headers, a blank line, its body. */
const requestLines = (delivery: WebhookDelivery) => {
  const headers = [...delivery.attempt_log]
    .reverse()
    .find((attempt) => attempt.request_headers !== null)?.request_headers;
  const head = headers ? Object.entries(headers).map(([name, value]) => `    ${name}: ${value}`) : [];
  return [...head, ...(head.length > 0 ? [''] : []), `    ${JSON.stringify(delivery.payload)}`].join('\n');
};

/** A delivery's outcome, once its first attempt is logged: the answer, or what went wrong. */
const outcome = (delivery: WebhookDelivery) =>
  delivery.status === 'delivered'
    ? `delivered: HTTP ${delivery.last_status_code}`
    : `not delivered: ${delivery.last_error ?? 'no answer'}${delivery.status === 'pending' ? ' (tried again later)' : ''}`;

type Json = { json?: boolean };

/** The options every webhook command takes. */
const withOptions = (command: Command) =>
  command
    .option('--admin-email <email>', 'on the database: act as this admin (default: the first active admin)')
    .option('--json', 'print JSON');

export function webhookCommand(program: Command): void {
  const webhook = program.command('webhook').description('manage signed webhooks (admins)');

  withOptions(
    webhook
      .command('create')
      .description('register a webhook endpoint; prints its signing secret (whsec_…) once')
      .requiredOption('--endpoint <url>', 'the https URL deliveries are POSTed to')
      .requiredOption('--event <type>', "an event type to receive (repeat; '*' for all)", collect, [])
      .option('--description <text>', 'what it is for'),
  ).action(async (options: Json & { endpoint: string; event: string[]; description?: string }, command: Command) => {
    const { webhook: made, secret } = await withManagement(command, (management) =>
      management.createWebhook({ url: options.endpoint, events: options.event, description: options.description }),
    );
    print(
      !!options.json,
      { ...made, secret },
      `webhook: ${made.id}\nsecret:  ${secret}\n(the secret is shown only now; give it to the receiver to verify signatures)`,
    );
  });

  withOptions(webhook.command('list').description('list webhook endpoints')).action(
    async (options: Json, command: Command) => {
      const all = await withManagement(command, (management) => management.listWebhooks());
      print(!!options.json, { webhooks: all }, all.map(line).join('\n') || '(no webhooks)');
    },
  );

  withOptions(webhook.command('show <id>').description('show a webhook endpoint')).action(
    async (id: string, options: Json, command: Command) => {
      const found = await withManagement(command, (management) => management.getWebhook(id));
      print(!!options.json, found, line(found));
    },
  );

  withOptions(
    webhook
      .command('update <id>')
      .description("change a webhook's URL, events or description")
      .option('--endpoint <url>', 'a new https URL to POST deliveries to')
      .option('--event <type>', 'the event types from now on (repeat)', collect, [])
      .option('--description <text>', 'a new description'),
  ).action(
    async (id: string, options: Json & { endpoint?: string; event: string[]; description?: string }, command) => {
      const changes: WebhookChanges = {
        ...(options.endpoint === undefined ? {} : { url: options.endpoint }),
        ...(options.description === undefined ? {} : { description: options.description }),
        ...(options.event.length > 0 ? { events: options.event } : {}),
      };
      if (Object.keys(changes).length === 0)
        throw new Error('give --endpoint, --event or --description: nothing to change');
      const changed = await withManagement(command, (management) => management.updateWebhook(id, changes));
      print(!!options.json, changed, line(changed));
    },
  );

  for (const [name, status] of [
    ['disable', 'disabled'],
    ['enable', 'enabled'],
  ] as const)
    withOptions(webhook.command(`${name} <id>`).description(`${name} a webhook endpoint`)).action(
      async (id: string, options: Json, command: Command) => {
        const changed = await withManagement(command, (management) => management.updateWebhook(id, { status }));
        print(!!options.json, changed, `${id} is ${status}`);
      },
    );

  withOptions(webhook.command('delete <id>').description('delete a webhook endpoint and its delivery log')).action(
    async (id: string, options: Json, command: Command) => {
      const deleted = await withManagement(command, (management) => management.deleteWebhook(id));
      print(!!options.json, { ...deleted, deleted: true }, `${id} deleted`);
    },
  );

  withOptions(webhook.command('rotate-secret <id>').description('issue a new signing secret; prints it once')).action(
    async (id: string, options: Json, command: Command) => {
      const { webhook: rotated, secret } = await withManagement(command, (management) =>
        management.rotateWebhookSecret(id),
      );
      print(!!options.json, { ...rotated, secret }, `webhook: ${id}\nsecret:  ${secret}`);
    },
  );

  withOptions(
    webhook
      .command('deliveries <id>')
      .description("a webhook's delivery log, newest first")
      .option('--limit <n>', 'how many (1 to 100)', '20')
      .option('--request', 'print the request each was sent as: headers and payload (--json always has them)'),
  ).action(async (id: string, options: Json & { limit: string; request?: boolean }, command: Command) => {
    const limit = Number(options.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 100)
      throw new Error('--limit is a whole number from 1 to 100');
    const deliveries = await withManagement(command, (management) => management.listWebhookDeliveries(id, limit));
    const text = deliveries.map((d) => (options.request ? `${deliveryLine(d)}\n${requestLines(d)}` : deliveryLine(d)));
    print(!!options.json, { deliveries }, text.join('\n') || '(no deliveries)');
  });

  withOptions(
    webhook
      .command('test <id>')
      .description('send a signed webhook.test event to the endpoint now; its outcome shows in the delivery log')
      .option(
        '--wait <seconds>',
        'wait up to this long for the first attempt and print its outcome (the server sends it)',
      ),
  ).action(async (id: string, options: Json & { wait?: string }, command: Command) => {
    const wait = options.wait === undefined ? 0 : Number(options.wait);
    if (!Number.isFinite(wait) || wait < 0 || wait > 120)
      throw new Error('--wait is a number of seconds from 0 to 120');
    const sent = await withManagement(command, async (management) => {
      const delivery = await management.sendWebhookTestEvent(id);
      // The running server's dispatcher sends it; the log says how its first attempt went.
      for (const deadline = Date.now() + wait * 1000; Date.now() < deadline; ) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        const found = (await management.listWebhookDeliveries(id, 20)).find(
          (d) => d.message_id === delivery.message_id,
        );
        if (found && found.attempts > 0) return found;
      }
      return delivery;
    });
    const said =
      sent.attempts > 0
        ? `${sent.message_id}  ${outcome(sent)}`
        : `${sent.message_id}  webhook.test is sent now by the running server; see: agentauth webhook deliveries ${id}`;
    print(!!options.json, sent, said);
  });

  withOptions(
    webhook.command('redeliver <id> <message_id>').description('send a delivery again, with its id, now'),
  ).action(async (id: string, messageId: string, options: Json, command: Command) => {
    const delivery = await withManagement(command, (management) => management.retryWebhookDelivery(id, messageId));
    print(!!options.json, delivery, `${delivery.message_id} will be sent again now (by the running server)`);
  });
}
