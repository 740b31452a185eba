/**
 * Agents as their owners manage them in the console (docs/design.md §11). An agent made here
 * belongs to the account: its email, name and email_verified claims are the account's.
 */
import type { Context } from '../context.ts';
import type { AgentKey } from '../domain/agent-keys.ts';
import { readPublicKey } from '../domain/agent-keys.ts';
import { registerAgent, registerKeyBoundAgent } from '../domain/agents.ts';
import { agentNameProblems, MAX_AGENT_NAME_LENGTH } from '../domain/rules/agent.ts';
import type { AccountRecord } from '../store/console-types.ts';
import type { AgentRecord, RevokedGrants } from '../store/types.ts';
import { InvalidField, NotFound } from '../errors.ts';
import { agentEvent } from '../domain/webhooks/events.ts';

type Deps = Pick<Context, 'store' | 'clock'>;

/** Grace periods a rotation may keep the old secret for, in seconds (the form's choices). */
export const GRACE_CHOICES = [0, 3600, 86400, 604800] as const;

/** The form's agent name, trimmed, or InvalidField: the agent rules (../domain/rules/agent.ts) in the form's words. */
export function agentLabel(raw: string | undefined): string {
  const name = (raw ?? '').trim();
  const [problem] = agentNameProblems(name);
  if (problem?.rule === 'empty') throw new InvalidField('name', 'Give the agent a name, such as "Research assistant".');
  if (problem) throw new InvalidField('name', `A name can be at most ${MAX_AGENT_NAME_LENGTH} characters long.`);
  return name;
}

/**
 * The form's public key (a JWK pasted or uploaded as text), or InvalidField in the key rule's
 * words; null when the field is empty (the agent gets a secret).
 *
 * @example
 * const key = publicKeyField(request.body?.public_key); // null: a secret agent
 */
export function publicKeyField(raw: string | undefined, name = 'public_key'): AgentKey | null {
  if (raw === undefined || raw.trim() === '') return null;
  const read = readPublicKey(raw.trim());
  if ('problem' in read) throw new InvalidField(name, read.problem);
  return read.key;
}

/** The form's grace choice in seconds, or InvalidField. */
export function graceOf(raw: string | undefined): number {
  const grace = Number(raw ?? '0');
  if (!(GRACE_CHOICES as readonly number[]).includes(grace))
    throw new InvalidField('grace', 'Choose how long the old secret keeps working.');
  return grace;
}

/**
 * @example
 * const { agent, secret } = await createOwnedAgent(ctx, account, 'Research assistant');
 */
export function createOwnedAgent(
  deps: Deps,
  account: AccountRecord,
  name: string | undefined,
): Promise<{ agent: AgentRecord; secret: string }> {
  return registerAgent(deps, {
    name: agentLabel(name),
    ownerEmail: account.email,
    ownerName: account.name ?? undefined,
    emailVerified: account.email_verified,
    accountId: account.id,
  });
}

/**
 * A key-bound agent of the account (docs/design.md §16): it has no secret to show.
 *
 * @example
 * const agent = await createOwnedKeyBoundAgent(ctx, account, 'Research assistant', key);
 */
export function createOwnedKeyBoundAgent(
  deps: Deps,
  account: AccountRecord,
  name: string | undefined,
  key: AgentKey,
): Promise<AgentRecord> {
  return registerKeyBoundAgent(
    deps,
    {
      name: agentLabel(name),
      ownerEmail: account.email,
      ownerName: account.name ?? undefined,
      emailVerified: account.email_verified,
      accountId: account.id,
    },
    key,
  );
}

const DELETED_DESCRIPTION = 'The agent behind this sign-in was deleted; start again.';

/** Deletes the agent after revoking everything it holds. */
export async function deleteAgent(deps: Deps, agent: AgentRecord): Promise<RevokedGrants> {
  const revoked = await deps.store.console.deleteAgent(agent.id, deps.clock(), DELETED_DESCRIPTION, [
    agentEvent('agent.deleted', agent),
  ]);
  if (!revoked) throw new NotFound('No such agent.');
  return revoked;
}

/**
 * Renames an agent (the form's name, checked by agentLabel); the console and the API share it.
 *
 * @example
 * const renamed = await renameAgent(ctx, agent, 'Research assistant');
 */
export async function renameAgent(deps: Deps, agent: AgentRecord, raw: string | undefined): Promise<AgentRecord> {
  const renamed = { ...agent, name: agentLabel(raw) };
  if (!(await deps.store.console.updateAgentName(agent.id, renamed.name, [agentEvent('agent.updated', renamed)])))
    throw new NotFound('No such agent.');
  return renamed;
}
