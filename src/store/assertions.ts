/**
 * Used assertion ids (docs/design.md §16, §18): a signed assertion (a key-bound agent's at
 * /api/agent/authenticate, a client's RFC 7523 assertion at /token, /introspect and /revoke) is
 * taken once on every node. Its `jti` is kept, under who signed it, until the assertion expires;
 * the purge forgets it after. Agent ids (agt_…) and client ids (cli_… or https://…) never meet,
 * so one table serves both.
 */
import type { Driver } from './driver.ts';
import { won } from './rows.ts';

/** Used assertion ids in the store (Store.assertions). */
export interface AssertionStore {
  /**
   * Records that `signer` (an agent_id or a client_id) used the assertion id `jti`, remembered
   * until `expiresAt` (epoch seconds): false when it was used already, on any node (a replay).
   */
  use(signer: string, jti: string, expiresAt: number): Promise<boolean>;
}

/**
 * The used assertion ids of the database behind `driver`.
 *
 * @example
 * const assertions = assertionStore(driver);
 * if (!(await assertions.use('cli_abc', jti, exp + 30))) throw new InvalidClient('replayed');
 */
export function assertionStore(driver: Driver): AssertionStore {
  return {
    use(signer, jti, expiresAt) {
      // The primary key (signer, jti) decides: of two racing uses, on any node, one inserts.
      return won(driver, {
        sql: 'INSERT INTO used_assertions (signer, jti, expires_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING',
        params: [signer, jti, expiresAt],
        guard: true,
      });
    },
  };
}
