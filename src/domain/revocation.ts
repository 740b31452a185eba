/**
 * Incident response (docs/design.md §7): ending everything an agent's or a client's credentials
 * have obtained, for when a secret has leaked. Disabling an agent only suspends its tokens
 * (enabling it again brings them back); revoking its grants ends them for good.
 */
import type { Context } from '../context.ts';
import { NotFound } from '../errors.ts';
import type { GrantOwner, RevokedGrants } from '../store/types.ts';

const REVOKED_DESCRIPTION = 'The credentials behind this sign-in were revoked; start again.';

/**
 * Revokes every live grant of the agent or client (or of the agent at that client) (its refresh and access tokens stop working at
 * /token, /introspect and /userinfo), expires its unredeemed codes and ends its authenticated,
 * not yet completed requests. Throws NotFound when there is no such agent or client.
 *
 * @example
 * const counts = await revokeGrants(ctx, { agent_id: 'agt_…' });
 * // { grants: 3, codes: 0, requests: 1 }
 */
export async function revokeGrants(ctx: Pick<Context, 'store' | 'clock'>, owner: GrantOwner): Promise<RevokedGrants> {
  if (owner.agent_id !== undefined && !(await ctx.store.findAgent(owner.agent_id)))
    throw new NotFound(`no agent ${owner.agent_id}`);
  if (owner.client_id !== undefined && !(await ctx.store.findClient(owner.client_id)))
    throw new NotFound(`no client ${owner.client_id}`);
  return ctx.store.revokeGrantsOf(owner, ctx.clock(), REVOKED_DESCRIPTION);
}
