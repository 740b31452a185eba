/**
 * The management API's rate limit per key (API_RATE_LIMIT calls per API_RATE_LIMIT_WINDOW
 * seconds), counted in the database so every node shares it.
 */
import type { Config } from '../config.ts';
import type { Limiter } from '../store/limits.ts';
import type { Store } from '../store/types.ts';

/**
 * The per-key limiter, or null when API_RATE_LIMIT is 0 (no limit).
 *
 * @example
 * const limiter = await apiKeyLimiter(ctx.config, ctx.store);
 */
export async function apiKeyLimiter(
  config: Pick<Config, 'apiRateLimit' | 'apiRateLimitWindow'>,
  store: Pick<Store, 'createLimiter'>,
): Promise<Limiter | null> {
  if (config.apiRateLimit <= 0) return null;
  return store.createLimiter({ keyPrefix: 'api', points: config.apiRateLimit, duration: config.apiRateLimitWindow });
}
