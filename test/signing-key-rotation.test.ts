/**
 * The shared key set over time (docs/design.md §19): rotation on demand and on schedule, the next
 * key published a whole cache period before it signs, retired keys published until their last
 * token has expired, two nodes on one database signing and verifying with one set, switching
 * TOKEN_SIGNING_ALG either way without ending a token early, the emergency rotation for a key that
 * leaked (at once, and withdrawing earlier keys on every node), and `agentauth signing-key`.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operator } from '../src/management/actor.ts';
import { listSigningKeys, rotateSigningKey } from '../src/management/signing-keys.ts';
import { purgeOnce } from '../src/server.ts';
import { accountWithKey } from './helpers/api.ts';
import { obtainTokens, type Party, postForm, setupParty, type Tokens } from './helpers/flow.ts';
import { freshDatabase, startTestServer, TEST_JWT_SECRET, type TestServer } from './helpers/server.ts';

const run = promisify(execFile);
/** One JWKS cache period and one reload of the nodes: the least age at which a next key may sign. */
const PUBLISHED_AHEAD = 3600 + 30;

type KeySet = { keys: { kid: string; alg: string; use: string }[] };

async function keySet(server: TestServer): Promise<KeySet> {
  const response = await fetch(`${server.baseUrl}/.well-known/jwks.json`);
  expect(response.status).toBe(200);
  return (await response.json()) as KeySet;
}

const kids = (set: KeySet) => set.keys.map((key) => key.kid).sort();
const kidOf = (jwt: string) => decodeProtectedHeader(jwt).kid;

const userinfo = (server: TestServer, token: string) =>
  fetch(`${server.baseUrl}/userinfo`, { headers: { authorization: `Bearer ${token}` } });

async function introspect(server: TestServer, party: Party, token: string) {
  const response = await postForm(server, '/introspect', {
    token,
    client_id: party.clientId,
    client_secret: party.clientSecret,
  });
  return ((await response.json()) as { active: boolean }).active;
}

/** The kids of the shared set, by state, as the database has them. */
async function states(server: TestServer): Promise<Record<'next' | 'current' | 'retired', string[]>> {
  const keys = await server.ctx.store.signingKeys.list();
  const of = (state: string) => keys.filter((key) => key.state === state).map((key) => key.kid);
  return { next: of('next'), current: of('current'), retired: of('retired') };
}

describe('rotation on demand (ES256)', () => {
  let server: TestServer;
  let party: Party;
  beforeAll(async () => {
    server = await startTestServer({ env: { TOKEN_SIGNING_ALG: 'ES256', ACCESS_TOKEN_TTL: '7200' } });
    party = await setupParty(server);
  });
  afterAll(() => server?.close());

  it('keeps the old key published, old tokens valid, signs new ones with the key published ahead; the old key leaves after its last token', async () => {
    const before = await keySet(server);
    const first = await states(server);
    expect(first.current).toHaveLength(1);
    expect(first.next).toHaveLength(1);
    const old = await obtainTokens(server, party, { scope: 'openid email' });
    expect(kidOf(old.access_token)).toBe(first.current[0]);
    expect(kidOf(old.id_token!)).toBe(first.current[0]);

    // The next key was published only now: a verifier may hold a cached set without it.
    await expect(rotateSigningKey(server.ctx, operator())).rejects.toMatchObject({
      error: 'conflict',
      statusCode: 409,
      description: expect.stringContaining('can sign from'),
    });
    expect(await states(server)).toEqual(first);

    server.clock.advance(PUBLISHED_AHEAD);
    const rotated = await rotateSigningKey(server.ctx, operator());
    expect(rotated.find((key) => key.state === 'current')?.kid).toBe(first.next[0]);
    const after = await states(server);
    expect(after.current).toEqual(first.next);
    expect(after.retired).toEqual(first.current);
    expect(after.next).toHaveLength(1);
    expect(after.next[0]).not.toBe(first.current[0]);

    const published = await keySet(server);
    expect(kids(published)).toEqual([...first.current, ...first.next, ...after.next].sort());

    // Tokens signed before the rotation: the server still takes them, and so does a verifier
    // with the set as published now.
    expect((await userinfo(server, old.access_token)).status).toBe(200);
    expect(await introspect(server, party, old.access_token)).toBe(true);
    await jwtVerify(old.access_token, createLocalJWKSet(published), { typ: 'at+jwt' });
    await jwtVerify(old.id_token!, createLocalJWKSet(published), { audience: party.clientId });

    // New tokens carry the new kid, which a verifier holding the set from before the rotation knows.
    const fresh = await obtainTokens(server, party, { scope: 'openid' });
    expect(kidOf(fresh.access_token)).toBe(first.next[0]);
    expect(kidOf(fresh.id_token!)).toBe(first.next[0]);
    await jwtVerify(fresh.access_token, createLocalJWKSet(before), {
      typ: 'at+jwt',
      currentDate: new Date((server.clock() + 1) * 1000),
    });

    // The retired key stays until the last token it signed expires (ACCESS_TOKEN_TTL and a reload).
    server.clock.advance(7200 + 30 - 1);
    expect(kids(await keySet(server))).toContain(first.current[0]);
    server.clock.advance(1);
    const later = await keySet(server);
    expect(kids(later)).not.toContain(first.current[0]);
    expect(kids(later)).toEqual([...after.current, ...after.next].sort());
    expect((await userinfo(server, old.access_token)).status).toBe(401);
    server.clock.advance(1);
    expect((await purgeOnce(server.ctx)).signingKeys).toBe(1);
    expect((await states(server)).retired).toEqual([]);
  });
});

describe('rotation on schedule (SIGNING_KEY_ROTATION)', () => {
  let server: TestServer;
  let party: Party;
  beforeAll(async () => {
    server = await startTestServer({
      env: { TOKEN_SIGNING_ALG: 'EdDSA', SIGNING_KEY_ROTATION: String(PUBLISHED_AHEAD), ACCESS_TOKEN_TTL: '7200' },
    });
    party = await setupParty(server);
  });
  afterAll(() => server?.close());

  it('the next key signs once the period is over; the one before stays published', async () => {
    const first = await states(server);
    const before = await obtainTokens(server, party);
    expect(kidOf(before.access_token)).toBe(first.current[0]);
    server.clock.advance(PUBLISHED_AHEAD - 1);
    expect(kidOf((await obtainTokens(server, party)).access_token)).toBe(first.current[0]);
    server.clock.advance(1);
    const after = await obtainTokens(server, party);
    expect(kidOf(after.access_token)).toBe(first.next[0]);
    const now = await states(server);
    expect(now.retired).toEqual(first.current);
    expect(kids(await keySet(server))).toContain(first.current[0]);
    expect((await userinfo(server, before.access_token)).status).toBe(200);
  });
});

/** Nodes of one deployment share its issuer; each is reached at its own address. */
const ISSUER = 'http://agentauth.test:8080';
const node = (server: TestServer): TestServer =>
  Object.assign(Object.create(server) as TestServer, { baseUrl: server.url });

describe('two nodes on one database', () => {
  let a: TestServer;
  let b: TestServer;
  let party: Party;
  beforeAll(async () => {
    a = node(await startTestServer({ env: { TOKEN_SIGNING_ALG: 'ES256', BASE_URL: ISSUER } }));
    b = node(
      await startTestServer({ env: { TOKEN_SIGNING_ALG: 'ES256', BASE_URL: ISSUER }, databaseUrl: a.databaseUrl }),
    );
    party = await setupParty(a);
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  it('publish one key set and verify each other’s tokens', async () => {
    expect(kids(await keySet(b))).toEqual(kids(await keySet(a)));
    expect(kids(await keySet(a))).toHaveLength(2);
    const fromA = await obtainTokens(a, party);
    const fromB = await obtainTokens(b, party);
    expect(kidOf(fromA.access_token)).toBe(kidOf(fromB.access_token));
    expect((await userinfo(b, fromA.access_token)).status).toBe(200);
    expect((await userinfo(a, fromB.access_token)).status).toBe(200);
  });

  it('rotating on both at once: one wins, and the set keeps one current and one next key', async () => {
    a.clock.advance(PUBLISHED_AHEAD);
    b.clock.advance(PUBLISHED_AHEAD);
    const results = await Promise.allSettled([
      rotateSigningKey(a.ctx, operator()),
      rotateSigningKey(b.ctx, operator()),
      rotateSigningKey(a.ctx, operator()),
    ]);
    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
    for (const result of results)
      if (result.status === 'rejected') expect(result.reason).toMatchObject({ error: 'conflict' });
    const set = await states(a);
    expect(set.current).toHaveLength(1);
    expect(set.next).toHaveLength(1);
    expect(set.retired).toHaveLength(1);
  });

  it('a rotation on one is seen by the other: its new tokens verify there at once, and it signs with the new key within a reload', async () => {
    const { current } = await states(a);
    const fromA = await obtainTokens(a, party);
    expect(kidOf(fromA.access_token)).toBe(current[0]);
    // B read the set before the rotation; the unknown kid makes it read again.
    expect((await userinfo(b, fromA.access_token)).status).toBe(200);
    b.clock.advance(30);
    expect(kidOf((await obtainTokens(b, party)).access_token)).toBe(current[0]);
    expect(kids(await keySet(b))).toEqual(kids(await keySet(a)));
  });
});

describe('emergency rotation, two nodes on one database (a key leaked)', () => {
  let a: TestServer;
  let b: TestServer;
  let party: Party;
  let admin: Awaited<ReturnType<typeof accountWithKey>>;
  beforeAll(async () => {
    a = node(await startTestServer({ env: { TOKEN_SIGNING_ALG: 'ES256', BASE_URL: ISSUER } }));
    b = node(
      await startTestServer({ env: { TOKEN_SIGNING_ALG: 'ES256', BASE_URL: ISSUER }, databaseUrl: a.databaseUrl }),
    );
    party = await setupParty(a);
    admin = await accountWithKey(a, { role: 'admin', key: { reach: 'all' } });
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  const refreshOn = async (server: TestServer, tokens: Tokens) => {
    const response = await postForm(server, '/token', {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
      client_id: party.clientId,
      client_secret: party.clientSecret,
    });
    expect(response.status).toBe(200);
    return (await response.json()) as Tokens;
  };

  it('now: a new key pair signs at once however young the next key is; the old keys stay published for their tokens', async () => {
    const first = await states(a);
    const old = await obtainTokens(b, party, { scope: 'openid' });
    expect(kidOf(old.access_token)).toBe(first.current[0]);

    // Without now, the refusal stays: the next key was published only now.
    const refused = await admin.call('POST', '/signing-keys/rotate');
    expect(refused.status).toBe(409);
    expect(refused.json.error_description).toContain('can sign from');
    expect(await states(a)).toEqual(first);

    const rotated = await admin.call('POST', '/signing-keys/rotate', { now: true });
    expect(rotated.status).toBe(200);
    const after = await states(a);
    expect(after.retired.sort()).toEqual([...first.current, ...first.next].sort());
    expect(after.current).toHaveLength(1);
    expect(after.next).toHaveLength(1);
    expect([...first.current, ...first.next]).not.toContain(after.current[0]);
    for (const key of rotated.json.data.filter((k: { state: string }) => k.state === 'retired'))
      expect(Date.parse(key.published_until) - Date.parse(key.retired_at)).toBe((3600 + 30) * 1000);
    const activity = await admin.call('GET', '/activity');
    expect(activity.json.data.find((act: { action: string }) => act.action.startsWith('signing_key.'))).toMatchObject({
      action: 'signing_key.rotate_now',
      target: after.current[0],
      detail: `key ${admin.key.id}: ES256 key signs now`,
    });

    // A signs with the new key at once; B verifies it at once (an unknown kid makes it read) and signs with it within a reload.
    const fresh = await obtainTokens(a, party, { scope: 'openid' });
    expect(kidOf(fresh.access_token)).toBe(after.current[0]);
    expect(kidOf(fresh.id_token!)).toBe(after.current[0]);
    expect((await userinfo(b, fresh.access_token)).status).toBe(200);
    b.clock.advance(30);
    a.clock.advance(30);
    expect(kidOf((await obtainTokens(b, party)).access_token)).toBe(after.current[0]);
    // Tokens of the replaced key verify until they expire, with the server and offline.
    expect((await userinfo(a, old.access_token)).status).toBe(200);
    expect(await introspect(b, party, old.access_token)).toBe(true);
    const published = await keySet(b);
    expect(kids(published)).toEqual([...after.retired, ...after.current, ...after.next].sort());
    await jwtVerify(old.access_token, createLocalJWKSet(published), {
      typ: 'at+jwt',
      currentDate: new Date(b.clock() * 1000),
    });
  });

  it('revoke previous: every earlier key leaves the set at once; its tokens stop verifying on every node within a reload', async () => {
    const before = await states(a);
    const leaked = await obtainTokens(a, party, { scope: 'openid' });
    const olderStill = before.retired;
    expect(olderStill.length).toBeGreaterThan(0);
    expect((await userinfo(b, leaked.access_token)).status).toBe(200);

    // Withdrawing the keys that sign without replacing them at once is refused; nothing changes.
    const alone = await admin.call('POST', '/signing-keys/rotate', { revoke_previous: true });
    expect(alone.status).toBe(400);
    expect(alone.json.error).toBe('invalid_request');
    const wrong = await admin.call('POST', '/signing-keys/rotate', { now: 'yes' });
    expect(wrong.status).toBe(400);
    expect(wrong.json.error).toBe('invalid_request');
    expect(await states(a)).toEqual(before);

    const rotated = await admin.call('POST', '/signing-keys/rotate', { now: true, revoke_previous: true });
    expect(rotated.status).toBe(200);
    const after = await states(a);
    expect(after.current).toHaveLength(1);
    expect(after.retired.sort()).toEqual([...before.retired, ...before.current, ...before.next].sort());
    for (const key of rotated.json.data.filter((k: { state: string }) => k.state === 'retired'))
      expect(Date.parse(key.published_until)).toBe(a.clock() * 1000);
    const acts = (await admin.call('GET', '/activity')).json.data;
    expect(acts.find((act: { action: string }) => act.action.startsWith('signing_key.'))).toMatchObject({
      action: 'signing_key.rotate_now',
      detail: `key ${admin.key.id}: ES256 key signs now; earlier keys withdrawn from the key set`,
    });

    // On the node that rotated, at once: the set has only the new pair, the leaked key's token is refused.
    expect(kids(await keySet(a))).toEqual([...after.current, ...after.next].sort());
    expect((await userinfo(a, leaked.access_token)).status).toBe(401);
    expect(await introspect(a, party, leaked.access_token)).toBe(false);
    await expect(
      jwtVerify(leaked.access_token, createLocalJWKSet(await keySet(a)), { typ: 'at+jwt' }),
    ).rejects.toThrow();

    // On the other node, within a reload: the same.
    b.clock.advance(30);
    expect((await userinfo(b, leaked.access_token)).status).toBe(401);
    expect(await introspect(b, party, leaked.access_token)).toBe(false);
    expect(kids(await keySet(b))).toEqual([...after.current, ...after.next].sort());
    expect(kidOf((await obtainTokens(b, party)).access_token)).toBe(after.current[0]);

    // The client is not cut off: its refresh token (never signed by a key) gets tokens of the new key.
    const renewed = await refreshOn(b, leaked);
    expect(kidOf(renewed.access_token)).toBe(after.current[0]);
    expect((await userinfo(a, renewed.access_token)).status).toBe(200);

    // The withdrawn keys leave the database at the next purge.
    a.clock.advance(1);
    expect((await purgeOnce(a.ctx)).signingKeys).toBe(after.retired.length);
  });
});

describe('switching TOKEN_SIGNING_ALG keeps every token valid until it expires', () => {
  const dir = mkdtempSync(join(tmpdir(), 'agentauth-switch-'));
  let database: { url: string; dispose(): Promise<void> };
  let party: Party;
  const tokens: Record<string, Tokens> = {};
  const start = async (alg: string) =>
    node(await startTestServer({ env: { TOKEN_SIGNING_ALG: alg, BASE_URL: ISSUER }, databaseUrl: database.url }));

  beforeAll(async () => {
    database = await freshDatabase(dir);
  });
  afterAll(async () => {
    await database?.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  it('HS256 → ES256 → RS256 → HS256: each earlier token still works; the key set drains to {"keys":[]}', async () => {
    const hs = await start('HS256');
    party = await setupParty(hs);
    tokens.HS256 = await obtainTokens(hs, party);
    expect(decodeProtectedHeader(tokens.HS256.access_token).alg).toBe('HS256');
    await hs.close();

    const es = await start('ES256');
    expect((await userinfo(es, tokens.HS256.access_token)).status).toBe(200);
    tokens.ES256 = await obtainTokens(es, party);
    expect(decodeProtectedHeader(tokens.ES256.access_token).alg).toBe('ES256');
    await es.close();

    const rs = await start('RS256');
    for (const alg of ['HS256', 'ES256']) expect(await introspect(rs, party, tokens[alg]!.access_token)).toBe(true);
    tokens.RS256 = await obtainTokens(rs, party);
    expect(decodeProtectedHeader(tokens.RS256.access_token).alg).toBe('RS256');
    // The ES256 pair retired at the switch; published with the RS256 pair until its tokens expire.
    expect(new Set((await keySet(rs)).keys.map((key) => key.alg))).toEqual(new Set(['ES256', 'RS256']));
    const esKid = kidOf(tokens.ES256.access_token);
    await jwtVerify(tokens.ES256.access_token, createLocalJWKSet(await keySet(rs)), { typ: 'at+jwt' });
    expect((await rs.ctx.store.signingKeys.list()).find((key) => key.kid === esKid)?.state).toBe('retired');
    await rs.close();

    const back = await start('HS256');
    for (const alg of ['HS256', 'ES256', 'RS256']) {
      expect((await userinfo(back, tokens[alg]!.access_token)).status).toBe(200);
      expect(await introspect(back, party, tokens[alg]!.access_token)).toBe(true);
    }
    const openid = (await (await fetch(`${back.baseUrl}/.well-known/openid-configuration`)).json()) as Record<
      string,
      unknown
    >;
    expect(openid.id_token_signing_alg_values_supported).toEqual(['HS256']);
    expect(decodeProtectedHeader((await obtainTokens(back, party)).access_token).alg).toBe('HS256');
    // Nothing signs with a key any more; the keys stay published only for the tokens they signed.
    expect((await back.ctx.store.signingKeys.list()).every((key) => key.state === 'retired')).toBe(true);
    const draining = await keySet(back);
    await jwtVerify(tokens.RS256.access_token, createLocalJWKSet(draining), { typ: 'at+jwt' });
    back.clock.advance(3600 + 30);
    const response = await fetch(`${back.baseUrl}/.well-known/jwks.json`);
    expect(response.headers.get('cache-control')).toBe('public, max-age=3600');
    expect(await response.text()).toBe('{"keys":[]}');
    expect((await userinfo(back, tokens.RS256.access_token)).status).toBe(401);
    back.clock.advance(1);
    await purgeOnce(back.ctx);
    expect(await back.ctx.store.signingKeys.list()).toEqual([]);
    await back.close();
  });
});

describe('a rolling switch back to HS256', () => {
  it('keys a node still in a key mode makes meanwhile are retired by the HS256 nodes and drain too', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentauth-rolling-'));
    const database = await freshDatabase(dir);
    const start = async (alg: string) =>
      node(await startTestServer({ env: { TOKEN_SIGNING_ALG: alg, BASE_URL: ISSUER }, databaseUrl: database.url }));
    const keyNode = await start('ES256');
    const hsNode = await start('HS256');
    try {
      const party = await setupParty(keyNode);
      expect((await states(hsNode)).current).toEqual([]);
      // The node not yet restarted reads the set within a reload, finds no key signing, makes one.
      keyNode.clock.advance(30);
      const late = await obtainTokens(keyNode, party);
      const made = await states(keyNode);
      expect(made.current).toEqual([kidOf(late.access_token)]);
      await keyNode.close();
      // The HS256 node, serving the key set it holds keys of, reads the set again within a reload
      // and retires the new keys; they are published until their tokens expire.
      hsNode.clock.advance(30);
      expect(kids(await keySet(hsNode))).toContain(made.current[0]);
      const after = await states(hsNode);
      expect(after.current).toEqual([]);
      expect(after.next).toEqual([]);
      expect(after.retired).toContain(made.current[0]);
      expect((await userinfo(hsNode, late.access_token)).status).toBe(200);
      hsNode.clock.advance(3600 + 30);
      expect(await (await fetch(`${hsNode.baseUrl}/.well-known/jwks.json`)).text()).toBe('{"keys":[]}');
    } finally {
      await hsNode.close();
      await database.dispose();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a key sealed under a server secret no longer configured', () => {
  it('is retired and replaced at start; its tokens still verify, since verifying needs only the public key', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentauth-reseal-'));
    const database = await freshDatabase(dir);
    const first = node(
      await startTestServer({ env: { TOKEN_SIGNING_ALG: 'ES256', BASE_URL: ISSUER }, databaseUrl: database.url }),
    );
    const party = await setupParty(first);
    const before = await obtainTokens(first, party);
    const oldKeys = await states(first);
    await first.close();
    const other = node(
      await startTestServer({
        env: {
          TOKEN_SIGNING_ALG: 'ES256',
          BASE_URL: ISSUER,
          JWT_SECRET: 'another-secret-of-at-least-32-bytes-9876543210',
        },
        databaseUrl: database.url,
      }),
    );
    try {
      const now = await states(other);
      expect(now.retired.sort()).toEqual([...oldKeys.current, ...oldKeys.next].sort());
      expect(now.current).toHaveLength(1);
      expect(now.current).not.toEqual(oldKeys.current);
      expect((await userinfo(other, before.access_token)).status).toBe(200);
      expect(kids(await keySet(other))).toEqual([...now.retired, ...now.current, ...now.next].sort());
    } finally {
      await other.close();
      await database.dispose();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('agentauth signing-key', () => {
  let server: TestServer;
  const env = () =>
    ({
      ...process.env,
      DATABASE_URL: server.databaseUrl,
      JWT_SECRET: TEST_JWT_SECRET,
      NODE_ENV: undefined,
      BASE_URL: undefined,
      TOKEN_SIGNING_ALG: undefined,
    }) as NodeJS.ProcessEnv;
  beforeAll(async () => {
    server = await startTestServer({ env: { TOKEN_SIGNING_ALG: 'RS256' } });
  });
  afterAll(() => server?.close());

  it('list shows kid, alg, state and times, never key material', async () => {
    const { stdout } = await run('./bin/agentauth', ['signing-key', 'list', '--json'], { env: env() });
    const listed = JSON.parse(stdout) as { signing_keys: Record<string, unknown>[] };
    expect(listed.signing_keys).toEqual(await listSigningKeys(server.ctx, operator()));
    expect(listed.signing_keys.map((key) => key.state).sort()).toEqual(['current', 'next']);
    expect(Object.keys(listed.signing_keys[0]!).sort()).toEqual(
      ['activated_at', 'alg', 'created_at', 'kid', 'published_until', 'retired_at', 'state'].sort(),
    );
    const text = (await run('./bin/agentauth', ['signing-key', 'list'], { env: env() })).stdout;
    expect(text).toMatch(/RS256 {2}current {2}created /);
  });

  it('rotate refuses, with the reason and the time it can, while the next key is new; nothing changes', async () => {
    const before = await server.ctx.store.signingKeys.list();
    const failure = await run('./bin/agentauth', ['signing-key', 'rotate'], { env: env() }).then(
      () => null,
      (error: { code: number; stderr: string }) => error,
    );
    expect(failure?.code).toBe(1);
    expect(failure?.stderr).toMatch(
      /^database: \S+\nagentauth: The next key \(\S+\) has been published only since .* it can sign from /,
    );
    expect(await server.ctx.store.signingKeys.list()).toEqual(before);
  });

  it('with HS256 there is nothing to rotate', async () => {
    const hs = await startTestServer();
    try {
      const failure = await run('./bin/agentauth', ['signing-key', 'rotate'], {
        env: { ...env(), DATABASE_URL: hs.databaseUrl },
      }).then(
        () => null,
        (error: { code: number; stderr: string }) => error,
      );
      expect(failure?.stderr).toContain('No signing key signs tokens: TOKEN_SIGNING_ALG is HS256');
      const { stdout } = await run('./bin/agentauth', ['signing-key', 'list'], {
        env: { ...env(), DATABASE_URL: hs.databaseUrl },
      });
      expect(stdout).toBe('no signing keys (TOKEN_SIGNING_ALG is HS256: JWT_SECRET signs)\n');
    } finally {
      await hs.close();
    }
  });
});
