/**
 * The servers under test, each in its own child process (so CPU and memory are its own), and
 * how each one is driven: the same figure means the equivalent requests on each server.
 *
 *   baseline       bench/servers/baseline.ts         raw node:http, {"status":"pending"}
 *   agentauth      node bin/agentauth serve           SQLite (durable defaults) or PostgreSQL
 *   oidc-provider  bench/servers/oidc-provider.ts     the peer
 */
import { freePort } from '../test/helpers/net.ts';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import pg from 'pg';
import type { DatabaseActivity } from './database-activity.ts';
import {
  type CannonRequest,
  CookieJar,
  expectStatus,
  HttpClient,
  json,
  location,
  metaContent,
  pkcePair,
  randomState,
  type StepClock,
  timed,
  Unexpected,
} from './driver.ts';
import { ProcessMeter } from './measure.ts';

/** This checkout: the benchmark's own servers run from here, and agentauth unless told otherwise. */
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const REDIRECT_URI = 'http://localhost:8080/callback';
const SCOPE = 'openid email profile';
/** Concurrency of every figure: connections for autocannon, virtual users for the driver. */
export const CONCURRENCY = 16;

export interface Tokens {
  accessToken: string;
  refreshToken: string;
}

/** What agentauth says of itself (its Prometheus metrics): time per route, and its event loop's delay. */
export interface ServerView {
  /** Per route ("POST /token"): requests answered and seconds spent until each answer was ready, summed. */
  routes: Record<string, { count: number; seconds: number }>;
  /** The event loop's delay since the previous reading (ms, beyond the sampling interval): how long ready work waited for the loop. */
  eventLoopDelay: { p50Ms: number; p99Ms: number; maxMs: number };
}

export interface DatabaseReport {
  /** Bytes on disk: the SQLite file with its -wal and -shm, or pg_database_size. */
  bytes: number;
  rows: Record<string, number>;
}

export interface Target {
  name: string;
  kind: 'baseline' | 'agentauth' | 'peer';
  meter: ProcessMeter;
  /** Date.now() when the process was spawned (to place profile samples in time). */
  spawnedAt: number;
  /** The GET /api/check-status request (baseline: its equivalent). */
  checkStatus?(): Promise<CannonRequest>;
  authorizePage?(): CannonRequest;
  /**
   * One whole flow, every step checked; returns the tokens it obtained. `clock` hears each
   * step's latency (agentauth: authorize, authenticate, continue, token, userinfo).
   */
  flow?(clock?: StepClock): Promise<Tokens>;
  /** One refresh of a chain; returns the chain's next refresh token. */
  refresh?(refreshToken: string): Promise<string>;
  introspection?(accessTokens: string[]): CannonRequest;
  userinfo?(accessTokens: string[]): CannonRequest;
  database?(): Promise<DatabaseReport>;
  /** agentauth on PostgreSQL: statements, commits and WAL per operation (bench/database-activity.ts). */
  activity?: DatabaseActivity;
  /**
   * agentauth only: its own view, read from its metrics (GET /metrics on a port of their own).
   * Each reading resets the event loop's delay histogram (prom-client does), so a reading at the
   * window's start and one at its end give that window's delays.
   */
  serverView?(): Promise<ServerView>;
  /** agentauth only, for the push run: its address, a new pending request, and its agent's credentials. */
  baseUrl?: string;
  pendingRequest?(): Promise<string>;
  agent?: { agentId: string; agentSecret: string };
  /** agentauth only: runs its CLI on the server's database and settings, returning what it prints as JSON. */
  cli?(args: string[]): Promise<Record<string, unknown>>;
  /** Where the server's output went. */
  logFile: string;
  stop(): Promise<void>;
}

// ---------------------------------------------------------------------------------------------
// Child processes

interface Child {
  process: ChildProcess;
  spawnedAt: number;
  baseUrl: string;
  stop(): Promise<void>;
}

/** Starts `node <args>` in `cwd` with `env`, its output in `logFile`, and waits until `readyPath` answers 200. */
async function startChild(
  cwd: string,
  args: string[],
  env: Record<string, string>,
  port: number,
  readyPath: string,
  logFile: string,
): Promise<Child> {
  const log = createWriteStream(logFile);
  const spawnedAt = Date.now();
  const child = spawn(process.execPath, args, {
    cwd,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.pipe(log);
  child.stderr!.pipe(log);
  let exited: string | undefined;
  const exit = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      exited = `exited with ${signal ?? code}`;
      resolve();
    }),
  );
  const baseUrl = `http://127.0.0.1:${port}`;
  const probe = new HttpClient(baseUrl, 1);
  const deadline = Date.now() + 60_000;
  try {
    for (;;) {
      if (exited) throw new Error(`${args.join(' ')} ${exited} before it was ready; see ${logFile}`);
      if (Date.now() > deadline) throw new Error(`${args.join(' ')} not ready after 60 s; see ${logFile}`);
      const reply = await probe.send(readyPath).catch(() => undefined);
      if (reply?.status === 200) break;
      await sleep(100);
    }
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  } finally {
    probe.close();
  }
  return {
    process: child,
    spawnedAt,
    baseUrl,
    async stop() {
      if (exited) return;
      child.kill('SIGTERM'); // graceful: agentauth closes its database, --cpu-prof writes its profile
      const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exit;
      clearTimeout(killer);
    },
  };
}

/** What every target takes from its process: its meter, its start time and its log. */
function measured(child: Child, logFile: string, dbRootPid?: number): Pick<Target, 'meter' | 'spawnedAt' | 'logFile'> {
  return { meter: new ProcessMeter(child.process.pid!, dbRootPid), spawnedAt: child.spawnedAt, logFile };
}

/**
 * The token endpoint as a client_secret_post client calls it: agentauth and the peer take the
 * same form at `/token`.
 */
function tokenEndpoint(http: HttpClient, clientAuth: Record<string, string>) {
  return {
    async exchange(code: string, verifier: string, clock?: StepClock): Promise<Tokens> {
      const reply = await timed(clock, 'token', () =>
        http.send('/token', {
          form: {
            grant_type: 'authorization_code',
            code,
            code_verifier: verifier,
            redirect_uri: REDIRECT_URI,
            ...clientAuth,
          },
        }),
      );
      const tokens = json<{ access_token: string; refresh_token: string }>(expectStatus('token', reply, 200));
      if (!tokens.refresh_token) throw new Unexpected('token: no refresh_token issued');
      return { accessToken: tokens.access_token, refreshToken: tokens.refresh_token };
    },
    async refresh(refreshToken: string): Promise<string> {
      const reply = expectStatus(
        'refresh',
        await http.send('/token', {
          form: { grant_type: 'refresh_token', refresh_token: refreshToken, ...clientAuth },
        }),
        200,
      );
      return json<{ refresh_token: string }>(reply).refresh_token;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Baseline

/**
 * The raw node:http baseline, or with `framework`, the same answer from an empty Fastify route
 * (bench/servers/fastify-baseline.ts): what the framework costs before any work of agentauth's.
 */
export async function startBaseline(logFile: string, options: { framework?: boolean } = {}): Promise<Target> {
  const port = await freePort();
  const child = await startChild(
    ROOT,
    ['--import', 'tsx', options.framework ? 'bench/servers/fastify-baseline.ts' : 'bench/servers/baseline.ts'],
    { PORT: String(port), HOST: '127.0.0.1' },
    port,
    '/',
    logFile,
  );
  return {
    name: options.framework ? 'fastify' : 'baseline',
    kind: 'baseline',
    ...measured(child, logFile),
    async checkStatus() {
      return {
        url: `${child.baseUrl}/api/check-status?request_id=req_baseline`,
        expect: [200],
        verifyBody: (body) => body === '{"status":"pending"}',
      };
    },
    stop: () => child.stop(),
  };
}

// ---------------------------------------------------------------------------------------------
// agentauth

function authorizeQuery(clientId: string, challenge: string, state: string): string {
  return new URLSearchParams({
    client_id: clientId,
    redirect_uri: REDIRECT_URI,
    response_type: 'code',
    scope: SCOPE,
    state,
    code_challenge: challenge,
    code_challenge_method: 'S256',
  }).toString();
}

const pathOf = (url: URL) => url.pathname + url.search;

/** Runs `<dir>/bin/agentauth <args>` with `env` and returns what it prints. */
function command(dir: string, env: Record<string, string>, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['bin/agentauth', ...args],
      { cwd: dir, env: { ...process.env, ...env } },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`agentauth ${args.slice(0, 2).join(' ')} failed: ${stderr || error.message}`));
        else resolve(stdout);
      },
    );
  });
}

/** Runs `<dir>/bin/agentauth <args>` with `env` and returns the JSON object it prints. */
async function cli(
  dir: string,
  env: Record<string, string>,
  args: string[],
): Promise<Record<string, string | undefined>> {
  return JSON.parse(await command(dir, env, args)) as Record<string, string | undefined>;
}

export interface AgentauthOptions {
  name: string;
  /** sqlite:<absolute path> or postgres://… */
  databaseUrl: string;
  logFile: string;
  /** The postmaster of the PostgreSQL cluster, to count the database's CPU. */
  dbRootPid?: number;
  /** Node flags beyond those of the checkout's `npm start` (--cpu-prof …). */
  nodeFlags?: string[];
  /** The agentauth checkout to run (default: this one), to measure another revision. */
  dir?: string;
  /** Settings beyond the defaults (the sustained run shortens lifetimes and the purge interval). */
  env?: Record<string, string>;
  /** PostgreSQL: where to read statements, commits and WAL per operation. */
  observeDatabase?: DatabaseActivity;
}

/**
 * The node flags of the checkout's `npm start` (`node <flags> bin/agentauth serve`), so the
 * benchmark measures the server as a newcomer runs it, in this revision or another.
 */
function startFlags(dir: string): string[] {
  const start: string = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).scripts.start;
  const words = start.split(/\s+/);
  return words[0] === 'node' ? words.slice(1, words.indexOf('bin/agentauth')) : [];
}

export async function startAgentauth(options: AgentauthOptions): Promise<Target> {
  const dir = options.dir ?? ROOT;
  const port = await freePort();
  const metricsPort = await freePort();
  const env = {
    PORT: String(port),
    HOST: '127.0.0.1',
    BASE_URL: `http://127.0.0.1:${port}`,
    DATABASE_URL: options.databaseUrl,
    JWT_SECRET: randomBytes(48).toString('base64url'),
    LOG_LEVEL: 'warn',
    NODE_ENV: 'production',
    // The load generator is one address: a limit it never reaches, so the guard's cost is measured.
    AUTHORIZE_LIMIT_PER_IP: '1000000000',
    // The push run opens 1,000 streams from that one address (the default allows 100 per address).
    STATUS_STREAMS_PER_IP: '0',
    // Its metrics, on a port of their own, for its own view of each step (serverView).
    METRICS_PORT: String(metricsPort),
    METRICS_HOST: '127.0.0.1',
    ...options.env,
  };

  // Make the database and register the client and the agent with the CLI, as an operator would
  // (commands other than serve and migrate never create a database). Going through the CLI
  // rather than src/ keeps the benchmark independent of the store's internals.
  await command(dir, env, ['migrate']);
  const client = await cli(dir, env, [
    'client',
    'create',
    '--name',
    'Benchmark',
    '--redirect-uri',
    REDIRECT_URI,
    '--json',
  ]);
  const agent = await cli(dir, env, [
    'agent',
    'create',
    '--owner-email',
    'bench@example.com',
    '--owner-name',
    'Bench User',
    '--json',
  ]);
  const party = {
    clientId: client.client_id!,
    clientSecret: client.client_secret!,
    agentId: agent.agent_id!,
    agentSecret: agent.agent_secret!,
  };

  const child = await startChild(
    dir,
    [...startFlags(dir), ...(options.nodeFlags ?? []), 'bin/agentauth', 'serve'],
    env,
    port,
    '/readyz',
    options.logFile,
  );
  const http = new HttpClient(child.baseUrl, CONCURRENCY);
  const clientAuth = { client_id: party.clientId, client_secret: party.clientSecret };
  const token = tokenEndpoint(http, clientAuth);

  /** GET /authorize as a new browser: the request id and the binding cookie. */
  async function authorize(
    challenge: string,
    state: string,
    clock?: StepClock,
  ): Promise<{ requestId: string; cookie: string }> {
    const page = expectStatus(
      'authorize',
      await timed(clock, 'authorize', () =>
        http.send(`/authorize?${authorizeQuery(party.clientId, challenge, state)}`),
      ),
      200,
    );
    const requestId = metaContent(page.body, 'request-id');
    const setCookie = page.headers['set-cookie'];
    const cookie = (Array.isArray(setCookie) ? setCookie[0] : setCookie)?.split(';')[0];
    if (!requestId || !cookie) throw new Unexpected('authorize: no request-id or binding cookie');
    return { requestId, cookie };
  }

  const target: Target = {
    name: options.name,
    kind: 'agentauth',
    ...measured(child, options.logFile, options.dbRootPid),

    async checkStatus() {
      const { requestId } = await authorize(pkcePair().challenge, randomState());
      return {
        url: `${child.baseUrl}/api/check-status?request_id=${requestId}`,
        expect: [200],
        verifyBody: (body) => body === '{"status":"pending"}',
      };
    },

    authorizePage() {
      return {
        url: `${child.baseUrl}/authorize?${authorizeQuery(party.clientId, pkcePair().challenge, randomState())}`,
        expect: [200],
        verifyBody: (body) => body.includes('<meta name="request-id" content="req_'),
      };
    },

    async flow(clock) {
      const { verifier, challenge } = pkcePair();
      const state = randomState();
      const { requestId, cookie } = await authorize(challenge, state, clock);
      expectStatus(
        'authenticate',
        await timed(clock, 'authenticate', () =>
          http.send('/api/agent/authenticate', {
            json: {
              request_id: requestId,
              agent_id: party.agentId,
              agent_secret: party.agentSecret,
              model: 'bench-model',
            },
          }),
        ),
        200,
      );
      const redirect = location(
        'continue',
        expectStatus(
          'continue',
          await timed(clock, 'continue', () =>
            http.send('/authorize/continue', {
              form: { request_id: requestId, action: 'approve' },
              headers: { cookie },
            }),
          ),
          302,
        ),
      );
      const code = redirect.searchParams.get('code');
      if (!code || redirect.searchParams.get('state') !== state)
        throw new Unexpected('continue: no code or wrong state in the redirect');
      const tokens = await token.exchange(code, verifier, clock);
      expectStatus(
        'userinfo',
        await timed(clock, 'userinfo', () =>
          http.send('/userinfo', { headers: { authorization: `Bearer ${tokens.accessToken}` } }),
        ),
        200,
      );
      return tokens;
    },

    refresh: token.refresh,

    introspection: (accessTokens) => introspectionLoad(`${child.baseUrl}/introspect`, accessTokens, clientAuth),
    userinfo: (accessTokens) => userinfoLoad(`${child.baseUrl}/userinfo`, accessTokens, '"sub":"agt_'),

    database: () => databaseReport(options.databaseUrl),
    serverView: () => serverView(`http://127.0.0.1:${metricsPort}/metrics`),
    ...(options.observeDatabase ? { activity: options.observeDatabase } : {}),

    baseUrl: child.baseUrl,
    pendingRequest: async () => (await authorize(pkcePair().challenge, randomState())).requestId,
    agent: { agentId: party.agentId, agentSecret: party.agentSecret },
    cli: (args) => cli(dir, env, args),

    async stop() {
      http.close();
      await child.stop();
    },
  };
  return target;
}

/** Reads agentauth's metrics: the request histogram's sums and counts per route, and the event loop's delay. */
async function serverView(url: string): Promise<ServerView> {
  const reply = await fetch(url);
  if (!reply.ok) throw new Error(`metrics answered ${reply.status}`);
  const text = await reply.text();
  const routes: ServerView['routes'] = {};
  const sample = /^agentauth_http_request_duration_seconds_(sum|count)\{([^}]*)\} (\S+)$/gm;
  for (const [, kind, labels = '', value = '0'] of text.matchAll(sample)) {
    const label = (name: string) => new RegExp(`${name}="([^"]*)"`).exec(labels)?.[1] ?? '';
    const key = `${label('method')} ${label('route')}`;
    const entry = (routes[key] ??= { count: 0, seconds: 0 });
    if (kind === 'count') entry.count += Number(value);
    else entry.seconds += Number(value);
  }
  // prom-client samples the loop every 10 ms (its default precision), and Node's histogram holds
  // the time between samples: what is beyond those 10 ms is the delay.
  const gauge = (name: string) =>
    Math.max(0, Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? Number.NaN) * 1000 - 10);
  return {
    routes,
    eventLoopDelay: {
      p50Ms: gauge('nodejs_eventloop_lag_p50_seconds'),
      p99Ms: gauge('nodejs_eventloop_lag_p99_seconds'),
      maxMs: gauge('nodejs_eventloop_lag_max_seconds'),
    },
  };
}

/** Tables of the schema's bookkeeping (migrations, locks), left out of the row counts. */
const BOOKKEEPING = /migration|lock|^sqlite_|^pg_stat_statements/i;

/** Size and row counts of agentauth's database, read beside the running server. */
async function databaseReport(databaseUrl: string): Promise<DatabaseReport> {
  const rows: Record<string, number> = {};
  if (databaseUrl.startsWith('sqlite:')) {
    const file = databaseUrl.slice('sqlite:'.length);
    const db = new Database(file, { readonly: true, fileMustExist: true });
    try {
      const tables = db.prepare("select name from sqlite_master where type = 'table' order by name").all() as {
        name: string;
      }[];
      for (const { name } of tables.filter((t) => !BOOKKEEPING.test(t.name))) {
        rows[name] = (db.prepare(`select count(*) as n from "${name}"`).get() as { n: number }).n;
      }
    } finally {
      db.close();
    }
    const bytes = ['', '-wal', '-shm'].reduce(
      (sum, suffix) => sum + (existsSync(file + suffix) ? statSync(file + suffix).size : 0),
      0,
    );
    return { bytes, rows };
  }
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const tables = await client.query<{ name: string }>(
      "select table_name as name from information_schema.tables where table_schema = 'public' order by 1",
    );
    for (const { name } of tables.rows.filter((t) => !BOOKKEEPING.test(t.name))) {
      rows[name] = Number((await client.query(`select count(*) as n from "${name}"`)).rows[0].n);
    }
    const bytes = Number((await client.query('select pg_database_size(current_database()) as n')).rows[0].n);
    return { bytes, rows };
  } finally {
    await client.end();
  }
}

// ---------------------------------------------------------------------------------------------
// The peer: oidc-provider

export interface PeerOptions {
  /** The target's name in the tables (default: oidc-provider, the in-memory adapter). */
  name?: string;
  /** A durable store for the peer: sqlite:<path> or a postgres:// URL (bench/servers/oidc-provider-store.ts). */
  store?: string;
  /** The postmaster of the PostgreSQL cluster, to count the database's CPU. */
  dbRootPid?: number;
}

export async function startPeer(logFile: string, options: PeerOptions = {}): Promise<Target> {
  const port = await freePort();
  const clientId = 'bench-client';
  const clientSecret = randomBytes(32).toString('base64url');
  const child = await startChild(
    ROOT,
    ['--import', 'tsx', 'bench/servers/oidc-provider.ts'],
    {
      PORT: String(port),
      HOST: '127.0.0.1',
      CLIENT_ID: clientId,
      CLIENT_SECRET: clientSecret,
      REDIRECT_URI,
      NODE_ENV: 'production',
      ...(options.store ? { STORE: options.store } : {}),
    },
    port,
    '/.well-known/openid-configuration',
    logFile,
  );
  const http = new HttpClient(child.baseUrl, CONCURRENCY);
  const clientAuth = { client_id: clientId, client_secret: clientSecret };
  const token = tokenEndpoint(http, clientAuth);
  const authQuery = (challenge: string, state: string) => authorizeQuery(clientId, challenge, state);

  return {
    name: options.name ?? 'oidc-provider',
    kind: 'peer',
    ...measured(child, logFile, options.dbRootPid),

    authorizePage() {
      // oidc-provider answers a valid authorization request with 303 to its interaction
      // (login) page, having stored the interaction; that is its equivalent of the page.
      return {
        url: `${child.baseUrl}/auth?${authQuery(pkcePair().challenge, randomState())}`,
        expect: [302, 303, 200],
      };
    },

    async flow(clock) {
      // A new browser per flow, so every flow logs in and consents, as every agentauth flow
      // authenticates its agent: /auth → /interaction/:uid (login + consent) → /auth/:uid → code.
      const jar = new CookieJar();
      const { verifier, challenge } = pkcePair();
      const state = randomState();
      const auth = expectStatus(
        'auth',
        await timed(clock, 'authorize', () => http.send(`/auth?${authQuery(challenge, state)}`)),
        302,
        303,
      );
      jar.take(auth);
      // The peer's sign-in and consent (its interaction) stand where agentauth's agent authenticates.
      const interaction = expectStatus(
        'interaction',
        await timed(clock, 'interaction', () => http.send(pathOf(location('auth', auth)), { headers: jar.header() })),
        302,
        303,
      );
      jar.take(interaction);
      const resume = expectStatus(
        'resume',
        await timed(clock, 'resume', () =>
          http.send(pathOf(location('interaction', interaction)), { headers: jar.header() }),
        ),
        302,
        303,
      );
      const redirect = location('resume', resume);
      const code = redirect.searchParams.get('code');
      if (!code || redirect.searchParams.get('state') !== state)
        throw new Unexpected(`resume: no code or wrong state in ${redirect.href.slice(0, 200)}`);
      const tokens = await token.exchange(code, verifier, clock);
      expectStatus(
        'userinfo',
        await timed(clock, 'userinfo', () =>
          http.send('/me', { headers: { authorization: `Bearer ${tokens.accessToken}` } }),
        ),
        200,
      );
      return tokens;
    },

    refresh: token.refresh,

    introspection: (accessTokens) =>
      introspectionLoad(`${child.baseUrl}/token/introspection`, accessTokens, clientAuth),
    userinfo: (accessTokens) => userinfoLoad(`${child.baseUrl}/me`, accessTokens, '"sub":"bench-user"'),

    async stop() {
      http.close();
      await child.stop();
    },
  };
}

export const logPath = (dir: string, name: string) => join(dir, `${name}.log`);

// ---------------------------------------------------------------------------------------------
// autocannon loads shared by agentauth and the peer: each connection presents the tokens in turn

function introspectionLoad(url: string, accessTokens: string[], clientAuth: Record<string, string>): CannonRequest {
  return {
    url,
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    variants: accessTokens.map((token) => ({ body: new URLSearchParams({ token, ...clientAuth }).toString() })),
    expect: [200],
    verifyBody: (body) => body.includes('"active":true'),
  };
}

function userinfoLoad(url: string, accessTokens: string[], subjectMarker: string): CannonRequest {
  return {
    url,
    variants: accessTokens.map((token) => ({ headers: { authorization: `Bearer ${token}` } })),
    expect: [200],
    verifyBody: (body) => body.includes(subjectMarker),
  };
}
