/**
 * One action request across two nodes (docs/design.md §21): two `agentauth serve` processes on
 * one PostgreSQL database behind one issuer. The website asks at node A; a poll at A and one at
 * B right after agree (the interval is stored: slow_down at B); the owner approves in the
 * console of node B; node B issues the token with the approved details once, and node A then
 * refuses the same auth_req_id (invalid_grant).
 *
 * PostgreSQL only (vitest.config.ts, POSTGRES_ONLY): separate processes sharing one database is
 * what several nodes are, and a SQLite file is one machine's.
 */
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createContext } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import type { Context } from '../../src/context.ts';
import { registerClient } from '../../src/domain/clients.ts';
import { openStore } from '../../src/store/open.ts';
import { bcAuthorize, cibaPoll, PAY_ACME, PAYMENT, type Site } from '../helpers/action-requests.ts';
import { ConsoleSession, createPasswordAccount, TEST_PASSWORD } from '../helpers/console.ts';
import { obtainTokens } from '../helpers/flow.ts';
import { freePort } from '../helpers/net.ts';
import { createOwnedAgent } from '../helpers/owned.ts';
import { createDatabase } from '../helpers/postgres-cluster.ts';
import type { TestServer } from '../helpers/server.ts';
import { type ServerProcess, spawnServer, waitReady } from '../helpers/server-process.ts';

const JWT_SECRET = 'multi-node-actions-secret-of-at-least-32-bytes';
const ISSUER = 'http://agentauth.test:8080';

let database: { url: string; drop(): Promise<void> };
let processes: ServerProcess[] = [];
let a: TestServer;
let b: TestServer;
let admin: Context;

beforeAll(async () => {
  database = await createDatabase(inject('postgresUrl'));
  const ports = await Promise.all([freePort(), freePort()]);
  const env = { BASE_URL: ISSUER, HOST: '127.0.0.1', DATABASE_URL: database.url, JWT_SECRET, LOG_LEVEL: 'warn' };
  // Both start at once on an empty database: the migration lock lets one migrate, the other wait.
  processes = ports.map((port) => spawnServer({ ...env, PORT: String(port), ACTION_APPROVALS: 'true' }));
  await Promise.all(processes.map((server) => waitReady(server)));
  [a, b] = processes.map((server) => ({ baseUrl: server.baseUrl }) as TestServer) as [TestServer, TestServer];
  const config = loadConfig({ DATABASE_URL: database.url, JWT_SECRET, BASE_URL: ISSUER, ACTION_APPROVALS: 'true' });
  admin = await createContext(config, await openStore(database.url, { poolSize: 2 }), JWT_SECRET);
}, 60_000);

afterAll(async () => {
  await Promise.all(processes.map((server) => server.kill('SIGTERM')));
  await admin?.store.close();
  await database?.drop();
});

describe('an action request served by two nodes', () => {
  it('asked at A, slow_down agreed at B, approved and polled at B, refused again at A', async () => {
    const owner = await createPasswordAccount(admin, { email: 'ada@example.org' });
    const { client, secret: clientSecret } = await registerClient(admin, {
      name: 'Two-node Shop',
      redirectUris: ['http://localhost:8080/callback'],
    });
    await admin.store.clients.update(client.id, { action_types: [PAYMENT], backchannel_token_delivery_mode: 'poll' });
    const site: Site = { clientId: client.id, clientSecret };
    const { agent, secret } = await createOwnedAgent(admin, owner, 'Two-node agent');
    await obtainTokens(a, {
      ...site,
      redirectUri: 'http://localhost:8080/callback',
      agentId: agent.id,
      agentSecret: secret,
    });

    const asked = await bcAuthorize(a.baseUrl, site, {
      scope: 'openid',
      login_hint: agent.id,
      binding_message: 'Order 7',
      authorization_details: JSON.stringify(PAY_ACME),
    });
    expect(asked.status).toBe(200);
    const { auth_req_id: authReqId } = (await asked.json()) as { auth_req_id: string };
    expect(await (await cibaPoll(a.baseUrl, site, authReqId)).json()).toMatchObject({ error: 'authorization_pending' });
    expect(await (await cibaPoll(b.baseUrl, site, authReqId)).json()).toMatchObject({ error: 'slow_down' });

    const [approval] = await admin.store.approvals.list({
      accountId: owner.id,
      status: 'pending',
      now: admin.clock(),
      limit: 5,
    });
    expect(approval).toMatchObject({ kind: 'action', agent_id: agent.id, binding_message: 'Order 7' });
    // The owner at node B's console; its forms come from the issuer's origin, as behind a load balancer.
    const origin = { origin: ISSUER };
    const console = new ConsoleSession(b.baseUrl);
    await console.get('/console/sign-in');
    expect(
      (await console.post('/console/sign-in', { email: owner.email, password: TEST_PASSWORD }, origin)).status,
    ).toBe(303);
    await console.get(`/console/approvals/${approval!.id}`);
    const decided = await console.post(
      `/console/approvals/${approval!.id}/decide`,
      { decision: 'once', password: TEST_PASSWORD },
      origin,
    );
    expect(decided.status).toBe(303);

    const tokens = await cibaPoll(b.baseUrl, site, authReqId);
    expect(tokens.status).toBe(200);
    const body = (await tokens.json()) as { access_token: string; authorization_details: unknown };
    expect(body.authorization_details).toEqual(PAY_ACME);
    expect(decodeJwt(body.access_token)).toMatchObject({ iss: ISSUER, sub: agent.id, authorization_details: PAY_ACME });
    expect(await (await cibaPoll(a.baseUrl, site, authReqId)).json()).toMatchObject({ error: 'invalid_grant' });
  });
});
