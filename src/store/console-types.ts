/**
 * The console's storage interface (docs/design.md §11). Same conventions as types.ts: column
 * names of the schema, epoch seconds, and "this call won" booleans for what must happen once.
 */
import type { AgentRecord, ClientRecord, RevokedGrants } from './types.ts';

export type AccountRole = 'admin' | 'member';
export type AccountStatus = 'active' | 'disabled';

export interface AccountRecord {
  id: string;
  /** As the person typed it. */
  email: string;
  /** Lower-cased: what makes an email unique. */
  email_key: string;
  name: string | null;
  role: AccountRole;
  status: AccountStatus;
  email_verified: boolean;
  /** argon2id (PHC string), or null for an account that signs in with passkeys only. */
  password_hash: string | null;
  created_at: number;
  last_sign_in_at: number | null;
}

export type AccountPatch = Partial<
  Pick<AccountRecord, 'name' | 'role' | 'status' | 'email_verified' | 'password_hash' | 'last_sign_in_at'>
>;

export interface PasskeyRecord {
  /** The credential ID, base64url. */
  id: string;
  account_id: string;
  /** COSE public key, base64url. */
  public_key: string;
  counter: number;
  /** JSON array of authenticator transports, or null. */
  transports: string | null;
  name: string;
  created_at: number;
  last_used_at: number | null;
}

export type SignInMethod = 'password' | 'passkey' | 'link';

export interface ConsoleSessionRecord {
  /** A public handle, for listing and ending one session; never the cookie. */
  id: string;
  /** SHA-256 of the cookie's value. */
  digest: string;
  account_id: string;
  created_at: number;
  last_seen_at: number;
  /** When the person last proved who they are in this session: its sign-in, or a re-authentication. */
  authenticated_at: number;
  /** The absolute end, whatever the activity. */
  expires_at: number;
  ip: string | null;
  user_agent: string | null;
  method: SignInMethod;
}

/** One-time links: the first admin's setup, an invitation, an email verification. */
export type LinkPurpose = 'setup' | 'invite' | 'verify';

export interface AccountLinkRecord {
  /** SHA-256 of the link's token. */
  digest: string;
  purpose: LinkPurpose;
  /** The account it is for (setup, verify); null for an invitation. */
  account_id: string | null;
  /** The address a verification link confirms; null otherwise. */
  email: string | null;
  /** The role an invitation grants. */
  role: AccountRole | null;
  created_by: string | null;
  created_at: number;
  expires_at: number;
  used_at: number | null;
  /** When its creator or an admin revoked it, or its creator's account was disabled. */
  revoked_at: number | null;
}

export interface WebauthnChallengeRecord {
  id: string;
  challenge: string;
  /** The account registering a passkey; null for a sign-in (discoverable credentials). */
  account_id: string | null;
  expires_at: number;
}

/** An action taken in the console (or by the CLI on accounts), for the admins' audit log. */
export interface ConsoleEvent {
  at: number;
  actor_id: string | null;
  action: string;
  target: string | null;
  ip: string | null;
  detail: string | null;
}

/** A console event with the actor's email, as admins read it. */
export interface ConsoleEventView extends ConsoleEvent {
  id: string;
  actor_email: string | null;
}

/** One line of an agent's or a client's sign-in history (from the protocol's audit events). */
export interface SignInRecord {
  id: string;
  at: number;
  agent_id: string | null;
  client_id: string | null;
  client_name: string | null;
  model: string | null;
  ip: string | null;
  user_agent: string | null;
  outcome: string;
}

/** Where a page of history starts: after this event, in newest-first order. */
export interface HistoryCursor {
  at: number;
  id: string;
}

/** A client holding live grants of an agent. */
export interface ConnectedSite {
  client_id: string;
  client_name: string;
  grants: number;
  first_granted_at: number;
  last_auth_at: number;
}

export interface ConsoleStore {
  /** Inserts the account; false when its email is already taken. */
  insertAccount(account: AccountRecord): Promise<boolean>;
  /**
   * Uses the link (usable as by useLink) and inserts the account, in one unit:
   * null when the link was not usable, 'email_taken' when the email has an account.
   */
  insertAccountWithLink(
    account: AccountRecord,
    linkDigest: string,
    now: number,
  ): Promise<'created' | 'email_taken' | null>;
  findAccount(id: string): Promise<AccountRecord | undefined>;
  findAccountByEmail(emailKey: string): Promise<AccountRecord | undefined>;
  listAccounts(): Promise<AccountRecord[]>;
  countAccounts(): Promise<number>;
  /** Updates the account, and the owner_* copies on its agents when name or verification change. */
  updateAccount(id: string, patch: AccountPatch): Promise<boolean>;

  insertPasskey(passkey: PasskeyRecord): Promise<void>;
  findPasskey(id: string): Promise<PasskeyRecord | undefined>;
  listPasskeys(accountId: string): Promise<PasskeyRecord[]>;
  /** A sign-in's counter and time; only forward, so a cloned authenticator's replay loses. */
  recordPasskeyUse(id: string, counter: number, now: number): Promise<boolean>;
  renamePasskey(id: string, accountId: string, name: string): Promise<boolean>;
  deletePasskey(id: string, accountId: string): Promise<boolean>;

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

  recordEvent(event: ConsoleEvent): Promise<void>;
  listEvents(filter: { limit: number; before?: HistoryCursor }): Promise<ConsoleEventView[]>;

  listAgentsOf(accountId: string): Promise<AgentRecord[]>;
  listClientsOf(accountId: string): Promise<ClientRecord[]>;
  updateAgentName(id: string, name: string): Promise<boolean>;
  /** Revokes everything the agent holds (as revokeGrantsOf) and deletes it, in one unit. */
  deleteAgent(id: string, now: number, description: string): Promise<RevokedGrants | null>;

  /** Sign-in history of an agent or a client, newest first, `limit` rows after `before`. */
  listSignIns(
    filter: { agent_id: string } | { client_id: string },
    limit: number,
    before?: HistoryCursor,
  ): Promise<SignInRecord[]>;
  /** Successful sign-ins of the agent per UTC day (day = floor(at / 86400)) since `since`. */
  countSignInsByDay(agentId: string, since: number): Promise<Map<number, number>>;
  /** Clients holding grants of the agent that still have a usable token. */
  listConnectedSites(agentId: string, now: number): Promise<ConnectedSite[]>;
  /** Deletes expired sessions, challenges and links, and console events older than `eventsBefore`. */
  purge(now: number, eventsBefore: number): Promise<number>;
}
