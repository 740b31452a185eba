/**
 * What the entity modules of the store share: the statements they build alike (an INSERT, an
 * UPDATE of a patch, a page of a list), a unit's "this call won", and the revocation of grants
 * that deleting an agent or a client and an incident's response write. A leaf below the entity
 * modules: it imports none of them.
 */
import type { Driver, Step } from './driver.ts';
import { announceSteps, type WebhookEvent } from './outbox.ts';

/**
 * Rows one purge statement deletes at most (the Store's purge; the webhooks' deliveries per unit).
 * Measured on a backlog of 200,000 expired flows (1.2 million rows) on SQLite: in one transaction
 * the purge took 3.4 s, all of it with every request waiting; in batches of 5,000 it took 17 s in
 * total but never held the server for more than 0.16 s at a time (batches of 1,000: 37 s, 0.07 s).
 */
export const PURGE_BATCH = 5000;

/** An INSERT of every column of a record, in a fixed order. */
export function insert(table: string, record: object): Step {
  const columns = Object.keys(record);
  return {
    sql: `INSERT INTO ${table} (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`,
    params: Object.values(record),
  };
}

/**
 * UPDATE … SET for the given fields of a record that counts its changes (agents, clients,
 * accounts, webhook endpoints: the records If-Match guards), adding one to its version. With
 * `version`, only while the record still has that version (a compare-and-set: of concurrent
 * writers that read the same version, one changes the row). Only known column names reach here,
 * from typed patches.
 */
export function update(table: string, key: string, id: string, patch: object, version?: number): Step {
  const entries = Object.entries(patch).filter(([, value]) => value !== undefined);
  if (entries.length === 0) throw new Error(`empty update of ${table}`);
  return {
    sql: `UPDATE ${table} SET ${entries.map(([column]) => `${column} = ?`).join(', ')}, version = version + 1 WHERE ${key} = ?${version === undefined ? '' : ' AND version = ?'}`,
    params: [...entries.map(([, value]) => value), id, ...(version === undefined ? [] : [version])],
    guard: true,
  };
}

/** Whose grants an incident response revokes: one agent's, one client's, or one agent's at one client ("connected site"). */
export type GrantOwner =
  | { agent_id: string; client_id?: undefined }
  | { client_id: string; agent_id?: undefined }
  | { agent_id: string; client_id: string };

/** What a revocation ended, counted: grants, codes, requests (the units' first three steps). */
export interface RevokedGrants {
  grants: number;
  /** Issued but not yet redeemed codes, which now can no longer be. */
  codes: number;
  /** Authenticated requests whose browser had not yet received a code; they end as error. */
  requests: number;
}

/**
 * Revokes the owner's live grants, expires its unredeemed codes and ends its authenticated, not
 * yet completed requests: three steps whose changed-row counts are grants, codes, requests.
 */
export function revokeGrantsSteps(owner: GrantOwner, now: number, description: string): Step[] {
  // Only the column names agent_id and client_id reach the SQL, from the typed owner.
  const keys = (['agent_id', 'client_id'] as const).filter((key) => owner[key] !== undefined);
  return revocationSteps(
    keys.map((key) => `${key} = ?`).join(' AND '),
    keys.map((key) => owner[key]),
    now,
    description,
  );
}

/** What an agent's policy no longer allows (docs/design.md §16): its grants beyond it are revoked. */
export interface GrantBounds {
  /** The only websites (client ids) it may hold grants at; absent: any. */
  websites?: readonly string[];
  /** Scopes it may no longer share: a grant naming any of them is revoked. */
  scopesAbove: readonly string[];
}

/**
 * The steps of revokeGrantsSteps for the agent's grants, codes and authenticated requests beyond
 * `bounds`: at a website not listed, or naming a scope above the ceiling. None when the bounds
 * allow everything. The scope is a space-separated list: a value is matched with a space each
 * side, in SQL both engines read alike; a scope-token may hold `%` and `_`, which are escaped.
 *
 * @example
 * revokeBeyondSteps('agt_…', { websites: ['cli_notes'], scopesAbove: ['email'] }, now, 'No longer allowed.');
 */
export function revokeBeyondSteps(agentId: string, bounds: GrantBounds, now: number, description: string): Step[] {
  const conditions: string[] = [];
  const params: unknown[] = [];
  if (bounds.websites !== undefined) {
    const listed = bounds.websites;
    conditions.push(listed.length === 0 ? '1 = 1' : `client_id NOT IN (${listed.map(() => '?').join(', ')})`);
    params.push(...listed);
  }
  for (const scope of bounds.scopesAbove) {
    // RFC 6749 §3.3 keeps `\` out of a scope-token, so it can be the escape character.
    conditions.push("(' ' || scope || ' ') LIKE ? ESCAPE '\\'");
    params.push(`% ${scope.replace(/[%_]/g, '\\$&')} %`);
  }
  if (conditions.length === 0) return [];
  return revocationSteps(`agent_id = ? AND (${conditions.join(' OR ')})`, [agentId, ...params], now, description);
}

/** The three steps of a revocation of the grants, codes and requests `where` names. */
function revocationSteps(where: string, params: readonly unknown[], now: number, description: string): Step[] {
  return [
    { sql: `UPDATE grants SET revoked_at = ? WHERE ${where} AND revoked_at IS NULL`, params: [now, ...params] },
    // An unredeemed code would otherwise still open a new grant. It expires at epoch 0, which
    // every node's clock has passed, whatever their skew, and the next purge deletes it.
    {
      sql: `UPDATE authorization_codes SET expires_at = 0 WHERE ${where} AND redeemed_at IS NULL AND expires_at > ?`,
      params: [...params, now],
    },
    {
      sql: `UPDATE authorization_requests SET status = 'error', error = 'access_denied', error_description = ? WHERE ${where} AND status = 'authenticated' AND expires_at > ?`,
      params: [description, ...params, now],
      // Which requests ended is not known here: every watcher re-reads (revocations are rare).
      notify: '*',
    },
  ];
}

/** A record's deletion, with `version`: only while the record still has it (as update). */
const deleteById = (table: 'agents' | 'clients', id: string, version?: number): Step =>
  version === undefined
    ? { sql: `DELETE FROM ${table} WHERE id = ?`, params: [id], guard: true }
    : { sql: `DELETE FROM ${table} WHERE id = ? AND version = ?`, params: [id, version], guard: true };

/**
 * Deletes an agent or a client, revoking its grants in the same unit (as GrantStore.revokeAll
 * does, RFC 7592 §2.3 for a client), with the events announcing it: the counts, or null when
 * there was no such row, or (with `version`) it no longer had that version (nothing is kept).
 *
 * @example
 * const revoked = await deleteWithGrants(driver, 'agents', id, now, 'The agent was deleted.', announce);
 */
export async function deleteWithGrants(
  driver: Driver,
  table: 'agents' | 'clients',
  id: string,
  now: number,
  description: string,
  announce?: WebhookEvent[],
  version?: number,
): Promise<RevokedGrants | null> {
  const changes = await driver.write([
    ...revokeGrantsSteps(table === 'agents' ? { agent_id: id } : { client_id: id }, now, description),
    deleteById(table, id, version),
    ...announceSteps(announce),
  ]);
  if (!changes) return null;
  const [grants = 0, codes = 0, requests = 0] = changes;
  return { grants, codes, requests };
}

/** Runs one unit; true when its guard held. */
export async function won(driver: Driver, ...steps: Step[]): Promise<boolean> {
  return (await driver.write(steps)) !== null;
}

/**
 * Runs one unit whose steps touch different rows and read none another changes
 * (UnitOptions.independent: one statement on PostgreSQL); true when its guard held.
 */
export async function wonIndependent(driver: Driver, ...steps: Step[]): Promise<boolean> {
  return (await driver.write(steps, { independent: true })) !== null;
}

/** Where a page of a list starts: after this record, in (created_at, id) order. */
export interface ListCursor {
  created_at: number;
  id: string;
}

/** A page of a list, oldest first: at most `limit`, after `after`, of `accountId`'s records when given. */
export interface PageQuery {
  limit: number;
  after?: ListCursor;
  accountId?: string;
}

/** A list, oldest first: every record (of `accountId`'s, when given), or one page of them (with a limit). */
export type ListQuery = PageQuery | { accountId?: string; limit?: undefined; after?: undefined };

/**
 * A page of `table` (aliased `alias`), oldest first, after the (created_at, id) of the page
 * before, with the extra conditions `where` (and their `params`).
 */
export function pageRows<R>(
  driver: Driver,
  table: string,
  query: PageQuery,
  where: string[] = [],
  params: unknown[] = [],
  alias = 't',
): Promise<R[]> {
  const conditions = [...where];
  const values = [...params];
  if (query.accountId && table !== 'grants') conditions.push(`${alias}.account_id = ?`) && values.push(query.accountId);
  const id = driver.engine === 'postgres' ? `${alias}.id COLLATE "C"` : `${alias}.id`;
  if (query.after)
    conditions.push(`(${alias}.created_at > ? OR (${alias}.created_at = ? AND ${id} > ?))`) &&
      values.push(query.after.created_at, query.after.created_at, query.after.id);
  const filter = conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : '';
  return driver.all<R>(
    `SELECT ${alias}.* FROM ${table} ${alias} ${filter} ORDER BY ${alias}.created_at, ${id} LIMIT ?`,
    [...values, query.limit],
  );
}
