/**
 * PostgreSQL goes away under a running server, and comes back (PostgreSQL only). The test runs
 * its own throwaway cluster, so stopping it disturbs no other suite. Two `agentauth serve`
 * processes use it: one over TCP (127.0.0.1) and one over the cluster's unix socket, the two
 * ways a node reaches its database.
 *
 * While the database is down: every endpoint that needs it answers 503
 * temporarily_unavailable in the documented error shape (the HTML pages in their error page),
 * quickly (no hang), never 500 and never a stack trace; /readyz answers 503; /healthz, the
 * metadata documents and the key set still answer 200; the process stays up. When the
 * database is back: /readyz is 200 again within seconds without a restart, new flows work, and
 * what was created before the outage (a pending request, an authenticated request, an
 * unredeemed code, access and refresh tokens) still works.
 *
 * Two outages: a fast shutdown (sessions are told 57P01 and closed) and an immediate one (the
 * server is gone without a word, as after a crash).
 */
import { freePort } from '../helpers/net.ts';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import type { Context } from '../../src/context.ts';
import { createContext } from '../../src/app.ts';
import { openStore } from '../../src/store/open.ts';
import {
  authenticate,
  checkStatus,
  continueFlow,
  metaContent,
  type Party,
  postForm,
  redeem,
  startFlow,
  type Started,
  type Tokens,
} from '../helpers/flow.ts';
import { initDataDirectory, postgresBinDir } from '../helpers/postgres-cluster.ts';
import { registerParty, type TestServer } from '../helpers/server.ts';
import { type ServerProcess, spawnServer, waitReady } from '../helpers/server-process.ts';

const JWT_SECRET = 'outage-test-secret-of-at-least-32-bytes-01234';
/** An answer during the outage must come within this (the pool's connect timeout is 5 s). */
const MAX_OUTAGE_ANSWER_MS = 3000;
/** After the database is back, /readyz must be 200 within this. */
const MAX_RECOVERY_MS = 5000;

/**
 * A cluster of this test's own that can be stopped and started again on the same data
 * directory and port (test/helpers' startCluster removes its directory when it stops).
 */
interface RestartableCluster {
  tcpUrl: string;
  socketUrl: string;
  /** Starts PostgreSQL (nothing when it runs already). */
  start(): void;
  stop(mode: 'fast' | 'immediate'): void;
  destroy(): void;
}

function restartableCluster(port: number): RestartableCluster {
  const { dir, data, run } = initDataDirectory('agentauth-pg-outage-');
  const options = `-c listen_addresses=127.0.0.1 -c unix_socket_directories=${dir} -p ${port} -c max_connections=100 -c fsync=off`;
  let running = false;
  const cluster: RestartableCluster = {
    tcpUrl: `postgres://postgres@127.0.0.1:${port}/agentauth`,
    socketUrl: `postgres://postgres@localhost/agentauth?host=${encodeURIComponent(dir)}&port=${port}`,
    start() {
      if (running) return;
      run('pg_ctl', ['-D', data, '-w', '-l', join(dir, 'log'), '-o', options, 'start']);
      running = true;
    },
    stop(mode) {
      run('pg_ctl', ['-D', data, '-m', mode, '-w', 'stop']);
      running = false;
    },
    destroy() {
      try {
        if (running) cluster.stop('immediate');
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
  return cluster;
}

interface Answer {
  endpoint: string;
  status: number;
  ms: number;
  contentType: string;
  body: string;
}

let cluster: RestartableCluster | undefined;
interface Node {
  name: string;
  env: Record<string, string>;
  process: ServerProcess;
  /** Output of earlier processes of this node (a crashed one is replaced by the next test). */
  earlier: string[];
}
let nodes: Node[] = [];
let admin: Context;
let party: Party;

/** Everything made before an outage, to be used during and after it. */
interface Before {
  pending: Started;
  authenticated: Started;
  code: { code: string; verifier: string };
  tokens: Tokens;
}

const asServer = (node: ServerProcess) => ({ baseUrl: node.baseUrl }) as TestServer;

async function timed(endpoint: string, send: () => Promise<Response>): Promise<Answer> {
  const started = performance.now();
  let response: Response;
  let body: string;
  try {
    response = await send();
    body = await response.text();
  } catch (error) {
    return {
      endpoint,
      status: 0,
      ms: performance.now() - started,
      contentType: '',
      body: `no answer: ${(error as Error).message} ${String((error as { cause?: unknown }).cause ?? '')}`,
    };
  }
  return {
    endpoint,
    status: response.status,
    ms: performance.now() - started,
    contentType: response.headers.get('content-type') ?? '',
    body,
  };
}

async function prepare(server: TestServer): Promise<Before> {
  const pending = await startFlow(server, party);
  const authenticated = await startFlow(server, party);
  expect((await authenticate(server, party, authenticated.requestId)).status).toBe(200);
  const forCode = await startFlow(server, party);
  expect((await authenticate(server, party, forCode.requestId)).status).toBe(200);
  const redirect = await continueFlow(server, forCode);
  expect(redirect.status).toBe(302);
  const code = new URL(redirect.headers.get('location')!).searchParams.get('code')!;
  const forTokens = await startFlow(server, party);
  expect((await authenticate(server, party, forTokens.requestId)).status).toBe(200);
  const tokenRedirect = await continueFlow(server, forTokens);
  const tokenCode = new URL(tokenRedirect.headers.get('location')!).searchParams.get('code')!;
  const exchanged = await redeem(server, party, tokenCode, forTokens.verifier);
  expect(exchanged.status).toBe(200);
  return {
    pending,
    authenticated,
    code: { code, verifier: forCode.verifier },
    tokens: (await exchanged.json()) as Tokens,
  };
}

/** One request to every endpoint that needs the database, and to those that do not. */
async function probe(server: TestServer, before: Before): Promise<{ needsDatabase: Answer[]; independent: Answer[] }> {
  const url = (path: string) => new URL(path, server.baseUrl);
  const client = { client_id: party.clientId, client_secret: party.clientSecret };
  const authorizeQuery = new URLSearchParams({
    client_id: party.clientId,
    redirect_uri: party.redirectUri,
    response_type: 'code',
    state: 'outage-state',
    code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    code_challenge_method: 'S256',
  });
  const needsDatabase = await Promise.all([
    timed('GET /authorize', () => fetch(url(`/authorize?${authorizeQuery}`))),
    timed('POST /authorize/continue', () => continueFlow(server, before.authenticated)),
    timed('POST /api/agent/authenticate', () => authenticate(server, party, before.pending.requestId)),
    timed('GET /api/check-status', () => fetch(url(`/api/check-status?request_id=${before.pending.requestId}`))),
    timed('POST /token (authorization_code)', () => redeem(server, party, before.code.code, before.code.verifier)),
    timed('POST /token (refresh_token)', () =>
      postForm(server, '/token', {
        grant_type: 'refresh_token',
        refresh_token: before.tokens.refresh_token,
        ...client,
      }),
    ),
    timed('POST /introspect', () => postForm(server, '/introspect', { token: before.tokens.access_token, ...client })),
    timed('POST /revoke', () =>
      postForm(server, '/revoke', { token: 'rft_not-a-real-refresh-token-but-shaped-like-one', ...client }),
    ),
    timed('GET /userinfo', () =>
      fetch(url('/userinfo'), { headers: { authorization: `Bearer ${before.tokens.access_token}` } }),
    ),
    timed('POST /userinfo', () =>
      fetch(url('/userinfo'), { method: 'POST', headers: { authorization: `Bearer ${before.tokens.access_token}` } }),
    ),
    timed('GET /readyz', () => fetch(url('/readyz'))),
  ]);
  const independent = await Promise.all([
    timed('GET /healthz', () => fetch(url('/healthz'))),
    timed('GET /.well-known/oauth-authorization-server', () => fetch(url('/.well-known/oauth-authorization-server'))),
    timed('GET /.well-known/openid-configuration', () => fetch(url('/.well-known/openid-configuration'))),
    timed('GET /.well-known/jwks.json', () => fetch(url('/.well-known/jwks.json'))),
    timed('GET /assets/authorize.js', () => fetch(url('/assets/authorize.js'))),
  ]);
  return { needsDatabase, independent };
}

/** What is wrong with an answer given while the database is down (undefined when it is right). */
function outageProblem(answer: Answer): string | undefined {
  const describe = `${answer.endpoint}: ${answer.status} in ${Math.round(answer.ms)} ms ${answer.body.slice(0, 200)}`;
  if (answer.ms > MAX_OUTAGE_ANSWER_MS) return `too slow: ${describe}`;
  if (answer.status !== 503) return `not 503: ${describe}`;
  if (/\bat .+:\d+:\d+|node_modules|Error:/.test(answer.body))
    return `stack trace or internal error in the body: ${describe}`;
  if (answer.contentType.startsWith('text/html')) {
    // The authorization page endpoints answer with their HTML error page (docs/contract.md), the error in its meta elements.
    if (
      metaContent(answer.body, 'error') !== 'temporarily_unavailable' ||
      !metaContent(answer.body, 'error-description')
    )
      return `HTML error page without temporarily_unavailable: ${describe}`;
    return undefined;
  }
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(answer.body) as Record<string, unknown>;
  } catch {
    return `not JSON: ${describe}`;
  }
  if (body.error !== 'temporarily_unavailable' || typeof body.error_description !== 'string' || !body.error_description)
    return `wrong error body: ${describe}`;
  return undefined;
}

/** Keeps sending requests until stopped; returns every status seen (the outage starts under it). */
function backgroundLoad(server: TestServer, before: Before): { stop(): Promise<Map<number, number>> } {
  let running = true;
  const statuses = new Map<number, number>();
  const loop = async () => {
    while (running) {
      const answers = await Promise.all([
        timed('check-status', () =>
          fetch(new URL(`/api/check-status?request_id=${before.pending.requestId}`, server.baseUrl)),
        ),
        timed('introspect', () =>
          postForm(server, '/introspect', {
            token: before.tokens.access_token,
            client_id: party.clientId,
            client_secret: party.clientSecret,
          }),
        ),
        timed('userinfo', () =>
          fetch(new URL('/userinfo', server.baseUrl), {
            headers: { authorization: `Bearer ${before.tokens.access_token}` },
          }),
        ),
      ]);
      for (const answer of answers) statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
    }
  };
  const loops = Array.from({ length: 6 }, loop);
  return {
    async stop() {
      running = false;
      await Promise.all(loops);
      return statuses;
    },
  };
}

async function readyWithin(server: TestServer, limitMs: number): Promise<number> {
  const started = performance.now();
  while (performance.now() - started < limitMs) {
    const answer = await timed('readyz', () =>
      fetch(new URL('/readyz', server.baseUrl), { signal: AbortSignal.timeout(limitMs) }),
    );
    if (answer.status === 200) return performance.now() - started;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return Infinity;
}

async function fullFlow(server: TestServer): Promise<void> {
  const started = await startFlow(server, party);
  expect((await authenticate(server, party, started.requestId)).status).toBe(200);
  const redirect = await continueFlow(server, started);
  expect(redirect.status).toBe(302);
  const response = await redeem(
    server,
    party,
    new URL(redirect.headers.get('location')!).searchParams.get('code')!,
    started.verifier,
  );
  expect(response.status).toBe(200);
  const tokens = (await response.json()) as Tokens;
  expect(
    (await fetch(new URL('/userinfo', server.baseUrl), { headers: { authorization: `Bearer ${tokens.access_token}` } }))
      .status,
  ).toBe(200);
}

/** What was made before the outage works after it, as if nothing had happened. */
async function beforeStillWorks(server: TestServer, before: Before): Promise<void> {
  expect((await checkStatus(server, before.pending.requestId)).body).toEqual({ status: 'pending' });
  expect((await authenticate(server, party, before.pending.requestId)).status).toBe(200);
  const redirect = await continueFlow(server, before.authenticated);
  expect(redirect.status).toBe(302);
  expect((await redeem(server, party, before.code.code, before.code.verifier)).status).toBe(200);
  const introspected = (await (
    await postForm(server, '/introspect', {
      token: before.tokens.access_token,
      client_id: party.clientId,
      client_secret: party.clientSecret,
    })
  ).json()) as { active: boolean };
  expect(introspected.active).toBe(true);
  expect(
    (
      await fetch(new URL('/userinfo', server.baseUrl), {
        headers: { authorization: `Bearer ${before.tokens.access_token}` },
      })
    ).status,
  ).toBe(200);
  const refreshed = await postForm(server, '/token', {
    grant_type: 'refresh_token',
    refresh_token: before.tokens.refresh_token,
    client_id: party.clientId,
    client_secret: party.clientSecret,
  });
  expect(refreshed.status, 'the refresh token sent during the outage was not used up by it').toBe(200);
}

const skip = !postgresBinDir() || Boolean(process.env.TEST_DATABASE_URL);

describe.skipIf(skip)('PostgreSQL outage under running servers', () => {
  beforeAll(async () => {
    cluster = restartableCluster(await freePort());
    cluster.start();
    const postgres = new pg.Client({ connectionString: cluster.tcpUrl.replace('/agentauth', '/postgres') });
    await postgres.connect();
    await postgres.query('CREATE DATABASE agentauth');
    await postgres.end();

    const config = loadConfig({ DATABASE_URL: cluster.tcpUrl, JWT_SECRET, BASE_URL: 'http://agentauth.test' });
    const store = await openStore(cluster.tcpUrl, { poolSize: 1 });
    await store.migrate();
    admin = await createContext(config, store, JWT_SECRET);
    party = await registerParty(admin, 'Outage App');
    // The admin connection is not needed any more, and must not be in the way of the outage.
    await store.close();

    const env = {
      HOST: '127.0.0.1',
      BASE_URL: 'http://agentauth.test',
      JWT_SECRET,
      LOG_LEVEL: 'warn',
      AUTH_FAILURES_PER_IP: '1000',
    };
    const [tcpPort, socketPort] = [await freePort(), await freePort()];
    nodes = [
      { name: 'tcp', env: { ...env, PORT: String(tcpPort), DATABASE_URL: cluster.tcpUrl } },
      { name: 'unix socket', env: { ...env, PORT: String(socketPort), DATABASE_URL: cluster.socketUrl } },
    ].map((node) => ({ ...node, process: spawnServer(node.env), earlier: [] }));
    await Promise.all(nodes.map((node) => waitReady(node.process)));
  }, 60_000);

  afterAll(async () => {
    await Promise.all(nodes.map((node) => node.process.kill('SIGTERM')));
    cluster?.destroy();
  });

  const alive = (node: Node) => node.process.child.exitCode === null && node.process.child.signalCode === null;

  /** A node that an earlier test's outage brought down is started again, so each test stands alone. */
  async function ensureRunning(node: Node): Promise<void> {
    if (alive(node)) return;
    node.earlier.push(node.process.output());
    node.process = spawnServer(node.env);
    await waitReady(node.process);
  }

  /**
   * The crash of a node that ended: the lines of its output that are not log lines, then its
   * last log lines (a node once ended with exit code 0 and no other output, on Node 24 under CI's
   * load: the log says what it was doing).
   */
  const crashOf = (node: Node) => {
    const lines = node.process.output().split('\n');
    const isLog = (line: string) => line.startsWith('{') || line.startsWith('warning:');
    return (
      `${node.name}: the process ended (exit code ${node.process.child.exitCode}, signal ${node.process.child.signalCode}):\n` +
      lines
        .filter((line) => !isLog(line))
        .join('\n')
        .trim()
        .slice(0, 1500) +
      `\nits last log lines:\n${lines.filter(isLog).slice(-15).join('\n').slice(-4000)}`
    );
  };

  /**
   * One outage: prepares state on each node, keeps a background load running, stops PostgreSQL,
   * probes every endpoint twice, starts PostgreSQL and checks recovery. Returns what went wrong.
   */
  async function outage(
    mode: 'fast' | 'immediate',
    on: Node[],
    { load }: { load: boolean },
  ): Promise<{ problems: string[]; report: string[]; crashed: string[] }> {
    const report: string[] = [];
    const problems: string[] = [];
    const crashed: string[] = [];
    cluster!.start(); // in case an earlier test ended before it could start it again
    for (const node of on) await ensureRunning(node);
    const befores = await Promise.all(on.map((node) => prepare(asServer(node.process))));
    const loads = load ? on.map((node, i) => backgroundLoad(asServer(node.process), befores[i]!)) : [];
    if (load) await new Promise((resolve) => setTimeout(resolve, 200));

    const stoppedAt = performance.now();
    cluster!.stop(mode);
    report.push(`pg_ctl stop -m ${mode} took ${Math.round(performance.now() - stoppedAt)} ms`);

    // Right after the stop (the pools still hold the connections PostgreSQL closed), and again later.
    for (const round of ['at once', 'after 1.5 s']) {
      if (round !== 'at once') await new Promise((resolve) => setTimeout(resolve, 1500));
      for (const [i, node] of on.entries()) {
        if (!alive(node)) continue;
        const { needsDatabase, independent } = await probe(asServer(node.process), befores[i]!);
        for (const answer of needsDatabase) {
          const problem = outageProblem(answer);
          if (problem) problems.push(`[${node.name}, ${round}] ${problem}`);
        }
        for (const answer of independent) {
          if (answer.status !== 200 || answer.ms > MAX_OUTAGE_ANSWER_MS)
            problems.push(
              `[${node.name}, ${round}] ${answer.endpoint}: ${answer.status} in ${Math.round(answer.ms)} ms (expected 200)`,
            );
        }
        const times = needsDatabase.map((answer) => answer.ms);
        const statuses = (answers: Answer[]) => [...new Set(answers.map((a) => a.status))].join('/');
        report.push(
          `${node.name}, ${round}: database endpoints answered ${statuses(needsDatabase)} in ${Math.round(Math.min(...times))}–${Math.round(Math.max(...times))} ms; others ${statuses(independent)}`,
        );
      }
    }

    for (const node of on) {
      if (alive(node)) continue;
      crashed.push(node.name);
      problems.push(`during the outage ${crashOf(node)}`);
    }

    cluster!.start();
    const startedAt = performance.now();
    for (const node of on.filter(alive)) {
      const ms = await readyWithin(asServer(node.process), MAX_RECOVERY_MS);
      report.push(
        `${node.name}: /readyz 200 again ${Number.isFinite(ms) ? `${Math.round(performance.now() - startedAt)} ms after PostgreSQL was back` : `NOT within ${MAX_RECOVERY_MS} ms`}`,
      );
      if (!Number.isFinite(ms))
        problems.push(`${node.name}: /readyz not 200 within ${MAX_RECOVERY_MS} ms after PostgreSQL was back`);
    }
    for (const [i, load] of loads.entries()) {
      const statuses = await load.stop();
      report.push(
        `${on[i]!.name}: background load answers by status ${JSON.stringify(Object.fromEntries(statuses))} (0 = no answer)`,
      );
      for (const [status, count] of statuses) {
        if (![200, 503].includes(status) && !(status === 0 && crashed.includes(on[i]!.name)))
          problems.push(`${on[i]!.name}: background load got ${status} ${count} times`);
      }
    }

    for (const [i, node] of on.entries()) {
      if (!alive(node)) continue;
      await fullFlow(asServer(node.process));
      await beforeStillWorks(asServer(node.process), befores[i]!);
      if (/"statusCode":500|server_error/.test(node.process.output())) problems.push(`${node.name}: a 500 was logged`);
    }
    return { problems, report, crashed };
  }

  for (const kind of ['tcp', 'unix socket']) {
    it(`over ${kind}: answers 503 quickly while PostgreSQL is down, and recovers by itself when it is back`, async () => {
      const node = nodes.find((candidate) => candidate.name === kind)!;
      const { problems, report } = await outage('fast', [node], { load: false });
      console.log(`[database outage, fast shutdown, idle server, ${kind}]\n  ${report.join('\n  ')}`);
      expect(problems).toEqual([]);
    }, 30_000);
  }

  it('stays up when PostgreSQL dies while requests wait on it (deterministic: a lock holds them in their query)', async () => {
    const node = nodes.find((candidate) => candidate.name === 'tcp')!;
    cluster!.start();
    await ensureRunning(node);
    const server = asServer(node.process);
    const before = await prepare(server);
    const locker = new pg.Client({ connectionString: cluster!.tcpUrl });
    locker.on('error', () => {});
    await locker.connect();
    await locker.query('BEGIN');
    // Every endpoint with client authentication reads clients: these requests now wait in their query.
    await locker.query('LOCK TABLE clients IN ACCESS EXCLUSIVE MODE');
    const waiting = Array.from({ length: 3 }, () =>
      timed('POST /introspect (waiting on the lock)', () =>
        postForm(server, '/introspect', {
          token: before.tokens.access_token,
          client_id: party.clientId,
          client_secret: party.clientSecret,
        }),
      ),
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    cluster!.stop('immediate');
    const answers = await Promise.all(waiting);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const problems = answers.map(outageProblem).filter((problem) => problem !== undefined);
    if (!alive(node)) problems.push(crashOf(node));
    cluster!.start();
    console.log(
      `[database outage, immediate shutdown with 3 queries waiting on a lock]\n  answers ${answers.map((a) => `${a.status} in ${Math.round(a.ms)} ms`).join(', ')}; process ${alive(node) ? 'still running' : 'ENDED'}`,
    );
    if (alive(node)) {
      expect(await readyWithin(server, MAX_RECOVERY_MS)).toBeLessThan(MAX_RECOVERY_MS);
      await fullFlow(server);
    }
    expect(problems).toEqual([]);
  }, 30_000);

  // PostgreSQL going away while queries run: a fast shutdown tells each session (57P01) and
  // closes it; an immediate one (as a crash, an OOM kill or a failover) drops the connections.
  for (const mode of ['fast', 'immediate'] as const) {
    it(`stays up when PostgreSQL goes away under load (${mode} shutdown), answers only 200 or 503, and recovers`, async () => {
      // Over TCP only: the unix socket node's own 500s are the test above.
      const { problems, report } = await outage(
        mode,
        nodes.filter((node) => node.name === 'tcp'),
        { load: true },
      );
      console.log(`[database outage, ${mode} shutdown under load]\n  ${report.join('\n  ')}`);
      expect(problems).toEqual([]);
    }, 30_000);
  }
});
