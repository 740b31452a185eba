import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { digest } from '../../src/crypto.ts';
import { accountWithKey } from '../helpers/api.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const adminKey = () => accountWithKey(server, { role: 'admin', key: { reach: 'all' } });
const unique = (name: string) => `${name}-${Math.random().toString(36).slice(2, 8)}@example.com`;

describe('management API: accounts', () => {
  it('creates an account with a one-time setup link that signs the person in', async () => {
    const { call, account: admin } = await adminKey();
    const email = unique('Ada');
    const created = await call('POST', '/accounts', { email, name: 'Ada', role: 'member' });
    expect(created.status).toBe(201);
    expect(created.headers.get('cache-control')).toBe('no-store');
    expect(created.json.account).toMatchObject({
      email,
      name: 'Ada',
      role: 'member',
      status: 'active',
      email_verified: false,
      has_password: false,
      last_sign_in_at: null,
    });
    const id = created.json.account.id as string;
    expect(created.headers.get('location')).toBe(`accounts/${id}`);
    expect(created.json.setup_link).toMatch(new RegExp(`^${server.baseUrl}/console/setup/`));
    expect(Date.parse(created.json.setup_link_expires_at)).toBeGreaterThan(Date.now());
    expect(await server.ctx.store.accounts.find(id)).toMatchObject({ email, role: 'member' });

    expect((await fetch(created.json.setup_link)).status).toBe(200);
    const token = created.json.setup_link.split('/').at(-1);
    expect(await server.ctx.store.links.find(digest(token))).toMatchObject({
      purpose: 'setup',
      account_id: id,
      created_by: admin.id,
      used_at: null,
    });

    const events = await server.ctx.store.activity.list({ limit: 20 });
    expect(events.find((e) => e.action === 'admin.create_account')).toMatchObject({ actor_id: admin.id, target: id });

    const taken = await call('POST', '/accounts', { email: email.toUpperCase() });
    expect(taken.status).toBe(409);
    expect(taken.json.error).toBe('conflict');
    const bad = await call('POST', '/accounts', { email: 'not an email' });
    expect(bad.status).toBe(400);
    expect(bad.json.error).toBe('invalid_request');
    const badRole = await call('POST', '/accounts', { email: unique('x'), role: 'owner' });
    expect(badRole.status).toBe(400);
  });

  it('replays a retried creation with the same link, and makes one account', async () => {
    const { call } = await adminKey();
    const email = unique('once');
    const first = await call('POST', '/accounts', { email }, { 'idempotency-key': 'a-1' });
    const again = await call('POST', '/accounts', { email }, { 'idempotency-key': 'a-1' });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.json).toEqual(first.json);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
  });

  it('finds an account by its email, whatever its case, and lists accounts in pages', async () => {
    const { call } = await adminKey();
    const email = unique('Grace');
    const created = await call('POST', '/accounts', { email });
    const found = await call('GET', `/accounts?email=${encodeURIComponent(email.toUpperCase())}`);
    expect(found.status).toBe(200);
    expect(found.json).toEqual({ data: [created.json.account], next_cursor: null });
    const none = await call('GET', `/accounts?email=${encodeURIComponent(unique('nobody'))}`);
    expect(none.json).toEqual({ data: [], next_cursor: null });
    const bad = await call('GET', '/accounts?email=nope');
    expect(bad.status).toBe(400);

    for (let i = 0; i < 4; i++) await call('POST', '/accounts', { email: unique(`page${i}`) });
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
    const created = await call('POST', '/accounts', { email: unique('Lin'), role: 'admin' });
    const id = created.json.account.id;
    const read = await call('GET', `/accounts/${id}`);
    expect(read.status).toBe(200);
    expect(read.json).toEqual(created.json.account);
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

  it('makes a new setup link for an account', async () => {
    const { call } = await adminKey();
    const created = await call('POST', '/accounts', { email: unique('Lost') });
    const id = created.json.account.id;
    const link = await call('POST', `/accounts/${id}/setup-link`);
    expect(link.status).toBe(200);
    expect(link.headers.get('cache-control')).toBe('no-store');
    expect(link.json.account.id).toBe(id);
    expect(link.json.setup_link).not.toBe(created.json.setup_link);
    expect(link.json.setup_link).toMatch(/\/console\/setup\//);
    expect((await call('POST', '/accounts/acc_nobody/setup-link')).status).toBe(404);
  });
});
