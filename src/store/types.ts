/**
 * The storage interface (docs/design.md §9): the Store, a facade of one namespace per entity,
 * each declared beside its SQL (agents.ts, clients.ts, assertions.ts, requests.ts, tokens.ts, accounts.ts,
 * sessions.ts, api-keys.ts, history.ts, webhooks.ts, approvals.ts, signing-keys.ts), and what belongs to the
 * database itself. Records use the column names of the schema. Times are epoch seconds. Every
 * operation that must happen once is a conditional statement or a transaction in the
 * implementation, reported back as a boolean "this call won".
 */
import type { ActionRequestStore } from './action-requests.ts';
import type { AccountStore, ChallengeStore, LinkStore, PasskeyStore } from './accounts.ts';
import type { AgentStore } from './agents.ts';
import type { ApiKeyStore, IdempotencyStore } from './api-keys.ts';
import type { ApprovalStore } from './approvals.ts';
import type { AssertionStore } from './assertions.ts';
import type { ClientStore } from './clients.ts';
import type { ChangeListener } from './driver.ts';
import type { ActivityStore, SignInStore } from './history.ts';
import type { Limiter, LimiterOptions } from './limits.ts';
import type { RequestStore } from './requests.ts';
import type { FlashStore, SessionStore } from './sessions.ts';
import type { SigningKeyStore } from './signing-keys.ts';
import type { AccessTokenStore, CodeStore, GrantStore, RefreshTokenStore } from './tokens.ts';
import type { WebhookStore } from './webhooks.ts';

/** Cut-offs of one purge run, in epoch seconds. */
export interface PurgeCutoffs {
  /** Requests, codes and tokens that expired before this. */
  expiredBefore: number;
  /** Requests that never reached `authenticated` and expired before this (sooner than expiredBefore). */
  unauthenticatedBefore: number;
  /** Audit events older than this. */
  auditBefore: number;
  /**
   * Active self-registered clients last used before `lastUsedBefore` that have no grant and no
   * request or code unexpired at `now`; absent: no client is purged.
   */
  unusedClients?: { lastUsedBefore: number; now: number };
}

/** What one purge run deleted, by table. */
export interface PurgeCounts {
  requests: number;
  codes: number;
  refreshTokens: number;
  accessTokens: number;
  grants: number;
  auditEvents: number;
  /** Self-registered clients purged as unused. */
  clients: number;
  /** Used assertion ids (agents' and clients') whose assertions expired (a replay is refused by expiry then). */
  assertions: number;
}

/**
 * The store: `store.agents.find(id)`, `store.requests.authenticate(…)`, … and the database's own
 * members below.
 */
export interface Store {
  readonly engine: 'sqlite' | 'postgres';
  /** Agents (agents.ts). */
  readonly agents: AgentStore;
  /** Clients, the websites agents sign in to (clients.ts). */
  readonly clients: ClientStore;
  /** Used assertion ids of key-bound agents and of clients that sign with keys (assertions.ts). */
  readonly assertions: AssertionStore;
  /** Authorization requests (requests.ts). */
  readonly requests: RequestStore;
  /** Authorization codes (tokens.ts). */
  readonly codes: CodeStore;
  /** Grants, what a sign-in allowed (tokens.ts). */
  readonly grants: GrantStore;
  /** Refresh tokens (tokens.ts). */
  readonly refreshTokens: RefreshTokenStore;
  /** Access tokens (tokens.ts). */
  readonly accessTokens: AccessTokenStore;
  /** The sign-in history: agents' authentications and their outcomes (history.ts). */
  readonly signIns: SignInStore;
  /** The console's activity: what people, keys and the CLI did (history.ts). */
  readonly activity: ActivityStore;
  /** The console's accounts (accounts.ts). */
  readonly accounts: AccountStore;
  /** The accounts' passkeys (accounts.ts). */
  readonly passkeys: PasskeyStore;
  /** WebAuthn challenges of the passkeys' ceremonies (accounts.ts). */
  readonly challenges: ChallengeStore;
  /** One-time links: setup, invitation, email verification (accounts.ts). */
  readonly links: LinkStore;
  /** Console sessions (sessions.ts). */
  readonly sessions: SessionStore;
  /** What a form post showed once, for the page after its redirect (sessions.ts). */
  readonly flashes: FlashStore;
  /** The management API's keys (api-keys.ts). */
  readonly apiKeys: ApiKeyStore;
  /** The management API's idempotent creations (api-keys.ts). */
  readonly idempotency: IdempotencyStore;
  /** Webhook endpoints, the outbox of their deliveries and the attempts' log (docs/design.md §15). */
  readonly webhooks: WebhookStore;
  /** Owner approvals of sign-ins an agent's policy holds back (docs/design.md §16), and of actions (§21). */
  readonly approvals: ApprovalStore;
  /** Websites' action requests to agents' owners (OpenID CIBA, docs/design.md §21). */
  readonly actionRequests: ActionRequestStore;
  /** The key pairs that sign tokens when TOKEN_SIGNING_ALG names one (docs/design.md §19). */
  readonly signingKeys: SigningKeyStore;
  /**
   * A counter seen by every node that uses this store: process memory for SQLite (one node),
   * a shared table for PostgreSQL, so throttling holds however many nodes there are.
   */
  createLimiter(options: LimiterOptions): Promise<Limiter>;
  migrate(): Promise<void>;
  ping(): Promise<void>;
  close(): Promise<void>;
  /**
   * Hears of every committed change of an authorization request's status, on every node: the
   * request's id, or '*' when any request may have changed (a revocation). Until stopped.
   */
  watchStatus(listener: ChangeListener): Promise<() => Promise<void>>;

  /** Deletes what the cut-offs say, at most `batchSize` rows per transaction (default PURGE_BATCH, rows.ts). */
  purge(cutoffs: PurgeCutoffs, batchSize?: number): Promise<PurgeCounts>;
}
