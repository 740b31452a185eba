/**
 * The storage interface (docs/design.md §9). Records use the column names of the schema. Times are
 * epoch seconds. Every operation that must happen once is a conditional statement or a
 * transaction in the implementation, reported back as a boolean "this call won".
 */
import type { AgentStore } from './agents.ts';
import type { ApiStore } from './api-types.ts';
import type { ClientStore } from './clients.ts';
import type { ApprovalStore } from './approval-store.ts';
import type { ChangeListener } from './driver.ts';
import type { Limiter, LimiterOptions } from './limits.ts';
import type { ActivityStore, SignInStore } from './history.ts';
import type { WebhookEvent } from './outbox.ts';
import type { RequestStore } from './requests.ts';
import type { AccessTokenStore, CodeStore, GrantStore, RefreshTokenStore } from './tokens.ts';
import type { WebhookStore } from './webhook-types.ts';
import type {
  AccountLinkRecord,
  AccountPatch,
  AccountRecord,
  ConsoleFlashRecord,
  ConsoleSessionRecord,
  LinkPurpose,
  PasskeyRecord,
  WebauthnChallengeRecord,
} from './console-types.ts';

export type ApprovalStatus = 'pending' | 'approved' | 'denied';
/** How the owner decided: this request only, this website from now on (added to the list), or no. */
export type ApprovalDecision = 'once' | 'always' | 'deny';

/** An owner's approval of one agent's sign-in to one website for one request (docs/design.md §16). */
export interface ApprovalRecord {
  id: string;
  request_id: string;
  agent_id: string;
  client_id: string;
  /** The model the agent named when it asked; the sign-in is recorded with it. */
  model: string;
  scope: string;
  /** The agent's address and User-Agent when it asked, for the history and the owner's judgement. */
  ip: string | null;
  user_agent: string | null;
  status: ApprovalStatus;
  decision: ApprovalDecision | null;
  created_at: number;
  /** The request's expiry: an approval cannot outlive it. */
  expires_at: number;
  decided_at: number | null;
  /** The console account that decided. */
  decided_by: string | null;
}

/** An approval as the owner is shown it: with the agent's and the website's names and the request's destination. */
export interface ApprovalView extends ApprovalRecord {
  agent_name: string;
  agent_account_id: string | null;
  owner_email: string;
  owner_name: string | null;
  client_name: string;
  redirect_uri: string;
  resource: string | null;
}

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

export interface PurgeCounts {
  requests: number;
  codes: number;
  refreshTokens: number;
  accessTokens: number;
  grants: number;
  auditEvents: number;
  /** Self-registered clients purged as unused. */
  clients: number;
  /** Used assertion ids of key-bound agents whose assertions expired (a replay is refused by expiry then). */
  agentAssertions: number;
}

export interface Store {
  readonly engine: 'sqlite' | 'postgres';
  /** Agents (agents.ts). */
  readonly agents: AgentStore;
  /** Clients, the websites agents sign in to (clients.ts). */
  readonly clients: ClientStore;
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
  /** The console's records (accounts, sessions, passkeys, links, its audit), on the same database. */
  readonly console: ConsoleStore;
  /** The management API's keys and idempotent creations (docs/design.md §15). */
  readonly api: ApiStore;
  /** Webhook endpoints, the outbox of their deliveries and the attempts' log (docs/design.md §15). */
  readonly webhooks: WebhookStore;
  /** Owner approvals of sign-ins an agent's policy holds back (docs/design.md §16). */
  readonly approvals: ApprovalStore;
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

  /** Deletes what the cut-offs say, at most `batchSize` rows per transaction (default PURGE_BATCH). */
  purge(cutoffs: PurgeCutoffs, batchSize?: number): Promise<PurgeCounts>;
}

/** What the console stores (docs/design.md §11): accounts, passkeys, sessions, links, its audit. */
export interface ConsoleStore {
  /** Inserts the account; false when its email is already taken. */
  insertAccount(account: AccountRecord, announce?: WebhookEvent[]): Promise<boolean>;
  /**
   * Uses the link (usable as by useLink) and inserts the account, in one unit:
   * null when the link was not usable, 'email_taken' when the email has an account.
   */
  insertAccountWithLink(
    account: AccountRecord,
    linkDigest: string,
    now: number,
    announce?: WebhookEvent[],
  ): Promise<'created' | 'email_taken' | null>;
  findAccount(id: string): Promise<AccountRecord | undefined>;
  findAccountByEmail(emailKey: string): Promise<AccountRecord | undefined>;
  listAccounts(): Promise<AccountRecord[]>;
  countAccounts(): Promise<number>;
  /** Updates the account, and the owner_* copies on its agents when name or verification change. */
  updateAccount(id: string, patch: AccountPatch, announce?: WebhookEvent[]): Promise<boolean>;

  insertPasskey(passkey: PasskeyRecord, announce?: WebhookEvent[]): Promise<void>;
  findPasskey(id: string): Promise<PasskeyRecord | undefined>;
  listPasskeys(accountId: string): Promise<PasskeyRecord[]>;
  /** A sign-in's counter and time; only forward, so a cloned authenticator's replay loses. */
  recordPasskeyUse(id: string, counter: number, now: number): Promise<boolean>;
  renamePasskey(id: string, accountId: string, name: string): Promise<boolean>;
  deletePasskey(id: string, accountId: string, announce?: WebhookEvent[]): Promise<boolean>;

  insertSession(session: ConsoleSessionRecord): Promise<void>;
  /** The unexpired session with this digest and its account. */
  findSession(
    digest: string,
    now: number,
  ): Promise<{ session: ConsoleSessionRecord; account: AccountRecord } | undefined>;
  touchSession(id: string, now: number): Promise<boolean>;
  /** Records a fresh authentication in the session (a password or passkey confirmed again). */
  markSessionAuthenticated(id: string, now: number): Promise<boolean>;
  listSessions(accountId: string, now: number): Promise<ConsoleSessionRecord[]>;
  deleteSession(id: string, accountId: string): Promise<boolean>;
  /** Ends every session of the account but `exceptId`; resolves with how many. */
  deleteSessionsOf(accountId: string, exceptId?: string): Promise<number>;

  insertLink(link: AccountLinkRecord): Promise<void>;
  findLink(digest: string): Promise<AccountLinkRecord | undefined>;
  /**
   * Marks the link used, if it is unused, unrevoked, unexpired, of that purpose, and its creator
   * (if any) is an active account.
   */
  useLink(digest: string, purpose: LinkPurpose, now: number): Promise<boolean>;
  /** Uses the verification link and marks its account's email verified, in one unit. */
  useVerificationLink(digest: string, now: number): Promise<AccountRecord | undefined>;
  /**
   * The setup and invitation links still outstanding (unused, unrevoked, unexpired), oldest
   * first: those `createdBy` made, or every one.
   */
  listOutstandingLinks(now: number, createdBy?: string): Promise<AccountLinkRecord[]>;
  /** Revokes the link if it is still outstanding (and made by `createdBy`, when given). */
  revokeLink(digest: string, now: number, createdBy?: string): Promise<boolean>;
  /**
   * Revokes the outstanding links the account made, and the setup links made for it: what
   * disabling it ends. Resolves with how many.
   */
  revokeLinksOf(accountId: string, now: number): Promise<number>;

  insertChallenge(challenge: WebauthnChallengeRecord): Promise<void>;
  /** Deletes and returns the unexpired challenge: each can be answered once. */
  takeChallenge(id: string, now: number): Promise<WebauthnChallengeRecord | undefined>;

  insertFlash(flash: ConsoleFlashRecord): Promise<void>;
  /** Deletes and returns the session's unexpired flash for `path` (the newest): each is read once. */
  takeFlash(sessionId: string, path: string, now: number): Promise<ConsoleFlashRecord | undefined>;

  /** Deletes expired sessions, challenges and links, and console events older than `eventsBefore`. */
  purge(now: number, eventsBefore: number): Promise<number>;
}
