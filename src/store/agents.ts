/**
 * Agents (docs/design.md §9, §16): the records, their rows, and their SQL, one text for SQLite
 * and PostgreSQL. Deleting an agent revokes what it holds in the same unit (rows.ts
 * deleteWithGrants, the shape clients share). The steps other entities' units write of an agent
 * (its last use with a sign-in, its owner's copies with an account's change, its use and policy
 * with an approval) are built here too, so every write of an agent's row is in this file; the
 * joined reads of requests and tokens take its columns from AGENT here.
 */
import type { Driver, Step } from './driver.ts';
import { columnsOf, type JoinedRead, type Table } from './joined.ts';
import { announceSteps, type WebhookEvent } from './outbox.ts';
import {
  deleteWithGrants,
  type GrantBounds,
  insert,
  type ListQuery,
  pageRows,
  type RevokedGrants,
  revokeBeyondSteps,
  update,
  won,
} from './rows.ts';

/** A disabled agent cannot sign in, and its tokens stop working. */
export type AgentStatus = 'active' | 'disabled';

/** An agent: who signs in, its credentials, its owner (copied from the account that owns it), its policy. */
export interface AgentRecord {
  id: string;
  secret_digest: string;
  /** The secret before the last rotation, still accepted until previous_secret_expires_at. */
  previous_secret_digest: string | null;
  previous_secret_expires_at: number | null;
  name: string;
  owner_email: string;
  owner_name: string | null;
  owner_email_verified: boolean;
  status: AgentStatus;
  created_at: number;
  last_used_at: number | null;
  /**
   * The console account that owns it; null for agents registered with the CLI. The owner_*
   * columns of an owned agent are copies of its account's, kept in step by the account's changes
   * (ownerSteps), so the token paths read one row as before.
   */
  account_id: string | null;
  /** What the owner allows this agent (docs/design.md §16); null: the default policy, any website. */
  policy: AgentPolicy | null;
  /**
   * A key-bound agent's public JWK as JSON text (docs/design.md §16), null for an agent with a
   * secret. Such an agent proves itself with a signed assertion; its secret_digest is of random
   * bytes nobody holds, and a secret presented for it is refused. Reads always fill it; a record
   * written without it (absent) is an agent with a secret, as before keys existed.
   */
  public_jwk?: string | null;
  /** The RFC 7638 SHA-256 thumbprint of public_jwk (base64url), null for an agent with a secret. */
  key_thumbprint?: string | null;
  /**
   * How many times its owners' and admins' changes changed it (1 when made): what If-Match and
   * the policy's changes compare and set (rows.ts update). A sign-in's last use does not count.
   */
  version: number;
}

/** Which websites an agent may sign in to: any (the default), only listed ones, or ask the owner for a new one. */
export type WebsitesRule = 'any' | 'listed' | 'ask';

/** An owner's limits on an agent (docs/design.md §16), stored as JSON in agents.policy. */
export interface AgentPolicy {
  websites: WebsitesRule;
  /** The websites (client ids) the agent may sign in to without asking; used by 'listed' and 'ask'. */
  allowed_clients: string[];
  /** The scopes the agent may share at most; null: any scope the website may ask for. */
  scope_ceiling: string[] | null;
  /** Epoch seconds after which the agent's credentials no longer sign in; null: never. */
  credentials_expire_at: number | null;
  /** Successful sign-ins allowed in any hour; null: no limit. */
  max_sign_ins_per_hour: number | null;
  /**
   * How the owner answers a website's action request (docs/design.md §21), per website; a website
   * without a rule is 'ask'. Policies stored before actions existed read as [].
   */
  actions: ActionRule[];
}

/** The owner's standing answer to a website's action requests: allow, refuse, or ask each time. */
export type ActionAnswer = 'always' | 'never' | 'ask';

/** One website's rule for action requests; `up_to` limits 'always' to amounts in one currency. */
export interface ActionRule {
  client_id: string;
  answer: ActionAnswer;
  /** Only with 'always': allow an action whose amount is at most this, in this currency (ISO 4217). */
  up_to?: { amount: number; currency: string };
}

/**
 * What token checks and claims need of an agent: who it is and whether it may act (its status,
 * and its policy's expiry: NULL, nothing to parse, for an agent without one), never its secrets.
 */
export type AgentProfile = Pick<
  AgentRecord,
  'id' | 'name' | 'owner_email' | 'owner_name' | 'owner_email_verified' | 'status' | 'policy'
>;

/** What a change of an agent may set. */
export type AgentPatch = Partial<
  Pick<
    AgentRecord,
    | 'name'
    | 'status'
    | 'secret_digest'
    | 'previous_secret_digest'
    | 'previous_secret_expires_at'
    | 'last_used_at'
    | 'public_jwk'
    | 'key_thumbprint'
    | 'policy'
  >
>;

type AgentRow = Omit<AgentRecord, 'owner_email_verified' | 'policy'> & {
  owner_email_verified: number;
  policy: string | null;
};
/** An agent record, or the part of one a read took, from its row. */
type AgentFrom<R> = Omit<R, 'owner_email_verified' | 'policy'> & { owner_email_verified: boolean } & (R extends {
    policy: unknown;
  }
    ? { policy: AgentPolicy | null }
    : unknown);

/** An agent row, or the part of one a read took, with its boolean and its policy restored. */
const toAgent = <R extends { owner_email_verified: number; policy?: string | null }>(row: R): AgentFrom<R> =>
  ({
    ...row,
    owner_email_verified: row.owner_email_verified === 1,
    // The default policy is NULL: nothing to parse on the path every agent without one takes.
    // A policy stored before actions existed has none: every website is 'ask'.
    ...(row.policy == null
      ? {}
      : { policy: { actions: [], ...(JSON.parse(row.policy) as Partial<AgentPolicy>) } as AgentPolicy }),
  }) as AgentFrom<R>;
/** An agent record's columns as the database holds them. */
const agentColumns = <T extends Partial<AgentRecord>>(agent: T) => ({
  ...agent,
  ...(agent.owner_email_verified === undefined ? {} : { owner_email_verified: agent.owner_email_verified ? 1 : 0 }),
  ...(agent.policy === undefined ? {} : { policy: agent.policy === null ? null : JSON.stringify(agent.policy) }),
});

/** An agent's every column in a joined read (requests.ts, tokens.ts). */
export const AGENT: Table = {
  alias: 'a',
  columns: columnsOf<AgentRow>()([
    'id',
    'secret_digest',
    'previous_secret_digest',
    'previous_secret_expires_at',
    'name',
    'owner_email',
    'owner_name',
    'owner_email_verified',
    'status',
    'created_at',
    'last_used_at',
    'account_id',
    'policy',
    'public_jwk',
    'key_thumbprint',
    'version',
  ]),
};

/** A token's agent: what its checks and claims need (AgentProfile), not its secrets. */
export const AGENT_PROFILE: Table = {
  alias: 'a',
  columns: columnsOf<Pick<AgentRow, keyof AgentProfile>>()([
    'id',
    'name',
    'owner_email',
    'owner_name',
    'owner_email_verified',
    'status',
    'policy',
  ]),
};

/** The agent of a joined read's row (AGENT), or undefined when the row has none. */
export const agentIn = (read: JoinedRead, row: readonly unknown[]): AgentRecord | undefined => {
  const agent = read.take<AgentRow>(row, AGENT);
  return agent && toAgent(agent);
};
/** The agent of a joined read's row as a token's checks need it (AGENT_PROFILE). */
export const agentProfileIn = (read: JoinedRead, row: readonly unknown[]): AgentProfile | undefined => {
  const agent = read.take<Pick<AgentRow, keyof AgentProfile>>(row, AGENT_PROFILE);
  return agent && toAgent(agent);
};

/**
 * How old an agent's recorded last use (agents.last_used_at, its last sign-in) may be before a
 * sign-in writes it again, in seconds: the console and the API show it to the minute.
 */
export const AGENT_USE_RESOLUTION = 60;

/**
 * The step of a sign-in's unit (RequestStore.authenticate) that records the agent's last use, to
 * the minute: a row rewritten at every sign-in made concurrent sign-ins of one agent queue on its
 * row lock (PostgreSQL) and cost every sign-in a row version.
 */
export function lastUseStep(agentId: string, now: number): Step {
  return {
    sql: 'UPDATE agents SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at <= ?)',
    params: [now, agentId, now - AGENT_USE_RESOLUTION],
  };
}

/**
 * Adds to an account's unit the steps that keep its agents' copies in step (the token paths read
 * the agent's row alone): the owner's name and email verification, each when it changes. Pushed
 * onto `steps`, so an account's change that touches neither (a sign-in's time) allocates nothing.
 */
export function ownerSteps(
  steps: Step[],
  accountId: string,
  name: string | null | undefined,
  emailVerified: boolean | undefined,
): void {
  if (name !== undefined)
    steps.push({ sql: 'UPDATE agents SET owner_name = ? WHERE account_id = ?', params: [name, accountId] });
  if (emailVerified !== undefined)
    steps.push({
      sql: 'UPDATE agents SET owner_email_verified = ? WHERE account_id = ?',
      params: [emailVerified ? 1 : 0, accountId],
    });
}

/** The step of an email verification's unit that marks the account's agents' owner verified. */
export function ownerVerifiedStep(accountId: string): Step {
  return { sql: 'UPDATE agents SET owner_email_verified = 1 WHERE account_id = ?', params: [accountId] };
}

/**
 * The step of an approval's unit (approvals.ts) that records the agent's use as its own sign-in
 * would, and with `policy` (the decision 'always') replaces the agent's policy, only while the
 * agent still has `policy.version`, the one the new policy was made from (the unit is void
 * otherwise: another change came between, and the decision reads the policy again).
 */
export function approvedAgentStep(
  agentId: string,
  now: number,
  policy?: { policy: AgentPolicy; version: number },
): Step {
  if (policy === undefined) return { sql: 'UPDATE agents SET last_used_at = ? WHERE id = ?', params: [now, agentId] };
  return {
    ...update('agents', 'id', agentId, agentColumns({ last_used_at: now, policy: policy.policy }), policy.version),
    guard: true,
  };
}

/** Agents in the store (Store.agents). */
export interface AgentStore {
  insert(agent: AgentRecord, announce?: WebhookEvent[]): Promise<void>;
  find(id: string): Promise<AgentRecord | undefined>;
  /**
   * Agents oldest first: every one, or an account's (`accountId`), or one page of either (with a
   * `limit`, after the `after` of the page before).
   */
  list(query?: ListQuery): Promise<AgentRecord[]>;
  /**
   * Changes the agent with the events announcing it, in one unit, adding one to its version;
   * false when there is no such agent or (with `version`) it no longer has that version.
   */
  update(id: string, patch: AgentPatch, announce?: WebhookEvent[], version?: number): Promise<boolean>;
  /**
   * Replaces the agent's policy (null: the default) and, in the same unit, revokes its grants,
   * codes and authenticated requests beyond `bounds` (rows.ts revokeBeyondSteps), with the events
   * announcing it; with `version`, only while the agent still has it. The counts revoked, or null
   * when nothing was written (no such agent, or another version).
   */
  setPolicy(
    id: string,
    policy: AgentPolicy | null,
    revoke: { bounds: GrantBounds; now: number; description: string },
    announce?: WebhookEvent[],
    version?: number,
  ): Promise<RevokedGrants | null>;
  /**
   * Revokes everything the agent holds (as GrantStore.revokeAll) and deletes it, in one unit;
   * null if there was none or (with `version`) it no longer has that version.
   */
  delete(
    id: string,
    now: number,
    description: string,
    announce?: WebhookEvent[],
    version?: number,
  ): Promise<RevokedGrants | null>;
}

/**
 * The agents of the database behind `driver`.
 *
 * @example
 * const agents = agentStore(driver);
 * await agents.update(id, { status: 'disabled' }, announce);
 */
export function agentStore(driver: Driver): AgentStore {
  return {
    async insert(agent, announce) {
      await driver.write([insert('agents', agentColumns(agent)), ...announceSteps(announce)]);
    },

    async find(id) {
      const row = await driver.one<AgentRow>('SELECT * FROM agents WHERE id = ?', [id]);
      return row && toAgent(row);
    },

    async list(query) {
      if (query?.limit !== undefined) return (await pageRows<AgentRow>(driver, 'agents', query)).map(toAgent);
      const rows =
        query?.accountId === undefined
          ? await driver.all<AgentRow>('SELECT * FROM agents ORDER BY created_at, id')
          : await driver.all<AgentRow>('SELECT * FROM agents WHERE account_id = ? ORDER BY created_at, id', [
              query.accountId,
            ]);
      return rows.map(toAgent);
    },

    update(id, patch, announce, version) {
      return won(driver, update('agents', 'id', id, agentColumns(patch), version), ...announceSteps(announce));
    },

    async setPolicy(id, policy, revoke, announce, version) {
      const changes = await driver.write([
        update('agents', 'id', id, agentColumns({ policy }), version),
        ...revokeBeyondSteps(id, revoke.bounds, revoke.now, revoke.description),
        ...announceSteps(announce),
      ]);
      if (!changes) return null;
      const [, grants = 0, codes = 0, requests = 0] = changes;
      return { grants, codes, requests };
    },

    delete(id, now, description, announce, version) {
      return deleteWithGrants(driver, 'agents', id, now, description, announce, version);
    },
  };
}
