/**
 * Durability under a crash (docs/design.md §9: "a 200 means it is committed and survives kill -9"),
 * on the project's engine. `agentauth serve` runs as a child process; 16 workers drive flows
 * through it (authorize → authenticate → continue → token → refresh → refresh), recording every
 * answer; in the middle of the load the process is killed with SIGKILL and started again on
 * the same database. Then:
 *   - every access token and the latest refresh token of every chain answered 200 before the
 *     kill is active at /introspect;
 *   - every authorization request is in a state consistent with what the test saw;
 *   - nothing is half-written (raw SQL over the whole database);
 *   - the flows cut short by the kill can be finished where their state allows it, and new
 *     flows work.
 * Three kill-restart cycles.
 */
import { freePort } from '../helpers/net.ts';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import type { Context } from '../../src/context.ts';
import { digest } from '../../src/crypto.ts';
import { createContext } from '../../src/app.ts';
import { openStore } from '../../src/store/open.ts';
import { authorizeUrl, metaContent, type Party, pkcePair } from '../helpers/flow.ts';
import { freshDatabase, registerParty, TEST_ENGINE, type TestServer } from '../helpers/server.ts';
import { type ServerProcess, spawnServer, waitReady } from '../helpers/server-process.ts';
import { integrityViolations, type RawSql, rawSql } from './support.ts';

const JWT_SECRET = 'sigkill-test-secret-of-at-least-32-bytes-0123';
const WORKERS = 16;
const CYCLES = 3;

type Step = 'authorize' | 'authenticate' | 'continue' | 'token' | 'refresh';

/** One flow as the test saw it: only what was answered, plus the step left without an answer. */
interface Flow {
  cycle: number;
  verifier: string;
  challenge: string;
  state: string;
  requestId?: string;
  cookie?: string;
  /** authenticate answered 200. */
  authenticated: boolean;
  /** continue answered 302 with this code. */
  code?: string;
  /** /token answered 200 for the code. */
  redeemed: boolean;
  /** Every access token answered 200 (code exchange and refreshes). */
  accessTokens: string[];
  /** Every refresh token answered 200, in order; the last is the live one. */
  refreshChain: string[];
  /** The step whose request was sent and never answered (the server died under it). */
  unanswered?: Step;
}
const jti = (jwt: string) =>
  (JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString()) as { jti: string }).jti;

let dir: string;
let database: { url: string; dispose(): Promise<void> };
let port: number;
let server: ServerProcess | undefined;
let admin: Context;
let sql: RawSql;
let party: Party;
const flows: Flow[] = [];
/** Answers other than the expected ones, from the server while it was up. */
const anomalies: string[] = [];
/** Every process output, for the failure message. */
const outputs: string[] = [];

function start(): ServerProcess {
  server = spawnServer({
    PORT: String(port),
    HOST: '127.0.0.1',
    BASE_URL: `http://127.0.0.1:${port}`,
    DATABASE_URL: database.url,
    JWT_SECRET,
    LOG_LEVEL: 'warn',
  });
  return server;
}

const at = () => ({ baseUrl: server!.baseUrl }) as TestServer;

function form(path: string, fields: Record<string, string>, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(new URL(path, server!.baseUrl), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(fields).toString(),
    redirect: 'manual',
  });
}

const steps = {
  authorize: (flow: Flow) =>
    fetch(
      authorizeUrl(at(), {
        client_id: party.clientId,
        redirect_uri: party.redirectUri,
        response_type: 'code',
        state: flow.state,
        code_challenge: flow.challenge,
        code_challenge_method: 'S256',
      }),
    ),
  authenticate: (flow: Flow) =>
    fetch(new URL('/api/agent/authenticate', server!.baseUrl), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        request_id: flow.requestId,
        agent_id: party.agentId,
        agent_secret: party.agentSecret,
        model: 'kill-test',
      }),
    }),
  continue: (flow: Flow) =>
    form('/authorize/continue', { request_id: flow.requestId!, action: 'approve' }, { cookie: flow.cookie! }),
  token: (flow: Flow) =>
    form('/token', {
      grant_type: 'authorization_code',
      code: flow.code!,
      code_verifier: flow.verifier,
      client_id: party.clientId,
      client_secret: party.clientSecret,
      redirect_uri: party.redirectUri,
    }),
  refresh: (flow: Flow) =>
    form('/token', {
      grant_type: 'refresh_token',
      refresh_token: flow.refreshChain.at(-1)!,
      client_id: party.clientId,
      client_secret: party.clientSecret,
    }),
};

class Unanswered extends Error {}
class Unexpected extends Error {}

/**
 * Sends one step and reads its whole answer. A network failure (the process is gone) leaves
 * the step marked unanswered and throws Unanswered; an unexpected status is an anomaly.
 */
async function send(flow: Flow, step: Step, expected: number): Promise<{ response: Response; text: string }> {
  flow.unanswered = step;
  let response: Response;
  let text: string;
  try {
    response = await steps[step](flow);
    text = await response.text();
  } catch {
    throw new Unanswered(step);
  }
  flow.unanswered = undefined;
  if (response.status !== expected) {
    anomalies.push(`cycle ${flow.cycle} ${step} ${flow.requestId ?? ''}: ${response.status} ${text.slice(0, 300)}`);
    throw new Unexpected(step);
  }
  return { response, text };
}

function recordTokens(flow: Flow, text: string): void {
  const tokens = JSON.parse(text) as { access_token: string; refresh_token: string };
  flow.accessTokens.push(tokens.access_token);
  flow.refreshChain.push(tokens.refresh_token);
}

/** Takes a flow from where it stands to two refreshes; the steps it already passed are skipped. */
async function drive(flow: Flow, onTokens: () => void, refreshes = 2): Promise<void> {
  if (!flow.requestId) {
    const { response, text } = await send(flow, 'authorize', 200);
    flow.requestId = metaContent(text, 'request-id');
    flow.cookie = (response.headers.get('set-cookie') ?? '').split(';')[0];
  }
  if (!flow.authenticated) {
    await send(flow, 'authenticate', 200);
    flow.authenticated = true;
  }
  if (!flow.code) {
    const { response } = await send(flow, 'continue', 302);
    flow.code = new URL(response.headers.get('location')!).searchParams.get('code')!;
  }
  if (!flow.redeemed) {
    const { text } = await send(flow, 'token', 200);
    flow.redeemed = true;
    recordTokens(flow, text);
    onTokens();
  }
  for (let i = 0; i < refreshes; i++) {
    const { text } = await send(flow, 'refresh', 200);
    recordTokens(flow, text);
    onTokens();
  }
}

function newFlow(cycle: number): Flow {
  const { verifier, challenge } = pkcePair();
  return {
    cycle,
    verifier,
    challenge,
    state: randomBytes(12).toString('base64url'),
    authenticated: false,
    redeemed: false,
    accessTokens: [],
    refreshChain: [],
  };
}

/** In-flight requests per step at the moment of the kill. */
function inFlight(cycle: number): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const flow of flows)
    if (flow.cycle === cycle && flow.unanswered) counts[flow.unanswered] = (counts[flow.unanswered] ?? 0) + 1;
  return counts;
}

/**
 * Runs WORKERS workers looping over new flows and kills the server with SIGKILL once
 * `afterTokens` token responses have been answered (right as the test reads one), or after
 * `afterMs` (at whatever moment the timer fires), whichever comes first.
 */
async function loadAndKill(
  cycle: number,
  { afterTokens = Infinity, afterMs = 3000 }: { afterTokens?: number; afterMs?: number },
) {
  let issued = 0;
  let killedAt: { issued: number; inFlight: Record<string, number>; flows: number } | undefined;
  const victim = server!;
  const kill = () => {
    if (killedAt) return;
    victim.child.kill('SIGKILL');
    killedAt = { issued, inFlight: inFlight(cycle), flows: flows.filter((flow) => flow.cycle === cycle).length };
  };
  const timer = setTimeout(kill, afterMs);
  const worker = async () => {
    while (!killedAt) {
      const flow = newFlow(cycle);
      flows.push(flow);
      try {
        await drive(flow, () => {
          issued++;
          if (issued >= afterTokens) kill();
        });
      } catch (error) {
        if (error instanceof Unanswered) return; // the process is gone
        if (!(error instanceof Unexpected)) throw error;
      }
    }
  };
  await Promise.all(Array.from({ length: WORKERS }, worker));
  clearTimeout(timer);
  const exit = await victim.exited;
  outputs.push(victim.output());
  // Some requests in flight at the kill were answered nonetheless (their answer was on its way).
  return { ...killedAt!, unanswered: inFlight(cycle), exit };
}

/** Runs `work` over `items` with `concurrency` at a time. */
async function pool<T>(items: T[], concurrency: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) await work(items[next++]!);
    }),
  );
}

async function introspect(token: string): Promise<{ active: boolean }> {
  const response = await form('/introspect', { token, client_id: party.clientId, client_secret: party.clientSecret });
  if (response.status !== 200) throw new Error(`introspect answered ${response.status}`);
  return (await response.json()) as { active: boolean };
}

/**
 * Everything the test saw answered must be in the database as it was answered, and every
 * state must be one the flow could have reached. Returns the failures, one line each.
 */
async function verify(): Promise<{
  failures: string[];
  accessTokens: number;
  refreshTokens: number;
  requests: number;
}> {
  const failures: string[] = [];
  const fail = (flow: Flow, what: string): void => {
    failures.push(
      `${flow.requestId ?? '(no request id)'} (cycle ${flow.cycle}, unanswered ${flow.unanswered ?? '-'}): ${what}`,
    );
  };
  let accessTokens = 0;
  let refreshTokens = 0;
  let requests = 0;
  await pool(flows, 16, async (flow) => {
    if (!flow.requestId) return; // authorize was never answered: the test knows no request id
    requests++;
    const request = await admin.store.requests.find(flow.requestId);
    if (!request) return fail(flow, 'authorize answered 200 but the request is not in the database');
    // The statuses this flow may be in, from what it saw.
    let allowed: string[];
    if (flow.code) allowed = ['completed'];
    else if (flow.authenticated)
      allowed = flow.unanswered === 'continue' ? ['authenticated', 'completed'] : ['authenticated'];
    else allowed = flow.unanswered === 'authenticate' ? ['pending', 'authenticated'] : ['pending'];
    if (!allowed.includes(request.status)) fail(flow, `request is ${request.status}, expected ${allowed.join(' or ')}`);

    if (flow.code) {
      const code = await admin.store.codes.find(digest(flow.code));
      if (!code) return fail(flow, 'continue answered 302 with a code that is not in the database');
      if (code.request_id !== flow.requestId) fail(flow, 'the code belongs to another request');
      if (flow.redeemed && code.redeemed_at === null) fail(flow, '/token answered 200 but the code is not redeemed');
      if (!flow.redeemed && flow.unanswered !== 'token' && code.redeemed_at !== null)
        fail(flow, 'the code is redeemed although /token never was called');
      if (flow.redeemed && (code.grant_id === null || !(await admin.store.grants.find(code.grant_id))))
        fail(flow, 'redeemed code without its grant');
    }

    for (const token of flow.accessTokens) {
      accessTokens++;
      const record = await admin.store.accessTokens.find(jti(token));
      if (!record) fail(flow, `access token ${jti(token)} answered 200 is not in the database`);
      if (!(await introspect(token)).active) fail(flow, `access token ${jti(token)} answered 200 is not active`);
    }
    for (const [index, token] of flow.refreshChain.entries()) {
      refreshTokens++;
      const record = await admin.store.refreshTokens.find(digest(token));
      if (!record) {
        fail(flow, `refresh token #${index} answered 200 is not in the database`);
        continue;
      }
      const latest = index === flow.refreshChain.length - 1;
      if (!latest) {
        // Rotated by the test itself: used, and no longer active.
        if (record.used_at === null)
          fail(flow, `refresh token #${index} was rotated (answered 200) but is not marked used`);
        continue;
      }
      const active = (await introspect(token)).active;
      if (flow.unanswered === 'refresh') {
        // Its rotation was sent and not answered: either it did not happen (still active), or it
        // happened and the successor, never delivered, is the grant's one unused refresh token.
        if (!active && record.used_at === null) fail(flow, 'latest refresh token inactive but not used');
        if (!active) {
          const successors = await sql.number(
            `select count(*) from refresh_tokens where grant_id = '${record.grant_id}' and used_at is null`,
          );
          if (successors !== 1)
            fail(
              flow,
              `latest refresh token used by an unanswered rotation, but its grant has ${successors} unused refresh tokens`,
            );
        }
      } else if (!active) fail(flow, `latest refresh token answered 200 is not active (used_at ${record.used_at})`);
    }
  });
  return { failures, accessTokens, refreshTokens, requests };
}

/**
 * Finishes the flows the kill cut short, from the state the database says they are in; the
 * step whose answer was lost is not retried when the database says it happened.
 */
async function resume(cycle: number): Promise<{ finished: number; lost: Record<string, number> }> {
  const lost: Record<string, number> = {};
  let finished = 0;
  const cut = flows.filter((flow) => flow.cycle === cycle && flow.unanswered && flow.requestId);
  await pool(cut, 8, async (flow) => {
    const request = (await admin.store.requests.find(flow.requestId!))!;
    const step = flow.unanswered!;
    const count = (what: string) => (lost[what] = (lost[what] ?? 0) + 1);
    if (step === 'authenticate' && request.status === 'authenticated') {
      // Committed, answer lost: the agent would retry and get 409; the browser goes on.
      count('authenticate (committed, 200 lost; flow goes on)');
      flow.authenticated = true;
    }
    if (step === 'continue' && request.status === 'completed') {
      count('code (continue committed, 302 lost)');
      return;
    }
    if (step === 'token' && (await admin.store.codes.find(digest(flow.code!)))!.redeemed_at !== null) {
      count('tokens (code redeemed, 200 lost)');
      return;
    }
    if (
      step === 'refresh' &&
      (await admin.store.refreshTokens.find(digest(flow.refreshChain.at(-1)!)))!.used_at !== null
    ) {
      count('tokens (rotation committed, 200 lost)');
      return;
    }
    flow.unanswered = undefined;
    try {
      await drive(flow, () => {}, 1);
      finished++;
    } catch (error) {
      if (!(error instanceof Unexpected)) throw error; // recorded in anomalies
    }
  });
  return { finished, lost };
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'agentauth-kill-'));
  database = await freshDatabase(dir);
  port = await freePort();
  const config = loadConfig({ DATABASE_URL: database.url, JWT_SECRET, BASE_URL: `http://127.0.0.1:${port}` });
  const store = await openStore(database.url, { poolSize: 4 });
  await store.migrate();
  admin = await createContext(config, store, JWT_SECRET);
  party = await registerParty(admin, 'Kill Test App');
  sql = await rawSql(database.url);
  await waitReady(start());
}, 60_000);

afterAll(async () => {
  if (server) {
    await server.kill('SIGTERM');
    outputs.push(server.output());
  }
  await sql?.close();
  await admin?.store.close();
  await database?.dispose();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe(`SIGKILL under load (${TEST_ENGINE})`, () => {
  it(`keeps every answered request, code and token across ${CYCLES} kill-restart cycles, with nothing half-written`, async () => {
    const report: string[] = [];
    for (let cycle = 1; cycle <= CYCLES; cycle++) {
      // Cycles 1 and 3 kill as a token answer arrives; cycle 2 at a random moment.
      const killed = await loadAndKill(
        cycle,
        cycle === 2
          ? { afterMs: 600 + Math.floor(Math.random() * 600) }
          : { afterTokens: 40 + Math.floor(Math.random() * 60) },
      );
      expect(killed.exit.signal, 'the process died of the SIGKILL').toBe('SIGKILL');
      expect(anomalies, 'unexpected answers while the server was up').toEqual([]);

      const restartedAt = Date.now();
      await waitReady(start());
      const restartMs = Date.now() - restartedAt;

      const checked = await verify();
      expect(checked.failures, 'answered state lost or inconsistent after the restart').toEqual([]);
      expect(await integrityViolations(sql), 'half-written records after the restart').toEqual([]);

      const resumed = await resume(cycle);
      expect(anomalies, 'unexpected answers while finishing the flows the kill cut short').toEqual([]);
      report.push(
        `cycle ${cycle}: killed after ${killed.issued} token answers, ${killed.flows} flows started in the cycle, in flight ${JSON.stringify(killed.inFlight)}, never answered ${JSON.stringify(killed.unanswered)}; ` +
          `ready again in ${restartMs} ms; verified ${checked.requests} requests, ${checked.accessTokens} access tokens, ${checked.refreshTokens} refresh tokens; ` +
          `finished ${resumed.finished} cut-short flows, lost answers ${JSON.stringify(resumed.lost)}`,
      );
    }

    // The last process serves new flows, and everything is still whole after them.
    const fresh = Array.from({ length: 16 }, () => newFlow(CYCLES + 1));
    flows.push(...fresh);
    await pool(fresh, 8, (flow) => drive(flow, () => {}));
    expect(anomalies).toEqual([]);
    expect(fresh.every((flow) => flow.refreshChain.length === 3)).toBe(true);
    const final = await verify();
    expect(final.failures).toEqual([]);
    expect(await integrityViolations(sql)).toEqual([]);
    report.push(
      `after the last restart: 16 new flows completed; final check of ${final.requests} requests, ${final.accessTokens} access tokens, ${final.refreshTokens} refresh tokens`,
    );
    console.log(`[sigkill ${TEST_ENGINE}]\n  ${report.join('\n  ')}`);
    expect(outputs.join('') + server!.output(), 'server logs').not.toMatch(/"level":(50|60)/);
  }, 60_000);
});
