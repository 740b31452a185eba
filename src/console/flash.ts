/**
 * Shown once (docs/design.md §11): what a form post showed (a new secret, a one-time link, an
 * agent's environment) is handed to the page its 303 leads to through the database, never the
 * URL. The value is sealed under the server secret, bound to the session that posted, and the
 * first read deletes it: a reload, the back button or another tab finds nothing.
 */
import { randomId } from '../crypto.ts';
import type { Context } from '../context.ts';

type Deps = Pick<Context, 'store' | 'clock' | 'secrets'>;

/** How long a flash waits for the browser to follow the redirect. */
export const FLASH_LIFETIME = 300;

/**
 * @example
 * await leaveFlash(ctx, session.id, '/console/agents/agt_1/created', { secret });
 * // 303 to /console/agents/agt_1/created, whose GET calls takeFlash
 */
export async function leaveFlash(deps: Deps, sessionId: string, path: string, value: unknown): Promise<void> {
  await deps.store.flashes.insert({
    id: randomId('fls_', 16),
    session_id: sessionId,
    path,
    sealed: deps.secrets.box.seal(JSON.stringify(value)),
    expires_at: deps.clock() + FLASH_LIFETIME,
  });
}

/** The session's flash for `path`, once; null when there is none (or it could not be opened). */
export async function takeFlash<T>(deps: Deps, sessionId: string, path: string): Promise<T | null> {
  const flash = await deps.store.flashes.take(sessionId, path, deps.clock());
  if (!flash) return null;
  try {
    return JSON.parse(deps.secrets.box.openOnce(flash.sealed)) as T;
  } catch {
    // Sealed under a server secret this node does not have (a rotation in between): as if gone.
    return null;
  }
}
