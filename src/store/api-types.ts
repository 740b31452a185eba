/** The management API's records (docs/design.md §15): its keys and its idempotent creations. */
import type { AccountRecord } from './accounts.ts';
import type { ConsoleEvent } from './history.ts';

/** What a key may do: read only, or read and change. */
export type ApiKeyAccess = 'read' | 'write';
/** Whose records a key reaches: its account's own agents and websites, or everything (admins only). */
export type ApiKeyReach = 'own' | 'all';

export interface ApiKeyRecord {
  /** `key_…`: names the key in lists, URLs and the activity; not a secret. */
  id: string;
  /** SHA-256 of the whole key (`aak_…`); the key itself is shown once and never stored. */
  digest: string;
  account_id: string;
  name: string;
  access: ApiKeyAccess;
  reach: ApiKeyReach;
  /** The key's last four characters, so a person can tell their keys apart. */
  hint: string;
  created_at: number;
  /** The account that made it (an admin may make a key for someone else from the CLI: null). */
  created_by: string | null;
  expires_at: number;
  last_used_at: number | null;
  last_used_ip: string | null;
  revoked_at: number | null;
}

/** A retry of an idempotent creation finds what the first attempt left: unfinished (status null) or its answer. */
export interface IdempotentRecord {
  fingerprint: string;
  status: number | null;
  /** The answer's body, sealed under the server secret. */
  sealed: string | null;
  created_at: number;
}

export interface ApiStore {
  insertKey(key: ApiKeyRecord): Promise<void>;
  /** The key with this digest and its account, in one read. */
  findKeyByDigest(digest: string): Promise<{ key: ApiKeyRecord; account: AccountRecord } | undefined>;
  findKey(id: string): Promise<ApiKeyRecord | undefined>;
  /** Every key, or an account's, newest first. */
  listKeys(accountId?: string): Promise<ApiKeyRecord[]>;
  /** Revokes a live key; false when it was already revoked (or is unknown). */
  revokeKey(id: string, now: number): Promise<boolean>;
  /** Records a call: the key's last use and the console event (none for a call its act records), in one unit. */
  recordCall(keyId: string, now: number, ip: string | null, event: ConsoleEvent | null): Promise<void>;
  /**
   * Claims an idempotency key for a creation: null when this is the first use (a row now marks
   * it unfinished), else what the earlier use left.
   */
  claimIdempotencyKey(
    keyId: string,
    idempotencyKey: string,
    fingerprint: string,
    now: number,
  ): Promise<IdempotentRecord | null>;
  /** Keeps the answer of a claimed creation for its retries. */
  finishIdempotencyKey(keyId: string, idempotencyKey: string, status: number, sealed: string): Promise<void>;
  /** Lets a claimed creation be tried again (it failed without an answer worth repeating). */
  releaseIdempotencyKey(keyId: string, idempotencyKey: string): Promise<void>;
  /** Deletes idempotency records created before `before`; returns how many. */
  purge(before: number): Promise<number>;
}
