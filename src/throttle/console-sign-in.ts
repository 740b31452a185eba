/**
 * Throttling of console sign-in by password (docs/design.md §11): failures count per client
 * address (an IPv6 /64 as one) and per email, known or not, so that a refusal does not tell
 * which emails have accounts. Unlike an agent's 256-bit secret, a password can be guessed: once
 * an email has used its failures in the window, even the right password is refused until the
 * window ends. Passkeys cannot be guessed and are never throttled by it, so a person locked out
 * by someone else's guesses still signs in with a passkey.
 *
 * An attempt is paid for before its password is checked and refunded when it was right
 * (reserve → verify → refund): a burst of concurrent guesses cannot all be checked while the
 * counter still reads "room left". And only a few argon2 checks run at once per address and per
 * node; more are refused at once rather than queued, since each holds 19 MiB and a thread.
 */
import type { Config } from '../config.ts';
import { AddressLimit, ConcurrencyLimit, clientKey, type FailureCounters, failureCounters } from './address.ts';
import { TooManyRequests } from '../errors.ts';
import type { Limiter } from '../store/limits.ts';
import type { Store } from '../store/types.ts';

type ThrottleConfig = Pick<
  Config,
  | 'consoleSigninFailuresPerAccount'
  | 'consoleSigninFailuresPerIp'
  | 'consoleSigninWindow'
  | 'consolePasswordChecksPerIp'
  | 'consolePasswordChecksMax'
>;

const REFUSAL = 'Too many failed sign-ins; wait a few minutes and try again, or sign in with a passkey.';
const BUSY = 'Too many sign-ins are being checked at once; try again in a moment.';

/** Passkey challenges asked for per address and minute: each is a row, and a person needs a few. */
const PASSKEY_OPTIONS_PER_MINUTE = 30;

/**
 * A password check in progress: `succeeded()` refunds the attempt; `done()` (always, in a
 * finally) frees its place among the checks running at once.
 */
export interface PasswordAttempt {
  succeeded(): Promise<void>;
  done(): void;
}

/** A refusal of rate-limiter-flexible (the key is over its points), as opposed to a store failure. */
function isRefusal(value: unknown): value is { msBeforeNext: number } {
  return (
    typeof value === 'object' &&
    value !== null &&
    !(value instanceof Error) &&
    typeof (value as { msBeforeNext?: unknown }).msBeforeNext === 'number'
  );
}

export class SignInThrottle {
  /** Passkey sign-in challenges per client address (POST /console/sign-in/passkey/options). */
  readonly passkeyOptions = new AddressLimit({
    keyPrefix: 'console-passkey-options',
    points: PASSKEY_OPTIONS_PER_MINUTE,
    duration: 60,
    message: 'Too many passkey sign-ins were started from this address; wait a minute and try again.',
  });

  private constructor(
    /** Failures per client address, and per email. */
    private readonly failures: FailureCounters,
    /** Password checks under way: each holds 19 MiB and one of libuv's threads. */
    private readonly checks: ConcurrencyLimit,
  ) {}

  static async create(config: ThrottleConfig, store: Pick<Store, 'createLimiter'>): Promise<SignInThrottle> {
    return new SignInThrottle(
      await failureCounters(store, {
        window: config.consoleSigninWindow,
        perAddress: { keyPrefix: 'console-ip', points: config.consoleSigninFailuresPerIp },
        perIdentity: { keyPrefix: 'console-account', points: config.consoleSigninFailuresPerAccount },
      }),
      new ConcurrencyLimit({
        perAddress: config.consolePasswordChecksPerIp,
        node: config.consolePasswordChecksMax,
        addressFull: () => new TooManyRequests(BUSY, 1),
        nodeFull: () => new TooManyRequests(BUSY, 1),
      }),
    );
  }

  /**
   * Runs `check` (a password check) as one attempt for this email key and address: reserved
   * before it runs, refunded when it returns a value (the password was right), its place among
   * the checks running at once given back always. Throws TooManyRequests (429), without running
   * `check`, when the attempt cannot be reserved (see reserve).
   *
   * @example
   * const account = await ctx.console.throttle.attempt(emailKey, request.ip, async () =>
   *   (await passwordMatches(found.password_hash, password)) ? found : null,
   * );
   */
  async attempt<T>(emailKey: string, ip: string, check: () => Promise<T | null>): Promise<T | null> {
    const attempt = await this.reserve(emailKey, ip);
    try {
      const result = await check();
      if (result !== null) await attempt.succeeded();
      return result;
    } finally {
      attempt.done();
    }
  }

  /**
   * Reserves one attempt for this email (`emailKey`, the account's key when a signed-in person
   * confirms their password) and this address, before the password is checked. Throws TooManyRequests
   * (429) when a check cannot start now, or when the address or the email has no attempts left in
   * the window; nothing is held then.
   *
   * @example
   * const attempt = await this.reserve(emailKey, request.ip);
   * try {
   *   if (await passwordMatches(hash, password)) await attempt.succeeded();
   * } finally {
   *   attempt.done();
   * }
   */
  private async reserve(emailKey: string, ip: string): Promise<PasswordAttempt> {
    const leave = this.checks.take(ip);
    const taken: Array<[Limiter, string]> = [];
    try {
      for (const [limiter, key] of [
        [this.failures.perAddress, clientKey(ip)],
        [this.failures.perIdentity, emailKey],
      ] as const) {
        try {
          await limiter.consume(key, 1);
          taken.push([limiter, key]);
        } catch (refused) {
          if (!isRefusal(refused)) throw refused;
          throw new TooManyRequests(REFUSAL, refused.msBeforeNext / 1000);
        }
      }
    } catch (error) {
      // The attempt never started: what the other key paid is given back.
      await Promise.all(taken.map(([limiter, key]) => limiter.reward(key, 1))).catch(() => undefined);
      leave();
      throw error;
    }
    return {
      succeeded: async () => {
        await Promise.all(taken.map(([limiter, key]) => limiter.reward(key, 1)));
      },
      done: leave,
    };
  }
}
