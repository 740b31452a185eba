/**
 * Webhooks in the console over real HTTP (issue 23): an admin registers an endpoint (its signing
 * secret shown once), sees it in the list, changes its URL and events, rotates the secret,
 * disables, enables and deletes it, and reads its delivery log with "Send again"; a refused URL
 * or an empty choice of events shows the form again beside the field; a member gets the 403 page
 * and a webhook's page answers them as a missing one; every action is in the activity.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AccountRecord } from '../../src/store/accounts.ts';
import { type ConsoleSession, codeOf, createPasswordAccount, noticeOf, signIn } from '../helpers/console.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let admin: AccountRecord;
let adminSession: ConsoleSession;
let memberSession: ConsoleSession;

beforeAll(async () => {
  server = await startTestServer();
  // The pages alone: nothing is sent (the URLs here name no receiver), so deliveries stay as the tests leave them.
  await server.ctx.webhooks.stop();
  admin = await createPasswordAccount(server.ctx, { email: 'ops@example.org', role: 'admin' });
  adminSession = await signIn(server.baseUrl, admin.email);
  const member = await createPasswordAccount(server.ctx, { email: 'dev@example.org' });
  memberSession = await signIn(server.baseUrl, member.email);
});
afterAll(() => server.close());

/** Registers an endpoint in the console and returns the page that shows its secret. */
async function addWebhook(form: Record<string, string> = {}) {
  await adminSession.get('/console/admin/webhooks');
  const page = await adminSession.submit('/console/admin/webhooks', {
    url: 'https://hooks.example.com/agentauth',
    description: 'Operations channel',
    'event.agent.sign_in.failed': 'on',
    'event.agent.disabled': 'on',
    ...form,
  });
  return { page, id: codeOf(page, 'webhook-id'), secret: codeOf(page, 'webhook-secret') };
}

const eventsOf = async (action: string, target: string) =>
  (await server.ctx.store.activity.list({ limit: 500 })).filter(
    (event) => event.action === action && event.target === target,
  );

describe('registering a webhook', () => {
  it('shows the signing secret once, lists the endpoint, and stores only the sealed secret', async () => {
    const { page, id, secret } = await addWebhook();
    expect(page.posted.status).toBe(303);
    expect(page.posted.location).toBe(`/console/admin/webhooks/${id}/secret`);
    expect(page.status).toBe(200);
    expect(id).toMatch(/^whk_/);
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/=]+$/);
    expect(noticeOf(page)).toContain('shown only once');
    expect(page.headers.get('cache-control')).toContain('no-store');

    const stored = await server.ctx.store.webhooks.find(id);
    expect(stored?.events).toEqual(['agent.disabled', 'agent.sign_in.failed']);
    expect(stored?.webhook).toMatchObject({ url: 'https://hooks.example.com/agentauth', status: 'enabled' });
    expect(JSON.stringify(stored)).not.toContain(secret.slice(6));

    // A reload finds the webhook's page with a notice, never the secret again.
    const again = await adminSession.get(`/console/admin/webhooks/${id}/secret`);
    expect(again.status).toBe(303);
    expect(again.location).toBe(`/console/admin/webhooks/${id}?notice=webhook_secret_shown_once`);
    const list = await adminSession.get('/console/admin/webhooks');
    expect(list.text).toContain(`id="webhook-${id}"`);
    expect(list.text).toContain('Operations channel');
    expect(list.text).not.toContain(secret);
    expect(await eventsOf('webhook.create', id)).toHaveLength(1);
  });

  it('subscribes to every event with "All events"', async () => {
    const { id } = await addWebhook({ all_events: 'on', url: 'https://all.example.com/hook' });
    expect((await server.ctx.store.webhooks.find(id))?.events).toEqual(['*']);
  });

  it.each([
    ['http://hooks.example.com/', 'url', 'https'],
    ['https://127.0.0.1/hook', 'url', 'special-use'],
    // A name is resolved when saved (issue 38): localhost would fail every delivery.
    [
      'https://localhost/hook',
      'url',
      'localhost is at 127.0.0.1, which is a loopback, private or other special-use address, which webhooks are not sent to; to allow it, list its network in WEBHOOK_ALLOWED_ADDRESSES (e.g. 127.0.0.1/32)',
    ],
    ['https://user:pw@hooks.example.com/', 'url', 'user name or password'],
  ])('refuses the URL %s beside its field, keeping what was typed', async (url, field, words) => {
    const before = (await server.ctx.store.webhooks.list()).length;
    await adminSession.get('/console/admin/webhooks');
    const refused = await adminSession.post('/console/admin/webhooks', {
      url,
      'event.agent.created': 'on',
    });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain(`id="field-${field}-error"`);
    expect(refused.text).toContain(words);
    expect(refused.text).toContain('name="event.agent.created" value="on" checked');
    expect((await server.ctx.store.webhooks.list()).length).toBe(before);
  });

  it('refuses a webhook with no event chosen', async () => {
    await adminSession.get('/console/admin/webhooks');
    const refused = await adminSession.post('/console/admin/webhooks', { url: 'https://hooks.example.com/none' });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('id="field-events-error"');
  });

  it('escapes what an admin typed wherever it is shown', async () => {
    const { id } = await addWebhook({ description: '<script>alert(1)</script>' });
    const page = await adminSession.get(`/console/admin/webhooks/${id}`);
    expect(page.text).not.toContain('<script>alert(1)</script>');
    expect(page.text).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
  });
});

describe("a webhook's page", () => {
  it('saves new settings, rotates the secret, disables, enables and deletes, each recorded', async () => {
    const { id, secret } = await addWebhook();
    await adminSession.get(`/console/admin/webhooks/${id}`);
    const saved = await adminSession.submit(`/console/admin/webhooks/${id}`, {
      url: 'https://hooks.example.com/v2',
      description: 'New home',
      'event.client.created': 'on',
    });
    expect(saved.posted.location).toBe(`/console/admin/webhooks/${id}?notice=webhook_saved`);
    expect(noticeOf(saved)).toContain('saved');
    expect(await server.ctx.store.webhooks.find(id)).toMatchObject({
      webhook: { url: 'https://hooks.example.com/v2', description: 'New home' },
      events: ['client.created'],
    });

    const rotated = await adminSession.submit(`/console/admin/webhooks/${id}/rotate-secret`);
    const newSecret = codeOf(rotated, 'webhook-secret');
    expect(newSecret).toMatch(/^whsec_/);
    expect(newSecret).not.toBe(secret);
    expect(server.ctx.secrets.box.open((await server.ctx.store.webhooks.find(id))!.webhook.secret_sealed)).toBe(
      newSecret,
    );

    await adminSession.get(`/console/admin/webhooks/${id}`);
    const disabled = await adminSession.submit(`/console/admin/webhooks/${id}/disable`);
    expect(noticeOf(disabled)).toContain('disabled');
    expect((await server.ctx.store.webhooks.find(id))?.webhook.status).toBe('disabled');
    expect(disabled.text).toContain(`disabled by ${admin.email}`);
    const enabled = await adminSession.submit(`/console/admin/webhooks/${id}/enable`);
    expect(noticeOf(enabled)).toContain('enabled');
    expect((await server.ctx.store.webhooks.find(id))?.webhook.status).toBe('enabled');

    const deleted = await adminSession.submit(`/console/admin/webhooks/${id}/delete`);
    expect(deleted.posted.location).toBe('/console/admin/webhooks?notice=webhook_deleted');
    expect(await server.ctx.store.webhooks.find(id)).toBeUndefined();
    expect((await adminSession.get(`/console/admin/webhooks/${id}`)).status).toBe(404);

    for (const action of [
      'webhook.update',
      'webhook.rotate_secret',
      'webhook.disable',
      'webhook.enable',
      'webhook.delete',
    ])
      expect(await eventsOf(action, id), action).toHaveLength(1);
  });

  it('shows the delivery log and sends a delivery again', async () => {
    const { id } = await addWebhook({ 'event.agent.created': 'on' });
    await server.ctx.store.webhooks.announce([
      { type: 'agent.created', data: { agent_id: 'agt_logged', name: 'Logged agent' } },
    ]);
    const [delivery] = await server.ctx.store.webhooks.listDeliveries(id, 10);
    expect(delivery?.event_type).toBe('agent.created');
    const page = await adminSession.get(`/console/admin/webhooks/${id}`);
    expect(page.text).toContain(`id="delivery-${delivery!.message_id}"`);
    expect(page.text).toContain('<code>agent.created</code>');

    const again = await adminSession.submit(
      `/console/admin/webhooks/${id}/deliveries/${delivery!.message_id}/send-again`,
    );
    expect(again.posted.status).toBe(303);
    expect(noticeOf(again)).toContain('sent again');
    expect(await eventsOf('webhook.redeliver', id)).toHaveLength(1);

    // A delivery being sent at that moment is left to finish, and the page says so.
    const [claimed] = await server.ctx.store.webhooks.claimDue('a-node', Date.now(), Date.now() + 60_000, 10);
    expect(claimed?.message_id).toBe(delivery!.message_id);
    const busy = await adminSession.submit(
      `/console/admin/webhooks/${id}/deliveries/${delivery!.message_id}/send-again`,
    );
    expect(busy.posted.status).toBe(303);
    expect(noticeOf(busy)).toContain('being sent right now');

    const unknown = await adminSession.post(`/console/admin/webhooks/${id}/deliveries/msg_0123/send-again`);
    expect(unknown.status).toBe(404);
  });

  it('sends a test event from the page; a disabled webhook has no button and is refused', async () => {
    const { id } = await addWebhook({ 'event.client.deleted': 'on' });
    const page = await adminSession.get(`/console/admin/webhooks/${id}`);
    expect(page.text).toContain(`action="/console/admin/webhooks/${id}/test"`);
    expect(page.text).toContain('>Send test event</button>');
    const sent = await adminSession.submit(`/console/admin/webhooks/${id}/test`);
    expect(sent.posted.status).toBe(303);
    expect(sent.posted.location).toBe(`/console/admin/webhooks/${id}?notice=webhook_test_sent#deliveries-heading`);
    expect(noticeOf(sent)).toContain('A test event (webhook.test) is sent now');
    const [delivery] = await server.ctx.store.webhooks.listDeliveries(id, 10);
    expect(delivery).toMatchObject({ event_type: 'webhook.test', status: 'pending' });
    expect(JSON.parse(delivery!.payload)).toMatchObject({
      type: 'webhook.test',
      data: { webhook: { id, host: 'hooks.example.com' }, actor: { type: 'account', email: admin.email } },
    });
    // The log's row, with the payload it is sent with (no attempt yet: no headers yet).
    expect(sent.text).toContain(`id="delivery-${delivery!.message_id}"`);
    expect(sent.text).toContain('<code>webhook.test</code>');
    expect(sent.text).toContain('<summary>Payload</summary>');
    expect(await eventsOf('webhook.test', id)).toHaveLength(1);

    await adminSession.submit(`/console/admin/webhooks/${id}/disable`);
    const disabled = await adminSession.get(`/console/admin/webhooks/${id}`);
    expect(disabled.text).not.toContain(`action="/console/admin/webhooks/${id}/test"`);
    const refused = await adminSession.post(`/console/admin/webhooks/${id}/test`);
    expect(refused.status).toBe(409);
    expect(refused.text).toContain('enable it, then send a test event');
    expect(await server.ctx.store.webhooks.listDeliveries(id, 10)).toHaveLength(1);
  });
});

describe('who may manage webhooks', () => {
  it('answers a member with the 403 page on the list and 404 on a webhook, changing nothing', async () => {
    const { id } = await addWebhook();
    expect((await memberSession.get('/console/admin/webhooks')).status).toBe(403);
    expect((await memberSession.get(`/console/admin/webhooks/${id}`)).status).toBe(404);
    await memberSession.get('/console/agents');
    const refused = await memberSession.post(`/console/admin/webhooks/${id}/delete`);
    expect(refused.status).toBe(404);
    expect(await server.ctx.store.webhooks.find(id)).toBeDefined();
    const created = await memberSession.post('/console/admin/webhooks', {
      url: 'https://evil.example.com/',
      all_events: 'on',
    });
    expect(created.status).toBe(403);
  });

  it('shows Webhooks in the admin navigation', async () => {
    const page = await adminSession.get('/console/admin');
    expect(page.text).toContain('href="/console/admin/webhooks"');
  });
});
