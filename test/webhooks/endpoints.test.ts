/**
 * Webhook endpoints' rules (src/domain/webhooks/endpoints.ts) on a real database: who may manage
 * them, the URL and event rules, the sealed secret, the outbox's write and its delivery log.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../src/domain/accounts.ts';
import {
  createWebhook,
  deleteWebhook,
  listDeliveries,
  listWebhooks,
  reachableWebhook,
  redeliver,
  rotateWebhookSecret,
  updateWebhook,
  webhookSecret,
} from '../../src/domain/webhooks/endpoints.ts';
import { eventTypeList } from '../../src/domain/webhooks/event-types.ts';
import type { AccountRecord } from '../../src/store/accounts.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let admin: AccountRecord;
let member: AccountRecord;

beforeAll(async () => {
  server = await startTestServer();
  // The rules alone: nothing is sent (the URLs here name no receiver), so the outbox keeps its rows as written.
  await server.ctx.webhooks.stop();
  admin = await createAccount(server.ctx, { email: 'hooks-admin@example.com', role: 'admin' });
  member = await createAccount(server.ctx, { email: 'hooks-member@example.com', role: 'member' });
});
afterAll(() => server.close());

describe('webhook endpoints', () => {
  it('are made by an admin with a whsec_ secret shown once and sealed at rest', async () => {
    const { webhook, secret } = await createWebhook(server.ctx, admin, {
      url: 'https://hooks.example.com/agentauth',
      events: ['agent.created', 'agent.sign_in.succeeded', 'agent.created'],
      description: 'Ops channel',
    });
    expect(webhook.webhook.id).toMatch(/^whk_/);
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32);
    expect(webhook.events).toEqual(['agent.created', 'agent.sign_in.succeeded']);
    expect(webhook.webhook.account_id).toBe(admin.id);
    const stored = await server.ctx.store.webhooks.find(webhook.webhook.id);
    expect(stored?.webhook.secret_sealed).not.toContain(secret.slice(6));
    expect(webhookSecret(server.ctx, stored!.webhook)).toBe(secret);
    expect(stored?.events).toEqual(['agent.created', 'agent.sign_in.succeeded']);
  });

  it("are no one else's business: a member is refused and sees none", async () => {
    const { webhook } = await createWebhook(server.ctx, admin, { url: 'https://hooks.example.com/x', events: ['*'] });
    await expect(createWebhook(server.ctx, member, { url: 'https://a.example/', events: ['*'] })).rejects.toMatchObject(
      {
        statusCode: 403,
      },
    );
    await expect(listWebhooks(server.ctx, member)).rejects.toMatchObject({ statusCode: 403 });
    await expect(reachableWebhook(server.ctx, member, webhook.webhook.id)).rejects.toMatchObject({ statusCode: 404 });
    await expect(reachableWebhook(server.ctx, admin, 'whk_nothere')).rejects.toMatchObject({ statusCode: 404 });
    await expect(deleteWebhook(server.ctx, member, webhook.webhook.id)).rejects.toMatchObject({ statusCode: 404 });
  });

  it.each([
    ['http://hooks.example.com/', 'https'],
    ['https://user:pw@hooks.example.com/', 'user name'],
    ['https://hooks.example.com/#part', 'fragment'],
    ['https://hooks.example.com/#', 'fragment'],
    [`https://hooks.example.com/${'a'.repeat(2048)}`, '2048'],
    ['https://127.0.0.1/hook', 'special-use'],
    ['https://[::1]/hook', 'special-use'],
    ['https://10.0.0.8/hook', 'special-use'],
    ['https://169.254.169.254/latest', 'special-use'],
    ['https://[::ffff:192.168.1.1]/', 'special-use'],
    ['not a url', 'not a valid URL'],
    ['', 'needs a URL'],
  ])('refuse the URL %s, naming the field', async (url, words) => {
    await expect(createWebhook(server.ctx, admin, { url, events: ['*'] })).rejects.toMatchObject({
      field: 'url',
      statusCode: 400,
      description: expect.stringContaining(words),
    });
  });

  it('take a special-use address inside a network the operator trusts (WEBHOOK_ALLOWED_ADDRESSES), and no other', async () => {
    const trusting = { ...server.ctx, config: { ...server.ctx.config, webhookAllowedAddresses: ['10.0.0.0/8'] } };
    const { webhook } = await createWebhook(trusting, admin, { url: 'https://10.0.0.8/hook', events: ['*'] });
    expect(webhook.webhook.url).toBe('https://10.0.0.8/hook');
    await expect(
      updateWebhook(trusting, admin, webhook.webhook.id, { url: 'https://192.168.1.1/hook' }),
    ).rejects.toMatchObject({ field: 'url', description: expect.stringContaining('WEBHOOK_ALLOWED_ADDRESSES') });
  });

  it('refuse unknown or missing event types, and take * alone', async () => {
    const url = 'https://hooks.example.com/e';
    await expect(createWebhook(server.ctx, admin, { url, events: [] })).rejects.toMatchObject({ field: 'events' });
    await expect(createWebhook(server.ctx, admin, { url, events: ['agent.exploded'] })).rejects.toMatchObject({
      field: 'events',
    });
    const { webhook } = await createWebhook(server.ctx, admin, { url, events: ['agent.created', '*'] });
    expect(webhook.events).toEqual(['*']);
    expect(eventTypeList().map((e) => e.type)).toContain('account.sign_in_method_changed');
  });

  it('change, disable, enable, rotate and delete', async () => {
    const { webhook, secret } = await createWebhook(server.ctx, admin, {
      url: 'https://hooks.example.com/c',
      events: ['agent.created'],
    });
    const id = webhook.webhook.id;
    const changed = await updateWebhook(server.ctx, admin, id, {
      url: 'https://hooks.example.com/d',
      events: ['client.created', 'client.deleted'],
      description: 'now clients',
    });
    expect(changed.webhook.url).toBe('https://hooks.example.com/d');
    expect(changed.events).toEqual(['client.created', 'client.deleted']);
    await expect(updateWebhook(server.ctx, admin, id, { url: 'http://x.example/' })).rejects.toMatchObject({
      field: 'url',
    });
    const disabled = await updateWebhook(server.ctx, admin, id, { status: 'disabled' });
    expect(disabled.webhook).toMatchObject({ status: 'disabled', disabled_reason: `disabled by ${admin.email}` });
    await server.ctx.store.webhooks.update(id, { consecutive_failures: 4, failing_since: 1, updated_at: 1 });
    const enabled = await updateWebhook(server.ctx, admin, id, { status: 'enabled' });
    expect(enabled.webhook).toMatchObject({ status: 'enabled', disabled_reason: null, consecutive_failures: 0 });
    expect((await server.ctx.store.webhooks.find(id))?.webhook).toMatchObject({
      consecutive_failures: 0,
      failing_since: null,
      disabled_reason: null,
    });
    const rotated = await rotateWebhookSecret(server.ctx, admin, id);
    expect(rotated.secret).not.toBe(secret);
    expect(webhookSecret(server.ctx, (await server.ctx.store.webhooks.find(id))!.webhook)).toBe(rotated.secret);
    await deleteWebhook(server.ctx, admin, id);
    await expect(reachableWebhook(server.ctx, admin, id)).rejects.toMatchObject({ statusCode: 404 });
  });

  it('write one delivery per subscribed enabled endpoint and event, none otherwise, ids in creation order', async () => {
    const one = await createWebhook(server.ctx, admin, { url: 'https://a.example/', events: ['account.created'] });
    const all = await createWebhook(server.ctx, admin, { url: 'https://b.example/', events: ['*'] });
    const off = await createWebhook(server.ctx, admin, { url: 'https://c.example/', events: ['account.created'] });
    await updateWebhook(server.ctx, admin, off.webhook.webhook.id, { status: 'disabled' });
    for (let i = 0; i < 5; i++)
      await server.ctx.store.webhooks.announce([{ type: 'account.created', data: { account: { id: `acc_${i}` } } }]);
    await server.ctx.store.webhooks.announce([{ type: 'agent.deleted', data: { agent: { id: 'agt_x' } } }]);
    const log = async (id: string) => (await listDeliveries(server.ctx, admin, id, { limit: 100 })).data;
    expect(await log(one.webhook.webhook.id)).toHaveLength(5);
    expect(await log(all.webhook.webhook.id)).toHaveLength(6);
    expect(await log(off.webhook.webhook.id)).toHaveLength(0);
    const ids = (await log(one.webhook.webhook.id)).map((d) => d.delivery.message_id);
    expect([...ids].sort().reverse()).toEqual(ids);
    const first = (await log(one.webhook.webhook.id)).at(-1)!.delivery;
    expect(JSON.parse(first.payload)).toMatchObject({ type: 'account.created', data: { account: { id: 'acc_0' } } });
    expect(first.status).toBe('pending');
    // Pages, newest first.
    const page = await listDeliveries(server.ctx, admin, all.webhook.webhook.id, { limit: 4 });
    expect(page.data).toHaveLength(4);
    const rest = await listDeliveries(server.ctx, admin, all.webhook.webhook.id, {
      limit: 4,
      cursor: page.next_cursor!,
    });
    expect(rest.data).toHaveLength(2);
    expect(rest.next_cursor).toBeNull();
    // Send again: due now, same id.
    const again = await redeliver(server.ctx, admin, one.webhook.webhook.id, first.message_id);
    expect(again.message_id).toBe(first.message_id);
    await expect(redeliver(server.ctx, admin, one.webhook.webhook.id, 'msg_0000')).rejects.toMatchObject({
      statusCode: 404,
    });
  });
});
