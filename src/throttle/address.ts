/**
 * What every throttle shares: the key of a client address, a flood guard per address, and a
 * limit on what an address and the node hold at once.
 */
import { isIPv4, isIPv6 } from 'node:net';
import { RateLimiterMemory } from 'rate-limiter-flexible';
import { TooManyRequests } from '../errors.ts';
import type { Limiter, LimiterCount } from '../store/limits.ts';
import type { Store } from '../store/types.ts';

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
      const { msBeforeNext } = refused as LimiterCount;
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

/** Failures per client address and per identity, in one window. */
export interface FailureCounters {
  perAddress: Limiter;
  perIdentity: Limiter;
}

/**
 * The two counters of a sign-in throttle, kept in the store so that every node shares them:
 * failures in one window per client address (an IPv6 /64 as one) and per identity (an
 * agent_id, an email).
 *
 * @example
 * const { perAddress, perIdentity } = await failureCounters(store, {
 *   window: 900,
 *   perAddress: { keyPrefix: 'ip', points: 100 },
 *   perIdentity: { keyPrefix: 'agent', points: 20 },
 * });
 */
export async function failureCounters(
  store: Pick<Store, 'createLimiter'>,
  options: {
    window: number;
    perAddress: { keyPrefix: string; points: number };
    perIdentity: { keyPrefix: string; points: number };
  },
): Promise<FailureCounters> {
  const counter = ({ keyPrefix, points }: { keyPrefix: string; points: number }) =>
    store.createLimiter({ keyPrefix, points, duration: options.window });
  return { perAddress: await counter(options.perAddress), perIdentity: await counter(options.perIdentity) };
}
