/**
 * `agentauth webhook …` on the server's database (local mode), both engines: every command, its
 * JSON, its refusals, the console activity it leaves, and a delivery made by the running server.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../src/domain/accounts.ts';
import { startTestServer, TEST_JWT_SECRET, type TestServer } from '../helpers/server.ts';
import { allowLoopback, startWebhookReceiver } from '../helpers/webhook-receiver.ts';

const run = promisify(execFile);
let server: TestServer;
let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  server = await startTestServer({ webhooks: { fetch: { ca: receiver.ca, allowAddress: allowLoopback }, pollMs: 50 } });
  await createAccount(server.ctx, { email: 'cli-admin@example.com', role: 'admin' });
  await createAccount(server.ctx, { email: 'cli-member@example.com', role: 'member' });
});
afterAll(async () => {
  await server.close();
  await receiver.close();
});

const env = () =>
  ({
    ...process.env,
    DATABASE_URL: server.databaseUrl,
    JWT_SECRET: TEST_JWT_SECRET,
    BASE_URL: undefined,
    NODE_ENV: undefined,
    // The receiver is on loopback: the operator's setting lets the CLI save it (issue 38).
    WEBHOOK_ALLOWED_ADDRESSES: '127.0.0.1/32,::1/128',
  }) as NodeJS.ProcessEnv;

// biome-ignore lint/suspicious/noExplicitAny: a test reads the JSON loosely, asserting what it needs
async function cli(...args: string[]): Promise<any> {
  const { stdout } = await run('./bin/agentauth', ['webhook', ...args, '--json'], { env: env() });
  return JSON.parse(stdout);
}

/** The command's text (not --json), as an operator reads it. */
async function cliText(...args: string[]): Promise<string> {
  return (await run('./bin/agentauth', ['webhook', ...args], { env: env() })).stdout;
}

async function cliFails(...args: string[]): Promise<string> {
  return cliFailsWith({}, ...args);
}

async function cliFailsWith(settings: Record<string, string>, ...args: string[]): Promise<string> {
  try {
    await run('./bin/agentauth', ['webhook', ...args], { env: { ...env(), ...settings } });
  } catch (error) {
    return (error as { stderr: string }).stderr;
  }
  throw new Error('expected the command to fail');
}

describe('agentauth webhook', () => {
  it('creates, lists, shows, changes, disables, enables, rotates, logs, redelivers and deletes', async () => {
    const made = await cli(
      'create',
      '--endpoint',
      receiver.url,
      '--event',
      'agent.created',
      '--description',
      'from the CLI',
    );
    expect(made).toMatchObject({ url: receiver.url, events: ['agent.created'], status: 'enabled' });
    expect(made.secret).toMatch(/^whsec_/);
    receiver.useSecret(made.secret);
    const id = made.id;

    expect((await cli('list')).webhooks.map((w: { id: string }) => w.id)).toContain(id);
    expect(await cli('show', id)).toMatchObject({ id, description: 'from the CLI' });
    expect(await cli('update', id, '--event', 'agent.created', '--event', 'agent.deleted')).toMatchObject({
      events: ['agent.created', 'agent.deleted'],
    });
    expect(await cli('disable', id)).toMatchObject({ status: 'disabled' });
    expect(await cli('enable', id)).toMatchObject({ status: 'enabled', disabled_reason: null });
    const rotated = await cli('rotate-secret', id);
    expect(rotated.secret).not.toBe(made.secret);
    receiver.useSecret(rotated.secret);

    await server.createAgent({ name: 'Seen by the CLI' });
    const [received] = await receiver.until((all) => all.length >= 1);
    expect(received!.verified).toBe(true);
    let log = await cli('deliveries', id);
    for (let i = 0; i < 100 && log.deliveries[0]?.status !== 'delivered'; i++) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      log = await cli('deliveries', id);
    }
    expect(log.deliveries[0]).toMatchObject({ message_id: received!.id, status: 'delivered', last_status_code: 204 });
    // On PostgreSQL the server may have sent it again before the command reads it back.
    expect((await cli('redeliver', id, received!.id)).message_id).toBe(received!.id);
    await receiver.until((all) => all.length >= 2);
    expect(receiver.received[1]!.id).toBe(received!.id);

    expect(await cli('delete', id)).toMatchObject({ id, deleted: true });
    expect(await cliFails('show', id)).toContain('No such webhook.');

    const activity = (await server.ctx.store.activity.list({ limit: 100 }))
      .filter((event) => event.target === id)
      .map((event) => event.action)
      .sort();
    expect(activity).toEqual(
      [
        'webhook.create',
        'webhook.update',
        'webhook.disable',
        'webhook.enable',
        'webhook.rotate_secret',
        'webhook.redeliver',
        'webhook.delete',
      ].sort(),
    );
  });

  it('refuses an http URL, an unknown event, and a member as the admin', async () => {
    expect(await cliFails('create', '--endpoint', 'http://hooks.example.com/', '--event', '*')).toContain(
      'a webhook URL must use https',
    );
    expect(await cliFails('create', '--endpoint', 'https://hooks.example.com/', '--event', 'agent.gone')).toContain(
      'unknown event type',
    );
    expect(await cliFails('list', '--admin-email', 'cli-member@example.com')).toContain(
      'cli-member@example.com is not an active admin',
    );
  });

  it('refuses a loopback receiver when saved without the setting; sends a test event; shows the request sent', async () => {
    // Without WEBHOOK_ALLOWED_ADDRESSES, https://localhost is refused when saved, naming the setting.
    const refused = await cliFailsWith(
      { WEBHOOK_ALLOWED_ADDRESSES: '' },
      'create',
      '--endpoint',
      receiver.url,
      '--event',
      '*',
    );
    expect(refused).toContain(
      'localhost is at 127.0.0.1, which is a loopback, private or other special-use address, which webhooks are not sent to; to allow it, list its network in WEBHOOK_ALLOWED_ADDRESSES (e.g. 127.0.0.1/32)',
    );

    const made = await cli('create', '--endpoint', receiver.url, '--event', 'client.deleted');
    receiver.useSecret(made.secret);
    const before = receiver.received.length;
    const said = await cliText('test', made.id, '--wait', '10');
    expect(said).toMatch(/^msg_[0-9a-f]+ {2}delivered: HTTP 204\n$/);
    await receiver.until((all) => all.length > before);
    const test = receiver.received[before]!;
    expect(test.verified).toBe(true);
    expect(test.payload).toMatchObject({
      type: 'webhook.test',
      data: { webhook: { id: made.id, host: new URL(receiver.url).host }, actor: { type: 'cli' } },
    });

    // The request as sent: its signed headers and its body, never the secret.
    const shown = await cliText('deliveries', made.id, '--request');
    expect(shown).toContain(`webhook-id: ${test.id}`);
    expect(shown).toContain(`webhook-timestamp: ${test.timestamp}`);
    expect(shown).toContain(`webhook-signature: ${test.headers['webhook-signature']}`);
    expect(shown).toContain('content-type: application/json');
    expect(shown).toContain(test.raw);
    expect(shown).not.toContain('whsec_');
  });
});
