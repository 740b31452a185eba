/**
 * What agents were granted at websites, as their owners see them, and revoking one
 * (docs/design.md §15, §17): a grant is reached by its agent's owner and its website's alike.
 */
import type { Context } from '../context.ts';
import type { GrantRecord } from '../store/tokens.ts';
import { type Actor, requireWrite } from './actor.ts';
import { asActor, recordAct } from './audit.ts';
import { reachableGrant } from './reach.ts';
import type { ListQuery } from './shared.ts';

type Deps = Pick<Context, 'store' | 'clock'>;

/**
 * A page of the grants `actor` reaches, oldest first, narrowed to an agent, a client, or live
 * (not revoked) ones.
 *
 * @example
 * const grants = await listGrants(ctx, actor, { limit: 21, agentId: 'agt_…', live: true });
 */
export function listGrants(
  deps: Deps,
  actor: Actor,
  query: Omit<ListQuery, 'accountId'> & { limit: number; agentId?: string; clientId?: string; live?: boolean },
): Promise<GrantRecord[]> {
  return deps.store.grants.list({ ...query, accountId: actor.admin ? undefined : actor.account?.id });
}

/** The grant, if `actor` reaches it; NotFound otherwise. */
export const getGrant = (deps: Deps, actor: Actor, id: string): Promise<GrantRecord> => reachableGrant(deps, actor, id);

/**
 * Revokes one grant: its refresh and access tokens stop working (the rule RFC 7009 revocation
 * applies). Revoking a grant already revoked changes nothing and answers it as it is.
 *
 * @example
 * const grant = await revokeGrant(ctx, actor, 'grt_…');
 */
export async function revokeGrant(deps: Deps, actor: Actor, id: string): Promise<GrantRecord> {
  requireWrite(actor);
  const grant = await reachableGrant(deps, actor, id);
  if (grant.revoked_at !== null) return grant;
  await asActor(actor, () => deps.store.grants.revoke(grant.id, deps.clock()));
  await recordAct(deps, actor, 'grant.revoke', grant.id, `${grant.agent_id} at ${grant.client_id}`);
  return (await deps.store.grants.find(grant.id)) ?? grant;
}
