/**
 * Two nodes sign and verify with one key set (docs/design.md §19): two `agentauth serve`
 * processes with TOKEN_SIGNING_ALG=ES256, started at once on one empty PostgreSQL database behind
 * one issuer, race to make the first key pair and settle on one set. Each publishes the same key
 * set; a code issued through node A is exchanged at node B; tokens node A issued verify with jose
 * against node B's key set, and node B's introspection and userinfo accept them; `agentauth
 * signing-key list`, run against the database, shows the one current key that signed them.
 *
 * PostgreSQL only (vitest.config.ts, POSTGRES_ONLY): separate processes sharing one database is
 * what several nodes are, and a SQLite file is one machine's. test/signing-key-rotation.test.ts
 * covers two servers in one process on either engine, rotation included.
 *
 * No rotation here: the CLI refuses one until the next key has been published for a JWKS cache
 * period and a reload (3630 s, §19), and these processes run on the real clock. An emergency
 * rotation, which would not wait, is not on this branch.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createContext } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import type { Context } from '../src/context.ts';
import { obtainCode, type Party, postForm, redeem, type Tokens } from './helpers/flow.ts';
import { freePort } from './helpers/net.ts';
import { createDatabase } from './helpers/postgres-cluster.ts';
import { registerParty, type TestServer } from './helpers/server.ts';
import { type ServerProcess, spawnServer, waitReady } from './helpers/server-process.ts';
import { openStore } from '../src/store/open.ts';

const run = promisify(execFile);
const JWT_SECRET = 'multi-node-signing-secret-of-at-least-32-bytes';
const ISSUER = 'http://agentauth.test:8080';

let database: { url: string; drop(): Promise<void> };
let processes: ServerProcess[] = [];
/** The nodes as the flow helpers see them: only baseUrl is used to address requests. */
let a: TestServer;
let b: TestServer;
let admin: Context;
let party: Party;

beforeAll(async () => {
  database = await createDatabase(inject('postgresUrl'));
  const ports = await Promise.all([freePort(), freePort()]);
  // Both start at once on an empty database: each finds no key and makes a first pair; one wins.
  processes = ports.map((port) =>
    spawnServer({
      BASE_URL: ISSUER,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: database.url,
      JWT_SECRET,
      TOKEN_SIGNING_ALG: 'ES256',
      LOG_LEVEL: 'warn',
    }),
  );
  await Promise.all(processes.map((server) => waitReady(server)));
  [a, b] = processes.map((server) => ({ baseUrl: server.baseUrl }) as TestServer) as [TestServer, TestServer];

  const config = loadConfig({ DATABASE_URL: database.url, JWT_SECRET, BASE_URL: ISSUER, TOKEN_SIGNING_ALG: 'ES256' });
  admin = await createContext(config, await openStore(database.url, { poolSize: 2 }), JWT_SECRET);
  party = await registerParty(admin, 'Two-node App');
}, 60_000);

afterAll(async () => {
  await Promise.all(processes.map((server) => server.kill('SIGTERM')));
  await admin?.store.close();
  await database?.drop();
});

const keySetOf = async (at: TestServer) => {
  const response = await fetch(`${at.baseUrl}/.well-known/jwks.json`);
  expect(response.status).toBe(200);
  return { text: await response.text(), cacheControl: response.headers.get('cache-control') };
};

const keySetUrl = (at: TestServer) => new URL('/.well-known/jwks.json', at.baseUrl);

async function signingKeyList(): Promise<{ kid: string; alg: string; state: string }[]> {
  const { stdout } = await run('./bin/agentauth', ['signing-key', 'list', '--json'], {
    env: { ...process.env, DATABASE_URL: database.url, JWT_SECRET, BASE_URL: ISSUER, NODE_ENV: undefined },
  });
  return (JSON.parse(stdout) as { signing_keys: { kid: string; alg: string; state: string }[] }).signing_keys;
}

describe('two nodes with TOKEN_SIGNING_ALG=ES256 on one PostgreSQL database', () => {
  it('publish the same key set, byte for byte: one current and one next key, made once', async () => {
    const [fromA, fromB] = await Promise.all([keySetOf(a), keySetOf(b)]);
    expect(fromB).toEqual(fromA);
    const { keys } = JSON.parse(fromA.text) as { keys: { kid: string; alg: string; use: string }[] };
    expect(keys).toHaveLength(2);
    for (const key of keys) expect(key).toMatchObject({ alg: 'ES256', use: 'sig', kty: 'EC', crv: 'P-256' });
    expect(fromA.cacheControl).toBe('public, max-age=3600');
    // The race to make the first pair left one set, not one per node.
    const stored = await admin.store.signingKeys.list();
    expect(stored.map((key) => key.state).sort()).toEqual(['current', 'next']);
    expect(stored.map((key) => key.kid).sort()).toEqual(keys.map((key) => key.kid).sort());
  });

  it('a code issued through node A is exchanged at node B, for tokens signed by the shared current key', async () => {
    const { code, verifier } = await obtainCode(a, party, { scope: 'openid email profile', nonce: 'two-nodes' });
    const exchanged = await redeem(b, party, code, verifier);
    expect(exchanged.status).toBe(200);
    const tokens = (await exchanged.json()) as Tokens;
    const current = (await admin.store.signingKeys.list()).find((key) => key.state === 'current')!;
    expect(decodeProtectedHeader(tokens.access_token)).toMatchObject({ alg: 'ES256', typ: 'at+jwt', kid: current.kid });
    expect(decodeProtectedHeader(tokens.id_token!)).toMatchObject({ alg: 'ES256', typ: 'JWT', kid: current.kid });
    // And node A verifies what node B issued.
    const { payload } = await jwtVerify(tokens.id_token!, createRemoteJWKSet(keySetUrl(a)), {
      issuer: ISSUER,
      audience: party.clientId,
    });
    expect(payload).toMatchObject({ sub: party.agentId, nonce: 'two-nodes' });
  });

  it('tokens node A issued verify with jose against node B’s key set; B’s introspection and userinfo accept them', async () => {
    const { code, verifier } = await obtainCode(a, party, { scope: 'openid email profile', nonce: 'issued-by-a' });
    const exchanged = await redeem(a, party, code, verifier);
    expect(exchanged.status).toBe(200);
    const tokens = (await exchanged.json()) as Tokens;

    const atB = createRemoteJWKSet(keySetUrl(b));
    const access = await jwtVerify(tokens.access_token, atB, {
      issuer: ISSUER,
      audience: party.clientId,
      typ: 'at+jwt',
      algorithms: ['ES256'],
    });
    expect(access.payload).toMatchObject({
      sub: party.agentId,
      client_id: party.clientId,
      scope: 'openid email profile',
    });
    const id = await jwtVerify(tokens.id_token!, atB, {
      issuer: ISSUER,
      audience: party.clientId,
      algorithms: ['ES256'],
    });
    expect(id.payload).toMatchObject({ sub: party.agentId, nonce: 'issued-by-a', email: 'ada@example.com' });

    const introspected = await postForm(b, '/introspect', {
      token: tokens.access_token,
      client_id: party.clientId,
      client_secret: party.clientSecret,
    });
    expect(introspected.status).toBe(200);
    expect(await introspected.json()).toMatchObject({
      active: true,
      sub: party.agentId,
      client_id: party.clientId,
      jti: access.payload.jti,
    });
    const userinfo = await fetch(`${b.baseUrl}/userinfo`, {
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });
    expect(userinfo.status).toBe(200);
    expect(await userinfo.json()).toMatchObject({ sub: party.agentId, email: 'ada@example.com' });
  });

  it('`agentauth signing-key list` against the database shows one current key: the one both nodes sign with', async () => {
    const listed = await signingKeyList();
    expect(listed.map((key) => key.state).sort()).toEqual(['current', 'next']);
    expect(listed.every((key) => key.alg === 'ES256')).toBe(true);
    const current = listed.find((key) => key.state === 'current')!;
    const signedAtA = await obtainCode(a, party).then(({ code, verifier }) => redeem(a, party, code, verifier));
    const signedAtB = await obtainCode(b, party).then(({ code, verifier }) => redeem(b, party, code, verifier));
    for (const response of [signedAtA, signedAtB]) {
      expect(response.status).toBe(200);
      expect(decodeProtectedHeader(((await response.json()) as Tokens).access_token).kid).toBe(current.kid);
    }
    const published = JSON.parse((await keySetOf(b)).text) as { keys: { kid: string }[] };
    expect(published.keys.map((key) => key.kid).sort()).toEqual(listed.map((key) => key.kid).sort());
  });
});
