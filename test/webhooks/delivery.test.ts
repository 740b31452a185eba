/**
 * Webhooks end to end (docs/design.md §15): real sign-ins and management actions over HTTP, a
 * real HTTPS receiver on loopback that verifies each delivery with the Standard Webhooks
 * reference library, on both engines.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createAccount, setAccountRole, setAccountStatus, setPassword } from '../../src/domain/accounts.ts';
import {
  deleteClient,
  registerClient,
  rotateClientSecret,
  setClientStatus,
  updateClient,
} from '../../src/domain/clients.ts';
import { revokeGrants } from '../../src/domain/revocation.ts';
import { createWebhook, listDeliveries, redeliver, updateWebhook } from '../../src/domain/webhooks/endpoints.ts';
import { announceExpiredRequests } from '../../src/domain/webhooks/dispatcher.ts';
import type { AccountRecord } from '../../src/store/accounts.ts';
import { accountWithKey } from '../helpers/api.ts';
import { authenticate, continueFlow, setupParty, startFlow } from '../helpers/flow.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { allowLoopback, startWebhookReceiver } from '../helpers/webhook-receiver.ts';

type Receiver = Awaited<ReturnType<typeof startWebhookReceiver>>;

let server: TestServer;
let receiver: Receiver;
let admin: AccountRecord;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  server = await startTestServer({
    webhooks: {
      fetch: { ca: receiver.ca, allowAddress: allowLoopback },
      // Quick retries, so a retry test takes milliseconds (the real schedule: 5 s … 10 h).
      retryDelaysMs: [50, 50, 50],
      pollMs: 50,
      disableAfterFailedMessages: 2,
    },
  });
  admin = await createAccount(server.ctx, { email: 'webhooks@example.com', role: 'admin' });
});
afterAll(async () => {
  await server.close();
  await receiver.close();
});

/** A webhook to the receiver for `events`, its secret given to the receiver. */
async function subscribe(events: string[], url = receiver.url) {
  const { webhook, secret } = await createWebhook(server.ctx, admin, { url, events });
  receiver.useSecret(secret);
  return webhook.webhook.id;
}

/** The endpoint's delivery log once `done` holds for every delivery in it (the log is written after the answer). */
async function settled(
  id: string,
  done: (d: Awaited<ReturnType<typeof listDeliveries>>['data'][number]) => boolean,
  count = 1,
) {
  const deadline = Date.now() + 5000;
  for (;;) {
    const { data } = await listDeliveries(server.ctx, admin, id);
    if ((data.length >= count && data.every(done)) || Date.now() > deadline) return data;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Values of every kind of credential, and the names of fields that would hold one. */
const SECRET_VALUES = /aas_|cls_|cod_|rft_|aak_|whsec_|\$argon2/;
const SECRET_FIELDS = /secret|password|digest|token|code|state|nonce|hash/;

/** No credential in a payload: not as a value, not as a field. */
function expectNoSecret(raw: string) {
  expect(raw).not.toMatch(SECRET_VALUES);
  const fields: string[] = [];
  JSON.parse(raw, (key, value) => {
    fields.push(key);
    return value;
  });
  expect(fields.filter((field) => SECRET_FIELDS.test(field) && field !== 'last_status_code')).toEqual([]);
}

describe('webhooks', () => {
  let ids: string[] = [];
  beforeEach(async () => {
    // One endpoint at a time: each test subscribes afresh.
    for (const id of ids) await server.ctx.store.webhooks.delete(id);
    ids = [];
    receiver.answer(204);
    receiver.received.length = 0;
  });

  it('a sign-in reaches the receiver, signed and verified, within a second', async () => {
    ids.push(await subscribe(['agent.sign_in.succeeded']));
    const party = await setupParty(server);
    const started = await startFlow(server, party);
    const signedInAt = Date.now();
    expect((await authenticate(server, party, started.requestId, 'claude-test')).status).toBe(200);
    const [delivery] = await receiver.until((all) => all.length >= 1);
    expect(delivery!.at - signedInAt).toBeLessThan(1000);
    expect(delivery!.verified).toBe(true);
    expect(delivery!.headers['content-type']).toBe('application/json');
    expect(delivery!.headers['user-agent']).toBe('agentauth-webhooks');
    expect(delivery!.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(delivery!.id).toMatch(/^msg_\d{16}[0-9a-f]{16}$/);
    expect(delivery!.payload).toMatchObject({
      type: 'agent.sign_in.succeeded',
      data: {
        request: { id: started.requestId, redirect_host: new URL(party.redirectUri).host },
        agent: { id: party.agentId },
        client: { id: party.clientId, name: 'Test App' },
        model: 'claude-test',
        outcome: 'authenticated',
      },
    });
    expect(Date.parse(delivery!.payload.timestamp)).toBeGreaterThan(0);
    expectNoSecret(delivery!.raw);
    // The log records it as delivered, with the receiver's answer.
    const data = await settled(ids[0]!, (d) => d.delivery.status === 'delivered');
    expect(data[0]).toMatchObject({
      delivery: { message_id: delivery!.id, status: 'delivered', attempts: 1, last_status_code: 204 },
      attempts: [{ attempt: 1, status_code: 204, error: null }],
    });
  });

  it('announces failed sign-ins and cancelled requests, with no secret in them', async () => {
    ids.push(await subscribe(['agent.sign_in.failed', 'authorization_request.cancelled']));
    const party = await setupParty(server);
    const started = await startFlow(server, party);
    const wrong = { ...party, agentSecret: 'aas_wrong' };
    expect((await authenticate(server, wrong, started.requestId)).status).toBe(401);
    const cancelled = await continueFlow(server, started, { action: 'cancel' });
    expect(cancelled.status).toBe(302);
    const all = await receiver.until((r) => r.length >= 2);
    const types = all.map((r) => r.payload.type).sort();
    expect(types).toEqual(['agent.sign_in.failed', 'authorization_request.cancelled']);
    const failed = all.find((r) => r.payload.type === 'agent.sign_in.failed')!;
    expect(failed.payload.data).toMatchObject({ agent: { id: party.agentId }, outcome: 'invalid_credentials' });
    for (const r of all) {
      expect(r.verified).toBe(true);
      expectNoSecret(r.raw);
    }
  });

  it('announces a request that expired while waiting, exactly once', async () => {
    ids.push(await subscribe(['authorization_request.expired']));
    const party = await setupParty(server);
    const started = await startFlow(server, party);
    server.clock.advance(3600);
    try {
      // This call, or the dispatcher's own sweep racing it, announces it; a second call finds nothing.
      await announceExpiredRequests(server.ctx);
      expect((await announceExpiredRequests(server.ctx)).announced).toBe(0);
    } finally {
      server.clock.advance(-3600);
    }
    const all = await receiver.until((r) => r.some((x) => x.payload.data.request.id === started.requestId));
    const mine = all.filter((r) => r.payload.data.request.id === started.requestId);
    expect(mine).toHaveLength(1);
    expect(mine[0]!.payload).toMatchObject({
      type: 'authorization_request.expired',
      data: { request: { status_before: 'pending' }, client: { id: party.clientId }, outcome: 'request_expired' },
    });
  });

  it('announces an expiry only to the endpoints that existed when the request expired', async () => {
    const older = await subscribe(['authorization_request.expired']);
    ids.push(older);
    const party = await setupParty(server);
    const started = await startFlow(server, party);
    server.clock.advance(3600);
    let newer: string;
    try {
      // Made an hour after the request expired: a backlog of the past is not its to hear.
      newer = await subscribe(['*']);
      ids.push(newer);
      await announceExpiredRequests(server.ctx);
    } finally {
      server.clock.advance(-3600);
    }
    const expiryOf = (d: Awaited<ReturnType<typeof listDeliveries>>['data'][number]) => {
      const payload = JSON.parse(d.delivery.payload);
      return payload.type === 'authorization_request.expired' && payload.data.request.id === started.requestId;
    };
    const heard = (await settled(older, (d) => d.delivery.status === 'delivered')).filter(expiryOf);
    expect(heard).toHaveLength(1);
    expect((await listDeliveries(server.ctx, admin, newer)).data.filter(expiryOf)).toEqual([]);
  });

  it('does not sweep the hour before the first endpoint that subscribes to expiries', async () => {
    const party = await setupParty(server);
    await startFlow(server, party);
    server.clock.advance(3600);
    let id: string;
    try {
      id = await subscribe(['authorization_request.expired']);
      ids.push(id);
      // Nobody was listening when it expired: nothing to announce.
      expect(await announceExpiredRequests(server.ctx)).toMatchObject({ announced: 0, complete: true });
    } finally {
      server.clock.advance(-3600);
    }
    expect((await listDeliveries(server.ctx, admin, id)).data).toEqual([]);
  });

  it('announces a flood of expiries a share per sweep, soonest first, and the rest in the next', async () => {
    const id = await subscribe(['authorization_request.expired']);
    ids.push(id);
    const party = await setupParty(server);
    const requests: string[] = [];
    // Each expires a second after the one before, and after every request of the tests before.
    for (let i = 0; i < 3; i++) {
      server.clock.advance(1);
      requests.push((await startFlow(server, party)).requestId);
    }
    const firstExpiry = (await server.ctx.store.requests.find(requests[0]!))!.expires_at;
    const expiredIds = async () =>
      (await listDeliveries(server.ctx, admin, id)).data
        .map((d) => JSON.parse(d.delivery.payload).data.request.id as string)
        .sort();
    server.clock.advance(3600);
    try {
      const first = await announceExpiredRequests(server.ctx, firstExpiry - 1, 2);
      expect(first).toMatchObject({ announced: 2, complete: false, through: firstExpiry + 1 });
      expect(await expiredIds()).toEqual(requests.slice(0, 2).sort());
      // Read again from the same point, what it announced is skipped (marked): the rest, and done.
      const rest = await announceExpiredRequests(server.ctx, firstExpiry - 1, 2);
      expect(rest).toMatchObject({ announced: 1, complete: true, through: server.ctx.clock() });
      expect(await expiredIds()).toEqual([...requests].sort());
    } finally {
      server.clock.advance(-3603);
    }
  });

  it('announces management actions from the API, with ids in creation order', async () => {
    ids.push(await subscribe(['*']));
    const { call } = await accountWithKey(server, { role: 'admin', key: { reach: 'all' } });
    receiver.received.length = 0;
    const made = await call('POST', '/agents', { name: 'Hooked agent' });
    expect(made.status).toBe(201);
    const id = made.json.agent.id;
    expect((await call('PATCH', `/agents/${id}`, { name: 'Renamed' })).status).toBe(200);
    expect((await call('PATCH', `/agents/${id}`, { status: 'disabled' })).status).toBe(200);
    expect((await call('POST', `/agents/${id}/rotate-secret`, {})).status).toBe(200);
    expect((await call('POST', `/agents/${id}/revoke-grants`)).status).toBe(200);
    expect((await call('DELETE', `/agents/${id}`)).status).toBe(200);
    const agentEvents = (r: typeof receiver.received) => r.filter((x) => x.payload.type.startsWith('agent.'));
    const all = agentEvents(await receiver.until((r) => agentEvents(r).length >= 6));
    const byId = [...all].sort((a, b) => (a.id < b.id ? -1 : 1));
    expect(byId.map((r) => r.payload.type)).toEqual([
      'agent.created',
      'agent.updated',
      'agent.disabled',
      'agent.secret_rotated',
      'agent.grants_revoked',
      'agent.deleted',
    ]);
    expect(byId[1]!.payload.data.agent).toMatchObject({ id, name: 'Renamed' });
    // Who acted: the API key (and its account).
    for (const r of byId)
      expect(r.payload.data.actor).toMatchObject({ type: 'api_key', key_id: expect.stringMatching(/^key_/) });
    for (const r of all) {
      expect(r.verified).toBe(true);
      expectNoSecret(r.raw);
    }
  });

  it("announces websites' and accounts' changes, sign-in methods included, with no secret", async () => {
    ids.push(await subscribe(['*']));
    const { client } = await registerClient(server.ctx, { name: 'Shop', redirectUris: ['https://shop.example/cb'] });
    await updateClient(server.ctx, client.id, { name: 'Shop 2' });
    await setClientStatus(server.ctx, client.id, 'inactive');
    await setClientStatus(server.ctx, client.id, 'active');
    await rotateClientSecret(server.ctx, client.id, 60);
    await revokeGrants(server.ctx, { client_id: client.id });
    await deleteClient(server.ctx, client.id);
    const person = await createAccount(server.ctx, { email: 'events@example.com', role: 'member' });
    await setPassword(server.ctx, person, 'a long enough password 123');
    await setAccountRole(server.ctx, admin, person, 'admin');
    await setAccountStatus(server.ctx, admin, { ...person, role: 'admin' }, 'disabled');
    const expected = [
      'client.created',
      'client.updated',
      'client.disabled',
      'client.enabled',
      'client.secret_rotated',
      'client.grants_revoked',
      'client.deleted',
      'account.created',
      'account.sign_in_method_changed',
      'account.updated',
      'account.disabled',
    ];
    const all = await receiver.until((r) => r.length >= expected.length);
    const byId = [...all].sort((a, b) => (a.id < b.id ? -1 : 1));
    expect(byId.map((r) => r.payload.type)).toEqual(expected);
    expect(byId[0]!.payload.data.client).toMatchObject({ id: client.id, redirect_hosts: ['shop.example'] });
    expect(byId[4]!.payload.data).toMatchObject({ grace_seconds: 60 });
    expect(byId[8]!.payload.data).toMatchObject({ account: { id: person.id }, change: 'password_set' });
    expect(byId[9]!.payload.data).toMatchObject({ changes: ['role'], actor: { id: admin.id } });
    for (const r of all) {
      expect(r.verified).toBe(true);
      expectNoSecret(r.raw);
    }
  });

  it('retries after the receiver fails, then delivers the same message id', async () => {
    ids.push(await subscribe(['client.created']));
    receiver.answer(503);
    await server.createClient({ name: 'Retry Shop' });
    await receiver.until((r) => r.length >= 2);
    receiver.answer(200);
    const all = await receiver.until((r) => r.length >= 3);
    expect(new Set(all.map((r) => r.id)).size).toBe(1);
    const data = await settled(ids[0]!, (d) => d.delivery.status === 'delivered');
    expect(data[0]!.delivery).toMatchObject({ status: 'delivered', last_status_code: 200 });
    expect(data[0]!.attempts.map((a) => a.status_code)).toEqual([503, 503, 200]);
    expect(data[0]!.attempts[0]!.error).toBe('the receiver answered HTTP 503');
  });

  it('gives up after the schedule, and disables an endpoint that keeps failing', async () => {
    ids.push(await subscribe(['client.created']));
    receiver.answer(500);
    await server.createClient({ name: 'Doomed 1' });
    await server.createClient({ name: 'Doomed 2' });
    // Two messages given up on (four attempts each) disable it (disableAfterFailedMessages: 2).
    await receiver.until((r) => r.length >= 8);
    const deadline = Date.now() + 5000;
    let webhook = (await server.ctx.store.webhooks.find(ids[0]!))!.webhook;
    while (webhook.status === 'enabled' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      webhook = (await server.ctx.store.webhooks.find(ids[0]!))!.webhook;
    }
    expect(webhook).toMatchObject({
      status: 'disabled',
      disabled_reason: '2 messages in a row could not be delivered',
    });
    const data = await settled(ids[0]!, (d) => d.delivery.status === 'failed', 2);
    expect(data.map((d) => d.delivery.status)).toEqual(['failed', 'failed']);
    // Enabled again and sent again: delivered, with its old id.
    receiver.answer(204);
    await updateWebhook(server.ctx, admin, ids[0]!, { status: 'enabled' });
    const again = await redeliver(server.ctx, admin, ids[0]!, data[0]!.delivery.message_id);
    const all = await receiver.until((r) => r.length >= 9);
    expect(all.at(-1)!.id).toBe(again.message_id);
  });

  it('refuses at connect a host name that resolves to loopback when loopback is not allowed', async () => {
    const strict = await startTestServer({
      databaseUrl: server.databaseUrl,
      webhooks: { fetch: { ca: receiver.ca }, retryDelaysMs: [], pollMs: 50 },
    });
    try {
      // Only the strict node sends: the other one's dispatcher is paused for this test.
      await server.ctx.webhooks.stop();
      ids.push(await subscribe(['client.created']));
      await server.createClient({ name: 'Loopback' });
      const data = await settled(ids[0]!, (d) => d.delivery.status === 'failed');
      expect(data[0]!.delivery.status).toBe('failed');
      // The admin is told which address was refused, and the setting that would allow it.
      expect(data[0]!.attempts[0]!.error).toBe(
        'localhost is at 127.0.0.1, which is a loopback, private or other special-use address, which webhooks are not sent to; to allow it, list its network in WEBHOOK_ALLOWED_ADDRESSES (e.g. 127.0.0.1/32)',
      );
      expect(receiver.received).toHaveLength(0);
    } finally {
      await strict.close();
      await server.ctx.webhooks.start();
    }
  });
});
