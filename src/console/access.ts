/**
 * Who may reach what in the console (docs/design.md §11): a member reaches the agents and
 * websites of their own account, an admin reaches everything. Another owner's record answers
 * exactly as a record that does not exist, so ids cannot be probed.
 */
import type { Context } from '../context.ts';
import type { AccountRecord } from '../store/console-types.ts';
import type { AgentRecord, ClientRecord } from '../store/types.ts';
import { Forbidden, NotFound } from './errors.ts';

type Deps = Pick<Context, 'store'>;

const mayReach = (actor: AccountRecord, ownerId: string | null) => actor.role === 'admin' || (ownerId !== null && ownerId === actor.id);

/**
 * @example
 * const agent = await reachableAgent(ctx, signedIn.account, request.params.id); // or NotFound
 */
export async function reachableAgent(deps: Deps, actor: AccountRecord, id: string): Promise<AgentRecord> {
  const agent = await deps.store.findAgent(id);
  if (!agent || !mayReach(actor, agent.account_id)) throw new NotFound('No such agent.');
  return agent;
}

export async function reachableClient(deps: Deps, actor: AccountRecord, id: string): Promise<ClientRecord> {
  const client = await deps.store.findClient(id);
  if (!client || !mayReach(actor, client.account_id)) throw new NotFound('No such website.');
  return client;
}

export function requireAdmin(actor: AccountRecord): void {
  if (actor.role !== 'admin') throw new Forbidden('This page is for administrators.');
}
