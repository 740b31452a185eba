/**
 * Throttling of console sign-in by password (docs/design.md §11): failures count per client
 * address (an IPv6 /64 as one) and per email, known or not, so that a refusal does not tell
 * which emails have accounts. Unlike an agent's 256-bit secret, a password can be guessed: once
 * an email has used its failures in the window, even the right password is refused until the
 * window ends. Passkeys cannot be guessed and are never throttled by it, so a person locked out
 * by someone else's guesses still signs in with a passkey.
 */
import type { Config } from '../config.ts';
import { clientKey } from '../domain/throttle.ts';
import { SlowDown } from '../protocol/errors.ts';
import type { Limiter, Store } from '../store/types.ts';

type ThrottleConfig = Pick<Config, 'consoleSigninFailuresPerAccount' | 'consoleSigninFailuresPerIp' | 'consoleSigninWindow'>;

const REFUSAL = 'Too many failed sign-ins; wait a few minutes and try again, or sign in with a passkey.';

export class SignInThrottle {
  private constructor(
    private readonly perAccount: Limiter,
    private readonly perIp: Limiter,
  ) {}

  static async create(config: ThrottleConfig, store: Pick<Store, 'createLimiter'>): Promise<SignInThrottle> {
    return new SignInThrottle(
      await store.createLimiter({ keyPrefix: 'console-account', points: config.consoleSigninFailuresPerAccount, duration: config.consoleSigninWindow }),
      await store.createLimiter({ keyPrefix: 'console-ip', points: config.consoleSigninFailuresPerIp, duration: config.consoleSigninWindow }),
    );
  }

  /** Throws SlowDown (429) when this address or this email has no failures left in the window. */
  async check(emailKey: string, ip: string): Promise<void> {
    for (const [limiter, key] of [[this.perIp, clientKey(ip)], [this.perAccount, emailKey]] as const) {
      const used = await limiter.get(key);
      if (used && used.consumedPoints >= limiter.points) throw new SlowDown(REFUSAL, used.msBeforeNext / 1000);
    }
  }

  async recordFailure(emailKey: string, ip: string): Promise<void> {
    await Promise.all([this.perIp.penalty(clientKey(ip), 1), this.perAccount.penalty(emailKey, 1)]);
  }
}
