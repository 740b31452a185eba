/**
 * Throttling of failed agent authentications, per agent_id and per client IP (DESIGN.md §5).
 * Only failures count; once either key has used its allowance within the window, attempts are
 * refused with 429 and Retry-After until the window has passed. The counters come from the
 * store, so every node sees the same ones.
 */
import type { Config } from '../config.ts';
import { SlowDown } from '../protocol/errors.ts';
import type { Limiter, Store } from '../store/types.ts';

type ThrottleConfig = Pick<Config, 'authFailuresPerAgent' | 'authFailuresPerIp' | 'authFailureWindow'>;

export class AuthThrottle {
  private constructor(
    private readonly perAgent: Limiter,
    private readonly perIp: Limiter,
  ) {}

  static async create(config: ThrottleConfig, store: Pick<Store, 'createLimiter'>): Promise<AuthThrottle> {
    return new AuthThrottle(
      await store.createLimiter({ keyPrefix: 'agent', points: config.authFailuresPerAgent, duration: config.authFailureWindow }),
      await store.createLimiter({ keyPrefix: 'ip', points: config.authFailuresPerIp, duration: config.authFailureWindow }),
    );
  }

  /** Throws SlowDown when the agent_id or the IP has no failures left in the window. */
  async check(agentId: string, ip: string): Promise<void> {
    const [agent, address] = await Promise.all([this.perAgent.get(agentId), this.perIp.get(ip)]);
    const waits = [
      agent && agent.consumedPoints >= this.perAgent.points ? agent.msBeforeNext : 0,
      address && address.consumedPoints >= this.perIp.points ? address.msBeforeNext : 0,
    ];
    const wait = Math.max(...waits);
    if (wait > 0) throw new SlowDown('too many failed authentication attempts; retry later', wait / 1000);
  }

  /**
   * Every failure counts against the IP; only wrong credentials count against the agent_id, so
   * an agent's own mistakes (an expired or used request) never lock it out.
   */
  async recordFailure(agentId: string, ip: string, credentialsWrong: boolean): Promise<void> {
    await Promise.all([credentialsWrong ? this.perAgent.penalty(agentId, 1) : undefined, this.perIp.penalty(ip, 1)]);
  }
}
