/**
 * The signing keys every node shares (docs/design.md §19): their records and SQL, one text for
 * SQLite and PostgreSQL (Store.signingKeys). Each change of the set is one unit whose guarded
 * steps say which node won: a rotation moves the current key only WHERE it is still current.
 */
import type { Driver, Step } from './driver.ts';
import { insert } from './rows.ts';

/** A key's place in the set: published ahead of use, signing, or published until its tokens expire. */
export type SigningKeyState = 'next' | 'current' | 'retired';

/** A key pair; times in epoch seconds. */
export interface SigningKeyRecord {
  /** The RFC 7638 thumbprint of the public key: the `kid` of its tokens and of the key set. */
  kid: string;
  alg: string;
  state: SigningKeyState;
  /** The public JWK as JSON text (no private member). */
  public_jwk: string;
  /** The PKCS #8 private key, sealed under a key derived from the server secret; never in clear. */
  private_key_sealed: string;
  created_at: number;
  /** When it began to sign; null while `next`. */
  activated_at: number | null;
  retired_at: number | null;
  /** Until when a retired key stays published: its last token's expiry (and a node's reload). */
  publish_until: number | null;
}

/** One change of the set, as a unit: keys that leave their state, the next key that signs, keys added. */
export interface SigningKeyChange {
  /** Keys retired, each only while still in the state named (the guard of the unit). */
  retire: { kid: string; state: 'current' | 'next' }[];
  /** The next key that becomes current, only while still `next` (guarded). */
  promote?: string;
  /** New keys (a first current one, the next one); none may take a state another key holds. */
  add: SigningKeyRecord[];
  /** Retired keys withdrawn from the set at `now` (an emergency rotation): their tokens stop verifying. */
  withdraw?: string[];
  now: number;
  /** The retired keys' publish_until. */
  publishUntil: number;
}

/** Signing keys in the store (Store.signingKeys). */
export interface SigningKeyStore {
  /** Every key, oldest first. */
  list(): Promise<SigningKeyRecord[]>;
  /** Applies a change in one unit; false (nothing changed) when another node changed the set first. */
  change(change: SigningKeyChange): Promise<boolean>;
  /** Deletes retired keys published until before `now`; returns how many. */
  purge(now: number): Promise<number>;
}

/**
 * The signing keys of the database behind `driver`.
 *
 * @example
 * const keys = await signingKeyStore(driver).list(); // [{ kid, alg, state: 'current', … }]
 */
export function signingKeyStore(driver: Driver): SigningKeyStore {
  return {
    list() {
      return driver.all<SigningKeyRecord>('SELECT * FROM signing_keys ORDER BY created_at, kid');
    },

    async change({ retire, promote, add, withdraw = [], now, publishUntil }) {
      const steps: Step[] = [
        ...retire.map(({ kid, state }) => ({
          sql: "UPDATE signing_keys SET state = 'retired', retired_at = ?, publish_until = ? WHERE kid = ? AND state = ?",
          params: [now, publishUntil, kid, state],
          guard: true,
        })),
        ...(promote === undefined
          ? []
          : [
              {
                sql: "UPDATE signing_keys SET state = 'current', activated_at = ? WHERE kid = ? AND state = 'next'",
                params: [now, promote],
                guard: true,
              },
            ]),
        // Unguarded: a key another node withdrew or purged meanwhile is gone either way.
        ...withdraw.map((kid) => ({
          sql: "UPDATE signing_keys SET publish_until = ? WHERE kid = ? AND state = 'retired' AND publish_until > ?",
          params: [now, kid, now],
        })),
        // A state another node's key took meanwhile (one current, one next: the partial unique
        // indexes) inserts nothing, and the guard makes the whole unit void.
        ...add.map((record) => {
          const step = insert('signing_keys', record);
          return { ...step, sql: `${step.sql} ON CONFLICT DO NOTHING`, guard: true };
        }),
      ];
      return (await driver.write(steps)) !== null;
    },

    async purge(now) {
      const [deleted = 0] =
        (await driver.write([
          { sql: "DELETE FROM signing_keys WHERE state = 'retired' AND publish_until < ?", params: [now] },
        ])) ?? [];
      return deleted;
    },
  };
}
