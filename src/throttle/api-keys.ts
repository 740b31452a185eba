/**
 * The management API's rate limits, counted in the database so every node shares them: calls per
 * key (API_RATE_LIMIT per API_RATE_LIMIT_WINDOW seconds), and calls without a usable key per
 * client address (API_AUTH_FAILURES_PER_IP in the same window).
 */
import type { Config } from '../config.ts';
import type { Limiter } from '../store/limits.ts';
import type { Store } from '../store/types.ts';
import { TooManyRequests } from '../errors.ts';
import { clientKey } from './address.ts';

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

/**
 * The limit of calls without a usable API key per client address (an IPv6 /64 as one), or null
 * when API_AUTH_FAILURES_PER_IP is 0. A key is 256 random bits, so this is no guard against
 * guessing: it bounds what an address costs the server (a digest lookup per call) without one.
 *
 * @example
 * const unauthenticated = await apiAuthFailureLimit(ctx.config, ctx.store);
 * await unauthenticated?.count(request.ip); // TooManyRequests past the limit
 */
export async function apiAuthFailureLimit(
  config: Pick<Config, 'apiAuthFailuresPerIp' | 'apiRateLimitWindow'>,
  store: Pick<Store, 'createLimiter'>,
): Promise<{ count(ip: string): Promise<void> } | null> {
  if (config.apiAuthFailuresPerIp <= 0) return null;
  const limiter = await store.createLimiter({
    keyPrefix: 'api-ip',
    points: config.apiAuthFailuresPerIp,
    duration: config.apiRateLimitWindow,
  });
  return {
    async count(ip) {
      try {
        await limiter.consume(clientKey(ip), 1);
      } catch (refused) {
        const { msBeforeNext } = refused as { msBeforeNext: number };
        throw new TooManyRequests(
          'Too many calls without a usable API key from this address; wait for Retry-After.',
          msBeforeNext / 1000,
        );
      }
    },
  };
}
