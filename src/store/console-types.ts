/**
 * The console's records (docs/design.md §11); its storage interface, ConsoleStore, is in
 * types.ts beside the Store. Same conventions: column names of the schema, epoch seconds.
 */

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

/**
 * What a console form post showed once, waiting for the page its redirect leads to: bound to
 * the session, read once (the read deletes it), gone after a few minutes.
 */
export interface ConsoleFlashRecord {
  id: string;
  session_id: string;
  /** The console path whose GET shows it. */
  path: string;
  /** The value, sealed under the server secret (it may be a secret). */
  sealed: string;
  expires_at: number;
}
