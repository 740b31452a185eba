/**
 * What the fault tests share: `agentauth serve` as a child process that can be killed and
 * restarted, and raw SQL over a second connection for the checks the Store interface has no
 * query for.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import Database from 'better-sqlite3';
import pg from 'pg';
import { sqlitePath } from '../../src/store/open.ts';

export interface ServerProcess {
  child: ChildProcess;
  baseUrl: string;
  /** Everything the process wrote on stdout and stderr so far. */
  output(): string;
  /** Resolves with the exit code or signal once the process has ended. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  kill(signal: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts `node bin/agentauth serve` with this environment (on top of the test's own). */
export function spawnServer(env: Record<string, string>): ServerProcess {
  const child = spawn('node', ['bin/agentauth', 'serve'], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  return {
    child,
    baseUrl: `http://127.0.0.1:${env.PORT}`,
    output: () => output,
    exited,
    kill(signal) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** Waits until GET /readyz answers 200; throws after `timeoutMs` or when the process ends. */
export async function waitReady(server: ServerProcess, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (server.child.exitCode !== null || server.child.signalCode !== null) throw new Error(`server exited before it was ready:\n${server.output()}`);
    try {
      if ((await fetch(`${server.baseUrl}/readyz`, { signal: AbortSignal.timeout(2000) })).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`server ${server.baseUrl} did not become ready within ${timeoutMs} ms:\n${server.output()}`);
}

/** Raw SQL over a connection of its own: better-sqlite3 for SQLite, pg for PostgreSQL. */
export interface RawSql {
  rows<T = Record<string, unknown>>(query: string): Promise<T[]>;
  /** The first column of the first row as a number (count(*) and the like). */
  number(query: string): Promise<number>;
  exec(query: string): Promise<void>;
  close(): Promise<void>;
}

export async function rawSql(databaseUrl: string): Promise<RawSql> {
  if (databaseUrl.startsWith('sqlite:')) {
    const database = new Database(sqlitePath(databaseUrl));
    database.pragma('busy_timeout = 5000');
    const rows = async <T>(query: string) => database.prepare(query).all() as T[];
    return {
      rows,
      async number(query) {
        return Number(Object.values((await rows<Record<string, unknown>>(query))[0] ?? {})[0]);
      },
      async exec(query) {
        database.exec(query);
      },
      async close() {
        database.close();
      },
    };
  }
  const client = new pg.Client({ connectionString: databaseUrl });
  client.on('error', () => {});
  await client.connect();
  const rows = async <T>(query: string) => (await client.query(query)).rows as T[];
  return {
    rows,
    async number(query) {
      return Number(Object.values((await rows<Record<string, unknown>>(query))[0] ?? {})[0]);
    },
    async exec(query) {
      await client.query(query);
    },
    async close() {
      await client.end();
    },
  };
}

/**
 * Checks that nothing is half-written, over the whole database: every redeemed code has its
 * grant, every grant its code and its tokens, every completed request its code. Returns one
 * line per violated rule with the offending count (empty when all hold). `revocations`: whether
 * the test revoked grants (then a grant may have no unused refresh token).
 */
export async function integrityViolations(sql: RawSql, options: { revocations?: boolean } = {}): Promise<string[]> {
  const rules: Array<[string, string]> = [
    ['request in a status outside pending/authenticated/completed/error', `select count(*) from authorization_requests where status not in ('pending', 'authenticated', 'completed', 'error')`],
    ['authenticated or completed request without agent_id, model or authenticated_at', `select count(*) from authorization_requests where status in ('authenticated', 'completed') and (agent_id is null or model is null or authenticated_at is null)`],
    ['pending request with an agent recorded', `select count(*) from authorization_requests where status = 'pending' and (agent_id is not null or authenticated_at is not null)`],
    ['completed request without its code', `select count(*) from authorization_requests r where r.status = 'completed' and not exists (select 1 from authorization_codes c where c.request_id = r.id)`],
    ['request with more than one code', `select count(*) from (select request_id from authorization_codes group by request_id having count(*) > 1) x`],
    ['code of a request that is not completed', `select count(*) from authorization_codes c join authorization_requests r on r.id = c.request_id where r.status <> 'completed'`],
    ['code whose request does not exist', `select count(*) from authorization_codes c where not exists (select 1 from authorization_requests r where r.id = c.request_id)`],
    ['redeemed code without grant_id', `select count(*) from authorization_codes where redeemed_at is not null and grant_id is null`],
    ['grant_id on a code that is not redeemed', `select count(*) from authorization_codes where redeemed_at is null and grant_id is not null`],
    ['redeemed code whose grant does not exist', `select count(*) from authorization_codes c where c.grant_id is not null and not exists (select 1 from grants g where g.id = c.grant_id)`],
    ['grant without the code that created it', `select count(*) from grants g where not exists (select 1 from authorization_codes c where c.grant_id = g.id)`],
    ['grant without an access token', `select count(*) from grants g where not exists (select 1 from access_tokens a where a.grant_id = g.id)`],
    ['grant without a refresh token', `select count(*) from grants g where not exists (select 1 from refresh_tokens t where t.grant_id = g.id)`],
    [
      'grant whose access tokens and refresh tokens differ in number (each issuance writes one of each)',
      `select count(*) from grants g where (select count(*) from access_tokens a where a.grant_id = g.id) <> (select count(*) from refresh_tokens t where t.grant_id = g.id)`,
    ],
    ['access token of a grant that does not exist', `select count(*) from access_tokens a where not exists (select 1 from grants g where g.id = a.grant_id)`],
    ['refresh token of a grant that does not exist', `select count(*) from refresh_tokens t where not exists (select 1 from grants g where g.id = t.grant_id)`],
  ];
  if (!options.revocations) {
    rules.push([
      'unrevoked grant without exactly one unused refresh token (a rotation marks one used and adds one)',
      `select count(*) from grants g where g.revoked_at is null and (select count(*) from refresh_tokens t where t.grant_id = g.id and t.used_at is null) <> 1`,
    ]);
  }
  const violations: string[] = [];
  for (const [rule, query] of rules) {
    const count = await sql.number(query);
    if (count !== 0) violations.push(`${rule}: ${count}`);
  }
  return violations;
}
