/** What the management operations share: list queries, preconditions, the owner of a creation. */
import type { Context } from '../context.ts';
import { accountById } from '../domain/accounts.ts';
import { InvalidRequest } from '../errors.ts';
import type { AccountRecord } from '../store/accounts.ts';
import type { RevokedGrants } from '../store/rows.ts';
import type { Actor } from './actor.ts';

/**
 * Which records a list answers: an admin may narrow it to one account; a page when `limit` is
 * given (the store's own query: an operation passes it on, with the account it may reach).
 */
export type { ListQuery } from '../store/rows.ts';

/**
 * What a door expects of a record before it changes (the API's If-Match): it throws to refuse.
 *
 * @example
 * await renameAgent(ctx, actor, id, name, (agent) => checkIfMatch(tag, agentView(agent, now)));
 */
export type Precondition<T> = (current: T) => void;

/**
 * Checks `precondition` on the record as read and answers the version the write must then still
 * find (the store compares and sets it in the UPDATE, docs/design.md §17), so that of concurrent
 * writers checked on the same version exactly one changes the record and the others get 412.
 * Without a precondition the write is unconditional: undefined.
 *
 * @example
 * const version = checkedVersion(agent, agent.version, precondition);
 * await renameAgentRecord(ctx, agent, name, version);
 */
export function checkedVersion<T>(record: T, version: number, precondition?: Precondition<T>): number | undefined {
  if (!precondition) return undefined;
  precondition(record);
  return version;
}

/**
 * The account a creation is for: the actor's own unless `accountId` names another, which only an
 * admin may (403 otherwise; 404 for an unknown account). The operator has no account of their own.
 *
 * @example
 * const owner = await ownerAccount(ctx, actor, input.accountId);
 */
export async function ownerAccount(
  deps: Pick<Context, 'store' | 'clock' | 'config'>,
  actor: Actor,
  accountId: string | undefined,
): Promise<AccountRecord> {
  const own = actor.account;
  if (own && (accountId === undefined || accountId === own.id)) return own;
  if (!actor.admin) throw new InvalidRequest('account_id may name only the key’s own account.', 403);
  if (accountId === undefined) throw new InvalidRequest('Name the account the record is for (account_id).');
  return accountById(deps, accountId);
}

/** The counts of a revocation, for the audit. */
export const revokedDetail = (revoked: RevokedGrants) =>
  `grants ${revoked.grants}, codes ${revoked.codes}, requests ${revoked.requests}`;
