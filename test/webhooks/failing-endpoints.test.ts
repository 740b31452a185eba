/**
 * An endpoint that keeps failing (docs/design.md §15): disabled once every attempt has failed for
 * long enough, with a console event, a webhook.disabled announcement to the other endpoints and a
 * mail to the admin who made it; and the retention of the delivery log.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../src/domain/accounts.ts';
import { createWebhook, listDeliveries } from '../../src/domain/webhooks/endpoints.ts';
import type { AccountRecord } from '../../src/store/accounts.ts';
import { accountWithKey } from '../helpers/api.ts';
import { startMailbox } from '../helpers/mailbox.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { allowLoopback, startWebhookReceiver } from '../helpers/webhook-receiver.ts';

type Receiver = Awaited<ReturnType<typeof startWebhookReceiver>>;

let server: TestServer;
let failing: Receiver;
let watcher: Receiver;
let mailbox: Awaited<ReturnType<typeof startMailbox>>;
let admin: AccountRecord;

beforeAll(async () => {
  failing = await startWebhookReceiver();
  watcher = await startWebhookReceiver();
  mailbox = await startMailbox();
  server = await startTestServer({
    env: { SMTP_URL: mailbox.url, SMTP_FROM: 'agentauth <no-reply@id.example>' },
    webhooks: {
      fetch: { ca: failing.ca, allowAddress: allowLoopback },
      retryDelaysMs: Array.from({ length: 20 }, () => 40),
      pollMs: 40,
      // "Failing for a day", in a test's time; the count of failed messages stays out of reach.
      disableAfterFailingMs: 300,
      disableAfterFailedMessages: 1000,
    },
  });
  admin = await createAccount(server.ctx, { email: 'owner-of-hooks@example.com', role: 'admin', name: 'Hook Owner' });
});
afterAll(async () => {
  await server.close();
  await Promise.all([failing.close(), watcher.close(), mailbox.close()]);
});

describe('a failing endpoint', () => {
  it('is disabled with its reason, announced to other endpoints, recorded and mailed to its admin, by id and host only', async () => {
    // A capability URL: the token in its path is the receiver's only authentication.
    const capability = 'hk_tok_3b9f1c0d7e2a';
    const url = `${failing.url}/${capability}`;
    const { account: maker, call } = await accountWithKey(server, { role: 'admin', key: { reach: 'all' } });
    const made = await call('POST', '/webhooks', { url, events: ['client.created'] });
    expect(made.status).toBe(201);
    failing.useSecret(made.json.secret);
    failing.answer(500);
    const good = await createWebhook(server.ctx, admin, { url: watcher.url, events: ['webhook.disabled'] });
    watcher.useSecret(good.secret);
    const id: string = made.json.webhook.id;

    await server.createClient({ name: 'Never heard of' });
    const [announced] = await watcher.until((all) => all.length >= 1);
    expect(announced!.verified).toBe(true);
    expect(announced!.payload).toEqual({
      type: 'webhook.disabled',
      timestamp: expect.any(String),
      data: {
        webhook: { id, host: new URL(failing.url).host, description: '' },
        reason: expect.stringMatching(/^every delivery failed for \d+ seconds?$/),
      },
    });
    expect(announced!.raw).not.toContain(capability);
    const { webhook } = (await server.ctx.store.webhooks.find(id))!;
    expect(webhook.status).toBe('disabled');
    expect(webhook.disabled_reason).toBe(announced!.payload.data.reason);

    // The admin's key was mailed to them when it was made (a new credential), before the webhook.
    const keyMail = await mailbox.next();
    expect(keyMail.to).toEqual([maker.email]);
    expect(keyMail.text).toContain('An API key named');
    const mail = await mailbox.next();
    expect(mail.to).toEqual([maker.email]);
    expect(mail.text).toContain(id);
    expect(mail.text).toContain(`to ${new URL(failing.url).host}`);
    expect(mail.text).toContain(webhook.disabled_reason);
    expect(mail.text).not.toContain(capability);
    expect(mail.headers).not.toContain(capability);

    // The activity (the API's, the console's) names the endpoint by id and host, never its URL.
    const activity = await call('GET', '/activity?limit=100');
    expect(activity.status).toBe(200);
    const acts = activity.json.data.filter((event: { target: string }) => event.target === id);
    expect(acts.map((event: { action: string }) => event.action).sort()).toEqual([
      'webhook.create',
      'webhook.disabled',
    ]);
    expect(activity.text).not.toContain(capability);
    expect(acts.find((event: { action: string }) => event.action === 'webhook.create').detail).toMatch(
      new RegExp(`^key key_[\\w-]+: ${new URL(failing.url).host} \\(client\\.created\\)$`),
    );

    const events = await server.ctx.store.activity.list({ limit: 50 });
    expect(events.find((event) => event.action === 'webhook.disabled')).toMatchObject({
      target: id,
      actor_id: null,
      detail: webhook.disabled_reason,
    });

    // Disabled, it is sent nothing more: its delivery waits, pending.
    const attempts = failing.received.length;
    const { data } = await listDeliveries(server.ctx, admin, id);
    expect(data[0]!.delivery.status).toBe('pending');
    expect(failing.received.length).toBe(attempts);
  });

  it('keeps delivered deliveries and their attempts until the retention, then the purge deletes them', async () => {
    const ok = await createWebhook(server.ctx, admin, { url: watcher.url, events: ['agent.created'] });
    watcher.useSecret(ok.secret);
    watcher.answer(204);
    await server.createAgent({ name: 'Kept a while' });
    const id = ok.webhook.webhook.id;
    const deadline = Date.now() + 5000;
    while ((await listDeliveries(server.ctx, admin, id)).data[0]?.delivery.status !== 'delivered') {
      if (Date.now() > deadline) throw new Error('not delivered');
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(await server.ctx.store.webhooks.purge(Date.now() - 60_000)).toBe(0);
    expect(await server.ctx.store.webhooks.purge(Date.now() + 1)).toBeGreaterThanOrEqual(2);
    expect((await listDeliveries(server.ctx, admin, id)).data).toEqual([]);
  });
});
