/**
 * Several stateless nodes on one PostgreSQL database (docs/design.md §9): three `agentauth serve`
 * processes share a database and JWT_SECRET behind one issuer, as behind a load balancer
 * without sticky sessions. Flows hop between nodes at every step, and the exactly-once
 * transitions are raced across nodes.
 */
import { freePort } from './helpers/net.ts';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import type { Context } from '../src/context.ts';
import { registerAgent } from '../src/domain/agents.ts';
import { createContext } from '../src/app.ts';
import { openStore } from '../src/store/open.ts';
import { openStatusStream } from './helpers/events.ts';
import {
  authenticate,
  checkStatus,
  continueFlow,
  obtainCode,
  type Party,
  postForm,
  redeem,
  startFlow,
  type Tokens,
} from './helpers/flow.ts';
import { createDatabase } from './helpers/postgres-cluster.ts';
import { registerParty, type TestServer } from './helpers/server.ts';
import { type ServerProcess, spawnServer, waitReady } from './helpers/server-process.ts';

const JWT_SECRET = 'multi-node-shared-secret-of-at-least-32-bytes';
const ISSUER = 'http://agentauth.test:8080';
const NODE_COUNT = 3;
const FLOWS = 30;

let database: { url: string; drop(): Promise<void> };
let processes: ServerProcess[] = [];
/** The nodes as the flow helpers see them: only baseUrl is used to address requests. */
let nodes: TestServer[] = [];
let admin: Context;
let party: Party;

beforeAll(async () => {
  database = await createDatabase(inject('postgresUrl'));
  const ports = await Promise.all(Array.from({ length: NODE_COUNT }, () => freePort()));
  // All nodes start at once: their migrations race and must settle on one schema.
  processes = ports.map((port) =>
    spawnServer({
      BASE_URL: ISSUER,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: database.url,
      JWT_SECRET,
      LOG_LEVEL: 'warn',
      AUTH_FAILURES_PER_AGENT: '5',
      AUTH_FAILURES_PER_IP: '1000',
    }),
  );
  nodes = processes.map((server) => ({ baseUrl: server.baseUrl }) as TestServer);
  await Promise.all(processes.map((server) => waitReady(server)));

  const config = loadConfig({ DATABASE_URL: database.url, JWT_SECRET, BASE_URL: ISSUER });
  admin = await createContext(config, await openStore(database.url, { poolSize: 2 }), JWT_SECRET);
  party = await registerParty(admin, 'Multi-node App');
}, 60_000);

afterAll(async () => {
  await Promise.all(processes.map((server) => server.kill('SIGTERM')));
  await admin?.store.close();
  await database?.drop();
});

const node = (i: number) => nodes[i % NODE_COUNT]!;
const introspect = async (at: TestServer, token: string) =>
  (await (
    await postForm(at, '/introspect', { token, client_id: party.clientId, client_secret: party.clientSecret })
  ).json()) as { active: boolean };
const refresh = (at: TestServer, token: string) =>
  postForm(at, '/token', {
    grant_type: 'refresh_token',
    refresh_token: token,
    client_id: party.clientId,
    client_secret: party.clientSecret,
  });

describe(`${NODE_COUNT} nodes on one PostgreSQL database`, () => {
  it(`runs ${FLOWS} flows whose every step lands on another node`, async () => {
    for (let flow = 0; flow < FLOWS; flow++) {
      // Rotate the roles so that every node plays every step: A authorizes, B authenticates,
      // C reports the status, A continues, B exchanges, C introspects and refreshes, A revokes, B sees it.
      const [a, b, c] = [node(flow), node(flow + 1), node(flow + 2)];
      const started = await startFlow(a, party);
      expect((await authenticate(b, party, started.requestId)).status).toBe(200);
      expect((await checkStatus(c, started.requestId)).body).toEqual({ status: 'authenticated' });
      const redirect = await continueFlow(a, started);
      expect(redirect.status).toBe(302);
      const location = new URL(redirect.headers.get('location')!);
      expect(location.searchParams.get('iss')).toBe(ISSUER);
      expect(location.searchParams.get('state')).toBe(started.state);
      expect((await checkStatus(b, started.requestId)).body).toEqual({ status: 'completed' });
      const exchanged = await redeem(b, party, location.searchParams.get('code')!, started.verifier);
      expect(exchanged.status).toBe(200);
      const tokens = (await exchanged.json()) as Tokens;
      expect((await introspect(c, tokens.access_token)).active).toBe(true);
      const refreshed = await refresh(c, tokens.refresh_token);
      expect(refreshed.status).toBe(200);
      const next = (await refreshed.json()) as Tokens;
      expect(
        (
          await postForm(a, '/revoke', {
            token: next.access_token,
            client_id: party.clientId,
            client_secret: party.clientSecret,
          })
        ).status,
      ).toBe(200);
      expect((await introspect(b, next.access_token)).active).toBe(false);
      expect(
        (await fetch(`${b.baseUrl}/userinfo`, { headers: { authorization: `Bearer ${next.access_token}` } })).status,
      ).toBe(401);
    }
  });

  it('of 20 concurrent authentications of one request spread over the nodes, exactly one succeeds (10 races)', async () => {
    for (let race = 0; race < 10; race++) {
      const started = await startFlow(node(race), party);
      const responses = await Promise.all(
        Array.from({ length: 20 }, (_, i) => authenticate(node(i), party, started.requestId)),
      );
      const statuses = responses.map((response) => response.status);
      expect(
        statuses.filter((status) => status === 200),
        `race ${race}: ${statuses.join(',')}`,
      ).toHaveLength(1);
      expect(statuses.filter((status) => status === 409)).toHaveLength(19);
    }
  });

  it('one code redeemed concurrently on two nodes gives one success and revokes what it issued (10 races)', async () => {
    for (let race = 0; race < 10; race++) {
      const { code, verifier } = await obtainCode(node(race), party);
      const responses = await Promise.all([
        redeem(node(race), party, code, verifier),
        redeem(node(race + 1), party, code, verifier),
      ]);
      const winners = responses.filter((response) => response.status === 200);
      expect(winners, `race ${race}`).toHaveLength(1);
      expect(responses.filter((response) => response.status === 400)).toHaveLength(1);
      const tokens = (await winners[0]!.json()) as Tokens;
      // The loser was a replay of a redeemed code: RFC 6749 §4.1.2, the tokens it issued are revoked.
      expect((await introspect(node(race + 2), tokens.access_token)).active).toBe(false);
    }
  });

  it('one refresh token used concurrently on every node gives exactly one success (10 races)', async () => {
    for (let race = 0; race < 10; race++) {
      const { code, verifier } = await obtainCode(node(race), party);
      const tokens = (await (await redeem(node(race), party, code, verifier)).json()) as Tokens;
      const responses = await Promise.all(Array.from({ length: 6 }, (_, i) => refresh(node(i), tokens.refresh_token)));
      expect(
        responses.filter((response) => response.status === 200),
        `race ${race}`,
      ).toHaveLength(1);
      expect(responses.filter((response) => response.status === 400)).toHaveLength(5);
    }
  });

  it('counts failed authentications across nodes: the limit holds however the attempts are spread', async () => {
    // An agent of its own, since this test leaves its agent_id throttled.
    const { agent } = await registerAgent(admin, { ownerEmail: 'target@example.com' });
    const started = await startFlow(node(0), party);
    const wrong = (at: TestServer) =>
      authenticate(at, { ...party, agentId: agent.id, agentSecret: 'aas_wrong' }, started.requestId);
    for (let attempt = 0; attempt < 5; attempt++) expect((await wrong(node(attempt))).status).toBe(401);
    for (let i = 0; i < NODE_COUNT; i++) expect((await wrong(node(i))).status).toBe(429);
  });

  it('serves the same metadata from every node, with the shared issuer', async () => {
    for (const at of nodes) {
      const metadata = (await (await fetch(`${at.baseUrl}/.well-known/oauth-authorization-server`)).json()) as {
        issuer: string;
      };
      expect(metadata.issuer).toBe(ISSUER);
    }
  });

  it('pushes every status change to a page waiting on another node (LISTEN/NOTIFY)', async () => {
    const started = await startFlow(node(0), party);
    // Three waiting connections, one per node; the changes happen on nodes 1 and 2.
    const streams = await Promise.all(nodes.map((at) => openStatusStream(at.baseUrl, started.requestId)));
    for (const stream of streams) expect(await stream.nextStatus()).toEqual({ status: 'pending' });
    expect((await authenticate(node(1), party, started.requestId)).status).toBe(200);
    for (const stream of streams) expect(await stream.nextStatus()).toEqual({ status: 'authenticated' });
    expect((await continueFlow(node(2), started)).status).toBe(302);
    for (const stream of streams) {
      expect(await stream.nextStatus()).toEqual({ status: 'completed' });
      expect(await stream.next()).toBeNull();
    }
  });

  it('re-reads after its LISTEN connection broke, so a change made meanwhile is not lost', async () => {
    const started = await startFlow(node(0), party);
    const stream = await openStatusStream(node(0).baseUrl, started.requestId);
    expect(await stream.nextStatus()).toEqual({ status: 'pending' });
    const sql = new pg.Client({ connectionString: database.url });
    await sql.connect();
    try {
      const killed = await sql.query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query = 'LISTEN agentauth_status'",
      );
      expect(killed.rowCount).toBeGreaterThanOrEqual(1);
    } finally {
      await sql.end();
    }
    // The change lands while node 0 is still reconnecting: no notification reaches it.
    expect((await authenticate(node(1), party, started.requestId)).status).toBe(200);
    expect(await stream.nextStatus(10_000)).toEqual({ status: 'authenticated' });
    await stream.close();
  });
});
