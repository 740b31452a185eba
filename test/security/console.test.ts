/**
 * The console's defences (issue 10, SECURITY.md "The console"): every state-changing route
 * refuses a post without its CSRF token and a post from another site, whatever route is added
 * later (the routes are read from the server itself); names are escaped wherever shown; a
 * sign-up cannot choose its role; and no password, session cookie, CSRF token, link token or
 * issued secret (an API key included) reaches the logs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOwnedAgent, createOwnedClient } from '../helpers/owned.ts';
import { issueLink } from '../../src/domain/accounts.ts';

import { signAssertion, testKeyPair } from '../helpers/agent-keys.ts';
import { accountWithKey, caller } from '../helpers/api.ts';
import { operator } from '../../src/management/actor.ts';
import { createApiKey } from '../../src/management/api-keys.ts';
import { ConsoleSession, createPasswordAccount, signIn, TEST_PASSWORD } from '../helpers/console.ts';
import { postJson, startFlow } from '../helpers/flow.ts';
import { captureLogs, startTestServer, type TestServer } from '../helpers/server.ts';
import { consolePostPaths, expectNoLeak } from './support.ts';

const logs = captureLogs();
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ env: { LOG_LEVEL: 'trace' }, logStream: logs.stream });
});
afterAll(() => server?.close());

const consolePosts = () => consolePostPaths(server.app);

describe('CSRF and cross-site posts in the console', () => {
  it("finds the console's form routes (the list below is not empty by accident)", () => {
    const posts = consolePosts();
    expect(posts).toContain('/console/sign-in');
    expect(posts).toContain('/console/account/password');
    expect(posts).toContain('/console/account/links/x/revoke');
    expect(posts).toContain('/console/admin/links/x/revoke');
    expect(posts).toContain('/console/api-keys');
    expect(posts).toContain('/console/api-keys/x/revoke');
    // Owners in control (issue 24): the policy and the approvals' decisions.
    expect(posts).toContain('/console/agents/x/policy');
    expect(posts).toContain('/console/agents/x/policy/websites');
    expect(posts).toContain('/console/agents/x/policy/websites/remove');
    expect(posts).toContain('/console/approvals/x/decide');
    expect(posts).toContain('/console/approvals/x/passkey/options');
    expect(posts).toContain('/console/approvals/x/decide/passkey');
    // Webhooks' Send test event (issue 38).
    expect(posts).toContain('/console/admin/webhooks/x/test');
    expect(posts.length).toBeGreaterThan(15);
  });

  it('every POST without the CSRF token is refused with 403, signed in or not, and changes nothing', async () => {
    const account = await createPasswordAccount(server.ctx, { role: 'admin', name: 'Before' });
    const person = await signIn(server.baseUrl, account.email);
    for (const path of consolePosts()) {
      const answer = await person.post(path, {
        _csrf: null,
        name: 'After',
        email: account.email,
        password: TEST_PASSWORD,
      });
      expect(answer.status, path).toBe(403);
      expectNoLeak(answer.text, path);
      const json = await person.postJson(path, { name: 'After' }, { 'x-csrf-token': '' });
      expect(json.status, `${path} (JSON)`).toBe(403);
    }
    expect((await server.ctx.store.accounts.find(account.id))?.name).toBe('Before');
    expect((await person.get('/console')).status).toBe(200);
  });

  it('every POST from another site is refused with 403 even with a valid token', async () => {
    const account = await createPasswordAccount(server.ctx, { role: 'admin', name: 'Before' });
    const person = await signIn(server.baseUrl, account.email);
    await person.get('/console/account');
    for (const path of consolePosts()) {
      const crossSite = await person.post(path, { name: 'After' }, { 'sec-fetch-site': 'cross-site' });
      expect(crossSite.status, path).toBe(403);
      const foreignOrigin = await person.post(
        path,
        { name: 'After' },
        { origin: 'https://evil.example', 'sec-fetch-site': '' },
      );
      expect(foreignOrigin.status, path).toBe(403);
    }
    expect((await server.ctx.store.accounts.find(account.id))?.name).toBe('Before');
  });

  it('a token from another browser does not pass (double submit: token and cookie belong together)', async () => {
    const account = await createPasswordAccount(server.ctx, { name: 'Before' });
    const victim = await signIn(server.baseUrl, account.email);
    const attacker = new ConsoleSession(server.baseUrl);
    await attacker.get('/console/sign-in');
    await victim.get('/console/account');
    const answer = await victim.post('/console/account/name', { name: 'After', _csrf: attacker.csrf });
    expect(answer.status).toBe(403);
    expect((await server.ctx.store.accounts.find(account.id))?.name).toBe('Before');
  });
});

describe('privilege escalation and escaping', () => {
  it('a sign-up cannot choose its role', async () => {
    const { url } = await issueLink(server.ctx, 'invite', { role: 'member' });
    const person = new ConsoleSession(server.baseUrl);
    await person.get(url.replace(server.baseUrl, ''));
    await person.post(url.replace(server.baseUrl, ''), {
      email: 'climber@example.com',
      password: TEST_PASSWORD,
      role: 'admin',
    });
    expect(await server.ctx.store.accounts.findByEmail('climber@example.com')).toMatchObject({ role: 'member' });
    expect((await person.get('/console/admin')).status).toBe(403);
  });

  it('names are escaped in the header, the overview and the account page', async () => {
    const evil = '<script>alert(1)</script>"\'&';
    const account = await createPasswordAccount(server.ctx, { name: evil });
    const person = await signIn(server.baseUrl, account.email);
    for (const path of ['/console', '/console/account']) {
      const page = await person.get(path);
      expect(page.text, path).not.toContain('<script>alert(1)');
      expect(page.text, path).toContain('&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;&amp;');
    }
  });

  it("a website's action type is escaped where its page reads it back and in its edit form (issue 39)", async () => {
    const evil = '<script>alert(1)</script>"\'&';
    const account = await createPasswordAccount(server.ctx);
    const { client } = await createOwnedClient(server.ctx, account, {
      name: 'Pay shop',
      redirect_uris: 'https://pay.example/callback',
    });
    // Stored as a website registered it while ACTION_APPROVALS was on (this server has it off).
    const type = {
      type: 'payment',
      description: `Pay {amount} to {payee} ${evil}`,
      fields: { amount: { type: 'number' as const }, payee: { type: 'string' as const } },
    };
    await server.ctx.store.clients.update(client.id, { action_types: [type] });
    const person = await signIn(server.baseUrl, account.email);
    const page = await person.get(`/console/websites/${client.id}`);
    expect(page.status).toBe(200);
    expect(page.text).not.toContain('<script>alert(1)');
    expect(page.text).toContain('&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;&amp;');
    expect(page.text).toContain('<textarea id="field-action_types"');
  });

  it("an API key's name is escaped where the account page lists the keys", async () => {
    const account = await createPasswordAccount(server.ctx);
    await createApiKey(server.ctx, operator(), {
      accountEmail: account.email,
      name: '<img src=x onerror=alert(3)>',
      access: 'read',
      reach: 'own',
    });
    const page = await (await signIn(server.baseUrl, account.email)).get('/console/account');
    expect(page.text).not.toContain('<img src=x');
    expect(page.text).toContain('&lt;img src=x onerror=alert(3)&gt;');
  });

  it('"sign out everywhere" with the keys, posted without the CSRF token or from another site, revokes nothing', async () => {
    const account = await createPasswordAccount(server.ctx);
    const { secret } = await createApiKey(server.ctx, operator(), {
      accountEmail: account.email,
      name: 'kept',
      access: 'read',
      reach: 'own',
    });
    const person = await signIn(server.baseUrl, account.email);
    await person.get('/console/account');
    const forged = await person.post('/console/account/sessions/end-all', { _csrf: null, api_keys: 'revoke' });
    expect(forged.status).toBe(403);
    const crossSite = await person.post(
      '/console/account/sessions/end-all',
      { api_keys: 'revoke' },
      { 'sec-fetch-site': 'cross-site', origin: 'https://evil.example' },
    );
    expect(crossSite.status).toBe(403);
    expect((await caller(server, secret)('GET', '/agents')).status).toBe(200);
    expect((await person.get('/console/account')).status).toBe(200);
  });
});

describe('webhooks: what an admin types and what a receiver is sent', () => {
  it("a webhook's description is escaped in the test event's payload shown on its page", async () => {
    const account = await createPasswordAccount(server.ctx, { role: 'admin' });
    const person = await signIn(server.baseUrl, account.email);
    await person.get('/console/admin/webhooks');
    const made = await person.submit('/console/admin/webhooks', {
      url: 'https://hooks.example.com/escaped',
      description: '<img src=x onerror=alert(1)>',
      all_events: 'on',
    });
    const hookId = /whk_[\w-]+/.exec(made.text)![0];
    const page = await person.submit(`/console/admin/webhooks/${hookId}/test`);
    expect(page.text).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(page.text).not.toContain('<img src=x');
  });

  it('SSRF: a receiver whose name resolves to loopback is refused when saved, by the API and the console, naming the setting', async () => {
    const { call: api } = await accountWithKey(server, { role: 'admin', key: { reach: 'all' } });
    const account = await createPasswordAccount(server.ctx, { role: 'admin' });
    const before = (await server.ctx.store.webhooks.list()).length;
    const refused = await api('POST', '/webhooks', { url: 'https://localhost:8443/hooks', events: ['*'] });
    expect(refused.status).toBe(400);
    expect(refused.json).toMatchObject({
      error: 'invalid_request',
      error_description: expect.stringContaining(
        'localhost is at 127.0.0.1, which is a loopback, private or other special-use address, which webhooks are not sent to; to allow it, list its network in WEBHOOK_ALLOWED_ADDRESSES (e.g. 127.0.0.1/32)',
      ),
    });
    // …and a change of URL to one.
    const made = await api('POST', '/webhooks', { url: 'https://hooks.example.com/ssrf', events: ['*'] });
    expect(made.status).toBe(201);
    const moved = await api('PATCH', `/webhooks/${made.json.webhook.id}`, { url: 'https://localhost/hooks' });
    expect(moved.status).toBe(400);
    expect(moved.json.error_description).toContain('WEBHOOK_ALLOWED_ADDRESSES');
    const person = await signIn(server.baseUrl, account.email);
    await person.get('/console/admin/webhooks');
    const form = await person.post('/console/admin/webhooks', { url: 'https://localhost/hooks', all_events: 'on' });
    expect(form.status).toBe(400);
    expect(form.text).toContain('list its network in WEBHOOK_ALLOWED_ADDRESSES');
    expect((await server.ctx.store.webhooks.list()).length).toBe(before + 1);
  });
});

describe('bad input in console URLs and forms', () => {
  it('a repeated field, a NUL in an id, a malformed escape or an over-long id answer a 4xx page, never a 500', async () => {
    const account = await createPasswordAccount(server.ctx, { name: 'Before' });
    const person = await signIn(server.baseUrl, account.email);
    await person.get('/console/account');
    const repeated = await fetch(`${server.baseUrl}/console/account/name`, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        cookie: [...person.cookies].map(([n, v]) => `${n}=${v}`).join('; '),
        'content-type': 'application/x-www-form-urlencoded',
        'sec-fetch-site': 'same-origin',
      },
      body: `_csrf=${encodeURIComponent(person.csrf)}&name=A&name=B`,
    });
    expect(repeated.status).toBe(303);
    expect((await server.ctx.store.accounts.find(account.id))?.name).toBeNull();
    for (const path of [
      '/console/account/passkeys/%00/rename',
      '/console/account/passkeys/%00/remove',
      '/console/agents/%00/disable',
      '/console/websites/a%00b/disable',
    ]) {
      const answer = await person.post(path, { name: 'x' });
      expect(answer.status, path).toBe(404);
      expect(answer.headers.get('content-type'), path).toMatch(/^text\/html/);
    }
    for (const path of ['/console/agents/%ff', '/console/agents/%', `/console/agents/${'a'.repeat(1500)}`]) {
      const answer = await person.get(path);
      expect([400, 414], path).toContain(answer.status);
      expect(answer.headers.get('content-type'), path).toMatch(/^text\/html/);
      expect(answer.text, path).toContain('Back to the console');
      expectNoLeak(answer.text, path);
    }
    // Outside the console the router's errors keep the JSON shape.
    const json = await fetch(`${server.baseUrl}/assets/%ff`);
    expect(json.status).toBe(400);
    expect(await json.json()).toEqual({ error: 'invalid_request', error_description: expect.any(String) });
  });
});

describe('secrets in the logs', () => {
  it('no password, cookie, CSRF token, link token or issued secret is logged at trace level', async () => {
    const secrets = new Map<string, string>();
    const keep = (what: string, value: string | undefined) => {
      expect(value, what).toBeTruthy();
      secrets.set(value!, what);
    };
    const account = await createPasswordAccount(server.ctx, { role: 'admin' });
    keep('password', TEST_PASSWORD);
    const person = await signIn(server.baseUrl, account.email);
    keep('session cookie', person.cookies.get('agentauth_console'));
    keep('csrf cookie', person.cookies.get('agentauth_csrf'));
    await person.get('/console/account');
    keep('csrf token', person.csrf);
    await person.post('/console/account/password', {
      current_password: TEST_PASSWORD,
      password: 'another long passphrase to keep',
    });
    keep('new password', 'another long passphrase to keep');
    await person.post('/console/sign-in', { email: account.email, password: 'a wrong password, logged?' });
    keep('wrong password', 'a wrong password, logged?');
    const setup = await issueLink(server.ctx, 'setup', { accountId: account.id });
    const token = setup.url.split('/').pop();
    keep('setup link token', token);
    await new ConsoleSession(server.baseUrl).get(`/console/setup/${token}`);
    await fetch(`${server.baseUrl}/console/setup/${token}?x=1`, { method: 'POST' });
    const { secret } = await createOwnedAgent(server.ctx, account, 'Logged agent');
    keep('agent secret', secret);
    const created = await person.submit('/console/agents', { name: 'Another agent' });
    const shown = /aas_[\w-]+/.exec(created.text)?.[0];
    if (shown) keep('agent secret shown once', shown);
    await person.get('/console/api-keys');
    const keyPage = await person.submit('/console/api-keys', {
      name: 'Logged key',
      access: 'write',
      reach: 'all',
      expires_in_days: '30',
    });
    const apiKey = /aak_[\w-]+/.exec(keyPage.text)?.[0];
    keep('API key shown once', apiKey);
    // The key at work: what the API shows once (an agent's secret, a webhook's) stays out of the logs too.
    const api = caller(server, apiKey!);
    const agentMade = await api('POST', '/agents', { name: 'API agent' });
    keep('agent secret from the API', agentMade.json?.agent_secret);
    await person.get('/console/admin/webhooks');
    const hookPage = await person.submit('/console/admin/webhooks', {
      url: 'https://hooks.example.com/logged',
      all_events: 'on',
    });
    keep('webhook secret shown once', /whsec_[\w+/=]+/.exec(hookPage.text)?.[0]);
    const hookId = /whk_[\w-]+/.exec(hookPage.text)![0];
    const rotated = await person.submit(`/console/admin/webhooks/${hookId}/rotate-secret`);
    keep('rotated webhook secret', /whsec_[\w+/=]+/.exec(rotated.text)?.[0]);
    // A test event is signed with it: the delivery log shows the signature, never the secret.
    const tested = await person.submit(`/console/admin/webhooks/${hookId}/test`);
    expect(tested.text).toContain('webhook.test');
    expect(tested.text).not.toMatch(/whsec_/);
    // A key-bound agent's assertion (docs/design.md §16), accepted and then replayed, and its private key.
    const key = await testKeyPair('EdDSA');
    const keyed = await api('POST', '/agents', { name: 'Keyed agent', public_key: key.publicJwk });
    const keyedId = keyed.json?.agent.id as string;
    const flow = await startFlow(server, { ...(await server.createClient()), agentId: keyedId, agentSecret: '' });
    const assertion = await signAssertion(key, {
      agentId: keyedId,
      issuer: server.baseUrl,
      requestId: flow.requestId,
      now: server.clock(),
    });
    keep('agent assertion', assertion);
    keep('agent private key', key.privateJwk.d);
    const body = { request_id: flow.requestId, agent_id: keyedId, agent_assertion: assertion, model: 'm' };
    expect((await postJson(server, '/api/agent/authenticate', body)).status).toBe(200);
    expect((await postJson(server, '/api/agent/authenticate', body)).status).toBe(401);
    const text = logs.text();
    expect(text).toContain('"path":"/console/setup/lnk_[redacted]"');
    // Its parts too: the signature alone, and the claims (which name the request and the agent).
    keep('assertion signature', assertion.split('.')[2]);
    for (const [value, what] of secrets) expect(text.includes(value), `${what} is in the logs`).toBe(false);
  });
});
