/**
 * /api/admin/v1/webhooks over real HTTP on both engines: an admin's `all` key manages them
 * (secret shown once, no-store, If-Match, Idempotency-Key), anyone else is refused; and the
 * console and the CLI announce what they change like the API does.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountWithKey } from '../helpers/api.ts';
import { createPasswordAccount, signIn } from '../helpers/console.ts';
import { startTestServer, TEST_JWT_SECRET, type TestServer } from '../helpers/server.ts';
import { allowLoopback, startWebhookReceiver } from '../helpers/webhook-receiver.ts';

type Receiver = Awaited<ReturnType<typeof startWebhookReceiver>>;
type Call = Awaited<ReturnType<typeof accountWithKey>>['call'];

let server: TestServer;
let receiver: Receiver;
let call: Call;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  server = await startTestServer({
    webhooks: { fetch: { ca: receiver.ca, allowAddress: allowLoopback }, pollMs: 50 },
  });
  ({ call } = await accountWithKey(server, { role: 'admin', key: { reach: 'all' } }));
});
afterAll(async () => {
  await server.close();
  await receiver.close();
});

describe('the webhooks API', () => {
  it('is in the OpenAPI document, which a standard validator accepts', async () => {
    const doc = await call('GET', '/openapi.json');
    expect(Object.keys(doc.json.paths)).toEqual(
      expect.arrayContaining([
        '/webhooks',
        '/webhooks/{id}',
        '/webhooks/{id}/rotate-secret',
        '/webhooks/{id}/deliveries',
        '/webhooks/{id}/deliveries/{message_id}/retry',
        '/webhooks/{id}/test',
        '/webhook-event-types',
      ]),
    );
    expect(doc.json.components.schemas.Webhook).toBeDefined();
    const validator = new Validator();
    const result = await validator.validate(doc.json);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('lists the event types', async () => {
    const answer = await call('GET', '/webhook-event-types');
    expect(answer.status).toBe(200);
    expect(answer.json.data).toContainEqual({
      type: 'agent.sign_in.succeeded',
      description: expect.stringContaining('authenticated'),
    });
  });

  it('creates with the secret once (no-store), reads with an ETag, changes with If-Match, rotates and deletes', async () => {
    const made = await call(
      'POST',
      '/webhooks',
      { url: receiver.url, events: ['agent.created'], description: 'ops' },
      { 'idempotency-key': 'hook-1' },
    );
    expect(made.status).toBe(201);
    expect(made.headers.get('cache-control')).toBe('no-store');
    expect(made.json.secret).toMatch(/^whsec_/);
    const id = made.json.webhook.id;
    expect(made.json.webhook).toMatchObject({ url: receiver.url, events: ['agent.created'], status: 'enabled' });
    expect(made.headers.get('location')).toContain(`webhooks/${id}`);
    // A retry with the same key answers the same creation.
    const again = await call(
      'POST',
      '/webhooks',
      { url: receiver.url, events: ['agent.created'], description: 'ops' },
      { 'idempotency-key': 'hook-1' },
    );
    expect(again.json).toEqual(made.json);
    expect(again.headers.get('idempotent-replayed')).toBe('true');

    const read = await call('GET', `/webhooks/${id}`);
    expect(read.status).toBe(200);
    expect(read.json).not.toHaveProperty('secret');
    expect(read.text).not.toContain(made.json.secret.slice(6));
    const etag = read.headers.get('etag')!;
    const stale = await call('PATCH', `/webhooks/${id}`, { description: 'x' }, { 'if-match': '"stale"' });
    expect(stale.status).toBe(412);
    const changed = await call('PATCH', `/webhooks/${id}`, { events: ['*'], status: 'disabled' }, { 'if-match': etag });
    expect(changed.status).toBe(200);
    expect(changed.json).toMatchObject({ events: ['*'], status: 'disabled', disabled_reason: expect.any(String) });

    const rotated = await call('POST', `/webhooks/${id}/rotate-secret`);
    expect(rotated.status).toBe(200);
    expect(rotated.headers.get('cache-control')).toBe('no-store');
    expect(rotated.json.secret).not.toBe(made.json.secret);

    expect((await call('GET', '/webhooks')).json.data.map((w: { id: string }) => w.id)).toContain(id);
    expect((await call('DELETE', `/webhooks/${id}`)).status).toBe(200);
    expect((await call('GET', `/webhooks/${id}`)).status).toBe(404);
  });

  it.each([
    [{ url: 'http://hooks.example.com/', events: ['*'] }, 'must use https'],
    [{ url: 'https://10.1.2.3/', events: ['*'] }, 'special-use'],
    [{ url: 'https://hooks.example.com/#x', events: ['*'] }, 'fragment'],
    [{ url: 'https://hooks.example.com/', events: ['agent.nope'] }, 'unknown event type'],
    [{ url: 'https://hooks.example.com/', events: [] }, 'events'],
  ])('refuses %j with a 400 saying why', async (body, words) => {
    const answer = await call('POST', '/webhooks', body);
    expect(answer.status).toBe(400);
    expect(answer.json).toMatchObject({ error: 'invalid_request', error_description: expect.stringContaining(words) });
  });

  it('sends a test event, refused while the webhook is disabled and for a read key', async () => {
    // A receiver of its own: the other tests read everything theirs received.
    const own = await startWebhookReceiver();
    const made = await call('POST', '/webhooks', { url: own.url, events: ['client.deleted'] });
    own.useSecret(made.json.secret);
    const id = made.json.webhook.id;
    const sent = await call('POST', `/webhooks/${id}/test`);
    expect(sent.status).toBe(202);
    expect(sent.json).toMatchObject({ event_type: 'webhook.test', payload: { type: 'webhook.test' } });
    const [got] = await own.until((all) => all.length > 0);
    await own.close();
    expect(got).toMatchObject({ id: sent.json.message_id, verified: true });
    const reader = await accountWithKey(server, { role: 'admin', key: { reach: 'all', access: 'read' } });
    expect((await reader.call('POST', `/webhooks/${id}/test`)).status).toBe(403);
    await call('PATCH', `/webhooks/${id}`, { status: 'disabled' });
    const refused = await call('POST', `/webhooks/${id}/test`);
    expect(refused.status).toBe(409);
    expect(refused.json).toMatchObject({ error: 'conflict', error_description: expect.stringContaining('disabled') });
    expect((await call('POST', '/webhooks/whk_doesnotexist/test')).status).toBe(404);
  });

  it("refuses a member's key, an admin's own-reach key and a read key", async () => {
    const member = await accountWithKey(server, { role: 'member' });
    const own = await accountWithKey(server, { role: 'admin', key: { reach: 'own' } });
    const reader = await accountWithKey(server, { role: 'admin', key: { reach: 'all', access: 'read' } });
    const body = { url: receiver.url, events: ['*'] };
    expect((await member.call('GET', '/webhooks')).status).toBe(403);
    expect((await own.call('POST', '/webhooks', body)).status).toBe(403);
    expect((await reader.call('GET', '/webhooks')).status).toBe(200);
    expect((await reader.call('POST', '/webhooks', body)).status).toBe(403);
    expect((await call('GET', '/webhooks/whk_doesnotexist')).status).toBe(404);
    expect((await call('GET', '/webhooks')).status).toBe(200);
  });

  it('shows the delivery log and sends a delivery again; console and CLI changes are announced too', async () => {
    const made = await call('POST', '/webhooks', { url: receiver.url, events: ['agent.updated', 'agent.created'] });
    receiver.useSecret(made.json.secret);
    const id = made.json.webhook.id;

    // The console: an owner renames an agent.
    const owner = await createPasswordAccount(server.ctx, { role: 'member' });
    const session = await signIn(server.baseUrl, owner.email);
    await session.get('/console/agents');
    const created = await session.post('/console/agents', { name: 'Console agent' });
    expect(created.status).toBe(303);
    const agentId = (await server.ctx.store.agents.list({ accountId: owner.id }))[0]!.id;
    await session.get(`/console/agents/${agentId}`);
    expect((await session.post(`/console/agents/${agentId}/rename`, { name: 'Renamed in console' })).status).toBe(303);

    // The CLI, on the same database (its process writes the outbox; this server sends).
    const { stdout } = await promisify(execFile)(
      './bin/agentauth',
      ['agent', 'create', '--owner-email', 'cli@example.com', '--name', 'CLI agent', '--json'],
      { env: { ...process.env, DATABASE_URL: server.databaseUrl, JWT_SECRET: TEST_JWT_SECRET, BASE_URL: undefined } },
    );
    const cliAgent = JSON.parse(stdout).agent_id;

    const all = await receiver.until((r) => r.length >= 3, 10_000);
    expect(all.every((r) => r.verified)).toBe(true);
    const seen = all.map((r) => [r.payload.type, r.payload.data.agent.name]);
    expect(seen).toEqual(
      expect.arrayContaining([
        ['agent.created', 'Console agent'],
        ['agent.updated', 'Renamed in console'],
        ['agent.created', 'CLI agent'],
      ]),
    );
    // Each says who acted: the signed-in person in the console, the CLI.
    expect(all.find((r) => r.payload.data.agent.id === cliAgent)!.payload.data.actor).toEqual({ type: 'cli' });
    const renamed = all.find((r) => r.payload.type === 'agent.updated')!;
    expect(renamed.payload.data.actor).toEqual({ type: 'account', id: owner.id, email: owner.email });

    // The log is written once the receiver has answered: read it until the newest two are in.
    let log = await call('GET', `/webhooks/${id}/deliveries?limit=2`);
    for (
      let tries = 0;
      tries < 100 && log.json.data.some((d: { status: string }) => d.status !== 'delivered');
      tries++
    ) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      log = await call('GET', `/webhooks/${id}/deliveries?limit=2`);
    }
    expect(log.status).toBe(200);
    expect(log.json.data).toHaveLength(2);
    expect(log.json.next_cursor).toMatch(/^msg_/);
    expect(log.json.data[0]).toMatchObject({
      status: 'delivered',
      last_status_code: 204,
      attempt_log: [{ attempt: 1 }],
    });
    const more = await call('GET', `/webhooks/${id}/deliveries?cursor=${log.json.next_cursor}`);
    expect(more.json.data.length).toBeGreaterThanOrEqual(1);

    const message = log.json.data[0].message_id;
    const retried = await call('POST', `/webhooks/${id}/deliveries/${message}/retry`);
    expect(retried.status).toBe(202);
    const after = await receiver.until((r) => r.filter((x) => x.id === message).length >= 2);
    expect(after.filter((x) => x.id === message)).toHaveLength(2);
    expect((await call('POST', `/webhooks/${id}/deliveries/msg_0/retry`)).status).toBe(404);
  });
});
