import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountWithKey, caller } from '../helpers/api.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

describe('management API: agents', () => {
  it('creates, reads, renames, disables, rotates and deletes an agent with a write key', async () => {
    const { account, call } = await accountWithKey(server);
    const created = await call('POST', '/agents', { name: 'Research assistant' });
    expect(created.status).toBe(201);
    expect(created.headers.get('cache-control')).toBe('no-store');
    expect(created.json.agent_secret).toMatch(/^aas_/);
    expect(created.json.agent).toMatchObject({ name: 'Research assistant', status: 'active', account_id: account.id });
    const id = created.json.agent.id as string;
    expect(created.headers.get('location')).toBe(`agents/${id}`);

    const read = await call('GET', `/agents/${id}`);
    expect(read.status).toBe(200);
    expect(read.json).toEqual(created.json.agent);
    const etag = read.headers.get('etag')!;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{27}"$/);

    const renamed = await call('PATCH', `/agents/${id}`, { name: 'Researcher' }, { 'if-match': etag });
    expect(renamed.status).toBe(200);
    expect(renamed.json.name).toBe('Researcher');
    expect(renamed.headers.get('etag')).not.toBe(etag);

    const stale = await call('PATCH', `/agents/${id}`, { status: 'disabled' }, { 'if-match': etag });
    expect(stale.status).toBe(412);
    expect(stale.json.error).toBe('precondition_failed');
    expect((await server.ctx.store.agents.find(id))?.status).toBe('active');

    const disabled = await call('PATCH', `/agents/${id}`, { status: 'disabled' });
    expect(disabled.json.status).toBe('disabled');

    const rotated = await call('POST', `/agents/${id}/rotate-secret`, { grace_seconds: 60 });
    expect(rotated.status).toBe(200);
    expect(rotated.json.agent_secret).toMatch(/^aas_/);
    expect(rotated.json.agent.previous_secret_expires_at).not.toBeNull();

    const deleted = await call('DELETE', `/agents/${id}`);
    expect(deleted.status).toBe(200);
    expect(deleted.json).toEqual({ grants: 0, codes: 0, requests: 0 });
    expect(await server.ctx.store.agents.find(id)).toBeUndefined();
    expect((await call('GET', `/agents/${id}`)).status).toBe(404);
  });

  it('answers a retried creation with the first answer, and refuses a key reused for another body', async () => {
    const { call } = await accountWithKey(server);
    const first = await call('POST', '/agents', { name: 'Once' }, { 'idempotency-key': 'k-1' });
    const again = await call('POST', '/agents', { name: 'Once' }, { 'idempotency-key': 'k-1' });
    expect(again.status).toBe(201);
    expect(again.json).toEqual(first.json);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const list = await call('GET', '/agents');
    expect(list.json.data.filter((a: { name: string }) => a.name === 'Once')).toHaveLength(1);
    const other = await call('POST', '/agents', { name: 'Twice' }, { 'idempotency-key': 'k-1' });
    expect(other.status).toBe(422);
    expect(other.json.error).toBe('idempotency_key_reused');
  });

  it('keeps owners apart, read keys from writing, and keys to themselves', async () => {
    const alice = await accountWithKey(server);
    const bob = await accountWithKey(server, { key: { access: 'read' } });
    const made = await alice.call('POST', '/agents', { name: 'Alice’s' });
    const id = made.json.agent.id;
    expect((await bob.call('GET', `/agents/${id}`)).status).toBe(404);
    expect((await bob.call('GET', '/agents')).json.data).toEqual([]);
    const refused = await bob.call('POST', '/agents', { name: 'Nope' });
    expect(refused.status).toBe(403);
    expect(refused.json.error).toBe('insufficient_scope');
    expect(refused.headers.get('www-authenticate')).toContain('scope="write"');
    const admin = await accountWithKey(server, { role: 'admin', key: { reach: 'all' } });
    expect((await admin.call('GET', `/agents/${id}`)).status).toBe(200);
    const adminOwn = await accountWithKey(server, { role: 'admin' });
    expect((await adminOwn.call('GET', `/agents/${id}`)).status).toBe(404);
  });

  it('refuses a missing, unknown or revoked key alike, and records every call', async () => {
    const none = await caller(server, null)('GET', '/agents');
    expect(none.status).toBe(401);
    expect(none.json.error).toBe('invalid_token');
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer error="invalid_token"/);
    const unknown = await caller(server, 'aak_not-a-key')('GET', '/agents');
    expect(unknown.status).toBe(401);
    const { key, call, account } = await accountWithKey(server);
    expect((await call('GET', '/agents')).status).toBe(200);
    expect((await call('POST', `/api-keys/${key.id}/revoke`)).status).toBe(200);
    const revoked = await call('GET', '/agents');
    expect(revoked.status).toBe(401);
    expect(revoked.json).toEqual(unknown.json);
    const events = await server.ctx.store.activity.list({ limit: 50 });
    const mine = events.filter((e) => e.actor_id === account.id).map((e) => e.action);
    expect(mine.sort()).toEqual(['api.listAgents', 'api_key.revoke']);
  });

  it('serves an OpenAPI 3.1 document without a key', async () => {
    const doc = await caller(server, null)('GET', '/openapi.json');
    expect(doc.status).toBe(200);
    expect(doc.json.openapi).toBe('3.1.0');
    expect(Object.keys(doc.json.paths)).toContain('/agents/{id}');
    expect(doc.json.components.schemas.Agent).toBeDefined();
  });
});
