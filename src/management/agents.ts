/**
 * What people do with agents, through any door (docs/design.md §11, §17): each operation takes
 * who acts and what they ask, checks reach, calls the domain's rule, and records the act.
 */
import type { Context } from '../context.ts';
import type { AgentKey } from '../domain/agent-keys.ts';
import {
  agentName,
  type NewAgent,
  deleteAgent as deleteAgentRecord,
  registerAgent,
  registerKeyBoundAgent,
  renameAgent as renameAgentRecord,
  rotateAgentKey as rotateAgentKeyRecord,
  rotateAgentSecret as rotateAgentSecretRecord,
  setAgentStatus as setAgentStatusRecord,
} from '../domain/agents.ts';
import { revokeGrants } from '../domain/revocation.ts';
import { InvalidRequest, NotFound } from '../errors.ts';
import type { ConnectedSite } from '../store/tokens.ts';
import type { AgentRecord, AgentStatus } from '../store/agents.ts';
import type { RevokedGrants } from '../store/rows.ts';
import { type Actor, requireAdmin, requireWrite } from './actor.ts';
import { asActor, recordAct } from './audit.ts';
import { checkedVersion, type ListQuery, ownerAccount, type Precondition, revokedDetail } from './shared.ts';
import { reachableAgent } from './reach.ts';

type Deps = Pick<Context, 'store' | 'clock' | 'config'>;

/**
 * The agents `actor` reaches, oldest first: an admin's of every account or of `accountId`,
 * anyone else's of their own account; a page of them when `limit` is given.
 *
 * @example
 * const agents = await listAgents(ctx, actor, { limit: 21 });
 */
export function listAgents(deps: Deps, actor: Actor, query: ListQuery = {}): Promise<AgentRecord[]> {
  const accountId = actor.admin ? query.accountId : actor.account?.id;
  return deps.store.agents.list({ ...query, accountId });
}

/** The agent, if `actor` reaches it; NotFound otherwise, the same for a missing and a foreign one. */
export const getAgent = (deps: Deps, actor: Actor, id: string): Promise<AgentRecord> => reachableAgent(deps, actor, id);

/** Whose agent a new one is: an account (the actor's own unless an admin names another), or someone without one. */
export interface NewAgentInput {
  /** Required for an account's agent; an owner's defaults to the owner's name or email. */
  name?: string;
  accountId?: string;
  owner?: { email: string; name?: string; email_verified?: boolean };
  /** Makes a key-bound agent, which has no secret. */
  key?: AgentKey;
}

/**
 * Creates an agent; its secret (none for a key-bound agent) is returned to be shown once.
 *
 * @example
 * const { agent, secret } = await createAgent(ctx, actor, { name: 'Research assistant' });
 */
export async function createAgent(
  deps: Deps,
  actor: Actor,
  input: NewAgentInput,
): Promise<{ agent: AgentRecord; secret: string | null }> {
  requireWrite(actor);
  const { owner, key } = input;
  const record = owner ? await ownerRecord(deps, actor, input, owner) : await accountRecord(deps, actor, input);
  const made = await asActor(actor, async () =>
    key ? { agent: await registerKeyBoundAgent(deps, record, key), secret: null } : registerAgent(deps, record),
  );
  await recordAct(deps, actor, 'agent.create', made.agent.id, key ? `${made.agent.name} (key)` : made.agent.name);
  return made;
}

/**
 * An agent of the owner named by email, as the CLI makes them: only with every account's reach.
 * When a console account has that email (any case), the agent is that account's, with its
 * claims, so that it is listed under that person's agents whichever door made it; otherwise it
 * belongs to someone without a console account.
 */
async function ownerRecord(
  deps: Deps,
  actor: Actor,
  input: NewAgentInput,
  owner: NonNullable<NewAgentInput['owner']>,
): Promise<NewAgent> {
  if (input.accountId !== undefined) throw new InvalidRequest('Send account_id or owner, not both.');
  requireAdmin(actor);
  const account = await deps.store.accounts.findByEmail(owner.email.trim().toLowerCase());
  if (account) {
    return {
      name: input.name,
      ownerEmail: account.email,
      ownerName: account.name ?? undefined,
      emailVerified: account.email_verified,
      accountId: account.id,
    };
  }
  return {
    name: input.name,
    ownerEmail: owner.email,
    ownerName: owner.name,
    emailVerified: owner.email_verified ?? false,
  };
}

/** An account's agent: its owner claims are the account's, and it needs a name. */
async function accountRecord(deps: Deps, actor: Actor, input: NewAgentInput): Promise<NewAgent> {
  const account = await ownerAccount(deps, actor, input.accountId);
  return {
    name: agentName(input.name),
    ownerEmail: account.email,
    ownerName: account.name ?? undefined,
    emailVerified: account.email_verified,
    accountId: account.id,
  };
}

/** The agent after a change, as stored now. */
async function current(deps: Deps, id: string): Promise<AgentRecord> {
  const agent = await deps.store.agents.find(id);
  if (!agent) throw new NotFound('No such agent.');
  return agent;
}

/**
 * The agent `actor` may change: reached, writable, and as `precondition` expects it; with the
 * version the change must still find (checkedVersion), none without a precondition.
 */
async function changeable(deps: Deps, actor: Actor, id: string, precondition?: Precondition<AgentRecord>) {
  requireWrite(actor);
  const agent = await reachableAgent(deps, actor, id);
  return { agent, version: checkedVersion(agent, agent.version, precondition) };
}

/**
 * @example
 * const agent = await renameAgent(ctx, actor, 'agt_…', 'Research assistant');
 */
export async function renameAgent(
  deps: Deps,
  actor: Actor,
  id: string,
  name: string | undefined,
  precondition?: Precondition<AgentRecord>,
): Promise<AgentRecord> {
  const { agent, version } = await changeable(deps, actor, id, precondition);
  const renamed = await asActor(actor, () => renameAgentRecord(deps, agent, name ?? '', version));
  await recordAct(deps, actor, 'agent.rename', agent.id, renamed.name);
  return renamed;
}

/**
 * Disables an agent (its sign-ins and tokens are refused) or enables it again; no change, no act.
 *
 * @example
 * await setAgentStatus(ctx, actor, 'agt_…', 'disabled');
 */
export async function setAgentStatus(
  deps: Deps,
  actor: Actor,
  id: string,
  status: AgentStatus,
  precondition?: Precondition<AgentRecord>,
): Promise<AgentRecord> {
  const { agent, version } = await changeable(deps, actor, id, precondition);
  if (agent.status === status) return agent;
  await asActor(actor, () => setAgentStatusRecord(deps, agent.id, status, version));
  await recordAct(deps, actor, status === 'active' ? 'agent.enable' : 'agent.disable', agent.id);
  return current(deps, agent.id);
}

/**
 * A new secret, returned to be shown once; the old one works `graceSeconds` longer.
 *
 * @example
 * const { secret } = await rotateAgentSecret(ctx, actor, 'agt_…', 3600);
 */
export async function rotateAgentSecret(
  deps: Deps,
  actor: Actor,
  id: string,
  graceSeconds: number,
  precondition?: Precondition<AgentRecord>,
): Promise<{ agent: AgentRecord; secret: string }> {
  const { agent, version } = await changeable(deps, actor, id, precondition);
  const secret = await asActor(actor, () => rotateAgentSecretRecord(deps, agent.id, graceSeconds, version));
  await recordAct(deps, actor, 'agent.rotate_secret', agent.id, `grace ${graceSeconds} s`);
  return { agent: await current(deps, agent.id), secret };
}

/**
 * Binds the agent to a new public key; the old key (or secret) stops at once.
 *
 * @example
 * const agent = await rotateAgentKey(ctx, actor, 'agt_…', agentKeyOf(jwk));
 */
export async function rotateAgentKey(
  deps: Deps,
  actor: Actor,
  id: string,
  key: AgentKey,
  precondition?: Precondition<AgentRecord>,
): Promise<AgentRecord> {
  const { agent, version } = await changeable(deps, actor, id, precondition);
  await asActor(actor, () => rotateAgentKeyRecord(deps, agent.id, key, version));
  await recordAct(deps, actor, 'agent.rotate_key', agent.id, key.thumbprint);
  return current(deps, agent.id);
}

/**
 * Revokes the agent's grants: all of them, or those at one website it is connected to (else
 * NotFound, as a website it never signed in to).
 *
 * @example
 * const revoked = await revokeAgentGrants(ctx, actor, 'agt_…'); // { grants: 2, codes: 0, requests: 1 }
 */
export async function revokeAgentGrants(
  deps: Deps,
  actor: Actor,
  id: string,
  clientId?: string,
): Promise<RevokedGrants> {
  const { agent } = await changeable(deps, actor, id);
  if (clientId === undefined) {
    const revoked = await asActor(actor, () => revokeGrants(deps, { agent_id: agent.id }));
    await recordAct(deps, actor, 'agent.revoke_grants', agent.id, revokedDetail(revoked));
    return revoked;
  }
  const sites = await deps.store.grants.connectedSites(agent.id, deps.clock());
  if (!sites.some((site) => site.client_id === clientId))
    throw new NotFound('This website is not connected to the agent.');
  const revoked = await asActor(actor, () => revokeGrants(deps, { agent_id: agent.id, client_id: clientId }));
  await recordAct(deps, actor, 'agent.revoke_site', agent.id, clientId);
  return revoked;
}

/**
 * Deletes the agent after revoking everything it holds; answers what was revoked.
 *
 * @example
 * const revoked = await deleteAgent(ctx, actor, 'agt_…');
 */
export async function deleteAgent(
  deps: Deps,
  actor: Actor,
  id: string,
  precondition?: Precondition<AgentRecord>,
): Promise<RevokedGrants> {
  const { agent, version } = await changeable(deps, actor, id, precondition);
  const revoked = await asActor(actor, () => deleteAgentRecord(deps, agent, version));
  await recordAct(deps, actor, 'agent.delete', agent.id, `${agent.name}: ${revokedDetail(revoked)}`);
  return revoked;
}

/**
 * The websites holding live grants of the agent, as its page lists them.
 *
 * @example
 * const sites = await connectedSites(ctx, actor, 'agt_…');
 */
export async function connectedSites(deps: Deps, actor: Actor, id: string): Promise<ConnectedSite[]> {
  const agent = await reachableAgent(deps, actor, id);
  return deps.store.grants.connectedSites(agent.id, deps.clock());
}
