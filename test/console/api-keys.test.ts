/**
 * API keys in the console over real HTTP (issue 23): a key is shown once and works against the
 * management API, only its digest is stored, a member's keys reach their own account only and
 * another account's key looks like none, revocation stops a key, the list shows expiry, last use
 * and status, every post needs its CSRF token, names are escaped, and the activity reads the
 * keys' events and every API call in words.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { apiCallOf } from '../../src/management/history.ts';
import { cspViolations, haveChromium, launchChromium, watchedPage } from '../helpers/browser.ts';
import type { AccountRecord } from '../../src/store/accounts.ts';
import { API, caller } from '../helpers/api.ts';
import {
  type ConsoleSession,
  codeOf,
  createPasswordAccount,
  noticeOf,
  type Page,
  signIn,
  TEST_PASSWORD,
} from '../helpers/console.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let member: AccountRecord;
let memberSession: ConsoleSession;
let admin: AccountRecord;
let adminSession: ConsoleSession;

beforeAll(async () => {
  // The clock moves by months (expiry); console sessions outlast that.
  server = await startTestServer({ env: { CONSOLE_SESSION_IDLE: '31536000', CONSOLE_SESSION_LIFETIME: '31536000' } });
  member = await createPasswordAccount(server.ctx, { email: 'grace@example.org', name: 'Grace Hopper' });
  memberSession = await signIn(server.baseUrl, member.email);
  admin = await createPasswordAccount(server.ctx, { email: 'ada@example.org', role: 'admin' });
  adminSession = await signIn(server.baseUrl, admin.email);
});
afterAll(() => server.close());

/** Creates a key in the console (the list read first for its CSRF token) and returns the page showing it. */
async function createKey(
  as: ConsoleSession,
  form: { name?: string; access?: string; reach?: string; expires_in_days?: string } = {},
) {
  await as.get('/console/api-keys');
  const page = await as.submit('/console/api-keys', {
    name: 'Deploy script',
    access: 'write',
    expires_in_days: '90',
    ...form,
  });
  expect(page.posted.status).toBe(303);
  expect(page.status).toBe(200);
  return { page, secret: codeOf(page, 'api-key'), id: codeOf(page, 'api-key-id') };
}

/** The row of the keys' table naming `id`. */
const rowOf = (page: Page, id: string) => {
  const row = new RegExp(`<tr id="key-${id}">([\\s\\S]*?)</tr>`).exec(page.text)?.[1];
  if (row === undefined) throw new Error(`no row for ${id}`);
  return row;
};

const eventsOf = async (action: string, target: string) =>
  (await server.ctx.store.activity.list({ limit: 500 })).filter(
    (event) => event.action === action && event.target === target,
  );

describe('creating a key', () => {
  it('shows the key once, with its usage; the key works against the API; a reload shows the list', async () => {
    const { page, secret, id } = await createKey(memberSession);
    expect(page.posted.location).toBe(`/console/api-keys/${id}/created`);
    expect(secret).toMatch(/^aak_/);
    expect(noticeOf(page)).toContain('shown only once');
    expect(page.text).toContain('it will not be shown again');
    expect(page.text).toContain('data-copy="api-key"');
    // The page escapes the quotes; the browser shows (and copies) them as typed.
    expect(codeOf(page, 'api-key-usage')).toBe(
      `curl -H &quot;Authorization: Bearer ${secret}&quot; ${server.ctx.config.baseUrl}/api/admin/v1/agents`,
    );
    expect(page.text).toContain('href="/api/admin/v1/openapi.json"');

    const call = caller(server, secret);
    const agents = await call('GET', '/agents');
    expect(agents.status).toBe(200);
    expect(agents.json.data).toEqual([]);
    // A write key of its own account creates its agents.
    expect((await call('POST', '/agents', { name: 'From a script' })).status).toBe(201);

    const again = await memberSession.get(`/console/api-keys/${id}/created`);
    expect(again.status).toBe(303);
    expect(again.location).toBe('/console/api-keys?notice=api_key_shown_once');
    const list = await memberSession.get(again.location!);
    expect(noticeOf(list)).toContain('shown only once');
    expect(list.text).not.toContain(secret);
    const row = rowOf(list, id);
    expect(row).toContain('Deploy script');
    expect(row).toContain(`…${secret.slice(-4)}`);
    expect(row).toContain('Read and write, own account');
    expect(row).toContain('<span class="badge ok">active</span>');
    // The last use: when and from where.
    expect(row).toMatch(/data-label="Last used"><time [^>]+>.*<\/time> <span class="muted">from<\/span> 127\.0\.0\.1/);
    // A member's list has no account column.
    expect(list.text).not.toContain('data-label="Account"');
  });

  it('stores only the digest of the key', async () => {
    const { secret, id } = await createKey(memberSession, { name: 'Digest check', access: 'read' });
    const stored = await server.ctx.store.apiKeys.find(id);
    expect(stored?.digest).toBe(createHash('sha256').update(secret).digest('base64url'));
    expect(stored?.hint).toBe(secret.slice(-4));
    // The row as stored (SELECT *): no column holds the key, or more of it than its last four characters.
    for (const value of Object.values(stored!)) expect(String(value)).not.toContain(secret.slice(4, -4));
    expect((await server.ctx.store.apiKeys.findByDigest(stored!.digest))?.key.id).toBe(id);
  });

  it('records the creation, without the key, as a console event', async () => {
    const { secret, id } = await createKey(memberSession, { name: 'Audited', access: 'read', expires_in_days: '30' });
    const [event] = await eventsOf('api_key.create', id);
    expect(event?.actor_id).toBe(member.id);
    expect(event?.detail).toMatch(/^Audited: read only, own account, until \d{4}-\d{2}-\d{2}$/);
    expect(JSON.stringify(await server.ctx.store.activity.list({ limit: 500 }))).not.toContain(secret);
  });

  it('refuses a form with errors beside the field, keeping what was typed', async () => {
    await memberSession.get('/console/api-keys');
    const blank = await memberSession.post('/console/api-keys', { name: '  ', access: 'read', expires_in_days: '90' });
    expect(blank.status).toBe(400);
    expect(blank.text).toMatch(
      /<p class="field-error" id="field-name-error">a key&#39;s name must be 1 to 100 characters/,
    );
    const odd = await memberSession.post('/console/api-keys', { name: 'Odd', access: 'read', expires_in_days: '7' });
    expect(odd.status).toBe(400);
    expect(odd.text).toContain(
      '<p class="field-error" id="field-expires_in_days-error">Choose an expiry from the list.',
    );
    expect(odd.text).toMatch(/id="field-name"[^>]* value="Odd"/);
    const access = await memberSession.post('/console/api-keys', { name: 'X', access: 'admin', expires_in_days: '90' });
    expect(access.status).toBe(400);
    expect(access.text).toContain('id="field-access-error"');
  });

  it('lets a member keep to their own account: no "all" to choose, and a post of it is refused', async () => {
    const form = await memberSession.get('/console/api-keys');
    expect(form.text).toContain('<option value="own" selected>');
    expect(form.text).not.toContain('<option value="all"');
    const before = (await server.ctx.store.apiKeys.list(member.id)).length;
    const refused = await memberSession.post('/console/api-keys', {
      name: 'Everything',
      access: 'write',
      reach: 'all',
      expires_in_days: '90',
    });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('<p class="field-error" id="field-reach-error">only an admin&#39;s key may reach');
    expect(await server.ctx.store.apiKeys.list(member.id)).toHaveLength(before);
  });

  it('lets an admin make a key that reaches every account', async () => {
    const form = await adminSession.get('/console/api-keys');
    expect(form.text).toContain('<option value="all">');
    const { secret } = await createKey(adminSession, { name: 'Operator', access: 'read', reach: 'all' });
    const accounts = await caller(server, secret)('GET', '/agents');
    expect(accounts.status).toBe(200);
  });
});

describe('who sees and revokes which key', () => {
  it("shows an admin every key with its account; a member neither sees nor revokes another account's key", async () => {
    const { id: memberKey } = await createKey(memberSession, { name: 'Member only' });
    const { id: adminKey, secret: adminSecret } = await createKey(adminSession, { name: 'Admin only' });

    const adminList = await adminSession.get('/console/api-keys');
    expect(rowOf(adminList, memberKey)).toContain(member.email);
    expect(rowOf(adminList, adminKey)).toContain(admin.email);

    const memberList = await memberSession.get('/console/api-keys');
    expect(memberList.text).toContain(`id="key-${memberKey}"`);
    expect(memberList.text).not.toContain(adminKey);

    // Another account's key answers exactly as one that does not exist.
    const foreign = await memberSession.post(`/console/api-keys/${adminKey}/revoke`);
    const missing = await memberSession.post('/console/api-keys/key_nosuchkey/revoke');
    expect(foreign.status).toBe(404);
    expect(missing.status).toBe(404);
    expect(foreign.text.replace(/value="[^"]+"/g, '')).toBe(missing.text.replace(/value="[^"]+"/g, ''));
    expect((await memberSession.get(`/console/api-keys/${adminKey}/created`)).status).toBe(404);
    expect((await server.ctx.store.apiKeys.find(adminKey))?.revoked_at).toBeNull();
    expect((await caller(server, adminSecret)('GET', '/agents')).status).toBe(200);
    // An id no record could have is a 404 too, never a 500.
    expect((await memberSession.post(`/console/api-keys/${'x'.repeat(300)}/revoke`)).status).toBe(404);
    expect((await memberSession.post('/console/api-keys/%00/revoke')).status).toBe(404);
  });

  it("lets an admin revoke someone else's key", async () => {
    const { id, secret } = await createKey(memberSession, { name: 'Revoked by the admin' });
    await adminSession.get('/console/api-keys');
    const revoked = await adminSession.post(`/console/api-keys/${id}/revoke`);
    expect(revoked.status).toBe(303);
    expect((await caller(server, secret)('GET', '/agents')).status).toBe(401);
    const [event] = await eventsOf('api_key.revoke', id);
    expect(event?.actor_id).toBe(admin.id);
  });
});

describe('revoking and expiry', () => {
  it('revoke stops the key at once, with a confirmation first and the Revoke button gone after', async () => {
    const { id, secret } = await createKey(memberSession, { name: 'To revoke' });
    const list = await memberSession.get('/console/api-keys');
    expect(rowOf(list, id)).toMatch(
      new RegExp(
        `<form method="post" action="/console/api-keys/${id}/revoke" class="inline" data-confirm="Revoke the API key To revoke\\?`,
      ),
    );
    const revoked = await memberSession.submit(`/console/api-keys/${id}/revoke`);
    expect(revoked.posted.status).toBe(303);
    expect(revoked.posted.location).toBe('/console/api-keys?notice=api_key_revoked');
    expect(noticeOf(revoked)).toBe('The API key is revoked: calls with it are refused from now on.');
    const row = rowOf(revoked, id);
    expect(row).toContain('<span class="badge off">revoked</span>');
    expect(row).not.toContain('/revoke');
    expect((await server.ctx.store.apiKeys.find(id))?.revoked_at).not.toBeNull();
    const refused = await caller(server, secret)('GET', '/agents');
    expect(refused.status).toBe(401);
    expect(refused.json.error).toBe('invalid_token');
    const [event] = await eventsOf('api_key.revoke', id);
    expect(event).toMatchObject({ actor_id: member.id, detail: 'To revoke', ip: '127.0.0.1' });
  });

  it('shows when a key expires, and an expired key as expired, refused by the API', async () => {
    const { page, id, secret } = await createKey(memberSession, { name: 'Short-lived', expires_in_days: '30' });
    const expires = new Date((server.ctx.clock() + 30 * 86400) * 1000).toISOString();
    expect(page.text).toContain(`<dd id="api-key-expires"><time datetime="${expires}">`);
    const list = await memberSession.get('/console/api-keys');
    expect(rowOf(list, id)).toContain(`data-label="Expires"><time datetime="${expires}">`);

    server.clock.advance(30 * 86400);
    try {
      const later = await memberSession.get('/console/api-keys');
      const row = rowOf(later, id);
      expect(row).toContain('<span class="badge">expired</span>');
      expect(row).not.toContain('/revoke');
      expect((await caller(server, secret)('GET', '/agents')).status).toBe(401);
    } finally {
      server.clock.advance(-30 * 86400);
    }
  });
});

describe('the guards of a form', () => {
  it('refuses a post without its CSRF token, making and revoking nothing', async () => {
    const before = (await server.ctx.store.apiKeys.list(member.id)).length;
    const made = await memberSession.post('/console/api-keys', {
      _csrf: null,
      name: 'Forged',
      access: 'write',
      expires_in_days: '90',
    });
    expect(made.status).toBe(403);
    expect(await server.ctx.store.apiKeys.list(member.id)).toHaveLength(before);
    const { id } = await createKey(memberSession, { name: 'Kept' });
    const revoke = await memberSession.post(`/console/api-keys/${id}/revoke`, { _csrf: 'not-the-token' });
    expect(revoke.status).toBe(403);
    expect((await server.ctx.store.apiKeys.find(id))?.revoked_at).toBeNull();
  });

  it('sends someone not signed in to the sign-in page', async () => {
    const response = await fetch(`${server.baseUrl}/console/api-keys`, { redirect: 'manual' });
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe('/console/sign-in?next=%2Fconsole%2Fapi-keys');
  });

  it('escapes markup in a key name, in the list, on the created page and in the activity', async () => {
    const name = '<img src=x onerror=alert(1)>"&';
    const { page, id } = await createKey(memberSession, { name });
    const escaped = '&lt;img src=x onerror=alert(1)&gt;&quot;&amp;';
    expect(page.text).not.toContain('<img src=x');
    expect(page.text).toContain(escaped);
    const list = await memberSession.get('/console/api-keys');
    expect(list.text).not.toContain('<img src=x');
    expect(rowOf(list, id)).toContain(escaped);
    const activity = await adminSession.get('/console/admin/events?show=console');
    expect(activity.text).not.toContain('<img src=x');
  });
});

describe('the activity', () => {
  it('reads API calls and key events in words', async () => {
    const { id, secret } = await createKey(memberSession, { name: 'Activity key' });
    server.clock.advance(1);
    expect((await caller(server, secret)('GET', '/agents')).status).toBe(200);
    expect((await caller(server, secret)('GET', '/agents/agt_nobody')).status).toBe(404);
    server.clock.advance(1);
    await memberSession.get('/console/api-keys');
    await memberSession.post(`/console/api-keys/${id}/revoke`);
    server.clock.advance(1);

    const page = await adminSession.get('/console/admin/events?show=console');
    const rows = page.text.split(/<tr class="/).slice(1);
    const listed = rows.find((row) => row.includes('<code>listAgents</code>') && row.includes(id))!;
    expect(listed).toContain('API: <code>listAgents</code>');
    expect(listed).toContain(
      `via key <a href="/console/api-keys#key-${id}"><code>${id}</code></a> → <span class="outcome success">200</span> · GET ${API}/agents`,
    );
    expect(listed).toContain(member.email);
    const missing = rows.find((row) => row.includes('<code>getAgent</code>') && row.includes(id))!;
    expect(missing).toContain('<span class="outcome failure">404</span>');
    const created = rows.find((row) => row.includes('api_key.create') && row.includes(id))!;
    expect(created).toContain('API key created <code class="muted">api_key.create</code>');
    expect(created).toContain(`<a href="/console/api-keys#key-${id}"><code>${id}</code></a>`);
    const revoked = rows.find((row) => row.includes('api_key.revoke') && row.includes(id))!;
    expect(revoked).toContain('API key revoked');
  });

  it('reads an API call out of its event, and leaves other events alone', () => {
    expect(apiCallOf({ action: 'api.listAgents', detail: `GET ${API}/agents → 200 (key key_abc)` })).toEqual({
      operation: 'listAgents',
      method: 'GET',
      path: `${API}/agents`,
      status: 200,
      keyId: 'key_abc',
    });
    expect(apiCallOf({ action: 'api.createAgent', detail: 'something else' })).toEqual({
      operation: 'createAgent',
      method: null,
      path: null,
      status: null,
      keyId: null,
    });
    expect(apiCallOf({ action: 'agent.create', detail: 'x' })).toBeNull();
  });
});

describe.skipIf(!haveChromium)('in a real browser (Chromium)', () => {
  it('reaches the page from the overview, copies the key shown once, and revokes it after a confirmation', async () => {
    const owner = await createPasswordAccount(server.ctx, { email: 'browser-keys@example.org' });
    const browser = await launchChromium();
    try {
      const context = await browser.newContext();
      await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.baseUrl });
      const watched = await watchedPage(context);
      const { page } = watched;
      await page.goto(`${server.baseUrl}/console/sign-in`);
      await page.getByLabel('Email', { exact: true }).fill(owner.email);
      await page.getByLabel('Password', { exact: true }).fill(TEST_PASSWORD);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.waitForURL((url) => url.pathname === '/console');

      await page.getByRole('link', { name: 'Keys for scripts that use the management API' }).click();
      await page.waitForURL((url) => url.pathname === '/console/api-keys');
      expect(await page.locator('#no-keys').isVisible()).toBe(true);
      await page.getByLabel('Name').fill('Browser key');
      await page.getByLabel('Access').selectOption('write');
      await page.getByLabel('Expires in').selectOption('30');
      await page.getByRole('button', { name: 'Create API key' }).click();
      await page.waitForURL(/\/console\/api-keys\/key_[^/]+\/created$/);
      const secret = (await page.locator('#api-key').textContent())!;
      expect(secret).toMatch(/^aak_/);
      await page.locator('button.copy[data-copy="api-key"]').click();
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);
      await page.locator('button.copy[data-copy="api-key-usage"]').click();
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(
        `curl -H "Authorization: Bearer ${secret}" ${server.baseUrl}/api/admin/v1/agents`,
      );
      expect((await caller(server, secret)('GET', '/agents')).status).toBe(200);

      // A reload shows the list with a notice, never the key again.
      await page.reload();
      await page.waitForURL(/\/console\/api-keys\?notice=api_key_shown_once$/);
      expect(await page.content()).not.toContain(secret);
      expect(await page.locator('#notice').textContent()).toContain('shown only once');

      // Revoke asks first: dismissed, nothing happens; accepted, the key stops.
      page.once('dialog', (dialog) => void dialog.dismiss());
      await page.getByRole('button', { name: 'Revoke' }).click();
      expect((await caller(server, secret)('GET', '/agents')).status).toBe(200);
      let asked = '';
      page.once('dialog', (dialog) => {
        asked = dialog.message();
        void dialog.accept();
      });
      await page.getByRole('button', { name: 'Revoke' }).click();
      await page.waitForURL(/\?notice=api_key_revoked$/);
      expect(asked).toBe(
        'Revoke the API key Browser key? Scripts using it stop working at once; this cannot be undone.',
      );
      expect(await page.locator('#api-keys .badge').textContent()).toBe('revoked');
      expect((await caller(server, secret)('GET', '/agents')).status).toBe(401);
      expect(cspViolations(watched)).toEqual([]);
      expect(watched.errors).toEqual([]);
    } finally {
      await browser.close();
    }
  });
});
