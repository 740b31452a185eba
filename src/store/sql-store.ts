/**
 * The Store in SQL, one text for SQLite and PostgreSQL. Each exactly-once transition is a
 * guarded UPDATE (a conditional statement whose changed-row count says who won); when a
 * transition writes more than one row, its statements form one unit that commits or rolls
 * back as a whole (driver.ts).
 */
import type { ChangeListener, Driver, Step } from './driver.ts';
import { columnsOf, JoinedRead, type Table } from './joined.ts';
import { FAILURES, failuresJoin, type Limiter, type LimiterOptions, limiterCount } from './limits.ts';
import { announceSteps, type WebhookEvent } from './outbox.ts';
import { SqlApiStore } from './api-store.ts';
import { SqlConsoleStore } from './console-store.ts';
import { SqlApprovalStore } from './approval-store.ts';
import { SqlWebhookStore } from './webhook-store.ts';
import {
  type ActivityStore,
  activityStore,
  type AuditEvent,
  auditStep,
  type SignInStore,
  signInStore,
} from './history.ts';
import { migrations } from './migrations.ts';
import {
  type AccessTokenStore,
  accessTokenStore,
  type CodeRecord,
  type CodeStore,
  codeStore,
  type GrantStore,
  grantStore,
  type RefreshTokenStore,
  refreshTokenStore,
} from './tokens.ts';
import { CLIENT, clientIn, type ClientStore, clientStore } from './clients.ts';
import { AGENT, agentIn, type AgentStore, agentStore } from './agents.ts';
import { insert } from './rows.ts';
import type {
  AuthorizationRequestRecord,
  AgentAndRequest,
  PurgeCounts,
  PurgeCutoffs,
  RequestWithClient,
  RequestStatusFields,
  Store,
} from './types.ts';

export class SqlStore implements Store {
  readonly engine: 'sqlite' | 'postgres';
  readonly agents: AgentStore;
  readonly clients: ClientStore;
  readonly codes: CodeStore;
  readonly grants: GrantStore;
  readonly refreshTokens: RefreshTokenStore;
  readonly accessTokens: AccessTokenStore;
  readonly signIns: SignInStore;
  readonly activity: ActivityStore;
  readonly console: SqlConsoleStore;
  readonly api: SqlApiStore;
  readonly webhooks: SqlWebhookStore;
  readonly approvals: SqlApprovalStore;
  /** The agent's authentication read with a throttle counter, where the counters are in the database. */
  private readonly agentRequestAndFailures: JoinedRead | undefined;

  constructor(private readonly driver: Driver) {
    this.engine = driver.engine;
    this.agentRequestAndFailures = driver.countersTable ? agentRequestAndFailures(driver.countersTable) : undefined;
    this.agents = agentStore(driver);
    this.clients = clientStore(driver);
    this.codes = codeStore(driver);
    this.grants = grantStore(driver);
    this.refreshTokens = refreshTokenStore(driver);
    this.accessTokens = accessTokenStore(driver);
    this.signIns = signInStore(driver);
    this.activity = activityStore(driver);
    this.console = new SqlConsoleStore(driver);
    this.api = new SqlApiStore(driver);
    this.webhooks = new SqlWebhookStore(driver);
    this.approvals = new SqlApprovalStore(driver);
  }

  migrate(): Promise<void> {
    return this.driver.migrate(migrations);
  }

  async ping(): Promise<void> {
    await this.driver.one('SELECT 1 AS ok');
  }

  close(): Promise<void> {
    return this.driver.close();
  }

  createLimiter(options: LimiterOptions): Promise<Limiter> {
    return this.driver.createLimiter(options);
  }

  watchStatus(listener: ChangeListener): Promise<() => Promise<void>> {
    return this.driver.listen(listener);
  }

  /** Runs one unit; true when its guard held. */
  private async won(...steps: Step[]): Promise<boolean> {
    return (await this.driver.write(steps)) !== null;
  }

  /**
   * Runs one unit whose steps touch different rows and read none another changes
   * (UnitOptions.independent: one statement on PostgreSQL); true when its guard held.
   */
  private async wonIndependent(...steps: Step[]): Promise<boolean> {
    return (await this.driver.write(steps, { independent: true })) !== null;
  }

  // Authorization requests

  async insertRequest(request: AuthorizationRequestRecord): Promise<void> {
    await this.driver.write([insert('authorization_requests', request)]);
  }

  findRequest(id: string): Promise<AuthorizationRequestRecord | undefined> {
    // The record's columns, not *: the webhooks' bookkeeping (expiry_announced_at) is not the request's.
    return this.driver.one<AuthorizationRequestRecord>(
      `SELECT ${REQUEST.columns.join(', ')} FROM authorization_requests WHERE id = ?`,
      [id],
    );
  }

  async findAgentAndRequest(agentId: string, requestId: string, failuresKey?: string): Promise<AgentAndRequest> {
    const read = this.agentRequestAndFailures;
    if (failuresKey === undefined || read === undefined) {
      const row = (await this.driver.values(AGENT_AND_REQUEST.sql, [agentId, requestId]))!;
      return { agent: agentIn(AGENT_AND_REQUEST, row), found: requestWithClient(AGENT_AND_REQUEST, row) };
    }
    // The limiter's own reading of a key (rate-limiter-flexible: live while expire is later than
    // now in milliseconds, or has none), taken along in the same statement.
    const now = Date.now();
    const row = (await this.driver.values(read.sql, [agentId, requestId, failuresKey, now]))!;
    return {
      agent: agentIn(read, row),
      found: requestWithClient(read, row),
      failures: limiterCount(read.take<{ points: number; expire: number | null }>(row, FAILURES), now),
    };
  }

  async findRequestWithClient(id: string): Promise<RequestWithClient | undefined> {
    const row = await this.driver.values(REQUEST_WITH_CLIENT.sql, [id]);
    return row && requestWithClient(REQUEST_WITH_CLIENT, row);
  }

  findRequestStatus(id: string): Promise<RequestStatusFields | undefined> {
    return this.driver.one<RequestStatusFields>(
      'SELECT status, error, error_description, expires_at, approval_id FROM authorization_requests WHERE id = ?',
      [id],
    );
  }

  markRequestAuthenticated(
    id: string,
    by: { agent_id: string; model: string },
    now: number,
    audit: AuditEvent,
    announce?: WebhookEvent[],
  ): Promise<boolean> {
    return this.wonIndependent(
      {
        sql: "UPDATE authorization_requests SET status = 'authenticated', agent_id = ?, model = ?, authenticated_at = ? WHERE id = ? AND status = 'pending' AND approval_id IS NULL AND expires_at > ?",
        params: [by.agent_id, by.model, now, id, now],
        guard: true,
        notify: id,
      },
      // To the minute: a row rewritten at every sign-in made concurrent sign-ins of one agent
      // queue on its row lock (PostgreSQL) and cost every sign-in a row version.
      {
        sql: 'UPDATE agents SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at <= ?)',
        params: [now, by.agent_id, now - AGENT_USE_RESOLUTION],
      },
      auditStep(audit),
      // The outbox (docs/design.md §15): committed with the sign-in, or not at all.
      ...announceSteps(announce),
    );
  }

  completeRequestWithCode(id: string, browserDigest: string, now: number, code: CodeRecord): Promise<boolean> {
    return this.wonIndependent(
      {
        sql: "UPDATE authorization_requests SET status = 'completed' WHERE id = ? AND status = 'authenticated' AND browser_digest = ? AND expires_at > ?",
        params: [id, browserDigest, now],
        guard: true,
        notify: id,
      },
      insert('authorization_codes', code),
    );
  }

  contestRequest(
    id: string,
    otherAgentId: string,
    now: number,
    description: string,
    audit: AuditEvent,
  ): Promise<boolean> {
    return this.wonIndependent(
      {
        sql: "UPDATE authorization_requests SET status = 'error', error = 'request_contested', error_description = ? WHERE id = ? AND status = 'authenticated' AND agent_id <> ? AND expires_at > ?",
        params: [description, id, otherAgentId, now],
        guard: true,
        notify: id,
      },
      auditStep(audit),
    );
  }

  failRequest(
    id: string,
    browserDigest: string,
    now: number,
    error: string,
    description: string,
    announce?: WebhookEvent[],
  ): Promise<boolean> {
    return this.wonIndependent(
      {
        sql: "UPDATE authorization_requests SET status = 'error', error = ?, error_description = ? WHERE id = ? AND status IN ('pending', 'authenticated') AND browser_digest = ? AND expires_at > ?",
        params: [error, description, id, browserDigest, now],
        guard: true,
        notify: id,
      },
      ...announceSteps(announce),
    );
  }

  async purge(
    { expiredBefore, unauthenticatedBefore, auditBefore, unusedClients }: PurgeCutoffs,
    batchSize = PURGE_BATCH,
  ): Promise<PurgeCounts> {
    const expired = [expiredBefore];
    // Requests no agent ever authenticated are most of what an unauthenticated caller can make;
    // they go sooner, so a flood of /authorize cannot fill the disk for PURGE_AFTER.
    const requests =
      (await this.deleteInBatches(
        'authorization_requests',
        'id',
        'authenticated_at IS NULL AND expires_at < ?',
        [unauthenticatedBefore],
        batchSize,
      )) + (await this.deleteInBatches('authorization_requests', 'id', 'expires_at < ?', expired, batchSize));
    const codes = await this.deleteInBatches('authorization_codes', 'digest', 'expires_at < ?', expired, batchSize);
    const accessTokens = await this.deleteInBatches('access_tokens', 'jti', 'expires_at < ?', expired, batchSize);
    const refreshTokens = await this.deleteInBatches('refresh_tokens', 'digest', 'expires_at < ?', expired, batchSize);
    // A grant goes once nothing refers to it any more: no refresh token and no access token left.
    const grants = await this.deleteInBatches(
      'grants',
      'id',
      `created_at < ?
        AND NOT EXISTS (SELECT 1 FROM refresh_tokens WHERE refresh_tokens.grant_id = grants.id)
        AND NOT EXISTS (SELECT 1 FROM access_tokens WHERE access_tokens.grant_id = grants.id)`,
      expired,
      batchSize,
    );
    const auditEvents = await this.deleteInBatches('audit_events', 'id', 'at < ?', [auditBefore], batchSize);
    // A self-registered client goes once unused for long, after the grants above: never while a
    // grant (so a token) refers to it, nor while a request or code of it can still be used. An
    // operator's disabled one stays (a metadata document's would otherwise come back enabled).
    // Requests and codes have no client index: the unexpired ones are few and found by expiry.
    const clients = unusedClients
      ? await this.deleteInBatches(
          'clients',
          'id',
          `source IN ('metadata_document', 'dynamic') AND status = 'active' AND last_used_at < ?
            AND NOT EXISTS (SELECT 1 FROM grants WHERE grants.client_id = clients.id)
            AND NOT EXISTS (SELECT 1 FROM authorization_requests r WHERE r.expires_at > ? AND r.client_id = clients.id)
            AND NOT EXISTS (SELECT 1 FROM authorization_codes c WHERE c.expires_at > ? AND c.client_id = clients.id)`,
          [unusedClients.lastUsedBefore, unusedClients.now, unusedClients.now],
          batchSize,
        )
      : 0;
    // An assertion is refused once expired, so its used id need not be kept longer.
    // Its key is two columns (agent_id, jti): the batch's condition is repeated outside, so a
    // jti another agent also used, still unexpired, stays.
    const agentAssertions = await this.deleteInBatches(
      'agent_assertions',
      'jti',
      'expires_at < ?',
      [unauthenticatedBefore],
      batchSize,
      'expires_at < ?',
    );
    return { requests, codes, refreshTokens, accessTokens, grants, auditEvents, clients, agentAssertions };
  }

  /**
   * Deletes the matching rows `batchSize` at a time, each batch a transaction of its own: a
   * backlog of a million rows then never holds SQLite's event loop or PostgreSQL's row locks
   * for seconds, and requests keep being answered between batches.
   */
  private async deleteInBatches(
    table: string,
    key: string,
    condition: string,
    params: unknown[],
    batchSize: number,
    /** Repeated on the rows deleted, for a table whose key is more than `key`; it takes `params` again. */
    alsoOnRows?: string,
  ): Promise<number> {
    const batch = `DELETE FROM ${table} WHERE ${key} IN (SELECT ${key} FROM ${table} WHERE ${condition} LIMIT ${batchSize})`;
    const sql = alsoOnRows ? `${batch} AND ${alsoOnRows}` : batch;
    const all = alsoOnRows ? [...params, ...params] : params;
    let total = 0;
    for (;;) {
      const [deleted = 0] = (await this.driver.write([{ sql, params: all }])) ?? [];
      total += deleted;
      if (deleted < batchSize) return total;
    }
  }
}

/**
 * Rows one purge statement deletes at most. Measured on a backlog of 200,000 expired flows
 * (1.2 million rows) on SQLite: in one transaction the purge took 3.4 s, all of it with every
 * request waiting; in batches of 5,000 it took 17 s in total but never held the server for more
 * than 0.16 s at a time (batches of 1,000: 37 s, 0.07 s).
 */
export const PURGE_BATCH = 5000;

const REQUEST: Table = {
  alias: 'r',
  columns: columnsOf<AuthorizationRequestRecord>()([
    'id',
    'client_id',
    'redirect_uri',
    'scope',
    'state',
    'code_challenge',
    'nonce',
    'login_hint',
    'resource',
    'browser_digest',
    'status',
    'error',
    'error_description',
    'agent_id',
    'model',
    'authenticated_at',
    'created_at',
    'expires_at',
    'approval_id',
  ]),
};
/** The request and its client: what the agent's authentication and the browser's decision both need first. */
const REQUEST_WITH_CLIENT = new JoinedRead(
  [REQUEST, CLIENT],
  'FROM authorization_requests r LEFT JOIN clients c ON c.id = r.client_id WHERE r.id = ?',
);
/** The agent presenting credentials, and the request it names with its client: one row whatever exists. */
const AGENT_AND_REQUEST_FROM =
  'FROM (SELECT 1 AS one) x LEFT JOIN agents a ON a.id = ? LEFT JOIN authorization_requests r ON r.id = ? LEFT JOIN clients c ON c.id = r.client_id';
const AGENT_AND_REQUEST = new JoinedRead([AGENT, REQUEST, CLIENT], AGENT_AND_REQUEST_FROM);

/**
 * How old an agent's recorded last use (agents.last_used_at, its last sign-in) may be before a
 * sign-in writes it again, in seconds: the console and the API show it to the minute.
 */
export const AGENT_USE_RESOLUTION = 60;

/**
 * AGENT_AND_REQUEST with a throttle key's live counter (rate-limiter-flexible's reading: expire
 * later than now, or none), so the throttle's check costs no round trip of its own.
 */
const agentRequestAndFailures = (countersTable: string) =>
  new JoinedRead([AGENT, REQUEST, CLIENT, FAILURES], `${AGENT_AND_REQUEST_FROM} ${failuresJoin(countersTable)}`);

function requestWithClient(read: JoinedRead, row: readonly unknown[]): RequestWithClient | undefined {
  const request = read.take<AuthorizationRequestRecord>(row, REQUEST);
  return request && { request, client: clientIn(read, row, CLIENT) };
}
