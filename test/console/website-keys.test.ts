/**
 * Websites that sign with keys (RFC 7523 private_key_jwt, issue 36) in every door, over real
 * HTTP: registered in the console (a key set pasted, or a jwks_uri) and then exchanging a code
 * with an assertion made by jose; bad key sets refused beside their field in the rule's words with
 * nothing saved; their keys shown on the website's page (escaped) and replaced in the console and
 * by the management API (If-Match, the audit, client.updated), after which the old key's
 * assertions are refused and the new one's accepted; an owner replaces only their own website's
 * keys; a website with a secret, and one that registered itself, have no keys to replace here.
 * (The command's `client update --jwks` is test/cli-client-keys.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWebhook } from '../../src/domain/webhooks/endpoints.ts';
import type { AccountRecord } from '../../src/store/accounts.ts';
import { accountWithKey } from '../helpers/api.ts';
import { assertionFields, clientAssertion, type SigningKey, signingKey } from '../helpers/client-keys.ts';
import { type ConsoleSession, codeOf, createPasswordAccount, noticeOf, type Page, signIn } from '../helpers/console.ts';
import { obtainCode, postForm, postJson } from '../helpers/flow.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { expectJsonError } from '../security/support.ts';

const REDIRECT_URI = 'https://keys.example/callback';
const HOSTILE_KID = '<script>alert("kid")</script>&';

let server: TestServer;
let owner: AccountRecord;
let session: ConsoleSession;
let other: ConsoleSession;

beforeAll(async () => {
  server = await startTestServer({ env: { PRIVATE_KEY_JWT: 'true', DYNAMIC_REGISTRATION: 'true' } });
  owner = await createPasswordAccount(server.ctx, { email: 'kim@example.org', name: 'Kim Keys' });
  session = await signIn(server.baseUrl, owner.email);
  const stranger = await createPasswordAccount(server.ctx, { email: 'sam@example.org', name: 'Sam' });
  other = await signIn(server.baseUrl, stranger.email);
});
afterAll(() => server.close());

/** Registers a website in the console's form as a server that signs with keys. */
async function registerWithKeys(fields: Record<string, string>, as: ConsoleSession = session) {
  await as.get('/console/websites');
  return as.submit('/console/websites', {
    name: 'Key shop',
    redirect_uris: REDIRECT_URI,
    approval: 'auto',
    client_type: 'private_key_jwt',
    ...fields,
  });
}

const jwksOf = (...keys: SigningKey[]) => JSON.stringify({ keys: keys.map((key) => key.publicJwk) });

/** A sign-in to `clientId`, then its code exchanged with an assertion signed by `key`: the token endpoint's status. */
async function exchangeWith(clientId: string, key: SigningKey): Promise<number> {
  const agent = await server.createAgent();
  const { code, verifier } = await obtainCode(server, {
    clientId,
    clientSecret: '',
    redirectUri: REDIRECT_URI,
    ...agent,
  });
  const assertion = await clientAssertion(key, clientId, `${server.baseUrl}/token`, server.clock());
  const answer = await postForm(server, '/token', {
    grant_type: 'authorization_code',
    code,
    code_verifier: verifier,
    redirect_uri: REDIRECT_URI,
    client_id: clientId,
    ...assertionFields(assertion),
  });
  if (answer.status !== 200) await expectJsonError(answer, 401, 'invalid_client');
  return answer.status;
}

/** The message shown beside a form field. */
const fieldError = (page: Page, name: string) =>
  new RegExp(`<p class="field-error" id="field-${name}-error">([^<]*)</p>`).exec(page.text)?.[1];

const clientCount = async () => (await server.ctx.store.clients.list({})).length;

describe('registering a website that signs with keys in the console', () => {
  it('offers the kind, registers it without a secret, and it exchanges its code with an assertion', async () => {
    const form = await session.get('/console/websites');
    expect(form.text).toContain('<option value="private_key_jwt">');
    expect(form.text).toContain('id="field-jwks"');
    expect(form.text).toContain('id="field-jwks_uri"');

    const key = await signingKey('ES256', 'shop-1');
    const created = await registerWithKeys({ jwks: jwksOf(key) });
    expect(created.posted.status).toBe(303);
    expect(created.status).toBe(200);
    expect(noticeOf(created)).toMatch(/signs with its keys: there is no secret/);
    expect(created.text).not.toContain('id="client-secret"');
    expect(created.text).toContain('Signs with keys (private_key_jwt; no secret)');
    const clientId = codeOf(created, 'client-id');
    expect(await server.ctx.store.clients.find(clientId)).toMatchObject({
      token_endpoint_auth_method: 'private_key_jwt',
      jwks_uri: null,
      secret_sealed: '',
      account_id: owner.id,
    });

    expect(await exchangeWith(clientId, key)).toBe(200);
    // A key the website did not register is refused.
    expect(await exchangeWith(clientId, await signingKey('ES256', 'shop-1'))).toBe(401);
  });

  it('registers one that publishes its keys at a jwks_uri, and shows the URL on its page', async () => {
    const created = await registerWithKeys({ jwks_uri: 'https://keys.example/jwks.json' });
    expect(created.posted.status).toBe(303);
    const clientId = codeOf(created, 'client-id');
    const page = await session.get(`/console/websites/${clientId}`);
    expect(page.text).toContain('<dd id="client-jwks-uri"><code>https://keys.example/jwks.json</code></dd>');
    expect(await server.ctx.store.clients.find(clientId)).toMatchObject({
      jwks: null,
      jwks_uri: 'https://keys.example/jwks.json',
    });
  });

  it('refuses bad key sets beside their field in the rule’s words, and saves nothing', async () => {
    const key = await signingKey('RS256', 'rsa-1');
    const before = await clientCount();
    const cases: Array<[Record<string, string>, string, RegExp]> = [
      [{ jwks: '{not json' }, 'jwks', /^The key set is not JSON: give a JWKS/],
      [
        { jwks: JSON.stringify({ keys: [{ ...key.publicJwk, d: 'AAAA' }] }) },
        'jwks',
        /^The key set contains private or symmetric key material: publish the public keys only\.$/,
      ],
      [
        { jwks: JSON.stringify({ keys: [{ kty: 'oct', k: 'c2VjcmV0' }] }) },
        'jwks',
        /^The key set contains private or symmetric key material/,
      ],
      [
        { jwks: JSON.stringify({ keys: [{ ...key.publicJwk, alg: 'HS256' }] }) },
        'jwks',
        /^In the key set, keys\[0\] has &quot;alg&quot; HS256, which is not RS256 or PS256 for a RSA key\.$/,
      ],
      [{ jwks: '' }, 'jwks', /^Paste the public keys/],
      [{ jwks: jwksOf(key), jwks_uri: 'https://keys.example/jwks.json' }, 'jwks', /not both/],
      [{ jwks_uri: 'http://keys.example/jwks.json' }, 'jwks_uri', /^The key set URL must be an https URL\.$/],
    ];
    for (const [fields, name, message] of cases) {
      const refused = await registerWithKeys(fields);
      expect(refused.status, JSON.stringify(fields)).toBe(400);
      expect(fieldError(refused, name), JSON.stringify(fields)).toMatch(message);
      expect(refused.text).toContain(`id="field-${name}" name="${name}" aria-describedby`);
    }
    expect(await clientCount()).toBe(before);
  });
});

describe('a website’s keys on its page, replaced', () => {
  it('shows each key’s kid, type and algorithms, escaped; a hostile kid is text', async () => {
    const rsa = await signingKey('RS256', HOSTILE_KID);
    const ed = await signingKey('EdDSA', 'ed-1');
    const { publicJwk } = ed;
    const withoutAlg = { ...publicJwk, alg: undefined };
    const created = await registerWithKeys({
      jwks: JSON.stringify({ keys: [rsa.publicJwk, withoutAlg] }),
    });
    const clientId = codeOf(created, 'client-id');
    const page = await session.get(`/console/websites/${clientId}`);
    expect(page.status).toBe(200);
    expect(page.text).not.toContain('<script>alert("kid")</script>');
    expect(page.text).toContain('<code>&lt;script&gt;alert(&quot;kid&quot;)&lt;/script&gt;&amp;</code>');
    const table = /<table[^>]*id="client-key-list"[\s\S]*?<\/table>/.exec(page.text)?.[0] ?? '';
    expect(table).toMatch(/<td data-label="Type" class="narrow">RSA<\/td>\s*<td data-label="Algorithms">RS256<\/td>/);
    expect(table).toMatch(/<code>ed-1<\/code>[\s\S]*OKP Ed25519[\s\S]*EdDSA/);
    // No secret to rotate for a website without one.
    expect(page.text).not.toContain('/rotate"');
    expect(page.text).toContain('id="keys-form"');
  });

  it('in the console: the old key’s assertions are refused afterwards, the new one’s accepted; audited and announced', async () => {
    const admin = await createPasswordAccount(server.ctx, { email: 'hooks@example.org', role: 'admin' });
    const { webhook } = await createWebhook(server.ctx, admin, {
      url: 'https://hooks.example/agentauth',
      events: ['client.updated'],
    });
    const oldKey = await signingKey('ES256', 'old-1');
    const newKey = await signingKey('PS256', 'new-1');
    const clientId = codeOf(await registerWithKeys({ jwks: jwksOf(oldKey) }), 'client-id');
    expect(await exchangeWith(clientId, oldKey)).toBe(200);
    const version = (await server.ctx.store.clients.find(clientId))!.version;

    await session.get(`/console/websites/${clientId}`);
    const replaced = await session.submit(`/console/websites/${clientId}/keys`, { jwks: jwksOf(newKey), jwks_uri: '' });
    expect(replaced.posted.status).toBe(303);
    expect(replaced.posted.location).toBe(`/console/websites/${clientId}?notice=website_keys_replaced`);
    expect(noticeOf(replaced)).toMatch(/keys are replaced/);
    expect(replaced.text).toContain('<code>new-1</code>');
    expect(replaced.text).not.toContain('<code>old-1</code>');

    expect(await exchangeWith(clientId, oldKey)).toBe(401);
    expect(await exchangeWith(clientId, newKey)).toBe(200);

    const stored = (await server.ctx.store.clients.find(clientId))!;
    expect(stored.version).toBe(version + 1);
    const acts = (await server.ctx.store.activity.list({ limit: 500 })).filter(
      (row) => row.action === 'website.update' && row.target === clientId,
    );
    expect(acts).toHaveLength(1);
    expect(acts[0]).toMatchObject({ actor_id: owner.id, detail: 'keys new-1' });
    const deliveries = await server.ctx.store.webhooks.listDeliveries(webhook.webhook.id, 50);
    const updated = deliveries.filter((delivery) => JSON.parse(delivery.payload).data.client.id === clientId);
    expect(updated.map((delivery) => delivery.event_type)).toEqual(['client.updated']);
  });

  it('a bad key set or a second kind of keys is refused on the page; the keys stay', async () => {
    const key = await signingKey('ES256', 'keep-1');
    const clientId = codeOf(await registerWithKeys({ jwks: jwksOf(key) }), 'client-id');
    const before = await server.ctx.store.clients.find(clientId);
    await session.get(`/console/websites/${clientId}`);
    const refused = await session.submit(`/console/websites/${clientId}/keys`, {
      jwks: JSON.stringify({ keys: [{ ...key.publicJwk, d: 'AAAA' }] }),
    });
    expect(refused.status).toBe(400);
    expect(fieldError(refused, 'jwks')).toMatch(/^The key set contains private or symmetric key material/);
    // The replace form is open again with what was typed, escaped.
    expect(refused.text).toMatch(/<details open>\s*<summary>Replace the keys<\/summary>/);
    const uri = await session.submit(`/console/websites/${clientId}/keys`, { jwks_uri: 'https://a:b@keys.example/j' });
    expect(uri.status).toBe(400);
    expect(fieldError(uri, 'jwks_uri')).toBe('The key set URL must not contain a user name or password.');
    expect(await server.ctx.store.clients.find(clientId)).toEqual(before);
    expect(await exchangeWith(clientId, key)).toBe(200);
  });

  it('another owner’s website answers as a missing one; its keys stay', async () => {
    const key = await signingKey('ES256', 'mine-1');
    const clientId = codeOf(await registerWithKeys({ jwks: jwksOf(key) }), 'client-id');
    await other.get('/console/websites');
    const foreign = await other.post(`/console/websites/${clientId}/keys`, {
      jwks: jwksOf(await signingKey('ES256', 'theirs-1')),
    });
    expect(foreign.status).toBe(404);
    expect(await exchangeWith(clientId, key)).toBe(200);
  });

  it('a website with a secret has no keys to replace', async () => {
    await session.get('/console/websites');
    const created = await session.submit('/console/websites', {
      name: 'Secret shop',
      redirect_uris: REDIRECT_URI,
      approval: 'auto',
      client_type: 'confidential',
    });
    const clientId = codeOf(created, 'client-id');
    const page = await session.get(`/console/websites/${clientId}`);
    expect(page.text).not.toContain('id="client-keys"');
    const refused = await session.submit(`/console/websites/${clientId}/keys`, {
      jwks: jwksOf(await signingKey('ES256', 'x')),
    });
    expect(refused.status).toBe(400);
    expect(noticeOf(refused)).toMatch(/^Only a client that signs with keys \(private_key_jwt\) has keys to replace/);
    expect((await server.ctx.store.clients.find(clientId))!.jwks).toBeNull();
  });
});

describe('the management API: PATCH jwks / jwks_uri', () => {
  it('replaces the keys under If-Match; the old key is refused afterwards, the new one accepted', async () => {
    const { call } = await accountWithKey(server);
    const oldKey = await signingKey('ES256', 'api-old');
    const newKey = await signingKey('EdDSA', 'api-new');
    const created = await call('POST', '/clients', {
      name: 'API keys',
      redirect_uris: [REDIRECT_URI],
      jwks: { keys: [oldKey.publicJwk] },
    });
    expect(created.status).toBe(201);
    const clientId = created.json.client.id as string;
    expect(await exchangeWith(clientId, oldKey)).toBe(200);

    const read = await call('GET', `/clients/${clientId}`);
    const etag = read.headers.get('etag')!;
    const stale = `"${'0'.repeat(8)}"`;
    const refused = await call(
      'PATCH',
      `/clients/${clientId}`,
      { jwks: { keys: [newKey.publicJwk] } },
      { 'if-match': stale },
    );
    expect(refused.status).toBe(412);
    expect(await exchangeWith(clientId, oldKey)).toBe(200);

    const changed = await call(
      'PATCH',
      `/clients/${clientId}`,
      { jwks: { keys: [newKey.publicJwk] } },
      { 'if-match': etag },
    );
    expect(changed.status).toBe(200);
    expect(changed.json.jwks.keys).toEqual([expect.objectContaining({ kid: 'api-new', kty: 'OKP', crv: 'Ed25519' })]);
    expect(await exchangeWith(clientId, oldKey)).toBe(401);
    expect(await exchangeWith(clientId, newKey)).toBe(200);

    const moved = await call('PATCH', `/clients/${clientId}`, { jwks_uri: 'https://keys.example/new.json' });
    expect(moved.status).toBe(200);
    expect(moved.json).toMatchObject({ jwks: null, jwks_uri: 'https://keys.example/new.json' });
  });

  it('refuses a bad key set, both fields, a website with a secret and another owner’s website', async () => {
    const { call } = await accountWithKey(server);
    const stranger = await accountWithKey(server);
    const key = await signingKey('ES256', 'api-keep');
    const clientId = (
      await call('POST', '/clients', { name: 'Keep', redirect_uris: [REDIRECT_URI], jwks: { keys: [key.publicJwk] } })
    ).json.client.id as string;
    const before = await server.ctx.store.clients.find(clientId);

    const privateKey = await call('PATCH', `/clients/${clientId}`, {
      jwks: { keys: [{ ...key.publicJwk, d: 'AAAA' }] },
    });
    expect(privateKey.status).toBe(400);
    expect(privateKey.json).toMatchObject({ error: 'invalid_client_metadata' });
    expect(privateKey.json.error_description).toContain('private or symmetric key material');
    const both = await call('PATCH', `/clients/${clientId}`, {
      jwks: { keys: [key.publicJwk] },
      jwks_uri: 'https://keys.example/j.json',
    });
    expect(both.status).toBe(400);
    expect(both.json.error).toBe('invalid_client_metadata');
    const foreign = await stranger.call('PATCH', `/clients/${clientId}`, { jwks_uri: 'https://evil.example/j.json' });
    expect(foreign.status).toBe(404);
    expect(await server.ctx.store.clients.find(clientId)).toEqual(before);

    const secretClient = (await call('POST', '/clients', { name: 'Secret', redirect_uris: [REDIRECT_URI] })).json.client
      .id as string;
    const noKeys = await call('PATCH', `/clients/${secretClient}`, { jwks: { keys: [key.publicJwk] } });
    expect(noKeys.status).toBe(400);
    expect(noKeys.json).toMatchObject({ error: 'invalid_request' });
    expect((await server.ctx.store.clients.find(secretClient))!.jwks).toBeNull();
  });

  it('a dynamically registered website replaces its keys at its registration endpoint, not here', async () => {
    const { call } = await accountWithKey(server, { role: 'admin', key: { reach: 'all' } });
    const key = await signingKey('ES256', 'dyn-1');
    const registered = await postJson(server, '/register', {
      client_name: 'Dynamic keys',
      redirect_uris: [REDIRECT_URI],
      token_endpoint_auth_method: 'private_key_jwt',
      jwks: { keys: [key.publicJwk] },
    });
    expect(registered.status).toBe(201);
    const clientId = ((await registered.json()) as { client_id: string }).client_id;
    const refused = await call('PATCH', `/clients/${clientId}`, { jwks: { keys: [key.publicJwk] } });
    expect(refused.status).toBe(400);
    expect(refused.json.error_description).toMatch(/registration endpoint/);
    expect(await exchangeWith(clientId, key)).toBe(200);
  });
});
