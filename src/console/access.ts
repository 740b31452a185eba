/**
 * Who may reach what in the console (docs/design.md §11): a member reaches the agents and
 * websites of their own account, an admin reaches everything. Another owner's record answers
 * exactly as a record that does not exist, so ids cannot be probed.
 */
import type { Context } from '../context.ts';
import { VISIBLE_ASCII } from '../domain/rules/client.ts';
import type { AccountRecord } from '../store/console-types.ts';
import type { AgentRecord, ClientRecord, GrantRecord } from '../store/types.ts';
import { AccessDenied, NotFound } from '../errors.ts';

type Deps = Pick<Context, 'store'>;

const mayReach = (actor: AccountRecord, ownerId: string | null) =>
  actor.role === 'admin' || (ownerId !== null && ownerId === actor.id);

/**
 * Whether an id from a URL is one a record could have (every issued id is visible ASCII). Others
 * are not looked up: PostgreSQL refuses a NUL in a parameter, and they must answer 404 as well.
 */
export const possibleId = (id: string): boolean => VISIBLE_ASCII.test(id);

/**
 * @example
 * const agent = await reachableAgent(ctx, signedIn.account, request.params.id); // or NotFound
 */
export async function reachableAgent(deps: Deps, actor: AccountRecord, id: string): Promise<AgentRecord> {
  const agent = possibleId(id) ? await deps.store.findAgent(id) : undefined;
  if (!agent || !mayReach(actor, agent.account_id)) throw new NotFound('No such agent.');
  return agent;
}

export async function reachableClient(deps: Deps, actor: AccountRecord, id: string): Promise<ClientRecord> {
  const client = possibleId(id) ? await deps.store.findClient(id) : undefined;
  if (!client || !mayReach(actor, client.account_id)) throw new NotFound('No such website.');
  return client;
}

/**
 * A grant is its agent's owner's and its website's owner's alike: either reaches it.
 *
 * @example
 * const grant = await reachableGrant(ctx, account, 'grt_…'); // or NotFound
 */
export async function reachableGrant(deps: Deps, actor: AccountRecord, id: string): Promise<GrantRecord> {
  const grant = possibleId(id) ? await deps.store.findGrant(id) : undefined;
  if (grant && (actor.role === 'admin' || (await ownsEitherSide(deps, actor, grant)))) return grant;
  throw new NotFound('No such grant.');
}

async function ownsEitherSide(deps: Deps, actor: AccountRecord, grant: GrantRecord): Promise<boolean> {
  const [agent, client] = await Promise.all([
    deps.store.findAgent(grant.agent_id),
    deps.store.findClient(grant.client_id),
  ]);
  return mayReach(actor, agent?.account_id ?? null) || mayReach(actor, client?.account_id ?? null);
}

export function requireAdmin(actor: AccountRecord): void {
  if (actor.role !== 'admin') throw new AccessDenied('This page is for administrators.');
}
