/**
 * What the fault tests share: raw SQL over a second connection for the checks the Store
 * interface has no query for. (The server as a child process is test/helpers/server-process.ts.)
 */
import Database from 'better-sqlite3';
import pg from 'pg';
import { sqlitePath } from '../../src/store/open.ts';

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
    [
      'request in a status outside pending/authenticated/completed/error',
      `select count(*) from authorization_requests where status not in ('pending', 'authenticated', 'completed', 'error')`,
    ],
    [
      'authenticated or completed request without agent_id, model or authenticated_at',
      `select count(*) from authorization_requests where status in ('authenticated', 'completed') and (agent_id is null or model is null or authenticated_at is null)`,
    ],
    [
      'pending request with an agent recorded',
      `select count(*) from authorization_requests where status = 'pending' and (agent_id is not null or authenticated_at is not null)`,
    ],
    [
      'completed request without its code',
      `select count(*) from authorization_requests r where r.status = 'completed' and not exists (select 1 from authorization_codes c where c.request_id = r.id)`,
    ],
    [
      'request with more than one code',
      `select count(*) from (select request_id from authorization_codes group by request_id having count(*) > 1) x`,
    ],
    [
      'code of a request that is not completed',
      `select count(*) from authorization_codes c join authorization_requests r on r.id = c.request_id where r.status <> 'completed'`,
    ],
    [
      'code whose request does not exist',
      `select count(*) from authorization_codes c where not exists (select 1 from authorization_requests r where r.id = c.request_id)`,
    ],
    [
      'redeemed code without grant_id',
      `select count(*) from authorization_codes where redeemed_at is not null and grant_id is null`,
    ],
    [
      'grant_id on a code that is not redeemed',
      `select count(*) from authorization_codes where redeemed_at is null and grant_id is not null`,
    ],
    [
      'redeemed code whose grant does not exist',
      `select count(*) from authorization_codes c where c.grant_id is not null and not exists (select 1 from grants g where g.id = c.grant_id)`,
    ],
    [
      'grant without the code that created it',
      `select count(*) from grants g where not exists (select 1 from authorization_codes c where c.grant_id = g.id)`,
    ],
    [
      'grant without an access token',
      `select count(*) from grants g where not exists (select 1 from access_tokens a where a.grant_id = g.id)`,
    ],
    [
      'grant without a refresh token',
      `select count(*) from grants g where not exists (select 1 from refresh_tokens t where t.grant_id = g.id)`,
    ],
    [
      'grant whose access tokens and refresh tokens differ in number (each issuance writes one of each)',
      `select count(*) from grants g where (select count(*) from access_tokens a where a.grant_id = g.id) <> (select count(*) from refresh_tokens t where t.grant_id = g.id)`,
    ],
    [
      'access token of a grant that does not exist',
      `select count(*) from access_tokens a where not exists (select 1 from grants g where g.id = a.grant_id)`,
    ],
    [
      'refresh token of a grant that does not exist',
      `select count(*) from refresh_tokens t where not exists (select 1 from grants g where g.id = t.grant_id)`,
    ],
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
