/**
 * Authorization requests (docs/design.md §9): the record, its SQL (one text for SQLite and
 * PostgreSQL) and its state machine's transitions, each a guarded UPDATE that notifies the
 * request's watchers (the status stream, on every node) once it commits. The reads that serve a
 * request live here too: the agent's authentication reads the agent, the request and its client
 * (and, on PostgreSQL, the throttle's counter) in one statement.
 */
import { AGENT, type AgentRecord, agentIn, lastUseStep } from './agents.ts';
import { cancelApprovalStep } from './approvals.ts';
import { CLIENT, type ClientRecord, clientIn } from './clients.ts';
import type { Driver, Step } from './driver.ts';
import { type AuditEvent, auditStep } from './history.ts';
import { columnsOf, JoinedRead, type Table } from './joined.ts';
import { FAILURES, failuresJoin, type LimiterCount, limiterCount } from './limits.ts';
import { announceSteps, type WebhookEvent } from './outbox.ts';
import { insert, won, wonIndependent } from './rows.ts';
import type { CodeRecord } from './tokens.ts';

/** Where a request is: waiting for an agent, authenticated by one, completed with a code, or ended in an error. */
export type RequestStatus = 'pending' | 'authenticated' | 'completed' | 'error';

/** An authorization request (GET /authorize), from its start in the browser to its code or its error. */
export interface AuthorizationRequestRecord {
  id: string;
  client_id: string;
  redirect_uri: string;
  scope: string;
  state: string;
  code_challenge: string;
  nonce: string | null;
  /** OIDC login_hint naming the only agent that may authenticate, or null for any agent. */
  login_hint: string | null;
  /** The resource (RFC 8707) the tokens will be for, or null for the client itself. */
  resource: string | null;
  browser_digest: string;
  status: RequestStatus;
  error: string | null;
  error_description: string | null;
  agent_id: string | null;
  model: string | null;
  authenticated_at: number | null;
  created_at: number;
  expires_at: number;
  /** The owner approval the request awaits or awaited (docs/design.md §16); null when no policy asked. */
  approval_id: string | null;
}

/** What a request's status is derived from: the status stream's and GET /api/check-status's read. */
export type RequestStatusFields = Pick<
  AuthorizationRequestRecord,
  'status' | 'error' | 'error_description' | 'expires_at' | 'approval_id'
>;

/** An authorization request with its client (undefined when the client row is gone). */
export interface RequestWithClient {
  request: AuthorizationRequestRecord;
  client: ClientRecord | undefined;
}

/** What the agent's authentication reads first (RequestStore.findWithAgent). */
export interface AgentAndRequest {
  agent: AgentRecord | undefined;
  found: RequestWithClient | undefined;
  /** The throttle key's live count, when the store read it along (null: none in the window). */
  failures?: LimiterCount | null;
}

/** Authorization requests in the store (Store.requests). */
export interface RequestStore {
  insert(request: AuthorizationRequestRecord): Promise<void>;
  find(id: string): Promise<AuthorizationRequestRecord | undefined>;
  /**
   * The agent presenting credentials and the request it names, with the request's client, in one
   * statement (each may be absent). With `failuresKey` (a limiter's stored key), and when the
   * limiters keep their counters in the database, the key's live count comes along in the same
   * statement as `failures` (null: none in the window); otherwise `failures` is undefined and
   * the limiter is asked itself.
   */
  findWithAgent(agentId: string, requestId: string, failuresKey?: string): Promise<AgentAndRequest>;
  /** The request with its client, in one statement. */
  findWithClient(id: string): Promise<RequestWithClient | undefined>;
  /** Only what the status of a request is derived from (GET /api/check-status, the hottest read). */
  findStatus(id: string): Promise<RequestStatusFields | undefined>;
  /**
   * pending → authenticated, only while pending, unexpired and held by no owner approval (one
   * holds it: only its decision may authenticate it), together with the agent's last use and
   * the audit event of the success: all of it or none. With `perHour` (the owner's limit,
   * docs/design.md §16), also only while the agent has made fewer successful sign-ins in the
   * hour before `now`: the count is taken in the unit, after the agent's row is locked, so
   * concurrent sign-ins of the agent are counted one after the other on both engines.
   */
  authenticate(
    id: string,
    by: { agent_id: string; model: string },
    now: number,
    audit: AuditEvent,
    announce?: WebhookEvent[],
    perHour?: number,
  ): Promise<boolean>;
  /** authenticated → completed and the code stored, in one transaction, for the bound browser. */
  complete(id: string, browserDigest: string, now: number, code: CodeRecord): Promise<boolean>;
  /**
   * authenticated → error/request_contested when another agent than the one that authenticated
   * presents valid credentials, with the audit event: all of it or none.
   */
  contest(id: string, otherAgentId: string, now: number, description: string, audit: AuditEvent): Promise<boolean>;
  /** pending|authenticated → error (for example access_denied), for the bound browser. */
  fail(
    id: string,
    browserDigest: string,
    now: number,
    error: string,
    description: string,
    announce?: WebhookEvent[],
  ): Promise<boolean>;
}

/**
 * The authorization requests of the database behind `driver`.
 *
 * @example
 * const requests = requestStore(driver);
 * const { agent, found } = await requests.findWithAgent(agentId, requestId);
 */
export function requestStore(driver: Driver): RequestStore {
  /** The agent's authentication read with a throttle counter, where the counters are in the database. */
  const withFailures = driver.countersTable ? agentRequestAndFailures(driver.countersTable) : undefined;
  return {
    async insert(request) {
      await driver.write([insert('authorization_requests', request)]);
    },

    find(id) {
      return driver.one<AuthorizationRequestRecord>(FIND, [id]);
    },

    async findWithAgent(agentId, requestId, failuresKey) {
      const read = withFailures;
      if (failuresKey === undefined || read === undefined) {
        const row = (await driver.values(AGENT_AND_REQUEST.sql, [agentId, requestId]))!;
        return { agent: agentIn(AGENT_AND_REQUEST, row), found: requestWithClient(AGENT_AND_REQUEST, row) };
      }
      // The limiter's own reading of a key (rate-limiter-flexible: live while expire is later than
      // now in milliseconds, or has none), taken along in the same statement.
      const now = Date.now();
      const row = (await driver.values(read.sql, [agentId, requestId, failuresKey, now]))!;
      return {
        agent: agentIn(read, row),
        found: requestWithClient(read, row),
        failures: limiterCount(read.take<{ points: number; expire: number | null }>(row, FAILURES), now),
      };
    },

    async findWithClient(id) {
      const row = await driver.values(REQUEST_WITH_CLIENT.sql, [id]);
      return row && requestWithClient(REQUEST_WITH_CLIENT, row);
    },

    findStatus(id) {
      return driver.one<RequestStatusFields>(
        'SELECT status, error, error_description, expires_at, approval_id FROM authorization_requests WHERE id = ?',
        [id],
      );
    },

    authenticate(id, by, now, audit, announce, perHour) {
      const transition: Step = {
        sql: AUTHENTICATE,
        params: [by.agent_id, by.model, now, id, now],
        guard: true,
        notify: id,
      };
      // The outbox (docs/design.md §15): committed with the sign-in, or not at all.
      if (perHour === undefined)
        return wonIndependent(
          driver,
          transition,
          lastUseStep(by.agent_id, now),
          auditStep(audit),
          ...announceSteps(announce),
        );
      // A limited agent's sign-ins queue on its row (PostgreSQL: the lock is held to the commit),
      // and each counts in a statement of its own, which under READ COMMITTED sees every sign-in
      // committed before the lock was granted; SQLite runs units one at a time anyway. Not one
      // statement: a single snapshot would not see them.
      return won(
        driver,
        { sql: 'UPDATE agents SET last_used_at = ? WHERE id = ?', params: [now, by.agent_id], guard: true },
        {
          ...transition,
          sql: `${AUTHENTICATE} AND (SELECT count(*) FROM audit_events WHERE agent_id = ? AND at >= ? AND outcome = 'authenticated') < ?`,
          params: [...transition.params, by.agent_id, now - 3600, perHour],
        },
        auditStep(audit),
        ...announceSteps(announce),
      );
    },

    complete(id, browserDigest, now, code) {
      return wonIndependent(
        driver,
        {
          sql: "UPDATE authorization_requests SET status = 'completed' WHERE id = ? AND status = 'authenticated' AND browser_digest = ? AND expires_at > ?",
          params: [id, browserDigest, now],
          guard: true,
          notify: id,
        },
        insert('authorization_codes', code),
      );
    },

    contest(id, otherAgentId, now, description, audit) {
      return wonIndependent(
        driver,
        {
          sql: "UPDATE authorization_requests SET status = 'error', error = 'request_contested', error_description = ? WHERE id = ? AND status = 'authenticated' AND agent_id <> ? AND expires_at > ?",
          params: [description, id, otherAgentId, now],
          guard: true,
          notify: id,
        },
        auditStep(audit),
      );
    },

    fail(id, browserDigest, now, error, description, announce) {
      return wonIndependent(
        driver,
        {
          sql: "UPDATE authorization_requests SET status = 'error', error = ?, error_description = ? WHERE id = ? AND status IN ('pending', 'authenticated') AND browser_digest = ? AND expires_at > ?",
          params: [error, description, id, browserDigest, now],
          guard: true,
          notify: id,
        },
        // A request held for its owner's approval: the approval ends with it (issue 35).
        cancelApprovalStep(id, now),
        ...announceSteps(announce),
      );
    },
  };
}

/** pending → authenticated: only while pending, unexpired and held by no approval. */
const AUTHENTICATE =
  "UPDATE authorization_requests SET status = 'authenticated', agent_id = ?, model = ?, authenticated_at = ? WHERE id = ? AND status = 'pending' AND approval_id IS NULL AND expires_at > ?";

/** A request's every column in a joined read, and in find (not *: the webhooks' bookkeeping, expiry_announced_at, is not the request's). */
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
/** The record's columns, not *: the webhooks' bookkeeping (expiry_announced_at) is not the request's. */
const FIND = `SELECT ${REQUEST.columns.join(', ')} FROM authorization_requests WHERE id = ?`;

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
 * AGENT_AND_REQUEST with a throttle key's live counter (rate-limiter-flexible's reading: expire
 * later than now, or none), so the throttle's check costs no round trip of its own.
 */
const agentRequestAndFailures = (countersTable: string) =>
  new JoinedRead([AGENT, REQUEST, CLIENT, FAILURES], `${AGENT_AND_REQUEST_FROM} ${failuresJoin(countersTable)}`);

/** The request of a joined read's row with its client, or undefined when the row has none. */
function requestWithClient(read: JoinedRead, row: readonly unknown[]): RequestWithClient | undefined {
  const request = read.take<AuthorizationRequestRecord>(row, REQUEST);
  return request && { request, client: clientIn(read, row, CLIENT) };
}
