import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../src/domain/accounts.ts';
import { accountWithKey } from '../helpers/api.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const adminKey = () => accountWithKey(server, { role: 'admin', key: { reach: 'all' } });
const unique = (name: string) => `${name}-${Math.random().toString(36).slice(2, 8)}@example.com`;

/** An account made beside the server (the API makes none: see the first test). */
const made = (email: string, role: 'admin' | 'member' = 'member') =>
  createAccount(server.ctx, { email, role, name: undefined });

describe('management API: accounts', () => {
  it('makes no account and no setup link with any key, even an admin’s all-reaching write key: nothing made', async () => {
    const { call, account: admin } = await adminKey();
    const target = await made(unique('Lost'));
    const linksBefore = await server.ctx.store.links.listOutstanding(server.clock());
    const email = unique('Ada');
    // No such operations: an account comes with a setup link, a way in that would outlive the key.
    const created = await call('POST', '/accounts', { email, name: 'Ada', role: 'admin' });
    expect(created.status).toBe(404);
    expect(created.json.error).toBe('not_found');
    expect(await server.ctx.store.accounts.findByEmail(email.toLowerCase())).toBeUndefined();
    for (const id of [target.id, admin.id]) {
      const link = await call('POST', `/accounts/${id}/setup-link`);
      expect(link.status).toBe(404);
      expect(link.text).not.toContain('/console/setup/');
    }
    expect(await server.ctx.store.links.listOutstanding(server.clock())).toEqual(linksBefore);
    const acts = (await server.ctx.store.activity.list({ limit: 50 })).map((event) => event.action);
    expect(acts).not.toContain('admin.create_account');
    expect(acts).not.toContain('admin.setup_link');
    const document = (await call('GET', '/openapi.json')).json;
    expect(document.paths['/accounts'].post).toBeUndefined();
    expect(document.paths['/accounts/{id}/setup-link']).toBeUndefined();
  });

  it('finds an account by its email, whatever its case, and lists accounts in pages', async () => {
    const { call } = await adminKey();
    const email = unique('Grace');
    const created = await made(email);
    const found = await call('GET', `/accounts?email=${encodeURIComponent(email.toUpperCase())}`);
    expect(found.status).toBe(200);
    expect(found.json.data.map((a: { id: string }) => a.id)).toEqual([created.id]);
    expect(found.json.next_cursor).toBeNull();
    const none = await call('GET', `/accounts?email=${encodeURIComponent(unique('nobody'))}`);
    expect(none.json).toEqual({ data: [], next_cursor: null });
    const bad = await call('GET', '/accounts?email=nope');
    expect(bad.status).toBe(400);

    for (let i = 0; i < 4; i++) await made(unique(`page${i}`));
    const everyone = (await server.ctx.store.accounts.list()).map((a) => a.id);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await call('GET', `/accounts?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.status).toBe(200);
      seen.push(...page.json.data.map((a: { id: string }) => a.id));
      cursor = page.json.next_cursor;
    } while (cursor);
    expect(seen).toEqual(everyone);
  });

  it('renames, demotes, disables and enables an account, refusing a stale If-Match', async () => {
    const { call } = await adminKey();
    const created = await made(unique('Lin'), 'admin');
    const id = created.id;
    const read = await call('GET', `/accounts/${id}`);
    expect(read.status).toBe(200);
    expect(read.json).toMatchObject({ id, email: created.email, role: 'admin', status: 'active' });
    const etag = read.headers.get('etag')!;

    const changed = await call('PATCH', `/accounts/${id}`, { name: 'Lin', role: 'member' }, { 'if-match': etag });
    expect(changed.status).toBe(200);
    expect(changed.json).toMatchObject({ name: 'Lin', role: 'member' });
    expect(await server.ctx.store.accounts.find(id)).toMatchObject({ name: 'Lin', role: 'member' });

    const stale = await call('PATCH', `/accounts/${id}`, { status: 'disabled' }, { 'if-match': etag });
    expect(stale.status).toBe(412);
    expect((await server.ctx.store.accounts.find(id))?.status).toBe('active');

    const disabled = await call('PATCH', `/accounts/${id}`, { status: 'disabled' });
    expect(disabled.json.status).toBe('disabled');
    expect((await server.ctx.store.accounts.find(id))?.status).toBe('disabled');
    expect((await call('PATCH', `/accounts/${id}`, { status: 'active' })).json.status).toBe('active');

    const tooLong = await call('PATCH', `/accounts/${id}`, { name: 'x'.repeat(201), role: 'admin' });
    expect(tooLong.status).toBe(400);
    expect((await server.ctx.store.accounts.find(id))?.role).toBe('member');
    expect((await call('PATCH', `/accounts/${id}`, {})).status).toBe(400);
    expect((await call('GET', '/accounts/acc_nobody')).status).toBe(404);
    expect((await call('PATCH', '/accounts/acc_nobody', { name: 'x' })).status).toBe(404);
  });

  it('keeps an administrator: no key takes the admin role from its own account or disables it', async () => {
    const { call, account } = await adminKey();
    const demote = await call('PATCH', `/accounts/${account.id}`, { role: 'member' });
    expect(demote.status).toBe(403);
    expect(demote.json.error).toBe('access_denied');
    const disable = await call('PATCH', `/accounts/${account.id}`, { status: 'disabled' });
    expect(disable.status).toBe(403);
    expect(await server.ctx.store.accounts.find(account.id)).toMatchObject({ role: 'admin', status: 'active' });
  });
});
