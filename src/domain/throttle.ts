/**
 * Throttling (docs/design.md §5, §10): failed agent authentications per client IP and per
 * agent_id, and GET /authorize per client IP.
 *
 * The agent_id is public (it is the `sub` of every token), so a limit that refused an agent
 * after other people's wrong guesses would let anyone lock it out. Hence:
 * - the client IP (an IPv6 /64 counts as one) is the key that stops a guesser: once it has used
 *   its failures, everything from it is refused before credentials are even checked;
 * - the agent_id's counter only changes how a wrong secret is answered (429 instead of 401) once
 *   many have been tried; correct credentials are never refused because of it.
 * Every throttled key writes one audit event per window, not one per attempt.
 */
import { isIPv4, isIPv6 } from 'node:net';
import { RateLimiterMemory } from 'rate-limiter-flexible';
import type { Config } from '../config.ts';
import { TooManyRequests } from '../protocol/errors.ts';
import type { Limiter, Store } from '../store/types.ts';

type ThrottleConfig = Pick<Config, 'authFailuresPerAgent' | 'authFailuresPerIp' | 'authFailureWindow'>;

/**
 * The throttling key of a client address: an IPv4 address as it is (also when written as an
 * IPv4-mapped IPv6 address), an IPv6 address by its /64, which one subscriber usually holds
 * whole (RFC 6177), so rotating through it gains nothing.
 *
 * @example
 * clientKey('2001:db8:1:2:aaaa::1') // '2001:db8:1:2::/64'
 * clientKey('::ffff:192.0.2.7')     // '192.0.2.7'
 */
export function clientKey(ip: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return mapped[1]!;
  if (isIPv4(ip) || !isIPv6(ip)) return ip;
  const [head = '', tail = ''] = ip.toLowerCase().split('::');
  const left = head ? head.split(':') : [];
  const right = ip.includes('::') ? (tail ? tail.split(':') : []) : [];
  const groups = ip.includes('::')
    ? [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right]
    : left;
  return `${groups
    .slice(0, 4)
    .map((group) => group.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

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
  private constructor(
    private readonly perAgent: Limiter,
    private readonly perIp: Limiter,
  ) {}

  static async create(config: ThrottleConfig, store: Pick<Store, 'createLimiter'>): Promise<AuthThrottle> {
    return new AuthThrottle(
      await store.createLimiter({
        keyPrefix: 'agent',
        points: config.authFailuresPerAgent,
        duration: config.authFailureWindow,
      }),
      await store.createLimiter({
        keyPrefix: 'ip',
        points: config.authFailuresPerIp,
        duration: config.authFailureWindow,
      }),
    );
  }

  /** Throws Throttled when this client address has no failures left in the window. */
  async checkClient(ip: string): Promise<void> {
    const key = clientKey(ip);
    const used = await this.perIp.get(key);
    if (used && used.consumedPoints >= this.perIp.points) throw await this.refusal(this.perIp, key);
  }

  /** Any failure after the body was accepted counts against the client address. */
  async recordFailure(ip: string): Promise<void> {
    await this.perIp.penalty(clientKey(ip), 1);
  }

  /**
   * A wrong secret counts against the client address and the agent_id. Returns the Throttled
   * refusal to answer instead of 401 once the agent_id has used its failures in the window.
   */
  async recordWrongCredentials(agentId: string, ip: string): Promise<Throttled | null> {
    const [agent] = await Promise.all([this.perAgent.penalty(agentId, 1), this.recordFailure(ip)]);
    return exhausted(agent, this.perAgent.points) ? throttled(agent, this.perAgent.points) : null;
  }

  /** Counts the refused attempt too, so that the first refusal of the window can be told apart. */
  private async refusal(limiter: Limiter, key: string): Promise<Throttled> {
    return throttled(await limiter.penalty(key, 1), limiter.points);
  }
}

interface Used {
  consumedPoints: number;
  msBeforeNext: number;
}

const exhausted = (used: Used, points: number) => used.consumedPoints > points;
const throttled = (used: Used, points: number) =>
  new Throttled(used.msBeforeNext / 1000, used.consumedPoints === points + 1);

/**
 * A flood guard per client address and node, for GET /authorize and POST /register: generous,
 * because one address (a NAT, a company proxy) can hide many people. Counted in process memory:
 * an extra database write on every sign-in would cost more than the limit is worth.
 */
export class AddressLimit {
  private readonly limiter: RateLimiterMemory | null;

  /** `points` requests per `duration` seconds; 0 points turns the limit off. */
  constructor(private readonly options: { keyPrefix: string; points: number; duration: number; message: string }) {
    this.limiter =
      options.points > 0
        ? new RateLimiterMemory({ keyPrefix: options.keyPrefix, points: options.points, duration: options.duration })
        : null;
  }

  /** Throws TooManyRequests when this client address has made too many requests in the window. */
  async take(ip: string): Promise<void> {
    if (!this.limiter) return;
    try {
      await this.limiter.consume(clientKey(ip), 1);
    } catch (refused) {
      const { msBeforeNext } = refused as Used;
      throw new TooManyRequests(this.options.message, msBeforeNext / 1000);
    }
  }
}

/**
 * What one client address and this node may hold at once (open status streams, password checks
 * under way): counted in process memory, synchronously, so that concurrent requests cannot all
 * see room the way a count read before an await and written after it lets them. 0 turns a
 * limit off. The refusals are the caller's: a client past its share and a full node may need
 * different answers (429, 503).
 */
export class ConcurrencyLimit {
  private readonly perAddress = new Map<string, number>();
  private total = 0;

  constructor(
    private readonly options: { perAddress: number; node: number; addressFull: () => Error; nodeFull: () => Error },
  ) {}

  /**
   * Takes a place for `ip` (an IPv6 /64 as one), or throws the refusal of the limit that is
   * reached, the address's first. The returned function gives the place back; calling it again
   * gives back nothing more.
   *
   * @example
   * const release = streams.take(request.ip);
   * try { await work(); } finally { release(); }
   */
  take(ip: string): () => void {
    const key = clientKey(ip);
    const ofAddress = this.perAddress.get(key) ?? 0;
    if (this.options.perAddress > 0 && ofAddress >= this.options.perAddress) throw this.options.addressFull();
    if (this.options.node > 0 && this.total >= this.options.node) throw this.options.nodeFull();
    this.perAddress.set(key, ofAddress + 1);
    this.total += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.total -= 1;
      const left = (this.perAddress.get(key) ?? 1) - 1;
      if (left > 0) this.perAddress.set(key, left);
      else this.perAddress.delete(key);
    };
  }

  /** How many places are held on this node. */
  get held(): number {
    return this.total;
  }
}
