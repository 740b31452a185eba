/**
 * The SQL side of records, shared by the protocol's store (sql-store.ts) and the console's
 * (console-store.ts): rows as the database holds them and back, and the statements both write.
 * A leaf: it imports only types and the identifiers' maker.
 */
import { newAuditEventId } from '../crypto.ts';
import type { Step } from './driver.ts';
import type { AgentPolicy, AgentRecord, AuditEvent, ClientRecord, GrantOwner } from './types.ts';

export type ClientRow = Omit<ClientRecord, 'redirect_uris' | 'resources'> & {
  redirect_uris: string;
  resources: string;
};
export type AgentRow = Omit<AgentRecord, 'owner_email_verified' | 'policy'> & {
  owner_email_verified: number;
  policy: string | null;
};
/** An agent record, or the part of one a read took, from its row. */
type AgentFrom<R> = Omit<R, 'owner_email_verified' | 'policy'> & { owner_email_verified: boolean } & (R extends {
    policy: unknown;
  }
    ? { policy: AgentPolicy | null }
    : unknown);

export const toClient = (row: ClientRow): ClientRecord => ({
  ...row,
  redirect_uris: JSON.parse(row.redirect_uris) as string[],
  resources: JSON.parse(row.resources) as string[],
});
/** The lists of a client record as their JSON columns. */
export const clientColumns = <T extends Partial<ClientRecord>>(client: T) => ({
  ...client,
  ...(client.redirect_uris === undefined ? {} : { redirect_uris: JSON.stringify(client.redirect_uris) }),
  ...(client.resources === undefined ? {} : { resources: JSON.stringify(client.resources) }),
});
/** An agent row, or the part of one a read took, with its boolean and its policy restored. */
export const toAgent = <R extends { owner_email_verified: number; policy?: string | null }>(row: R): AgentFrom<R> =>
  ({
    ...row,
    owner_email_verified: row.owner_email_verified === 1,
    // The default policy is NULL: nothing to parse on the path every agent without one takes.
    ...(row.policy == null ? {} : { policy: JSON.parse(row.policy) as AgentPolicy }),
  }) as AgentFrom<R>;
/** An agent record's columns as the database holds them. */
export const agentColumns = <T extends Partial<AgentRecord>>(agent: T) => ({
  ...agent,
  ...(agent.owner_email_verified === undefined ? {} : { owner_email_verified: agent.owner_email_verified ? 1 : 0 }),
  ...(agent.policy === undefined ? {} : { policy: agent.policy === null ? null : JSON.stringify(agent.policy) }),
});

/** An INSERT of every column of a record, in a fixed order. */
export function insert(table: string, record: object): Step {
  const columns = Object.keys(record);
  return {
    sql: `INSERT INTO ${table} (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`,
    params: Object.values(record),
  };
}

/** The sign-in history's row of an event (audit_events). */
export function auditStep(event: AuditEvent): Step {
  return insert('audit_events', { id: newAuditEventId(), ...event });
}

/** UPDATE … SET for the given fields (only known column names reach here, from typed patches). */
export function update(table: string, key: string, id: string, patch: object): Step {
  const entries = Object.entries(patch).filter(([, value]) => value !== undefined);
  if (entries.length === 0) throw new Error(`empty update of ${table}`);
  return {
    sql: `UPDATE ${table} SET ${entries.map(([column]) => `${column} = ?`).join(', ')} WHERE ${key} = ?`,
    params: [...entries.map(([, value]) => value), id],
    guard: true,
  };
}

/**
 * Revokes the owner's live grants, expires its unredeemed codes and ends its authenticated, not
 * yet completed requests: three steps whose changed-row counts are grants, codes, requests.
 */
export function revokeGrantsSteps(owner: GrantOwner, now: number, description: string): Step[] {
  // Only the column names agent_id and client_id reach the SQL, from the typed owner.
  const keys = (['agent_id', 'client_id'] as const).filter((key) => owner[key] !== undefined);
  const where = keys.map((key) => `${key} = ?`).join(' AND ');
  const ids = keys.map((key) => owner[key]);
  return [
    { sql: `UPDATE grants SET revoked_at = ? WHERE ${where} AND revoked_at IS NULL`, params: [now, ...ids] },
    // An unredeemed code would otherwise still open a new grant. It expires at epoch 0, which
    // every node's clock has passed, whatever their skew, and the next purge deletes it.
    {
      sql: `UPDATE authorization_codes SET expires_at = 0 WHERE ${where} AND redeemed_at IS NULL AND expires_at > ?`,
      params: [...ids, now],
    },
    {
      sql: `UPDATE authorization_requests SET status = 'error', error = 'access_denied', error_description = ? WHERE ${where} AND status = 'authenticated' AND expires_at > ?`,
      params: [description, ...ids, now],
      // Which requests ended is not known here: every watcher re-reads (revocations are rare).
      notify: '*',
    },
  ];
}
