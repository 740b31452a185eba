/**
 * Owner approvals (docs/design.md §16): the records and their SQL, one text for SQLite and
 * PostgreSQL, behind store.approvals. Each change is one unit with the request it holds or
 * releases, its sign-in history row and its webhook events, so an approval and the request never
 * disagree. Every change notifies APPROVALS_CHANGED on the status channel, which the console's
 * live list listens to.
 */
import { type AgentPolicy, approvedAgentStep } from './agents.ts';
import type { Driver, Step } from './driver.ts';
import { type AuditEvent, auditStep } from './history.ts';
import { announceSteps, type WebhookEvent } from './outbox.ts';
import { insert } from './rows.ts';
import type { ActionType } from './clients.ts';

/**
 * Where an approval is: waiting for the owner, decided, or cancelled (its request was cancelled
 * at the browser before anyone decided, in the same unit: cancelApprovalStep).
 */
export type ApprovalStatus = 'pending' | 'approved' | 'denied' | 'cancelled';
/** How the owner decided: this request only, this website from now on (added to the list), or no. */
export type ApprovalDecision = 'once' | 'always' | 'deny';

/** One entry of RFC 9396 authorization details as stored: its type and its fields (action-requests.ts). */
export interface ActionDetail {
  type: string;
  [field: string]: unknown;
}

/**
 * What an approval decides: an agent's sign-in to a website (its request is an authorization
 * request), or an action a website asks to do on the agent's word (its request is an action
 * request, docs/design.md §21).
 */
export type ApprovalKind = 'sign_in' | 'action';

/**
 * An owner's approval of one agent's sign-in to one website for one request (docs/design.md §16),
 * or of one action a website asks about (kind 'action': `request_id` names the action request,
 * `model` is '' and `scope` is the action request's).
 */
export interface ApprovalRecord {
  id: string;
  kind: ApprovalKind;
  request_id: string;
  agent_id: string;
  client_id: string;
  /** The model the agent named when it asked; the sign-in is recorded with it. */
  model: string;
  scope: string;
  /** The agent's address and User-Agent when it asked, for the history and the owner's judgement. */
  ip: string | null;
  user_agent: string | null;
  status: ApprovalStatus;
  decision: ApprovalDecision | null;
  created_at: number;
  /** The request's expiry: an approval cannot outlive it. */
  expires_at: number;
  decided_at: number | null;
  /** The console account that decided. */
  decided_by: string | null;
}

/** An approval as the owner is shown it: with the agent's and the website's names and the request's destination. */
export interface ApprovalView extends ApprovalRecord {
  agent_name: string;
  agent_account_id: string | null;
  owner_email: string;
  owner_name: string | null;
  client_name: string;
  redirect_uri: string;
  resource: string | null;
  /** The request's own status: an approval waits only while its request is pending. */
  request_status: string;
  /** An action's binding message, as the website sent it (null for a sign-in or none sent). */
  binding_message: string | null;
  /** An action's RFC 9396 authorization details (null for a sign-in). */
  authorization_details: ActionDetail[] | null;
  /** The website's action types, which put an action's details in words ([] for none). */
  client_action_types: ActionType[];
}

/** The payload every approval change is announced with on the status channel (no request id looks like it). */
export const APPROVALS_CHANGED = 'approvals';

/**
 * The step that ends the approval holding a request when the request itself ends before anyone
 * decided (a cancel at the browser): joined to the request's change, so the two never disagree
 * and the console's live list hears of it. Changes nothing when no approval waits on it.
 *
 * @example
 * driver.write([failRequestStep, cancelApprovalStep(requestId, now)]);
 */
export function cancelApprovalStep(requestId: string, now: number): Step {
  return {
    sql: "UPDATE approvals SET status = 'cancelled', decided_at = ? WHERE request_id = ? AND status = 'pending'",
    params: [now, requestId],
    notify: APPROVALS_CHANGED,
  };
}

/** Owner approvals in the store (Store.approvals). */
export interface ApprovalStore {
  /**
   * Holds a pending, unexpired request no approval holds yet for its owner's decision: the
   * request names the approval, which is inserted with the history row and the events. False
   * (nothing written) when the request was not free.
   */
  open(approval: ApprovalRecord, audit: AuditEvent, announce?: WebhookEvent[]): Promise<boolean>;
  /** The approval with the names the owner is shown. */
  find(id: string): Promise<ApprovalView | undefined>;
  /**
   * Approvals of one account's agents (or of every agent, for an admin: null), newest first;
   * `pending` ones only while they can still be decided.
   */
  list(filter: {
    accountId: string | null;
    status?: ApprovalStatus;
    now: number;
    limit: number;
  }): Promise<ApprovalView[]>;
  /**
   * Approves: the request becomes authenticated by the agent exactly as a successful
   * authentication makes it, the approval is spent, and with `policy` (decision 'always') the
   * agent's policy is replaced, if the agent still has the version it was made from. False when
   * the approval or the request was no longer waiting, or the agent's version changed.
   */
  approve(
    approval: ApprovalRecord,
    decision: {
      decision: 'once' | 'always';
      by: string;
      now: number;
      policy?: { policy: AgentPolicy; version: number };
    },
    audit: AuditEvent,
    announce?: WebhookEvent[],
  ): Promise<boolean>;
  /** Denies: the request ends in error (access_denied, with `description`). False when no longer waiting. */
  deny(
    approval: ApprovalRecord,
    decision: { by: string; now: number; description: string },
    audit: AuditEvent,
    announce?: WebhookEvent[],
  ): Promise<boolean>;
  /** Deletes approvals whose request expired before `before`; the count deleted. */
  purge(before: number): Promise<number>;
}

/**
 * An approval with the names the owner is shown: its agent's, its website's, the request's
 * destination. A sign-in's request is an authorization request, an action's an action request;
 * an action has no redirect URI of its own, so the website's first registered one stands for it.
 */
const VIEW = `SELECT p.*, a.name AS agent_name, a.account_id AS agent_account_id, a.owner_email, a.owner_name,
    COALESCE(c.name, p.client_id) AS client_name, r.redirect_uri, r.resource,
    COALESCE(r.status, q.status) AS request_status, q.binding_message, q.authorization_details,
    c.redirect_uris AS client_redirect_uris, c.action_types AS client_action_types
  FROM approvals p
  JOIN agents a ON a.id = p.agent_id
  LEFT JOIN authorization_requests r ON p.kind = 'sign_in' AND r.id = p.request_id
  LEFT JOIN action_requests q ON p.kind = 'action' AND q.id = p.request_id
  LEFT JOIN clients c ON c.id = p.client_id`;

type ViewRow = Omit<ApprovalView, 'redirect_uri' | 'authorization_details' | 'client_action_types'> & {
  redirect_uri: string | null;
  authorization_details: string | null;
  client_action_types: string | null;
  client_redirect_uris: string | null;
};

/** A row of VIEW as the owner is shown it. */
function viewOf({ client_redirect_uris, ...row }: ViewRow): ApprovalView {
  const registered = client_redirect_uris ? (JSON.parse(client_redirect_uris) as string[]) : [];
  const clientUrl = /^https:\/\//.test(row.client_id) ? row.client_id : `https://${row.client_id}.invalid/`;
  return {
    ...row,
    redirect_uri: row.redirect_uri ?? registered[0] ?? clientUrl,
    authorization_details:
      row.authorization_details === null ? null : (JSON.parse(row.authorization_details) as ActionDetail[]),
    client_action_types: row.client_action_types === null ? [] : (JSON.parse(row.client_action_types) as ActionType[]),
  };
}

/**
 * The owner approvals of the database behind `driver`.
 *
 * @example
 * const waiting = await approvalStore(driver).list({ accountId, status: 'pending', now, limit: 50 });
 */
export function approvalStore(driver: Driver): ApprovalStore {
  return {
    async open(approval: ApprovalRecord, audit: AuditEvent, announce?: WebhookEvent[]): Promise<boolean> {
      const changes = await driver.write(
        [
          {
            sql: "UPDATE authorization_requests SET approval_id = ? WHERE id = ? AND status = 'pending' AND approval_id IS NULL AND expires_at > ?",
            params: [approval.id, approval.request_id, approval.created_at],
            guard: true,
            notify: approval.request_id,
          },
          { ...insert('approvals', approval), notify: APPROVALS_CHANGED },
          auditStep(audit),
          ...announceSteps(announce),
        ],
        { independent: true },
      );
      return changes !== null;
    },

    async find(id: string): Promise<ApprovalView | undefined> {
      const row = await driver.one<ViewRow>(`${VIEW} WHERE p.id = ?`, [id]);
      return row && viewOf(row);
    },

    async list(filter: {
      accountId: string | null;
      status?: ApprovalStatus;
      now: number;
      limit: number;
    }): Promise<ApprovalView[]> {
      const where: string[] = [];
      const params: unknown[] = [];
      if (filter.accountId !== null) {
        where.push('a.account_id = ?');
        params.push(filter.accountId);
      }
      if (filter.status !== undefined) {
        where.push('p.status = ?');
        params.push(filter.status);
        if (filter.status === 'pending') {
          // Waiting: undecided, unexpired, and its request still pending (whatever ended it).
          where.push("p.expires_at > ? AND COALESCE(r.status, q.status) = 'pending'");
          params.push(filter.now);
        }
      }
      const condition = where.length === 0 ? '' : ` WHERE ${where.join(' AND ')}`;
      const rows = await driver.all<ViewRow>(`${VIEW}${condition} ORDER BY p.created_at DESC, p.id DESC LIMIT ?`, [
        ...params,
        filter.limit,
      ]);
      return rows.map(viewOf);
    },

    async approve(
      approval: ApprovalRecord,
      decision: {
        decision: 'once' | 'always';
        by: string;
        now: number;
        policy?: { policy: AgentPolicy; version: number };
      },
      audit: AuditEvent,
      announce?: WebhookEvent[],
    ): Promise<boolean> {
      const { now } = decision;
      const changes = await driver.write(
        [
          approvalSpendStep(approval, 'approved', decision.decision, decision.by, now),
          {
            // The same transition as an agent's own authentication (RequestStore.authenticate),
            // only for the request this approval holds.
            sql: "UPDATE authorization_requests SET status = 'authenticated', agent_id = ?, model = ?, authenticated_at = ? WHERE id = ? AND status = 'pending' AND approval_id = ? AND expires_at > ?",
            params: [approval.agent_id, approval.model, now, approval.request_id, approval.id, now],
            guard: true,
            notify: approval.request_id,
          },
          approvedAgentStep(approval.agent_id, now, decision.policy),
          auditStep(audit),
          ...announceSteps(announce),
        ],
        { independent: true },
      );
      return changes !== null;
    },

    async deny(
      approval: ApprovalRecord,
      decision: { by: string; now: number; description: string },
      audit: AuditEvent,
      announce?: WebhookEvent[],
    ): Promise<boolean> {
      const { now } = decision;
      const changes = await driver.write(
        [
          approvalSpendStep(approval, 'denied', 'deny', decision.by, now),
          {
            sql: "UPDATE authorization_requests SET status = 'error', error = 'access_denied', error_description = ?, agent_id = ? WHERE id = ? AND status = 'pending' AND approval_id = ? AND expires_at > ?",
            params: [decision.description, approval.agent_id, approval.request_id, approval.id, now],
            guard: true,
            notify: approval.request_id,
          },
          auditStep(audit),
          ...announceSteps(announce),
        ],
        { independent: true },
      );
      return changes !== null;
    },

    async purge(before: number): Promise<number> {
      const [deleted = 0] =
        (await driver.write([{ sql: 'DELETE FROM approvals WHERE expires_at < ?', params: [before] }])) ?? [];
      return deleted;
    },
  };
}

/**
 * The approval's one decision: only while pending and its request alive. Joined to the unit that
 * decides what it holds (a sign-in's request, or an action request: action-requests.ts).
 *
 * @example
 * driver.write([approvalSpendStep(approval, 'denied', 'deny', accountId, now), …]);
 */
export function approvalSpendStep(
  approval: ApprovalRecord,
  status: ApprovalStatus,
  decision: string,
  by: string,
  now: number,
): Step {
  return {
    sql: "UPDATE approvals SET status = ?, decision = ?, decided_at = ?, decided_by = ? WHERE id = ? AND status = 'pending' AND expires_at > ?",
    params: [status, decision, now, by, approval.id, now],
    guard: true,
    notify: APPROVALS_CHANGED,
  };
}
