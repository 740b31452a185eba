/**
 * Action requests (docs/design.md §21): a website's question to an agent's owner, "may this agent
 * do this?" (OpenID CIBA's backchannel authentication request, with RFC 9396 authorization
 * details). The records and their SQL, one text for SQLite and PostgreSQL, behind
 * store.actionRequests. Every transition is a guarded statement: a request is decided once (with
 * its approval, in one unit), its tokens issue once, the ping is claimed by one node. The ping's
 * outbox is the row itself (notify_at, epoch milliseconds), set in the unit that decides or
 * expires the request.
 */
import { type ActionDetail, type ApprovalRecord, APPROVALS_CHANGED, approvalSpendStep } from './approvals.ts';
import { type Driver, type Step, WEBHOOK_CHANNEL } from './driver.ts';
import { type AuditEvent, auditStep } from './history.ts';
import { announceSteps, type WebhookEvent } from './outbox.ts';
import { insert, PURGE_BATCH } from './rows.ts';
import type { AccessTokenRecord } from './tokens.ts';

/**
 * Where an action request is: waiting for its owner; decided (approved or denied, by the owner or
 * their policy); expired undecided; or approved and its tokens issued (once).
 */
export type ActionRequestStatus = 'pending' | 'approved' | 'denied' | 'expired' | 'issued';
/** Who answered: the owner (an approval of kind 'action') or the agent's policy for actions. */
export type ActionAnswerer = 'owner' | 'policy';
/** How the website learns the answer: by polling /token, or told by a ping to its endpoint first. */
export type DeliveryMode = 'poll' | 'ping';

export type { ActionDetail };

/** A website's action request about one agent (docs/design.md §21). */
export interface ActionRequestRecord {
  /** `act_…`: names the request in approvals, tokens and the history (never given to the website). */
  id: string;
  /** SHA-256 of the auth_req_id the website was given (the value itself is never stored). */
  auth_req_id_digest: string;
  client_id: string;
  agent_id: string;
  /** The agent's live grant at the website it was asked under; the tokens belong to it. */
  grant_id: string;
  scope: string;
  /** The action, as the website asked and the owner approves it. */
  authorization_details: ActionDetail[];
  binding_message: string | null;
  delivery_mode: DeliveryMode;
  /** The ping's client_notification_token, sealed as client secrets are (null for a poll client). */
  notification_token_sealed: string | null;
  /** Where the ping goes: the client's endpoint as registered when it asked (null for a poll client). */
  notification_endpoint: string | null;
  status: ActionRequestStatus;
  answered_by: ActionAnswerer | null;
  decided_at: number | null;
  /** The console account that decided (null for a policy's answer). */
  decided_by: string | null;
  /** Seconds between polls; grows by 5 with each slow_down. */
  poll_interval: number;
  /** The earliest time (epoch seconds) a poll is not answered slow_down. */
  next_poll_at: number;
  created_at: number;
  expires_at: number;
  /** The owner's approval (kind 'action') asked for it, if the policy did not answer. */
  approval_id: string | null;
  /** The website's address when it asked. */
  ip: string | null;
  /** The ping due (epoch milliseconds), null when none is to be sent. */
  notify_at: number | null;
  notify_attempts: number;
  /** Until when (epoch ms) the node sending the ping holds it. */
  notify_lease_until: number | null;
  /** When the ping was delivered (epoch ms). */
  notified_at: number | null;
}

/** The flood limits the opening of a request is guarded by (docs/design.md §21). */
export interface PendingLimits {
  /** Pending requests one agent may have at one website… */
  perWebsite: number;
  /** …and at all websites together. */
  perAgent: number;
}

/** Action requests in the store (Store.actionRequests). */
export interface ActionRequestStore {
  /**
   * Inserts the request (with its owner's approval when one is asked, the history row and the
   * events) in one unit, only while the agent has fewer pending, unexpired requests than `limits`
   * at this website and in all. False (nothing written) when a limit is reached.
   */
  open(
    request: ActionRequestRecord,
    limits: PendingLimits,
    with_: { approval?: ApprovalRecord; audit: AuditEvent; announce?: WebhookEvent[] },
  ): Promise<boolean>;
  find(id: string): Promise<ActionRequestRecord | undefined>;
  /** The request an auth_req_id names, by its digest. */
  findByDigest(digest: string): Promise<ActionRequestRecord | undefined>;
  /**
   * A poll of a pending request: true when it came no sooner than the interval allows (the next
   * one is then an interval away); false when too soon, and then the interval grows by `penalty`
   * seconds, stored, so every node answers alike (slow_down).
   */
  poll(id: string, now: number, penalty: number): Promise<boolean>;
  /**
   * The owner's decision, with the approval it spends, the history row and the events in one unit:
   * only while the request is pending, unexpired and held by this approval, and the approval is
   * waiting. With `ping`, the notification becomes due. False when no longer waiting.
   */
  decide(
    request: ActionRequestRecord,
    approval: ApprovalRecord,
    decision: { status: 'approved' | 'denied'; by: string; now: number },
    audit: AuditEvent,
    announce?: WebhookEvent[],
  ): Promise<boolean>;
  /**
   * approved → issued with its access token's row (naming the request), once: false when the
   * request is no longer approved or has expired.
   */
  issue(id: string, now: number, accessToken: AccessTokenRecord, audit: AuditEvent): Promise<boolean>;
  /**
   * Marks pending requests expired since `now` as expired (their pings due), at most `limit`;
   * the count.
   */
  expire(now: number, limit?: number): Promise<number>;
  /** The pings due at `nowMs`, each claimed (a lease until `leaseUntilMs`) by this call only. */
  claimNotifications(nowMs: number, leaseUntilMs: number, limit: number): Promise<ActionRequestRecord[]>;
  /** The ping's outcome: delivered, or tried again at `retryAtMs` (null: given up on). */
  notified(id: string, outcome: { delivered: boolean; nowMs: number; retryAtMs: number | null }): Promise<void>;
  /** The soonest ping due (epoch ms), or null when none waits. */
  nextNotification(): Promise<number | null>;
  /** An agent's requests created after `since`, newest first. */
  listOfAgent(agentId: string, since: number, limit: number): Promise<ActionRequestRecord[]>;
  /** Deletes requests that expired before `before`; the count. */
  purge(before: number): Promise<number>;
}

/** The row as stored: the details as JSON text. */
type ActionRequestRow = Omit<ActionRequestRecord, 'authorization_details'> & { authorization_details: string };

const fromRow = (row: ActionRequestRow): ActionRequestRecord => ({
  ...row,
  poll_interval: Number(row.poll_interval),
  next_poll_at: Number(row.next_poll_at),
  created_at: Number(row.created_at),
  expires_at: Number(row.expires_at),
  decided_at: row.decided_at === null ? null : Number(row.decided_at),
  notify_at: row.notify_at === null ? null : Number(row.notify_at),
  notify_attempts: Number(row.notify_attempts),
  notify_lease_until: row.notify_lease_until === null ? null : Number(row.notify_lease_until),
  notified_at: row.notified_at === null ? null : Number(row.notified_at),
  authorization_details: JSON.parse(row.authorization_details) as ActionDetail[],
});

/** Each column and the type PostgreSQL must be told in INSERT … SELECT (SQLite reads the same casts). */
const COLUMNS: ReadonlyArray<[keyof ActionRequestRecord, string]> = [
  ['id', 'varchar(64)'],
  ['auth_req_id_digest', 'varchar(64)'],
  ['client_id', 'varchar(512)'],
  ['agent_id', 'varchar(64)'],
  ['grant_id', 'varchar(64)'],
  ['scope', 'varchar(1000)'],
  ['authorization_details', 'text'],
  ['binding_message', 'varchar(400)'],
  ['delivery_mode', 'varchar(8)'],
  ['notification_token_sealed', 'text'],
  ['notification_endpoint', 'varchar(2000)'],
  ['status', 'varchar(16)'],
  ['answered_by', 'varchar(16)'],
  ['decided_at', 'bigint'],
  ['decided_by', 'varchar(64)'],
  ['poll_interval', 'integer'],
  ['next_poll_at', 'bigint'],
  ['created_at', 'bigint'],
  ['expires_at', 'bigint'],
  ['approval_id', 'varchar(64)'],
  ['ip', 'varchar(64)'],
  ['notify_at', 'bigint'],
  ['notify_attempts', 'integer'],
  ['notify_lease_until', 'bigint'],
  ['notified_at', 'bigint'],
];

/**
 * The insert of a request, guarded by the flood limits in the same statement: the pending,
 * unexpired requests of the agent at the website and in all are counted as it inserts.
 */
const OPEN_SQL = `INSERT INTO action_requests (${COLUMNS.map(([name]) => name).join(', ')})
  SELECT ${COLUMNS.map(([, type]) => `CAST(? AS ${type})`).join(', ')}
  WHERE (SELECT COUNT(*) FROM action_requests WHERE agent_id = ? AND client_id = ? AND status = 'pending' AND expires_at > ?) < ?
    AND (SELECT COUNT(*) FROM action_requests WHERE agent_id = ? AND status = 'pending' AND expires_at > ?) < ?`;

/**
 * The action requests of the database behind `driver`.
 *
 * @example
 * const request = await actionRequestStore(driver).findByDigest(digest(authReqId));
 */
export function actionRequestStore(driver: Driver): ActionRequestStore {
  const one = async (sql: string, params: unknown[]) => {
    const row = await driver.one<ActionRequestRow>(sql, params);
    return row && fromRow(row);
  };
  return {
    async open(request, limits, { approval, audit, announce }) {
      const values = COLUMNS.map(([name]) =>
        name === 'authorization_details' ? JSON.stringify(request.authorization_details) : request[name],
      );
      const { agent_id: agent, client_id: client, created_at: now } = request;
      const steps: Step[] = [
        {
          sql: OPEN_SQL,
          params: [...values, agent, client, now, limits.perWebsite, agent, now, limits.perAgent],
          guard: true,
          // Answered by the policy for a ping client: its ping is due at once.
          ...(request.notify_at === null ? {} : { notify: 'due', channel: WEBHOOK_CHANNEL }),
        },
        ...(approval ? [{ ...insert('approvals', approval), notify: APPROVALS_CHANGED }] : []),
        auditStep(audit),
        ...announceSteps(announce),
      ];
      return (await driver.write(steps)) !== null;
    },

    find(id) {
      return one('SELECT * FROM action_requests WHERE id = ?', [id]);
    },

    findByDigest(digest) {
      return one('SELECT * FROM action_requests WHERE auth_req_id_digest = ?', [digest]);
    },

    async poll(id, now, penalty) {
      const [inTime = 0] =
        (await driver.write([
          {
            sql: 'UPDATE action_requests SET next_poll_at = ? + poll_interval WHERE id = ? AND next_poll_at <= ?',
            params: [now, id, now],
          },
        ])) ?? [];
      if (inTime > 0) return true;
      await driver.write([
        {
          sql: 'UPDATE action_requests SET poll_interval = poll_interval + ?, next_poll_at = ? + poll_interval + ? WHERE id = ?',
          params: [penalty, now, penalty, id],
        },
      ]);
      return false;
    },

    async decide(request, approval, decision, audit, announce) {
      const { now } = decision;
      const notifyAt = request.delivery_mode === 'ping' ? now * 1000 : null;
      const changes = await driver.write(
        [
          approvalSpendStep(
            approval,
            decision.status,
            decision.status === 'approved' ? 'once' : 'deny',
            decision.by,
            now,
          ),
          {
            sql: "UPDATE action_requests SET status = ?, answered_by = 'owner', decided_at = ?, decided_by = ?, notify_at = ? WHERE id = ? AND status = 'pending' AND approval_id = ? AND expires_at > ?",
            params: [decision.status, now, decision.by, notifyAt, request.id, approval.id, now],
            guard: true,
            // A ping is due: every node's dispatcher wakes, as for a webhook delivery written.
            ...(notifyAt === null ? {} : { notify: 'due', channel: WEBHOOK_CHANNEL }),
          },
          auditStep(audit),
          ...announceSteps(announce),
        ],
        { independent: true },
      );
      return changes !== null;
    },

    async issue(id, now, accessToken, audit) {
      const changes = await driver.write(
        [
          {
            sql: "UPDATE action_requests SET status = 'issued' WHERE id = ? AND status = 'approved' AND expires_at > ?",
            params: [id, now],
            guard: true,
          },
          insert('access_tokens', { ...accessToken, action_request_id: id }),
          auditStep(audit),
        ],
        { independent: true },
      );
      return changes !== null;
    },

    async expire(now, limit = PURGE_BATCH) {
      const [expired = 0] =
        (await driver.write([
          {
            sql: `UPDATE action_requests SET status = 'expired',
                notify_at = CASE WHEN delivery_mode = 'ping' THEN CAST(? AS bigint) ELSE NULL END
              WHERE id IN (SELECT id FROM action_requests WHERE status = 'pending' AND expires_at <= ? LIMIT ${Number(limit)})
                AND status = 'pending'`,
            params: [now * 1000, now],
            notify: APPROVALS_CHANGED,
          },
        ])) ?? [];
      return expired;
    },

    async claimNotifications(nowMs, leaseUntilMs, limit) {
      const due = await driver.all<ActionRequestRow>(
        `SELECT * FROM action_requests
          WHERE notify_at IS NOT NULL AND notify_at <= ? AND (notify_lease_until IS NULL OR notify_lease_until <= ?)
          ORDER BY notify_at LIMIT ${Number(limit)}`,
        [nowMs, nowMs],
      );
      const claimed: ActionRequestRecord[] = [];
      for (const row of due) {
        // A compare-and-set on the lease: of the nodes that read the row as due, one takes it.
        const [taken = 0] =
          (await driver.write([
            {
              sql: 'UPDATE action_requests SET notify_lease_until = ?, notify_attempts = notify_attempts + 1 WHERE id = ? AND notify_at IS NOT NULL AND notify_at <= ? AND (notify_lease_until IS NULL OR notify_lease_until <= ?)',
              params: [leaseUntilMs, row.id, nowMs, nowMs],
            },
          ])) ?? [];
        if (taken > 0) {
          const request = fromRow(row);
          claimed.push({ ...request, notify_attempts: request.notify_attempts + 1 });
        }
      }
      return claimed;
    },

    async notified(id, { delivered, nowMs, retryAtMs }) {
      await driver.write([
        delivered
          ? {
              sql: 'UPDATE action_requests SET notify_at = NULL, notify_lease_until = NULL, notified_at = ? WHERE id = ?',
              params: [nowMs, id],
            }
          : {
              sql: 'UPDATE action_requests SET notify_at = ?, notify_lease_until = NULL WHERE id = ?',
              params: [retryAtMs, id],
            },
      ]);
    },

    async nextNotification() {
      const row = await driver.one<{ due: number | string | null }>(
        'SELECT MIN(notify_at) AS due FROM action_requests WHERE notify_at IS NOT NULL',
      );
      return row?.due === null || row?.due === undefined ? null : Number(row.due);
    },

    async listOfAgent(agentId, since, limit) {
      const rows = await driver.all<ActionRequestRow>(
        'SELECT * FROM action_requests WHERE agent_id = ? AND created_at > ? ORDER BY created_at DESC, id DESC LIMIT ?',
        [agentId, since, limit],
      );
      return rows.map(fromRow);
    },

    async purge(before) {
      const [deleted = 0] =
        (await driver.write([
          { sql: 'DELETE FROM action_requests WHERE expires_at < ? AND notify_at IS NULL', params: [before] },
        ])) ?? [];
      return deleted;
    },
  };
}
