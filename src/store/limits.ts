/**
 * The limiters (rate-limiter-flexible's), as the throttles use them: what a limiter says of a key,
 * and how a read takes a key's counter along when the counters live in the database
 * (Driver.countersTable, PostgreSQL), so the throttle's check costs no round trip of its own.
 */
import type { Table } from './joined.ts';

/** What a limiter says of a key (rate-limiter-flexible's): points used in the window and the ms until it ends. */
export interface LimiterCount {
  consumedPoints: number;
  msBeforeNext: number;
}

/** A failure counter of rate-limiter-flexible, as the throttle uses it. */
export interface Limiter {
  readonly points: number;
  /** The key as stored: `<keyPrefix>:<key>` (rate-limiter-flexible's). */
  getKey(key: string): string;
  get(key: string): Promise<LimiterCount | null>;
  /** Adds points to the key's count; resolves with the count after it. */
  penalty(key: string, points: number): Promise<LimiterCount>;
  /**
   * Adds points to the key's count in one step and resolves, or rejects with
   * `{ consumedPoints, msBeforeNext }` (not an Error) when the count is then over `points`.
   */
  consume(key: string, points: number): Promise<LimiterCount>;
  /** Takes points off the key's count: an attempt paid for in advance that turned out not to count. */
  reward(key: string, points: number): Promise<unknown>;
}

/** What a limiter is made with: its keys' prefix, the points a window allows, the window. */
export interface LimiterOptions {
  keyPrefix: string;
  points: number;
  /** Window in seconds. */
  duration: number;
}

/** A throttle's counter in the database (Driver.countersTable): points used in the window, and when it ends (ms). */
export const FAILURES: Table = { alias: 'f', columns: ['points', 'expire'] };

/**
 * The join that takes a key's live counter along (rate-limiter-flexible's reading: expire later
 * than now in milliseconds, or none); its parameters are the key and now, in that order.
 */
export const failuresJoin = (countersTable: string) =>
  `LEFT JOIN ${countersTable} f ON f.key = ? AND (f.expire > ? OR f.expire IS NULL)`;

/** The limiter's own answer for a counter read along (FAILURES) at `now` (ms); null: none in the window. */
export function limiterCount(counter: { points: number; expire: number | null } | undefined, now: number) {
  return counter
    ? { consumedPoints: counter.points, msBeforeNext: counter.expire === null ? -1 : Math.max(counter.expire - now, 0) }
    : null;
}
