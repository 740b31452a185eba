/**
 * Incident response (docs/design.md §7): ending everything an agent's or a client's credentials
 * have obtained, for when a secret has leaked. Disabling an agent only suspends its tokens
 * (enabling it again brings them back); revoking its grants ends them for good.
 */
import type { Context } from '../context.ts';
import { NotFound } from '../errors.ts';
import type { GrantOwner, RevokedGrants } from '../store/rows.ts';
import { agentEvent, clientEvent } from './webhooks/events.ts';

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
  const agent = owner.agent_id === undefined ? undefined : await ctx.store.agents.find(owner.agent_id);
  if (owner.agent_id !== undefined && !agent) throw new NotFound(`no agent ${owner.agent_id}`);
  const client = owner.client_id === undefined ? undefined : await ctx.store.clients.find(owner.client_id);
  if (owner.client_id !== undefined && !client) throw new NotFound(`no client ${owner.client_id}`);
  // An agent's grants (at one website, when both are named) or a website's.
  const announce = agent
    ? agentEvent('agent.grants_revoked', agent, { client: client ? { id: client.id, name: client.name } : null })
    : clientEvent('client.grants_revoked', client!);
  return ctx.store.grants.revokeAll(owner, ctx.clock(), REVOKED_DESCRIPTION, [announce]);
}
