/**
 * `agentauth client create|update --action-type FILE-or-JSON --token-delivery poll|ping
 * --notification-endpoint URL` (issue 39, docs/design.md §21): the real command registers a
 * website's action types on the server's database and through a remote server's management
 * API, prints them back, replaces and clears them; a bad type is refused in the rule's words
 * and nothing is made.
 *
 * @engine-independent the command's flags, files and printing; what it stores goes through the
 * operations test/action-types/api.test.ts runs on both engines.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountWithKey } from '../helpers/api.ts';
import { cliOn } from '../helpers/remote-cli.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { DELETION, PAYMENT, PING_ENDPOINT } from './fixtures.ts';

let server: TestServer;
let cli: ReturnType<typeof cliOn>;
let admin: Awaited<ReturnType<typeof accountWithKey>>;

beforeAll(async () => {
  server = await startTestServer({ env: { ACTION_APPROVALS: 'on' } });
  cli = cliOn(server);
  admin = await accountWithKey(server, { role: 'admin', key: { reach: 'all', name: 'ops script' } });
});
afterAll(() => server.close());

describe.each([
  // The command on the database reads the server's configuration, the setting with it.
  ['on the database', () => ({ ...cli.localEnv(), ACTION_APPROVALS: 'on' })],
  ['on a remote server', () => cli.remoteEnv(admin.secret)],
] as const)('agentauth client with action types, %s', (where, env) => {
  it('registers types from a file and inline JSON with ping delivery, prints them, replaces and clears them', async () => {
    const file = join(server.dir, `payment-${where.replace(/ /g, '-')}.json`);
    writeFileSync(file, JSON.stringify(PAYMENT, null, 2));
    const created = await cli.json(env(), [
      'client',
      'create',
      '--name',
      'Pay shop',
      '--redirect-uri',
      'https://pay.example/callback',
      '--action-type',
      file,
      '--action-type',
      JSON.stringify(DELETION),
      '--token-delivery',
      'ping',
      '--notification-endpoint',
      PING_ENDPOINT,
    ]);
    expect(created).toMatchObject({
      action_types: [PAYMENT, DELETION],
      backchannel_token_delivery_mode: 'ping',
      backchannel_client_notification_endpoint: PING_ENDPOINT,
    });
    const clientId = created.client_id as string;
    expect(await server.ctx.store.clients.find(clientId)).toMatchObject({ action_types: [PAYMENT, DELETION] });

    const replaced = await cli.agentauth(env(), [
      'client',
      'update',
      clientId,
      '--action-type',
      JSON.stringify([DELETION]),
      '--token-delivery',
      'poll',
    ]);
    expect(replaced.code).toBe(0);
    expect(replaced.stdout).toContain('action types:');
    expect(replaced.stdout).toContain('urn:acme:delete: Delete {count} backups {note}');
    expect(replaced.stdout).toContain('token delivery: poll');
    expect(await server.ctx.store.clients.find(clientId)).toMatchObject({
      action_types: [DELETION],
      backchannel_token_delivery_mode: 'poll',
      backchannel_client_notification_endpoint: null,
    });

    const cleared = await cli.json(env(), [
      'client',
      'update',
      clientId,
      '--action-type',
      '[]',
      '--token-delivery',
      'none',
    ]);
    expect(cleared).not.toHaveProperty('action_types');
    expect(await server.ctx.store.clients.find(clientId)).toMatchObject({
      action_types: [],
      backchannel_token_delivery_mode: null,
    });
  });

  it('refuses a bad type in the rule’s words, and a file it cannot read; nothing is made', async () => {
    const before = (await server.ctx.store.clients.list()).length;
    const undeclared = await cli.refusal(env(), [
      'client',
      'create',
      '--name',
      'Pay shop',
      '--redirect-uri',
      'https://pay.example/callback',
      '--action-type',
      JSON.stringify({ ...PAYMENT, description: 'Pay {amount} to {iban}' }),
    ]);
    expect(undeclared).toContain('action_types[0].description names {iban}, which is not one of its fields');
    const missing = await cli.refusal(env(), [
      'client',
      'create',
      '--name',
      'Pay shop',
      '--redirect-uri',
      'https://pay.example/callback',
      '--action-type',
      join(server.dir, 'no-such-type.json'),
    ]);
    expect(missing).toContain('cannot read the action type file');
    expect((await server.ctx.store.clients.list()).length).toBe(before);
  });
});
