import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerClient } from '../../src/domain/clients.ts';
import { obtainTokens, setupParty } from '../helpers/flow.ts';
import { accountWithKey } from '../helpers/api.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

describe('management API: clients', () => {
  it('registers, reads, changes, disables, rotates and deletes a client with a write key', async () => {
    const { account, call } = await accountWithKey(server);
    const created = await call('POST', '/clients', {
      name: 'Shop',
      redirect_uris: ['https://shop.example/callback'],
      confirmation: 'manual',
    });
    expect(created.status).toBe(201);
    expect(created.headers.get('cache-control')).toBe('no-store');
    expect(created.json.client_secret).toMatch(/^cls_/);
    expect(created.json.client).toMatchObject({
      name: 'Shop',
      status: 'active',
      type: 'confidential',
      confirmation: 'manual',
      source: 'manual',
      redirect_uris: ['https://shop.example/callback'],
      resources: [],
      account_id: account.id,
    });
    const id = created.json.client.id as string;
    expect(created.headers.get('location')).toBe(`clients/${id}`);
    const stored = await server.ctx.store.clients.find(id);
    expect(stored).toMatchObject({ name: 'Shop', account_id: account.id, approval: 'manual' });
    expect(server.ctx.secrets.box.open(stored!.secret_sealed)).toBe(created.json.client_secret);

    const read = await call('GET', `/clients/${id}`);
    expect(read.status).toBe(200);
    expect(read.json).toEqual(created.json.client);
    const etag = read.headers.get('etag')!;

    const changed = await call(
      'PATCH',
      `/clients/${id}`,
      { name: 'Shop 2', redirect_uris: ['https://shop.example/cb2'], confirmation: 'auto' },
      { 'if-match': etag },
    );
    expect(changed.status).toBe(200);
    expect(changed.json).toMatchObject({
      name: 'Shop 2',
      redirect_uris: ['https://shop.example/cb2'],
      confirmation: 'auto',
    });
    expect(changed.headers.get('etag')).not.toBe(etag);
    expect(await server.ctx.store.clients.find(id)).toMatchObject({
      name: 'Shop 2',
      redirect_uris: ['https://shop.example/cb2'],
    });

    const stale = await call('PATCH', `/clients/${id}`, { status: 'inactive' }, { 'if-match': etag });
    expect(stale.status).toBe(412);
    expect(stale.json.error).toBe('precondition_failed');
    expect((await server.ctx.store.clients.find(id))?.status).toBe('active');
    expect((await call('DELETE', `/clients/${id}`, undefined, { 'if-match': etag })).status).toBe(412);

    const disabled = await call('PATCH', `/clients/${id}`, { status: 'inactive' });
    expect(disabled.json.status).toBe('inactive');
    expect((await server.ctx.store.clients.find(id))?.status).toBe('inactive');
    expect((await call('PATCH', `/clients/${id}`, { status: 'active' })).json.status).toBe('active');

    const rotated = await call('POST', `/clients/${id}/rotate-secret`, { grace_seconds: 60 });
    expect(rotated.status).toBe(200);
    expect(rotated.headers.get('cache-control')).toBe('no-store');
    expect(rotated.json.client_secret).not.toBe(created.json.client_secret);
    expect(rotated.json.client.previous_secret_expires_at).not.toBeNull();
    const after = await server.ctx.store.clients.find(id);
    expect(server.ctx.secrets.box.open(after!.secret_sealed)).toBe(rotated.json.client_secret);

    const deleted = await call('DELETE', `/clients/${id}`);
    expect(deleted.status).toBe(200);
    expect(deleted.json).toEqual({ grants: 0, codes: 0, requests: 0 });
    expect(await server.ctx.store.clients.find(id)).toBeUndefined();
    expect((await call('GET', `/clients/${id}`)).status).toBe(404);
    expect((await call('DELETE', `/clients/${id}`)).status).toBe(404);
  });

  it('registers a resource server without redirect URIs, and changes its resources', async () => {
    const { call } = await accountWithKey(server, { role: 'admin', key: { reach: 'all' } });
    const created = await call('POST', '/clients', { name: 'API', resources: ['https://api.example/'] });
    expect(created.status).toBe(201);
    expect(created.json.client.resources).toEqual(['https://api.example/']);
    const id = created.json.client.id;
    const changed = await call('PATCH', `/clients/${id}`, { resources: ['https://api.example/v2'] });
    expect(changed.status).toBe(200);
    expect(changed.json.resources).toEqual(['https://api.example/v2']);
    expect((await server.ctx.store.clients.find(id))?.resources).toEqual(['https://api.example/v2']);
  });

  it('a resource server is an admin’s to register or change: a member’s key and an admin’s own key are refused, nothing changes', async () => {
    const member = await accountWithKey(server);
    const ownReach = await accountWithKey(server, { role: 'admin' });
    for (const [who, { call }] of [
      ['member', member],
      ['admin, own reach', ownReach],
    ] as const) {
      const refused = await call('POST', '/clients', { name: 'Spy', resources: ['https://rs.example/mcp'] });
      expect(refused.status, who).toBe(403);
      expect(refused.json.error, who).toBe('insufficient_scope');
      expect(refused.json.error_description, who).toBe(
        'Only an administrator registers a resource server or changes its resources, with a key that reaches all accounts.',
      );
      // With redirect URIs too: a website may not also make itself a resource server.
      const both = await call('POST', '/clients', {
        name: 'Spy',
        redirect_uris: ['https://spy.example/cb'],
        resources: ['https://rs.example/mcp'],
      });
      expect(both.status, who).toBe(403);
      const site = await call('POST', '/clients', { name: 'Site', redirect_uris: ['https://site.example/cb'] });
      expect(site.status, who).toBe(201);
      const id = site.json.client.id;
      const changed = await call('PATCH', `/clients/${id}`, { resources: ['https://rs.example/mcp'] });
      expect(changed.status, who).toBe(403);
      expect((await server.ctx.store.clients.find(id))?.resources, who).toEqual([]);
      // Sending the resources it already has (none) changes nothing and is no resource decision.
      expect((await call('PATCH', `/clients/${id}`, { name: 'Site 2', resources: [] })).status, who).toBe(200);
    }
    // What the refusal protects: the tokens of a resource the operator vouched for, which only
    // its own resource server may introspect.
    const resource = 'https://vouched.example/mcp';
    await registerClient(server.ctx, { name: 'Vouched MCP', redirectUris: [], resources: [resource] });
    const party = await setupParty(server);
    await obtainTokens(server, party, { resource });
    const spy = await member.call('POST', '/clients', { name: 'Spy', resources: [resource] });
    expect(spy.status).toBe(403);
    expect(spy.json.client_secret).toBeUndefined();
    const members = [member.account.id, ownReach.account.id];
    const resourceServers = (await server.ctx.store.clients.list()).filter(
      (client) => client.account_id !== null && members.includes(client.account_id) && client.resources.length > 0,
    );
    expect(resourceServers).toEqual([]);
  });

  it('refuses what the registration rules refuse, with clear 400s', async () => {
    const { call } = await accountWithKey(server);
    const noUris = await call('POST', '/clients', { name: 'Shop' });
    expect(noUris.status).toBe(400);
    expect(noUris.json.error_description).toContain('redirect URI');
    const badUri = await call('POST', '/clients', { name: 'Shop', redirect_uris: ['http://shop.example/cb'] });
    expect(badUri.status).toBe(400);
    expect(badUri.json.error).toBe('invalid_redirect_uri');
    const blank = await call('POST', '/clients', { name: '   ', redirect_uris: ['https://shop.example/cb'] });
    expect(blank.status).toBe(400);
    expect(blank.json.error).toBe('invalid_client_metadata');
    const unknownField = await call('POST', '/clients', {
      name: 'Shop',
      redirect_uris: ['https://shop.example/cb'],
      secret: 'x',
    });
    expect(unknownField.status).toBe(400);
    expect(unknownField.json.error).toBe('invalid_request');
    expect(unknownField.json.error_description).toBe('secret is not a field of this request');
    const publicRefused = await call('POST', '/clients', {
      name: 'App',
      redirect_uris: ['https://app.example/cb'],
      type: 'public',
    });
    expect(publicRefused.status).toBe(400);
    expect(publicRefused.json.error_description).toBe('This server does not let public clients sign in.');
    const made = await call('POST', '/clients', { name: 'Shop', redirect_uris: ['https://shop.example/cb'] });
    const empty = await call('PATCH', `/clients/${made.json.client.id}`, {});
    expect(empty.status).toBe(400);
    expect(empty.json.error_description).toBe('the request must have at least 1 field(s)');
    const badStatus = await call('PATCH', `/clients/${made.json.client.id}`, { status: 'disabled' });
    expect(badStatus.json.error_description).toBe('status must be one of active, inactive');
    const noneLeft = await call('PATCH', `/clients/${made.json.client.id}`, { redirect_uris: [] });
    expect(noneLeft.status).toBe(400);
    expect((await call('GET', '/clients?limit=0')).status).toBe(400);
    expect((await call('GET', '/clients?limit=101')).status).toBe(400);
    const badCursor = await call('GET', '/clients?cursor=nonsense');
    expect(badCursor.status).toBe(400);
    expect(badCursor.json.error_description).toContain('cursor');
    // Cursors made to look like ours, with a sort value or an id no list gives, never reach the database.
    for (const forged of [
      ['x', 'cli_1'],
      [1, 'a\u0000b'],
      [1.5, 'cli_1'],
      [1, ''],
    ]) {
      const cursor = Buffer.from(JSON.stringify(forged)).toString('base64url');
      for (const list of ['/agents', '/clients', '/grants', '/sign-ins']) {
        const answer = await call('GET', `${list}?cursor=${cursor}`);
        expect(answer.status, `${list} ${JSON.stringify(forged)}`).toBe(400);
        expect(answer.json.error_description).toContain('cursor');
      }
    }
  });

  it('answers a retried creation with the first answer and its secret, and refuses a key reused for another body', async () => {
    const { call, account } = await accountWithKey(server);
    const body = { name: 'Once', redirect_uris: ['https://once.example/cb'] };
    const first = await call('POST', '/clients', body, { 'idempotency-key': 'c-1' });
    const again = await call('POST', '/clients', body, { 'idempotency-key': 'c-1' });
    expect(again.status).toBe(201);
    expect(again.json).toEqual(first.json);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(
      (await server.ctx.store.clients.list({ accountId: account.id })).filter((c) => c.name === 'Once'),
    ).toHaveLength(1);
    const other = await call('POST', '/clients', { ...body, name: 'Twice' }, { 'idempotency-key': 'c-1' });
    expect(other.status).toBe(422);
    expect(other.json.error).toBe('idempotency_key_reused');
    // A failed creation leaves its key free for a corrected retry.
    const failed = await call('POST', '/clients', { name: 'Later' }, { 'idempotency-key': 'c-2' });
    expect(failed.status).toBe(400);
    const fixed = await call(
      'POST',
      '/clients',
      { name: 'Later', redirect_uris: ['https://later.example/cb'] },
      { 'idempotency-key': 'c-2' },
    );
    expect(fixed.status).toBe(201);
  });

  it('revokes every grant of a client: its tokens stop working', async () => {
    const { account, call } = await accountWithKey(server);
    const party = {
      ...(await server.createClient({ accountId: account.id })),
      ...(await server.createAgent()),
    };
    const tokens = await obtainTokens(server, party);
    const revoked = await call('POST', `/clients/${party.clientId}/revoke-grants`);
    expect(revoked.status).toBe(200);
    expect(revoked.json.grants).toBe(1);
    const userinfo = await fetch(`${server.baseUrl}/userinfo`, {
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });
    expect(userinfo.status).toBe(401);
    const grants = await call('GET', `/grants?client_id=${party.clientId}`);
    expect(grants.json.data).toHaveLength(1);
    expect(grants.json.data[0].revoked_at).not.toBeNull();
  });

  it('pages through clients without loss or repeat, and lets an admin narrow to one account', async () => {
    const owner = await accountWithKey(server);
    const made: string[] = [];
    for (let i = 0; i < 7; i++) {
      // Several share a second: the id orders those.
      if (i % 3 === 0) server.clock.advance(1);
      const created = await owner.call('POST', '/clients', {
        name: `Site ${i}`,
        redirect_uris: ['https://site.example/cb'],
      });
      made.push(created.json.client.id);
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page = await owner.call('GET', `/clients?limit=3${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.status).toBe(200);
      expect(page.json.data.length).toBeLessThanOrEqual(3);
      seen.push(...page.json.data.map((c: { id: string }) => c.id));
      cursor = page.json.next_cursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen.sort()).toEqual([...made].sort());

    const admin = await accountWithKey(server, { role: 'admin', key: { reach: 'all' } });
    const narrowed = await admin.call('GET', `/clients?account_id=${owner.account.id}&limit=100`);
    expect(narrowed.json.data.map((c: { id: string }) => c.id).sort()).toEqual([...made].sort());
    const all = await admin.call('GET', '/clients?limit=100');
    expect(all.json.data.length).toBeGreaterThan(made.length);

    const forOwner = await admin.call('POST', '/clients', {
      name: 'Made by the admin',
      redirect_uris: ['https://site.example/cb'],
      account_id: owner.account.id,
    });
    expect(forOwner.status).toBe(201);
    expect(forOwner.json.client.account_id).toBe(owner.account.id);
    const unknownOwner = await admin.call('POST', '/clients', {
      name: 'Nobody’s',
      redirect_uris: ['https://site.example/cb'],
      account_id: 'acc_none',
    });
    expect(unknownOwner.status).toBe(404);
  });
});
