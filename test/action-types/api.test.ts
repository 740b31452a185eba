/**
 * A website's action types and token delivery (issue 39, docs/design.md §21) through the
 * management API and dynamic registration (RFC 7591 / 7592 with CIBA's client metadata): they
 * are registered, read back, changed and cleared; bad ones are refused in words and store
 * nothing; with ACTION_APPROVALS off every door refuses them naming the setting, and dynamic
 * registration ignores them as metadata it does not understand.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actionTypeNames, parseActionTypes } from '../../src/domain/authorization-details.ts';
import { accountWithKey } from '../helpers/api.ts';
import { postJson } from '../helpers/flow.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { DELETION, PAYMENT, PING_ENDPOINT } from './fixtures.ts';

let on: TestServer;
let off: TestServer;
beforeAll(async () => {
  on = await startTestServer({
    env: { ACTION_APPROVALS: 'on', DYNAMIC_REGISTRATION: 'true', PUBLIC_CLIENTS: 'true' },
  });
  off = await startTestServer({ env: { DYNAMIC_REGISTRATION: 'true' } });
});
afterAll(async () => {
  await on?.close();
  await off?.close();
});

const website = { name: 'Shop', redirect_uris: ['https://shop.example/callback'] };

describe('the management API registers action types', () => {
  it('registers types with ping delivery, reads them back, changes them and clears them', async () => {
    const { call } = await accountWithKey(on);
    const created = await call('POST', '/clients', {
      ...website,
      action_types: [PAYMENT],
      backchannel_token_delivery_mode: 'ping',
      backchannel_client_notification_endpoint: PING_ENDPOINT,
    });
    expect(created.status).toBe(201);
    expect(created.json.client).toMatchObject({
      action_types: [PAYMENT],
      backchannel_token_delivery_mode: 'ping',
      backchannel_client_notification_endpoint: PING_ENDPOINT,
    });
    const id = created.json.client.id as string;
    expect(await on.ctx.store.clients.find(id)).toMatchObject({
      action_types: [PAYMENT],
      backchannel_token_delivery_mode: 'ping',
      backchannel_client_notification_endpoint: PING_ENDPOINT,
    });
    const read = await call('GET', `/clients/${id}`);
    expect(read.json).toEqual(created.json.client);

    // Leaving ping leaves its endpoint with it.
    const changed = await call(
      'PATCH',
      `/clients/${id}`,
      { action_types: [PAYMENT, DELETION], backchannel_token_delivery_mode: 'poll' },
      { 'if-match': read.headers.get('etag')! },
    );
    expect(changed.status).toBe(200);
    expect(changed.json).toMatchObject({
      action_types: [PAYMENT, DELETION],
      backchannel_token_delivery_mode: 'poll',
      backchannel_client_notification_endpoint: null,
    });
    // A name alone leaves the types as they are.
    expect((await call('PATCH', `/clients/${id}`, { name: 'Shop 2' })).json.action_types).toEqual([PAYMENT, DELETION]);

    const cleared = await call('PATCH', `/clients/${id}`, { action_types: [], backchannel_token_delivery_mode: null });
    expect(cleared.json).toMatchObject({ action_types: [], backchannel_token_delivery_mode: null });
    expect(await on.ctx.store.clients.find(id)).toMatchObject({
      action_types: [],
      backchannel_token_delivery_mode: null,
      backchannel_client_notification_endpoint: null,
    });
  });

  it('a website with types and no mode polls; one without either shows none', async () => {
    const { call } = await accountWithKey(on);
    const polling = await call('POST', '/clients', { ...website, action_types: [DELETION] });
    expect(polling.json.client).toMatchObject({ action_types: [DELETION], backchannel_token_delivery_mode: 'poll' });
    const plain = await call('POST', '/clients', website);
    expect(plain.json.client).toMatchObject({
      action_types: [],
      backchannel_token_delivery_mode: null,
      backchannel_client_notification_endpoint: null,
    });
  });

  const type = (overrides: Record<string, unknown>) => ({ ...PAYMENT, ...overrides });
  it.each<[string, Record<string, unknown>, string]>([
    [
      'a description naming a field it does not declare',
      { action_types: [type({ description: 'Pay {amount} to {iban}' })] },
      'action_types[0].description names {iban}, which is not one of its fields',
    ],
    [
      'a field named type',
      { action_types: [type({ fields: { ...PAYMENT.fields, type: { type: 'string' } } })] },
      'may not name "type"',
    ],
    [
      'an amount field that is text',
      { action_types: [type({ amount_field: 'payee' })] },
      'amount_field must name one of its number fields',
    ],
    ['a type twice', { action_types: [PAYMENT, PAYMENT] }, 'action_types name "payment" more than once'],
    ['a lone brace', { action_types: [type({ description: 'Pay {amount} {currency} to {payee} }' })] }, 'lone "}"'],
    [
      'ping without an endpoint',
      { action_types: [PAYMENT], backchannel_token_delivery_mode: 'ping' },
      'Token delivery ping needs a notification endpoint',
    ],
    [
      'an endpoint for a website that polls',
      { action_types: [PAYMENT], backchannel_client_notification_endpoint: PING_ENDPOINT },
      'A notification endpoint is only for token delivery ping',
    ],
    [
      'an endpoint over http',
      {
        backchannel_token_delivery_mode: 'ping',
        backchannel_client_notification_endpoint: 'http://shop.example/ciba',
      },
      'The notification endpoint must use https',
    ],
    [
      'an endpoint with a password',
      {
        backchannel_token_delivery_mode: 'ping',
        backchannel_client_notification_endpoint: 'https://user:pw@shop.example/ciba',
      },
      'may not carry a user name or password',
    ],
    [
      'an endpoint at a loopback address',
      {
        backchannel_token_delivery_mode: 'ping',
        backchannel_client_notification_endpoint: 'https://127.0.0.1:8443/ciba',
      },
      'list its network in WEBHOOK_ALLOWED_ADDRESSES',
    ],
    [
      'an endpoint whose name resolves to loopback',
      { backchannel_token_delivery_mode: 'ping', backchannel_client_notification_endpoint: 'https://localhost/ciba' },
      'localhost is at',
    ],
    [
      'a public client',
      { type: 'public', redirect_uris: ['http://127.0.0.1/callback'], action_types: [PAYMENT] },
      'A public client cannot ask owners to approve actions',
    ],
  ])('refuses %s in words, and makes nothing', async (_case, body, words) => {
    const { account, call } = await accountWithKey(on);
    const answer = await call('POST', '/clients', { ...website, ...body });
    expect(answer.status).toBe(400);
    expect(answer.json.error).toBe('invalid_request');
    expect(answer.json.error_description).toContain(words);
    expect(await on.ctx.store.clients.list({ accountId: account.id })).toEqual([]);
  });

  it('refuses what the schema does not allow (21 types, an unknown member, a field type) with a 400, never a 500', async () => {
    const { call } = await accountWithKey(on);
    for (const action_types of [
      Array.from({ length: 21 }, (_, i) => ({ ...DELETION, type: `t${i}` })),
      [{ ...PAYMENT, label: 'Pay' }],
      [{ ...PAYMENT, fields: { amount: { type: 'money' } } }],
      'payment',
    ]) {
      const answer = await call('POST', '/clients', { ...website, action_types });
      expect(answer.status).toBe(400);
      expect(answer.json.error).toBe('invalid_request');
    }
    const { json } = await call('POST', '/clients', website);
    const changed = await call('PATCH', `/clients/${json.client.id}`, { backchannel_token_delivery_mode: 'push' });
    expect(changed.status).toBe(400);
    expect((await on.ctx.store.clients.find(json.client.id))?.backchannel_token_delivery_mode).toBeNull();
  });
});

describe('whatever a script sends as action types', () => {
  it('is stored as the rules read it, or refused with a 400; never a 500 (property)', async () => {
    const { call } = await accountWithKey(on);
    const name = fc.oneof(
      fc.constantFrom('amount', 'payee', 'type', '__proto__', 'constructor', 'A', 'a_1'),
      fc.string({ maxLength: 34 }),
    );
    const field = fc.oneof(
      { weight: 4, arbitrary: fc.record({ type: fc.constantFrom('string', 'number', 'integer', 'boolean', 'money') }) },
      {
        weight: 1,
        arbitrary: fc.record({ type: fc.constant('number'), required: fc.constantFrom(true, false, 'yes') }),
      },
      { weight: 1, arbitrary: fc.oneof(fc.string(), fc.integer(), fc.constant(null)) },
    );
    const template = fc.oneof(
      fc.constantFrom('Pay {amount} to {payee}', 'Delete {a_1}', 'Pay', '', '{', 'x\u202e{amount}', '<b>{payee}</b>'),
      fc.string({ maxLength: 210 }),
    );
    const type = fc.record(
      {
        type: fc.oneof(fc.constantFrom('payment', 'urn:x:y', 'a b', ''), fc.string({ maxLength: 70 })),
        description: template,
        fields: fc.dictionary(name, field, { maxKeys: 5 }),
        amount_field: fc.constantFrom('amount', 'payee', 7),
        currency_field: fc.constantFrom('payee', 'currency'),
      },
      { requiredKeys: ['type', 'description', 'fields'] },
    );
    await fc.assert(
      fc.asyncProperty(fc.array(type, { maxLength: 3 }), async (types) => {
        const answer = await call('POST', '/clients', { ...website, action_types: types });
        expect([201, 400]).toContain(answer.status);
        if (answer.status === 400) {
          expect(answer.json.error).toBe('invalid_request');
          return;
        }
        const stored = await on.ctx.store.clients.find(answer.json.client.id);
        expect(parseActionTypes(stored!.action_types)).toEqual(stored!.action_types);
        expect(answer.json.client.action_types).toEqual(stored!.action_types);
      }),
      { numRuns: 60 },
    );
  });
});

describe('the names metadata publishes', () => {
  it('are the sorted, distinct names of active websites’ types, at once after a change on this node', async () => {
    const { call } = await accountWithKey(on, { role: 'admin', key: { reach: 'all' } });
    const before = await actionTypeNames(on.ctx);
    const zeta = { ...DELETION, type: 'zeta.delete' };
    const first = await call('POST', '/clients', { ...website, action_types: [zeta, PAYMENT] });
    const second = await call('POST', '/clients', { ...website, action_types: [{ ...PAYMENT, type: 'alpha:pay' }] });
    expect(await actionTypeNames(on.ctx)).toEqual(
      [...new Set([...before, 'alpha:pay', 'payment', 'zeta.delete'])].sort(),
    );
    await call('PATCH', `/clients/${second.json.client.id}`, { status: 'inactive' });
    expect(await actionTypeNames(on.ctx)).not.toContain('alpha:pay');
    await call('DELETE', `/clients/${first.json.client.id}`);
    expect(await actionTypeNames(on.ctx)).not.toContain('zeta.delete');
    expect(await actionTypeNames(off.ctx)).toEqual([]);
  });

  it('are what discovery publishes as authorization_details_types_supported where the setting is on', async () => {
    const { call } = await accountWithKey(on);
    await call('POST', '/clients', { ...website, action_types: [{ ...DELETION, type: 'beta/erase' }] });
    const names = await actionTypeNames(on.ctx);
    expect(names).toContain('beta/erase');
    for (const path of ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server']) {
      const published = (await (await fetch(`${on.baseUrl}${path}`)).json()) as Record<string, unknown>;
      expect(published.authorization_details_types_supported, path).toEqual(names);
      const plain = (await (await fetch(`${off.baseUrl}${path}`)).json()) as Record<string, unknown>;
      expect(plain, path).not.toHaveProperty('authorization_details_types_supported');
    }
  });
});

describe('dynamic registration (RFC 7591) with ACTION_APPROVALS on', () => {
  const metadata = { client_name: 'Self-made', redirect_uris: ['https://self.example/callback'] };

  it('registers and answers a ping mode and endpoint; an update that leaves them out clears them (RFC 7592)', async () => {
    const answer = await postJson(on, '/register', {
      ...metadata,
      backchannel_token_delivery_mode: 'ping',
      backchannel_client_notification_endpoint: PING_ENDPOINT,
    });
    expect(answer.status).toBe(201);
    const registered = (await answer.json()) as Record<string, string>;
    expect(registered).toMatchObject({
      backchannel_token_delivery_mode: 'ping',
      backchannel_client_notification_endpoint: PING_ENDPOINT,
    });
    expect(registered).not.toHaveProperty('authorization_details_types');
    expect(await on.ctx.store.clients.find(registered.client_id!)).toMatchObject({
      source: 'dynamic',
      action_types: [],
      backchannel_token_delivery_mode: 'ping',
    });
    const bearer = { authorization: `Bearer ${registered.registration_access_token}` };
    const read = await fetch(registered.registration_client_uri!, { headers: bearer });
    expect(await read.json()).toMatchObject({ backchannel_token_delivery_mode: 'ping' });
    const updated = await fetch(registered.registration_client_uri!, {
      method: 'PUT',
      headers: { ...bearer, 'content-type': 'application/json' },
      body: JSON.stringify({ ...metadata, client_id: registered.client_id }),
    });
    expect(updated.status).toBe(200);
    const body = (await updated.json()) as Record<string, unknown>;
    expect(body).not.toHaveProperty('backchannel_token_delivery_mode');
    expect(body).not.toHaveProperty('backchannel_client_notification_endpoint');
    expect(await on.ctx.store.clients.find(registered.client_id!)).toMatchObject({
      backchannel_token_delivery_mode: null,
      backchannel_client_notification_endpoint: null,
    });
  });

  it.each<[string, Record<string, unknown>, string]>([
    [
      'authorization_details_types (an owner registers a type’s words)',
      { authorization_details_types: ['payment'] },
      'authorization_details_types cannot be registered here',
    ],
    ['push delivery', { backchannel_token_delivery_mode: 'push' }, 'must be poll or ping (push is not supported)'],
    ['ping without an endpoint', { backchannel_token_delivery_mode: 'ping' }, 'needs a notification endpoint'],
    [
      'an endpoint at a private address',
      { backchannel_token_delivery_mode: 'ping', backchannel_client_notification_endpoint: 'https://10.1.2.3/ciba' },
      'WEBHOOK_ALLOWED_ADDRESSES',
    ],
    ['an endpoint that is not text', { backchannel_client_notification_endpoint: 7 }, 'must be a string'],
  ])('refuses %s: invalid_client_metadata, nothing registered', async (_case, extra, words) => {
    const count = (await on.ctx.store.clients.list()).length;
    const answer = await postJson(on, '/register', { ...metadata, ...extra });
    expect(answer.status).toBe(400);
    const body = (await answer.json()) as { error: string; error_description: string };
    expect(body.error).toBe('invalid_client_metadata');
    expect(body.error_description).toContain(words);
    expect((await on.ctx.store.clients.list()).length).toBe(count);
  });
});

describe('with ACTION_APPROVALS off', () => {
  it('the API refuses types, a mode and an endpoint naming the setting, and changes nothing', async () => {
    const { account, call } = await accountWithKey(off);
    for (const body of [
      { action_types: [PAYMENT] },
      { backchannel_token_delivery_mode: 'poll' },
      { backchannel_token_delivery_mode: 'ping', backchannel_client_notification_endpoint: PING_ENDPOINT },
    ]) {
      const answer = await call('POST', '/clients', { ...website, ...body });
      expect(answer.status).toBe(400);
      expect(answer.json.error).toBe('invalid_request');
      expect(answer.json.error_description).toContain('ACTION_APPROVALS');
    }
    expect(await off.ctx.store.clients.list({ accountId: account.id })).toEqual([]);
    const made = await call('POST', '/clients', { ...website, action_types: [] });
    expect(made.status).toBe(201);
    const refused = await call('PATCH', `/clients/${made.json.client.id}`, { action_types: [DELETION] });
    expect(refused.status).toBe(400);
    expect(refused.json.error_description).toContain('ACTION_APPROVALS');
    expect((await off.ctx.store.clients.find(made.json.client.id))?.action_types).toEqual([]);
  });

  it('a website that registered types while it was on may keep or drop them, not change them', async () => {
    const { call } = await accountWithKey(off);
    const { json } = await call('POST', '/clients', website);
    const id = json.client.id as string;
    await off.ctx.store.clients.update(id, { action_types: [PAYMENT], backchannel_token_delivery_mode: 'poll' });
    const kept = await call('PATCH', `/clients/${id}`, { name: 'Kept', action_types: [PAYMENT] });
    expect(kept.status).toBe(200);
    expect(kept.json.action_types).toEqual([PAYMENT]);
    const changed = await call('PATCH', `/clients/${id}`, { action_types: [DELETION] });
    expect(changed.status).toBe(400);
    const dropped = await call('PATCH', `/clients/${id}`, { action_types: [], backchannel_token_delivery_mode: null });
    expect(dropped.status).toBe(200);
    expect(await off.ctx.store.clients.find(id)).toMatchObject({
      action_types: [],
      backchannel_token_delivery_mode: null,
    });
  });

  it('dynamic registration ignores the CIBA metadata, as metadata it does not understand (RFC 7591 §2)', async () => {
    const plain = { client_name: 'Self-made', redirect_uris: ['https://self.example/callback'] };
    const answer = await postJson(off, '/register', {
      ...plain,
      authorization_details_types: ['payment'],
      backchannel_token_delivery_mode: 'push',
      backchannel_client_notification_endpoint: 'http://127.0.0.1/',
    });
    expect(answer.status).toBe(201);
    const registered = (await answer.json()) as Record<string, string>;
    const without = (await (await postJson(off, '/register', plain)).json()) as Record<string, string>;
    const shape = (body: Record<string, string>) => Object.keys(body).sort();
    expect(shape(registered)).toEqual(shape(without));
    expect(await off.ctx.store.clients.find(registered.client_id!)).toMatchObject({
      action_types: [],
      backchannel_token_delivery_mode: null,
      backchannel_client_notification_endpoint: null,
    });
  });
});
