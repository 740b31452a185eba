/**
 * The histories (docs/design.md §11, §15): the sign-ins (audit_events, every outcome of an agent's
 * authentication) and the console's activity (console_events, every act of a person, a key or
 * the CLI), their SQL (one text for SQLite and PostgreSQL), and the steps other units write them
 * with (auditStep, consoleEventStep). Two namespaces of the Store: signIns and activity. Both
 * order by (at, id) newest first, with the id in byte order on PostgreSQL too (COLLATE "C"), so
 * the admin's activity can merge the two tables' pages as JavaScript compares them.
 */
import { newAuditEventId } from '../crypto.ts';
import type { Driver, Step } from './driver.ts';
import { announceSteps, type WebhookEvent } from './outbox.ts';
import { insert } from './rows.ts';

/** One outcome of an agent's authentication or sign-in, as the history keeps it (audit_events). */
export interface AuditEvent {
  at: number;
  agent_id: string | null;
  request_id: string | null;
  client_id: string | null;
  model: string | null;
  ip: string | null;
  user_agent: string | null;
  outcome: string;
}

/** An action taken in the console (or by the CLI on accounts), for the admins' audit log. */
export interface ConsoleEvent {
  at: number;
  actor_id: string | null;
  action: string;
  target: string | null;
  ip: string | null;
  detail: string | null;
}

/** A console event with the actor's email, as admins read it. */
export interface ConsoleEventView extends ConsoleEvent {
  id: string;
  actor_email: string | null;
}

/** One line of an agent's or a client's sign-in history (from the protocol's audit events). */
export interface SignInRecord {
  id: string;
  at: number;
  agent_id: string | null;
  client_id: string | null;
  client_name: string | null;
  model: string | null;
  ip: string | null;
  user_agent: string | null;
  outcome: string;
  /** The account of the agent named (null: no such agent, or one without an account): who may read it whole. */
  agent_account_id: string | null;
}

/**
 * What one account reads of sign-ins it does not reach through the agent: at its websites, only
 * the outcomes in `outcomes` (those the protocol tells a website); its own agents' rows, all.
 * Absent: every row (an admin, the operator).
 */
export interface SignInsSeenBy {
  accountId: string;
  /** The outcomes of another account's agents that it reads at its websites. */
  outcomes: readonly string[];
  /** Those of them whose agent it is told (the `sub` its website was given): the only ones found by agent. */
  agentShownIn: readonly string[];
}

/**
 * Which sign-ins to list: those of an agent, of a client, or every one (the admin's activity),
 * narrowed by the other side, the outcome and a start time.
 */
export interface SignInQuery {
  agent_id?: string;
  client_id?: string;
  /** Exactly this outcome, or every outcome but this one (`not: 'authenticated'`: the failures). */
  outcome?: { is: string } | { not: string };
  /** Only sign-ins at or after this time (epoch seconds). */
  since?: number;
  /** Only what this account may read (see SignInsSeenBy); every row when absent. */
  seenBy?: SignInsSeenBy;
}

/** One side of an agent's or a client's sign-ins: a website an agent tried, or an agent that tried a website. */
export interface SignInCounterpart {
  id: string;
  /** The website's name (null for an agent, or a website deleted since). */
  name: string | null;
}

/** Where a page of history starts: after this event, in newest-first order. */
export interface HistoryCursor {
  at: number;
  id: string;
}

/** A page of a newest-first history: at most `limit`, after (older than) `before`, within [since, until). */
export interface HistoryPageQuery {
  limit: number;
  before?: { at: number; id: string };
  /** At or after (epoch seconds). */
  since?: number;
  /** Before (epoch seconds). */
  until?: number;
}

/**
 * Sign-ins of an account's agents and, as it may read them, at its clients when `seenBy` is
 * given (every sign-in otherwise); `outcome` as the console's filter.
 */
export interface SignInPageQuery extends HistoryPageQuery {
  seenBy?: SignInsSeenBy;
  agentId?: string;
  clientId?: string;
  outcome?: { is: string } | { not: string };
}

/** Console events: of one actor, of one action, or of actions under a prefix (`api.`). */
export interface ActivityPageQuery extends HistoryPageQuery {
  actorId?: string;
  action?: { is: string } | { prefix: string };
}

/** The sign-in history's row of an event (audit_events). */
export function auditStep(event: AuditEvent): Step {
  return insert('audit_events', { id: newAuditEventId(), ...event });
}

/** The activity's row of a console event (console_events). */
export function consoleEventStep(event: ConsoleEvent): Step {
  return insert('console_events', { id: newAuditEventId(), ...event });
}

/** The sign-ins in the store (Store.signIns): agents' authentications and their outcomes. */
export interface SignInStore {
  /** The audit event, with the webhook events announcing it in the same unit. */
  record(event: AuditEvent, announce?: WebhookEvent[]): Promise<void>;
  /** The events as recorded, newest first: an agent's (`agent_id`) or everyone's, at most `limit`. */
  listEvents(filter: { agent_id?: string; limit: number }): Promise<AuditEvent[]>;
  /** Sign-in history (of an agent, a client, or everyone's), newest first, `limit` rows after `before`. */
  list(query: SignInQuery, limit: number, before?: HistoryCursor): Promise<SignInRecord[]>;
  /** Sign-ins newest first, a page at a time (see SignInPageQuery): the management API's history. */
  page(query: SignInPageQuery): Promise<SignInRecord[]>;
  /** The agent's successful sign-ins (history rows 'authenticated') at or after `since`. */
  count(agentId: string, since: number): Promise<number>;
  /** Successful sign-ins of the agent per UTC day (day = floor(at / 86400)) since `since`. */
  countByDay(agentId: string, since: number): Promise<Map<number, number>>;
  /**
   * The websites an agent's sign-ins went to, or the agents that signed in to a client, by id:
   * among the rows `seenBy` may read, when given.
   */
  counterparts(of: { agent_id: string } | { client_id: string }, seenBy?: SignInsSeenBy): Promise<SignInCounterpart[]>;
}

/** The console's activity in the store (Store.activity): console events with their actor's email. */
export interface ActivityStore {
  record(event: ConsoleEvent): Promise<void>;
  /** Console events newest first, `limit` after `before`. */
  list(filter: { limit: number; before?: HistoryCursor }): Promise<ConsoleEventView[]>;
  /** Console events newest first, a page at a time (see ActivityPageQuery): the management API's activity. */
  page(query: ActivityPageQuery): Promise<ConsoleEventView[]>;
}

/** A sign-in row with the website's name and the agent's account (who may read it whole). */
const SIGN_IN_SELECT = `SELECT e.id, e.at, e.agent_id, e.client_id, c.name AS client_name, e.model, e.ip, e.user_agent,
    e.outcome, ag.account_id AS agent_account_id
  FROM audit_events e LEFT JOIN clients c ON c.id = e.client_id LEFT JOIN agents ag ON ag.id = e.agent_id`;

/**
 * The condition (and its parameters) of what `seenBy` reads of the rows it is asked about; when
 * they are asked for by agent (`byAgent`), only those whose agent it is told, so that a filter
 * cannot tell it which agent a row it reads without one was.
 */
function seenCondition(seenBy: SignInsSeenBy, byAgent = false): { sql: string; params: unknown[] } {
  const outcomes = byAgent ? seenBy.agentShownIn : seenBy.outcomes;
  return {
    sql: `(e.agent_id IN (SELECT id FROM agents WHERE account_id = ?) OR e.outcome IN (${outcomes.map(() => '?').join(', ')}))`,
    params: [seenBy.accountId, ...outcomes],
  };
}

/** An event id in byte order, as JavaScript compares strings (PostgreSQL's default collation would not). */
const eventIdOf = (driver: Driver) => (driver.engine === 'postgres' ? 'e.id COLLATE "C"' : 'e.id');

/**
 * A newest-first page of `select` (whose events table is `e`), by (at, id) as the console's
 * histories, with the conditions `where` (and their `params`) and the query's time window.
 */
function historyPage<R>(
  driver: Driver,
  select: string,
  query: HistoryPageQuery,
  where: string[],
  params: unknown[],
): Promise<R[]> {
  const conditions = [...where];
  const values = [...params];
  if (query.since !== undefined) conditions.push('e.at >= ?') && values.push(query.since);
  if (query.until !== undefined) conditions.push('e.at < ?') && values.push(query.until);
  const id = eventIdOf(driver);
  if (query.before)
    conditions.push(`(e.at < ? OR (e.at = ? AND ${id} < ?))`) &&
      values.push(query.before.at, query.before.at, query.before.id);
  const filter = conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : '';
  return driver.all<R>(`${select} ${filter} ORDER BY e.at DESC, ${id} DESC LIMIT ?`, [...values, query.limit]);
}

/**
 * The sign-ins of the database behind `driver`.
 *
 * @example
 * const latest = await signInStore(driver).list({ agent_id: agentId }, 20);
 */
export function signInStore(driver: Driver): SignInStore {
  const id = eventIdOf(driver);
  return {
    async record(event, announce) {
      await driver.write([auditStep(event), ...announceSteps(announce)], { independent: true });
    },

    listEvents(filter) {
      const columns = 'at, agent_id, request_id, client_id, model, ip, user_agent, outcome';
      return filter.agent_id === undefined
        ? driver.all<AuditEvent>(`SELECT ${columns} FROM audit_events ORDER BY at DESC LIMIT ?`, [filter.limit])
        : driver.all<AuditEvent>(`SELECT ${columns} FROM audit_events WHERE agent_id = ? ORDER BY at DESC LIMIT ?`, [
            filter.agent_id,
            filter.limit,
          ]);
    },

    list(query, limit, before) {
      // Column names are fixed here; every value is a parameter.
      const where: string[] = [];
      const params: unknown[] = [];
      const add = (condition: string, ...values: unknown[]) => {
        where.push(condition);
        params.push(...values);
      };
      if (query.agent_id !== undefined) add('e.agent_id = ?', query.agent_id);
      if (query.client_id !== undefined) add('e.client_id = ?', query.client_id);
      if (query.outcome && 'is' in query.outcome) add('e.outcome = ?', query.outcome.is);
      if (query.outcome && 'not' in query.outcome) add('e.outcome <> ?', query.outcome.not);
      if (query.since !== undefined) add('e.at >= ?', query.since);
      if (query.seenBy) {
        const seen = seenCondition(query.seenBy, query.agent_id !== undefined);
        add(seen.sql, ...seen.params);
      }
      if (before) add(`(e.at < ? OR (e.at = ? AND ${id} < ?))`, before.at, before.at, before.id);
      return driver.all<SignInRecord>(
        `${SIGN_IN_SELECT}
        ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY e.at DESC, ${id} DESC LIMIT ?`,
        [...params, limit],
      );
    },

    page(query) {
      const where: string[] = [];
      const params: unknown[] = [];
      if (query.agentId !== undefined) where.push('e.agent_id = ?') && params.push(query.agentId);
      if (query.clientId !== undefined) where.push('e.client_id = ?') && params.push(query.clientId);
      if (query.outcome && 'is' in query.outcome) where.push('e.outcome = ?') && params.push(query.outcome.is);
      if (query.outcome && 'not' in query.outcome) where.push('e.outcome <> ?') && params.push(query.outcome.not);
      if (query.seenBy !== undefined) {
        // An account's sign-ins: those of its agents, and those to its websites that it may read.
        const seen = seenCondition(query.seenBy, query.agentId !== undefined);
        where.push(
          `${seen.sql} AND (e.agent_id IN (SELECT id FROM agents WHERE account_id = ?) OR e.client_id IN (SELECT id FROM clients WHERE account_id = ?))`,
        );
        params.push(...seen.params, query.seenBy.accountId, query.seenBy.accountId);
      }
      return historyPage<SignInRecord>(driver, SIGN_IN_SELECT, query, where, params);
    },

    async count(agentId, since) {
      const row = await driver.one<{ n: number | string }>(
        "SELECT count(*) AS n FROM audit_events WHERE agent_id = ? AND at >= ? AND outcome = 'authenticated'",
        [agentId, since],
      );
      return Number(row?.n ?? 0);
    },

    async countByDay(agentId, since) {
      const rows = await driver.all<{ day: number | string; n: number | string }>(
        "SELECT at / 86400 AS day, COUNT(*) AS n FROM audit_events WHERE agent_id = ? AND at >= ? AND outcome = 'authenticated' GROUP BY at / 86400",
        [agentId, since],
      );
      return new Map(rows.map((row) => [Math.floor(Number(row.day)), Number(row.n)]));
    },

    async counterparts(of, seenBy) {
      const seen = seenBy ? seenCondition(seenBy, 'client_id' in of) : { sql: '1 = 1', params: [] };
      const rows =
        'agent_id' in of
          ? await driver.all<{ id: string; name: string | null }>(
              `SELECT DISTINCT e.client_id AS id, c.name AS name FROM audit_events e LEFT JOIN clients c ON c.id = e.client_id
              WHERE e.agent_id = ? AND e.client_id IS NOT NULL AND ${seen.sql}`,
              [of.agent_id, ...seen.params],
            )
          : await driver.all<{ id: string; name: string | null }>(
              `SELECT DISTINCT e.agent_id AS id, NULL AS name FROM audit_events e
              WHERE e.client_id = ? AND e.agent_id IS NOT NULL AND ${seen.sql}`,
              [of.client_id, ...seen.params],
            );
      return rows
        .map((row) => ({ id: String(row.id), name: row.name === null ? null : String(row.name) }))
        .sort((a, b) => (a.name ?? a.id).localeCompare(b.name ?? b.id) || a.id.localeCompare(b.id));
    },
  };
}

/**
 * The console's activity in the database behind `driver`.
 *
 * @example
 * await activityStore(driver).record({ at: now, actor_id, action: 'agent.rename', target: id, ip, detail: null });
 */
export function activityStore(driver: Driver): ActivityStore {
  const id = eventIdOf(driver);
  return {
    async record(event) {
      await driver.write([consoleEventStep(event)]);
    },

    list({ limit, before }) {
      const select =
        'SELECT e.*, a.email AS actor_email FROM console_events e LEFT JOIN accounts a ON a.id = e.actor_id';
      return before
        ? driver.all<ConsoleEventView>(
            `${select} WHERE e.at < ? OR (e.at = ? AND ${id} < ?) ORDER BY e.at DESC, ${id} DESC LIMIT ?`,
            [before.at, before.at, before.id, limit],
          )
        : driver.all<ConsoleEventView>(`${select} ORDER BY e.at DESC, ${id} DESC LIMIT ?`, [limit]);
    },

    page(query) {
      const where: string[] = [];
      const params: unknown[] = [];
      if (query.actorId !== undefined) where.push('e.actor_id = ?') && params.push(query.actorId);
      if (query.action && 'is' in query.action) where.push('e.action = ?') && params.push(query.action.is);
      // substr, not LIKE: an action's underscores would be LIKE's wildcards.
      if (query.action && 'prefix' in query.action)
        where.push('substr(e.action, 1, ?) = ?') && params.push(query.action.prefix.length, query.action.prefix);
      return historyPage<ConsoleEventView>(
        driver,
        'SELECT e.*, a.email AS actor_email FROM console_events e LEFT JOIN accounts a ON a.id = e.actor_id',
        query,
        where,
        params,
      );
    },
  };
}
