/**
 * Key-bound agents through the management API (docs/design.md §16): created with `public_key`,
 * their key replaced with rotate-key (announced as agent.key_rotated), and each signs in.
 */
import { calculateJwkThumbprint } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../src/domain/accounts.ts';
import { createWebhook } from '../../src/domain/webhooks/endpoints.ts';
import { signAssertion, type TestKeyPair, testKeyPair } from '../helpers/agent-keys.ts';
import { accountWithKey } from '../helpers/api.ts';
import { postJson, startFlow } from '../helpers/flow.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { allowLoopback, startWebhookReceiver } from '../helpers/webhook-receiver.ts';

let server: TestServer;
let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
let website: Awaited<ReturnType<TestServer['createClient']>>;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  server = await startTestServer({
    webhooks: { fetch: { ca: receiver.ca, allowAddress: allowLoopback }, retryDelaysMs: [50], pollMs: 50 },
  });
  website = await server.createClient();
});
afterAll(async () => {
  await server.close();
  await receiver.close();
});

/** Whether the agent signs in on a fresh request with an assertion signed by `key`. */
async function signsIn(agentId: string, key: TestKeyPair): Promise<number> {
  const started = await startFlow(server, { ...website, agentId, agentSecret: '' });
  const answer = await postJson(server, '/api/agent/authenticate', {
    request_id: started.requestId,
    agent_id: agentId,
    agent_assertion: await signAssertion(key, {
      agentId,
      issuer: server.baseUrl,
      requestId: started.requestId,
      now: server.clock(),
    }),
    model: 'm',
  });
  return answer.status;
}

describe('management API: key-bound agents', () => {
  it('creates an agent with public_key: no secret in the answer, credential key and its thumbprint', async () => {
    const { account, call } = await accountWithKey(server);
    const key = await testKeyPair('ES256');
    const created = await call('POST', '/agents', { name: 'Keyed', public_key: key.publicJwk });
    expect(created.status).toBe(201);
    expect(Object.keys(created.json)).toEqual(['agent']);
    expect(created.json.agent).toMatchObject({
      name: 'Keyed',
      account_id: account.id,
      credential: 'key',
      key_thumbprint: await calculateJwkThumbprint(key.publicJwk),
      previous_secret_expires_at: null,
    });
    const id = created.json.agent.id as string;
    expect((await call('GET', `/agents/${id}`)).json).toEqual(created.json.agent);
    expect(await signsIn(id, key)).toBe(200);

    // An agent with a secret says so.
    const plain = await call('POST', '/agents', { name: 'Plain' });
    expect(plain.json.agent).toMatchObject({ credential: 'secret', key_thumbprint: null });
    expect(plain.json.agent_secret).toMatch(/^aas_/);
  });

  it('an admin’s all key creates an owner’s key-bound agent', async () => {
    const { call } = await accountWithKey(server, { role: 'admin', key: { reach: 'all' } });
    const key = await testKeyPair('EdDSA');
    const created = await call('POST', '/agents', {
      owner: { email: 'grace@example.com', name: 'Grace' },
      public_key: key.publicJwk,
    });
    expect(created.status).toBe(201);
    expect(created.json.agent).toMatchObject({
      credential: 'key',
      account_id: null,
      owner: { email: 'grace@example.com' },
    });
    expect(created.json.agent_secret).toBeUndefined();
    expect(await signsIn(created.json.agent.id, key)).toBe(200);
  });

  it.each([
    ['a private key', async () => (await testKeyPair('EdDSA')).privateJwk, /private key/],
    ['an RSA key', async () => ({ kty: 'RSA', n: 'AQAB', e: 'AQAB' }), /Only Ed25519/],
    ['a P-384 key', async () => ({ kty: 'EC', crv: 'P-384', x: 'a', y: 'b' }), /Only Ed25519/],
    [
      'a key off its curve',
      async () => ({ kty: 'EC', crv: 'P-256', x: 'A'.repeat(43), y: 'A'.repeat(43) }),
      /not a valid key/,
    ],
    ['a short x', async () => ({ kty: 'OKP', crv: 'Ed25519', x: 'abc' }), /32 bytes/],
  ])('400 invalid_request for %s, saying what is wrong; nothing is made', async (_what, make, words) => {
    const { account, call } = await accountWithKey(server);
    const refused = await call('POST', '/agents', { name: 'Refused', public_key: await make() });
    expect(refused.status).toBe(400);
    expect(refused.json).toEqual({ error: 'invalid_request', error_description: expect.stringMatching(words) });
    expect(await server.ctx.store.agents.list({ accountId: account.id })).toEqual([]);
  });

  it('400 for a public_key that is not an object', async () => {
    const { call } = await accountWithKey(server);
    expect((await call('POST', '/agents', { name: 'X', public_key: 'a string' })).status).toBe(400);
  });

  it('rotate-key: the old key stops, the new works, announced as agent.key_rotated; If-Match holds', async () => {
    const admin = await createAccount(server.ctx, { email: `hooks-${Date.now()}@example.com`, role: 'admin' });
    const { secret } = await createWebhook(server.ctx, admin, { url: receiver.url, events: ['agent.key_rotated'] });
    receiver.useSecret(secret);
    const { call } = await accountWithKey(server);
    const first = await testKeyPair('EdDSA');
    const created = await call('POST', '/agents', { name: 'Rotating', public_key: first.publicJwk });
    const id = created.json.agent.id as string;
    const etag = (await call('GET', `/agents/${id}`)).headers.get('etag')!;

    const next = await testKeyPair('ES256');
    const rotated = await call(
      'POST',
      `/agents/${id}/rotate-key`,
      { public_key: next.publicJwk },
      { 'if-match': etag },
    );
    expect(rotated.status).toBe(200);
    expect(rotated.json).toMatchObject({
      id,
      credential: 'key',
      key_thumbprint: await calculateJwkThumbprint(next.publicJwk),
    });
    expect(await signsIn(id, first)).toBe(401);
    expect(await signsIn(id, next)).toBe(200);

    const stale = await call('POST', `/agents/${id}/rotate-key`, { public_key: first.publicJwk }, { 'if-match': etag });
    expect(stale.status).toBe(412);

    const [delivery] = await receiver.until((r) => r.some((x) => x.payload.type === 'agent.key_rotated'));
    const announced = receiver.received.find((x) => x.payload.type === 'agent.key_rotated')!;
    expect(delivery).toBeDefined();
    expect(announced.verified).toBe(true);
    expect(announced.payload.data).toMatchObject({
      agent: { id },
      key_thumbprint: await calculateJwkThumbprint(next.publicJwk),
      previous_key_thumbprint: await calculateJwkThumbprint(first.publicJwk),
    });
  });

  it('rotate-key binds an agent with a secret to a key (its secret stops); rotate-secret of a key-bound agent is refused', async () => {
    const { call } = await accountWithKey(server);
    const plain = await call('POST', '/agents', { name: 'Switching' });
    const id = plain.json.agent.id as string;
    const key = await testKeyPair('EdDSA');
    const rotated = await call('POST', `/agents/${id}/rotate-key`, { public_key: key.publicJwk });
    expect(rotated.json.credential).toBe('key');
    const started = await startFlow(server, { ...website, agentId: id, agentSecret: '' });
    const withSecret = await postJson(server, '/api/agent/authenticate', {
      request_id: started.requestId,
      agent_id: id,
      agent_secret: plain.json.agent_secret,
      model: 'm',
    });
    expect(withSecret.status).toBe(401);
    expect(await signsIn(id, key)).toBe(200);

    const refused = await call('POST', `/agents/${id}/rotate-secret`, {});
    expect(refused.status).toBe(400);
    expect(refused.json.error_description).toMatch(/proves itself with a key/);
  });

  it('another account’s agent answers 404; a read key cannot rotate (403); a bad key is 400', async () => {
    const owner = await accountWithKey(server);
    const stranger = await accountWithKey(server);
    const reader = await accountWithKey(server, { key: { access: 'read' } });
    const key = await testKeyPair('EdDSA');
    const id = (await owner.call('POST', '/agents', { name: 'Mine', public_key: key.publicJwk })).json.agent.id;
    const other = await testKeyPair('EdDSA');
    expect((await stranger.call('POST', `/agents/${id}/rotate-key`, { public_key: other.publicJwk })).status).toBe(404);
    expect((await reader.call('POST', `/agents/${id}/rotate-key`, { public_key: other.publicJwk })).status).toBe(403);
    const bad = await owner.call('POST', `/agents/${id}/rotate-key`, { public_key: other.privateJwk });
    expect(bad.status).toBe(400);
    expect(bad.json.error).toBe('invalid_request');
    expect((await owner.call('POST', `/agents/${id}/rotate-key`, {})).status).toBe(400);
    expect(await signsIn(id, key)).toBe(200);
  });
});
