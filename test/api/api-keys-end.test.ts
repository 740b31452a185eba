/**
 * What ends an account's access ends its API keys for good (issue 35, low finding 6;
 * docs/design.md §15): disabling the account revokes them, so enabling it again revives none;
 * taking the admin role revokes its keys that reach all accounts, so giving it back revives none.
 * Through the API and the console, on both engines.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operator } from '../../src/management/actor.ts';
import { createApiKey } from '../../src/management/api-keys.ts';
import { accountWithKey } from '../helpers/api.ts';
import { createPasswordAccount, signIn } from '../helpers/console.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let admin: Awaited<ReturnType<typeof accountWithKey>>;
beforeAll(async () => {
  server = await startTestServer();
  admin = await accountWithKey(server, { role: 'admin', key: { reach: 'all' } });
});
afterAll(() => server.close());

const refusedAsUnknown = (answer: { status: number; json: { error?: string } }) => {
  expect(answer.status).toBe(401);
  expect(answer.json.error).toBe('invalid_token');
};

describe('an account disabled and enabled again', () => {
  it('through the API: its key made before the disable answers 401 for good', async () => {
    const member = await accountWithKey(server);
    expect((await member.call('GET', '/agents')).status).toBe(200);
    expect((await admin.call('PATCH', `/accounts/${member.account.id}`, { status: 'disabled' })).status).toBe(200);
    refusedAsUnknown(await member.call('GET', '/agents'));
    expect((await admin.call('PATCH', `/accounts/${member.account.id}`, { status: 'active' })).json.status).toBe(
      'active',
    );
    refusedAsUnknown(await member.call('GET', '/agents'));
    expect((await admin.call('GET', `/api-keys/${member.key.id}`)).json.revoked_at).not.toBeNull();
  });

  it('through the console: the same', async () => {
    const member = await accountWithKey(server);
    const person = await signIn(server.baseUrl, (await createPasswordAccount(server.ctx, { role: 'admin' })).email);
    await person.get('/console/admin');
    expect((await person.post(`/console/admin/accounts/${member.account.id}/disable`)).status).toBe(303);
    await person.get('/console/admin');
    expect((await person.post(`/console/admin/accounts/${member.account.id}/enable`)).status).toBe(303);
    expect((await server.ctx.store.accounts.find(member.account.id))?.status).toBe('active');
    refusedAsUnknown(await member.call('GET', '/agents'));
  });
});

describe('an admin demoted and promoted again', () => {
  it('its key that reaches all accounts is revoked; its own-reach key keeps working', async () => {
    const other = await accountWithKey(server, { role: 'admin', key: { reach: 'all' } });
    const own = await accountWithKey(server, { email: `own-${Date.now()}@example.com` });
    expect((await other.call('GET', '/accounts')).status).toBe(200);
    // A second key of the same admin, reaching only its own records.
    const ownKeyOfOther = await createApiKey(server.ctx, operator(), {
      accountEmail: other.account.email,
      name: 'own reach',
      access: 'read',
      reach: 'own',
    });
    expect((await admin.call('PATCH', `/accounts/${other.account.id}`, { role: 'member' })).status).toBe(200);
    expect((await admin.call('PATCH', `/accounts/${other.account.id}`, { role: 'admin' })).status).toBe(200);
    refusedAsUnknown(await other.call('GET', '/accounts'));
    const stillOwn = await fetch(`${server.baseUrl}/api/admin/v1/agents`, {
      headers: { authorization: `Bearer ${ownKeyOfOther.secret}` },
    });
    expect(stillOwn.status).toBe(200);
    expect((await own.call('GET', '/agents')).status).toBe(200);
  });
});
