/**
 * Who reaches what (docs/design.md §11, §17): an account reaches the agents and clients of its
 * own account, an admin everything. Another account's record answers exactly as one that does
 * not exist, so ids cannot be probed; every door asks here.
 */
import type { Context } from '../context.ts';
import { VISIBLE_ASCII } from '../domain/rules/client.ts';
import { NotFound } from '../errors.ts';
import type { AgentRecord } from '../store/agents.ts';
import type { ClientRecord } from '../store/clients.ts';
import type { GrantRecord } from '../store/tokens.ts';
import type { Actor } from './actor.ts';

type Deps = Pick<Context, 'store'>;

const mayReach = (actor: Actor, ownerId: string | null) =>
  actor.admin || (ownerId !== null && ownerId === actor.account?.id);

/**
 * Whether an id from a URL is one a record could have (every issued id is visible ASCII). Others
 * are not looked up: PostgreSQL refuses a NUL in a parameter, and they must answer 404 as well.
 */
export const possibleId = (id: string): boolean => VISIBLE_ASCII.test(id);

/**
 * @example
 * const agent = await reachableAgent(ctx, actor, request.params.id); // or NotFound
 */
export async function reachableAgent(deps: Deps, actor: Actor, id: string): Promise<AgentRecord> {
  const agent = possibleId(id) ? await deps.store.agents.find(id) : undefined;
  if (!agent || !mayReach(actor, agent.account_id)) throw new NotFound('No such agent.');
  return agent;
}

/**
 * @example
 * const client = await reachableClient(ctx, actor, 'cli_…'); // or NotFound, worded as the console says it
 */
export async function reachableClient(deps: Deps, actor: Actor, id: string): Promise<ClientRecord> {
  const client = possibleId(id) ? await deps.store.clients.find(id) : undefined;
  if (!client || !mayReach(actor, client.account_id)) throw new NotFound('No such website.');
  return client;
}

/**
 * A grant is its agent's owner's and its website's owner's alike: either reaches it.
 *
 * @example
 * const grant = await reachableGrant(ctx, actor, 'grt_…'); // or NotFound
 */
export async function reachableGrant(deps: Deps, actor: Actor, id: string): Promise<GrantRecord> {
  const grant = possibleId(id) ? await deps.store.grants.find(id) : undefined;
  if (grant && (actor.admin || (await ownsEitherSide(deps, actor, grant)))) return grant;
  throw new NotFound('No such grant.');
}

async function ownsEitherSide(deps: Deps, actor: Actor, grant: GrantRecord): Promise<boolean> {
  const [agent, client] = await Promise.all([
    deps.store.agents.find(grant.agent_id),
    deps.store.clients.find(grant.client_id),
  ]);
  return mayReach(actor, agent?.account_id ?? null) || mayReach(actor, client?.account_id ?? null);
}
