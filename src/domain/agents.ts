/** Agent credentials (docs/contract.md "Agent credentials", docs/design.md §3, §7, §16). */
import { generateKeyPairSync } from 'node:crypto';
import { digest, newAgentId, newAgentSecret, safeEqual } from '../crypto.ts';
import type { Context } from '../context.ts';
import { InvalidField, InvalidRequest, NotFound, PreconditionFailed } from '../errors.ts';
import type { AgentRecord, AgentStatus } from '../store/agents.ts';
import type { RevokedGrants } from '../store/rows.ts';
import { type AgentKey, readPublicKey, verifyAssertion } from './agent-keys.ts';
import { agentNameProblems, MAX_AGENT_NAME_LENGTH, ownerEmailProblems } from './rules/agent.ts';
import { agentEvent } from './webhooks/events.ts';

type Deps = Pick<Context, 'store' | 'clock'>;

/**
 * The key in `raw` (a public JWK, as an object or JSON text), or InvalidRequest saying what is
 * wrong with it: the rule of ./agent-keys.ts, worded as the CLI and the API say it.
 *
 * @example
 * const key = agentKeyOf(JSON.parse(readFileSync('agent.pub.jwk', 'utf8')));
 */
export function agentKeyOf(raw: unknown): AgentKey {
  const read = readPublicKey(raw);
  if ('problem' in read) throw new InvalidRequest(read.problem);
  return read.key;
}

/**
 * What a key-bound agent keeps as secret_digest (the column is NOT NULL): the digest of random
 * bytes nobody is given, so no secret matches it; the secret path refuses such an agent anyway.
 */
const unheldSecretDigest = () => digest(newAgentSecret());

export interface NewAgent {
  ownerEmail: string;
  ownerName?: string;
  name?: string;
  emailVerified?: boolean;
  /** The console account that owns the agent (its owner_* fields are then the account's). */
  accountId?: string;
}

/**
 * Registers an agent with a secret, returned to be shown once.
 *
 * @example
 * const { agent, secret } = await registerAgent(ctx, { ownerEmail: 'ada@example.com', name: 'Research' });
 */
export async function registerAgent(deps: Deps, input: NewAgent): Promise<{ agent: AgentRecord; secret: string }> {
  const secret = newAgentSecret();
  return { agent: await insertNewAgent(deps, input, { secret }), secret };
}

/**
 * Registers a key-bound agent (docs/design.md §16): it proves itself with assertions signed by
 * the private half of `key`, and has no secret.
 *
 * @example
 * const agent = await registerKeyBoundAgent(ctx, { ownerEmail: 'ada@example.com' }, agentKeyOf(jwk));
 */
export function registerKeyBoundAgent(deps: Deps, input: NewAgent, key: AgentKey): Promise<AgentRecord> {
  return insertNewAgent(deps, input, { key });
}

async function insertNewAgent(
  deps: Deps,
  input: NewAgent,
  credential: { secret: string; key?: undefined } | { key: AgentKey; secret?: undefined },
): Promise<AgentRecord> {
  // The agent rules (./rules/agent.ts), worded as the CLI has always printed them.
  const [emailProblem] = ownerEmailProblems(input.ownerEmail);
  if (emailProblem) throw new InvalidRequest(`owner email ${input.ownerEmail} ${emailProblem.message}`);
  const name = (input.name ?? input.ownerName ?? input.ownerEmail).trim();
  if (agentNameProblems(name).length > 0)
    throw new InvalidRequest(`agent name must be 1 to ${MAX_AGENT_NAME_LENGTH} characters`);
  const { secret, key } = credential;
  const agent: AgentRecord = {
    id: newAgentId(),
    secret_digest: secret === undefined ? unheldSecretDigest() : digest(secret),
    previous_secret_digest: null,
    previous_secret_expires_at: null,
    name,
    owner_email: input.ownerEmail,
    owner_name: input.ownerName?.trim() || null,
    owner_email_verified: input.emailVerified ?? false,
    status: 'active',
    created_at: deps.clock(),
    last_used_at: null,
    account_id: input.accountId ?? null,
    policy: null,
    public_jwk: key?.json ?? null,
    key_thumbprint: key?.thumbprint ?? null,
    version: 1,
  };
  await deps.store.agents.insert(agent, [agentEvent('agent.created', agent)]);
  return agent;
}

/**
 * Issues a new secret. With `graceSeconds` > 0 the old secret keeps working that long, so the
 * agent can be switched over without downtime; with 0 (a compromised secret) it stops at once.
 * With `version`, only while the agent still has it (If-Match; PreconditionFailed otherwise), as
 * every change of an agent here.
 */
export async function rotateAgentSecret(
  deps: Deps,
  agentId: string,
  graceSeconds = 0,
  version?: number,
): Promise<string> {
  const agent = await deps.store.agents.find(agentId);
  if (!agent) throw new NotFound(`no agent ${agentId}`);
  // A script rotating every secret must not turn a key-bound agent back into one with a secret.
  if (isKeyBound(agent))
    throw new InvalidRequest(`agent ${agentId} proves itself with a key, not a secret: replace its key instead`);
  const secret = newAgentSecret();
  const keepOld = graceSeconds > 0;
  const done = await deps.store.agents.update(
    agentId,
    {
      secret_digest: digest(secret),
      previous_secret_digest: keepOld ? agent.secret_digest : null,
      previous_secret_expires_at: keepOld ? deps.clock() + graceSeconds : null,
    },
    [agentEvent('agent.secret_rotated', agent, { grace_seconds: keepOld ? graceSeconds : 0 })],
    version,
  );
  if (!done) throw lost(version, `no agent ${agentId}`);
  return secret;
}

/** Whether the agent proves itself with a key (an assertion) rather than a secret. */
export const isKeyBound = (agent: Pick<AgentRecord, 'public_jwk'>): boolean => agent.public_jwk != null;

/**
 * Binds the agent to a new public key: the old key (or, for an agent that had a secret, the
 * secret) stops working at once. Announced as agent.key_rotated with the new thumbprint.
 *
 * @example
 * const agent = await rotateAgentKey(ctx, 'agt_…', agentKeyOf(jwk));
 */
export async function rotateAgentKey(
  deps: Deps,
  agentId: string,
  key: AgentKey,
  version?: number,
): Promise<AgentRecord> {
  const agent = await deps.store.agents.find(agentId);
  if (!agent) throw new NotFound(`no agent ${agentId}`);
  const changed = { public_jwk: key.json, key_thumbprint: key.thumbprint };
  const rotated: AgentRecord = { ...agent, ...changed };
  const done = await deps.store.agents.update(
    agentId,
    {
      ...changed,
      // An agent that had a secret: neither it nor a previous one within its grace works any more.
      ...(isKeyBound(agent)
        ? {}
        : { secret_digest: unheldSecretDigest(), previous_secret_digest: null, previous_secret_expires_at: null }),
    },
    [
      agentEvent('agent.key_rotated', rotated, {
        key_thumbprint: key.thumbprint,
        previous_key_thumbprint: agent.key_thumbprint ?? null,
      }),
    ],
    version,
  );
  if (!done) throw lost(version, `no agent ${agentId}`);
  return { ...rotated, version: agent.version + 1 };
}

/** Enables or disables an agent; a change of status is announced (agent.enabled, agent.disabled). */
export async function setAgentStatus(
  deps: Deps,
  agentId: string,
  status: AgentStatus,
  version?: number,
): Promise<void> {
  const agent = await deps.store.agents.find(agentId);
  const announce =
    agent && agent.status !== status
      ? [agentEvent(status === 'active' ? 'agent.enabled' : 'agent.disabled', { ...agent, status })]
      : [];
  if (!agent || !(await deps.store.agents.update(agentId, { status }, announce, version)))
    throw lost(version, `no agent ${agentId}`);
}

/**
 * Renames an agent, announced as agent.updated; InvalidRequest for a name the agent rules refuse.
 *
 * @example
 * const renamed = await renameAgent(ctx, agent, 'Research assistant');
 */
export async function renameAgent(deps: Deps, agent: AgentRecord, raw: string, version?: number): Promise<AgentRecord> {
  const renamed = { ...agent, name: agentName(raw) };
  const announce = [agentEvent('agent.updated', renamed)];
  if (!(await deps.store.agents.update(agent.id, { name: renamed.name }, announce, version)))
    throw lost(version, 'No such agent.');
  return { ...renamed, version: agent.version + 1 };
}

/**
 * An agent's name, trimmed, or InvalidField naming `name`: the agent rules (./rules/agent.ts) in words.
 *
 * @example
 * agentName('  Research assistant '); // 'Research assistant'
 */
export function agentName(raw: string | undefined): string {
  const name = (raw ?? '').trim();
  const [problem] = agentNameProblems(name);
  if (problem?.rule === 'empty') throw new InvalidField('name', 'Give the agent a name.');
  if (problem) throw new InvalidField('name', `A name can be at most ${MAX_AGENT_NAME_LENGTH} characters long.`);
  return name;
}

const DELETED_DESCRIPTION = 'The agent behind this sign-in was deleted; start again.';

/** Deletes the agent after revoking everything it holds; announced as agent.deleted. */
export async function deleteAgent(deps: Deps, agent: AgentRecord, version?: number): Promise<RevokedGrants> {
  const announce = [agentEvent('agent.deleted', agent)];
  const revoked = await deps.store.agents.delete(agent.id, deps.clock(), DELETED_DESCRIPTION, announce, version);
  if (!revoked) throw lost(version, 'No such agent.');
  return revoked;
}

/**
 * Why a change of an agent wrote nothing: with `version` (If-Match), the agent changed or went
 * since the tag was checked; without, there is no such agent.
 */
const lost = (version: number | undefined, missing: string) =>
  version === undefined ? new NotFound(missing) : new PreconditionFailed();

/** A public key whose private half nobody holds (generated at start), checked against when there is no agent's key. */
const NO_AGENT_KEY = JSON.stringify(generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' }));

/** A digest no secret has, compared against when the agent is unknown so both paths cost the same. */
const NO_AGENT_DIGEST = digest('agentauth: no such agent');

/** What an agent presents at POST /api/agent/authenticate: exactly one of a secret and an assertion. */
export interface PresentedCredentials {
  request_id: string;
  agent_secret?: string;
  agent_assertion?: string;
}

/**
 * The agent, if what it presents proves it is this agent and it is active; null otherwise:
 * unknown (undefined), wrong secret, a bad assertion and disabled look alike. An agent with a
 * secret presents `agent_secret`; a key-bound one `agent_assertion` (./agent-keys.ts), whose id
 * is then recorded as used, so a replay on any node is refused. A secret presented for a
 * key-bound agent, or an assertion for an agent with a secret, is refused. The caller reads the
 * agent's row, with whatever else the step needs (the store's requests.findWithAgent).
 *
 * @example
 * const agent = await verifyAgentCredentials(ctx, read.agent, body);
 * if (!agent) throw new InvalidCredentials('The agent credentials are invalid.');
 */
export async function verifyAgentCredentials(
  deps: Pick<Context, 'clock' | 'store' | 'config'>,
  agent: AgentRecord | undefined,
  presented: PresentedCredentials,
): Promise<AgentRecord | null> {
  if (presented.agent_assertion === undefined) return verifyAgentSecret(deps, agent, presented.agent_secret ?? '');
  // An unknown agent, or one with a secret, is checked against a key nobody holds: the answer
  // takes as long as for a key-bound agent, so timing does not tell which agent_ids exist.
  const verified = verifyAssertion(agent?.public_jwk ?? NO_AGENT_KEY, presented.agent_assertion, {
    agentId: agent?.id ?? '',
    issuer: deps.config.baseUrl,
    requestId: presented.request_id,
    now: deps.clock(),
  });
  if (!verified || !agent?.public_jwk || agent.status !== 'active') return null;
  // Single use, decided by the database before any state change: of two uses, one records it.
  return (await deps.store.assertions.use(agent.id, verified.jti, verified.rememberUntil)) ? agent : null;
}

/** The secret path, as it has always been: no read or write beyond the agent's row. */
function verifyAgentSecret(
  deps: Pick<Context, 'clock'>,
  agent: AgentRecord | undefined,
  secret: string,
): AgentRecord | null {
  const presented = digest(secret);
  // Both comparisons always run, so timing does not tell which secret (if any) matched.
  const current = safeEqual(presented, agent?.secret_digest ?? NO_AGENT_DIGEST);
  const previous = safeEqual(presented, agent?.previous_secret_digest ?? NO_AGENT_DIGEST);
  const previousValid =
    previous && agent?.previous_secret_expires_at != null && deps.clock() < agent.previous_secret_expires_at;
  // A key-bound agent has no secret: whatever is presented as one is refused.
  return agent && (current || previousValid) && agent.status === 'active' && !isKeyBound(agent) ? agent : null;
}
