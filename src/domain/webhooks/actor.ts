/**
 * Who is acting, for the `actor` of management events (docs/reference/webhooks.md): set by each
 * entry point around the work it does (the console for its signed-in account, the API for the
 * caller's key, the CLI), read by the events' builders, so no rule function needs another
 * parameter. Outside any of them (the server's own work, a sign-in) there is none.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

export type Actor =
  | { type: 'account'; id: string; email: string }
  | { type: 'api_key'; key_id: string; account_id: string; email: string }
  | { type: 'cli' };

const acting = new AsyncLocalStorage<Actor>();

/**
 * Runs `work` (and everything it starts) as `actor`.
 *
 * @example
 * scope.addHook('preHandler', (request, _reply, done) => actingAs({ type: 'cli' }, done));
 */
export function actingAs<T>(actor: Actor, work: () => T): T {
  return acting.run(actor, work);
}

/**
 * The actor of the work under way, or null.
 *
 * @example
 * currentActor(); // { type: 'account', id: 'acc_…', email: 'ada@example.com' }
 */
export const currentActor = (): Actor | null => acting.getStore() ?? null;
