/**
 * Key-bound agents in the console (docs/design.md §16): created with a public key pasted in the
 * create form, the agent's page saying how it proves itself with its thumbprint, the key
 * replaced, and an agent with a secret switched to a key; each then signs in for real.
 */
import { calculateJwkThumbprint } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signAssertion, type TestKeyPair, testKeyPair } from '../helpers/agent-keys.ts';
import { type ConsoleSession, codeOf, createPasswordAccount, noticeOf, signIn } from '../helpers/console.ts';
import { postJson, startFlow } from '../helpers/flow.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let session: ConsoleSession;
let website: Awaited<ReturnType<TestServer['createClient']>>;

beforeAll(async () => {
  server = await startTestServer();
  const owner = await createPasswordAccount(server.ctx, { email: 'ada@example.org', name: 'Ada' });
  session = await signIn(server.baseUrl, owner.email);
  website = await server.createClient();
});
afterAll(() => server.close());

async function signIns(agentId: string, credentials: { key?: TestKeyPair; secret?: string }): Promise<number> {
  const started = await startFlow(server, { ...website, agentId, agentSecret: '' });
  const answer = await postJson(server, '/api/agent/authenticate', {
    request_id: started.requestId,
    agent_id: agentId,
    model: 'm',
    ...(credentials.key
      ? {
          agent_assertion: await signAssertion(credentials.key, {
            agentId,
            issuer: server.baseUrl,
            requestId: started.requestId,
            now: server.clock(),
          }),
        }
      : { agent_secret: credentials.secret }),
  });
  return answer.status;
}

describe('key-bound agents in the console', () => {
  it('creates an agent with a pasted public key: its page says it proves itself with a key, with the thumbprint', async () => {
    const key = await testKeyPair('EdDSA');
    await session.get('/console/agents');
    const page = await session.submit('/console/agents', {
      name: 'Keyed assistant',
      public_key: JSON.stringify(key.publicJwk, null, 2),
    });
    expect(page.posted.status).toBe(303);
    expect(page.status).toBe(200);
    expect(noticeOf(page)).toMatch(/proves itself with its private key/);
    expect(page.text).toContain('Proves itself with a key');
    expect(page.text).not.toMatch(/aas_[\w-]{20,}/);
    const thumbprint = await calculateJwkThumbprint(key.publicJwk);
    expect(codeOf(page, 'key-thumbprint')).toBe(thumbprint);
    expect(page.text).toContain('AGENTAUTH_AGENT_KEY_FILE=');
    const agentId = codeOf(page, 'agent-id');
    expect((await server.ctx.store.agents.find(agentId))!.key_thumbprint).toBe(thumbprint);
    expect(await signIns(agentId, { key })).toBe(200);

    // Replacing the key: the old one stops at once.
    const next = await testKeyPair('ES256');
    const replaced = await session.submit(`/console/agents/${agentId}/rotate-key`, {
      public_key: JSON.stringify(next.publicJwk),
    });
    expect(noticeOf(replaced)).toMatch(/new key from now on/);
    expect(codeOf(replaced, 'key-thumbprint')).toBe(await calculateJwkThumbprint(next.publicJwk));
    expect(await signIns(agentId, { key })).toBe(401);
    expect(await signIns(agentId, { key: next })).toBe(200);
  });

  it('refuses a private key or a key that is not JSON with the field’s error, and creates nothing', async () => {
    const key = await testKeyPair('EdDSA');
    await session.get('/console/agents');
    const before = (await server.ctx.store.agents.list()).length;
    const refused = await session.submit('/console/agents', {
      name: 'Refused',
      public_key: JSON.stringify(key.privateJwk),
    });
    expect(refused.status).toBe(400);
    expect(refused.text).toMatch(/<p class="field-error" id="field-public_key-error">This is a private key/);
    expect(refused.text).toContain('value="Refused"');
    const garbled = await session.submit('/console/agents', { name: 'Refused', public_key: 'ssh-ed25519 AAAA' });
    expect(garbled.status).toBe(400);
    expect(garbled.text).toMatch(/id="field-public_key-error">The public key is not JSON/);
    expect((await server.ctx.store.agents.list()).length).toBe(before);
  });

  it('an agent with a secret can switch to a key: its secret stops working', async () => {
    await session.get('/console/agents');
    const created = await session.submit('/console/agents', { name: 'Switching' });
    const agentId = codeOf(created, 'agent-id');
    const secret = codeOf(created, 'agent-secret');
    const page = await session.get(`/console/agents/${agentId}`);
    expect(page.text).toContain('Proves itself with a secret');
    expect(page.text).toContain('Use a key instead of the secret');
    const empty = await session.submit(`/console/agents/${agentId}/rotate-key`, { public_key: '' });
    expect(empty.status).toBe(400);
    expect(empty.text).toMatch(/id="field-public_key-error">Paste the new public key/);

    const key = await testKeyPair('ES256');
    const switched = await session.submit(`/console/agents/${agentId}/rotate-key`, {
      public_key: JSON.stringify(key.publicJwk),
    });
    expect(switched.status).toBe(200);
    expect(switched.text).toContain('Proves itself with a key');
    expect(await signIns(agentId, { secret })).toBe(401);
    expect(await signIns(agentId, { key })).toBe(200);
  });

  it('another owner’s agent answers 404 to rotate-key, as a missing one', async () => {
    const stranger = await createPasswordAccount(server.ctx, { email: 'eve@example.org' });
    const eve = await signIn(server.baseUrl, stranger.email);
    const key = await testKeyPair('EdDSA');
    await session.get('/console/agents');
    const created = await session.submit('/console/agents', {
      name: 'Private',
      public_key: JSON.stringify(key.publicJwk),
    });
    const agentId = codeOf(created, 'agent-id');
    await eve.get('/console/agents');
    const other = await testKeyPair('EdDSA');
    const answer = await eve.post(`/console/agents/${agentId}/rotate-key`, {
      public_key: JSON.stringify(other.publicJwk),
    });
    expect(answer.status).toBe(404);
    expect(await signIns(agentId, { key })).toBe(200);
  });
});
