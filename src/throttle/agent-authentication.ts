/**
 * Throttling of agent authentication (docs/design.md §5, §10): failed authentications per client
 * IP and per agent_id.
 *
 * The agent_id is public (it is the `sub` of every token), so a limit that refused an agent
 * after other people's wrong guesses would let anyone lock it out. Hence:
 * - the client IP (an IPv6 /64 counts as one) is the key that stops a guesser: once it has used
 *   its failures, everything from it is refused before credentials are even checked;
 * - the agent_id's counter only changes how a wrong secret is answered (429 instead of 401) once
 *   many have been tried; correct credentials are never refused because of it.
 * Every throttled key writes one audit event per window, not one per attempt.
 */
import type { Config } from '../config.ts';
import { TooManyRequests } from '../errors.ts';
import type { Limiter, LimiterCount } from '../store/limits.ts';
import type { Store } from '../store/types.ts';
import { clientKey, type FailureCounters, failureCounters } from './address.ts';

type ThrottleConfig = Pick<Config, 'authFailuresPerAgent' | 'authFailuresPerIp' | 'authFailureWindow'>;

/** A refusal of the throttle, with whether it is the first of its key's window (the one audited). */
export class Throttled extends TooManyRequests {
  constructor(
    retryAfterSeconds: number,
    readonly firstInWindow: boolean,
  ) {
    super('too many failed authentication attempts; retry later', retryAfterSeconds);
  }
}

export class AuthThrottle {
  /** Failures per client address, and per agent_id. */
  private constructor(private readonly failures: FailureCounters) {}

  static async create(config: ThrottleConfig, store: Pick<Store, 'createLimiter'>): Promise<AuthThrottle> {
    const perAddress = { keyPrefix: 'ip', points: config.authFailuresPerIp };
    const perIdentity = { keyPrefix: 'agent', points: config.authFailuresPerAgent };
    return new AuthThrottle(
      await failureCounters(store, { window: config.authFailureWindow, perAddress, perIdentity }),
    );
  }

  /**
   * This client address's key as its counter is stored, for a store read that takes the
   * counter along (Store.requests.findWithAgent): the check then costs no round trip of its own.
   */
  storedKeyOf(ip: string): string {
    return this.failures.perAddress.getKey(clientKey(ip));
  }

  /**
   * Throws Throttled when this client address has no failures left in the window. `stored` is
   * its counter when it was already read with something else (null: none in the window); when
   * undefined, the counter is read here.
   *
   * @example
   * const read = await store.requests.findWithAgent(agentId, requestId, throttle.storedKeyOf(ip));
   * await throttle.checkClient(ip, read.failures);
   */
  async checkClient(ip: string, stored?: LimiterCount | null): Promise<void> {
    const key = clientKey(ip);
    const used = stored === undefined ? await this.failures.perAddress.get(key) : stored;
    if (used && used.consumedPoints >= this.failures.perAddress.points)
      throw await this.refusal(this.failures.perAddress, key);
  }

  /** Any failure after the body was accepted counts against the client address. */
  async recordFailure(ip: string): Promise<void> {
    await this.failures.perAddress.penalty(clientKey(ip), 1);
  }

  /**
   * A wrong secret counts against the client address and the agent_id. Returns the Throttled
   * refusal to answer instead of 401 once the agent_id has used its failures in the window.
   */
  async recordWrongCredentials(agentId: string, ip: string): Promise<Throttled | null> {
    const [agent] = await Promise.all([this.failures.perIdentity.penalty(agentId, 1), this.recordFailure(ip)]);
    return exhausted(agent, this.failures.perIdentity.points)
      ? throttled(agent, this.failures.perIdentity.points)
      : null;
  }

  /** Counts the refused attempt too, so that the first refusal of the window can be told apart. */
  private async refusal(limiter: Limiter, key: string): Promise<Throttled> {
    return throttled(await limiter.penalty(key, 1), limiter.points);
  }
}

const exhausted = (used: LimiterCount, points: number) => used.consumedPoints > points;
const throttled = (used: LimiterCount, points: number) =>
  new Throttled(used.msBeforeNext / 1000, used.consumedPoints === points + 1);
