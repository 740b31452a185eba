/**
 * What the two database drivers under the Store share (sqlite-driver.ts, postgres-driver.ts).
 * Both run the same SQL (written with `?` placeholders); writes are declarative units, so the SQLite driver can commit the units of
 * concurrent requests together: one fsync for the batch instead of one per request (group
 * commit), while every unit still commits or rolls back as a whole and every answer waits for
 * its commit.
 */
import type { Limiter, LimiterOptions } from './limits.ts';

/** A statement's parameters, in the order of its `?` placeholders. */
export type Params = readonly unknown[];

/** Who hears of committed status changes (a write step's notification, or a PostgreSQL NOTIFY). */
export interface ChangeListener {
  changed(payload: string): void;
  /** The channel was interrupted and is back: changes in between may have been missed. */
  resumed(): void;
}

/** One statement of a write unit. */
export interface Step {
  sql: string;
  params: Params;
  /** The unit is void unless this step changes at least one row: it rolls back and reports null. */
  guard?: boolean;
  /**
   * When this step changes a row, the listeners of every node (listen) hear this payload once
   * the unit has committed: an authorization request's id, or '*' for "any request may have
   * changed". PostgreSQL: NOTIFY in the same statement; SQLite: in-process, after the commit.
   */
  notify?: string;
  /** Whose listeners hear Step.notify: the status channel unless told (webhooks have their own). */
  channel?: Channel;
}

/** The PostgreSQL channel of Step.notify. */
export const STATUS_CHANNEL = 'agentauth_status';
/** The channel that wakes the webhook dispatchers: a committed unit wrote deliveries. */
export const WEBHOOK_CHANNEL = 'agentauth_webhooks';
/** The channels Step.notify may name. */
export type Channel = typeof STATUS_CHANNEL | typeof WEBHOOK_CHANNEL;

/** One schema migration: its version (its name in schema_migrations) and its statements. */
export interface Migration {
  version: string;
  statements: string[];
  /**
   * Run after `statements` on PostgreSQL only: what SQLite has no syntax for and no need of
   * (it does not enforce varchar lengths, so widening a column is PostgreSQL's business alone).
   */
  postgresOnly?: string[];
}

/** What the steps of a write unit promise about each other. */
export interface UnitOptions {
  /**
   * No step reads or changes a row that another step changes, so each may see the database as
   * it was before the unit. PostgreSQL then runs the unit as one statement (data-modifying WITH
   * clauses): one round trip, where BEGIN, one per step and COMMIT would be several.
   */
  independent?: boolean;
}

/** One database under the Store: reads, write units, migrations, limiters, notifications. */
export interface Driver {
  readonly engine: 'sqlite' | 'postgres';
  one<T>(sql: string, params?: Params): Promise<T | undefined>;
  all<T>(sql: string, params?: Params): Promise<T[]>;
  /**
   * The first row as its values in select order, for the wide joined reads: naming each column
   * of a row costs about as much as reading it (a 42-column row: 26 µs as an object, 13 µs as
   * values, measured with better-sqlite3).
   */
  values(sql: string, params?: Params): Promise<readonly unknown[] | undefined>;
  /**
   * Runs the steps in one transaction and resolves after the commit with the number of rows
   * each step changed, or with null when a guarded step changed none (nothing is kept).
   */
  write(steps: Step[], options?: UnitOptions): Promise<number[] | null>;
  migrate(migrations: Migration[]): Promise<void>;
  createLimiter(options: LimiterOptions): Promise<Limiter>;
  /**
   * The table the limiters of createLimiter keep their counters in, when they keep them in the
   * database (PostgreSQL): a read may then take a counter along (one round trip instead of two).
   */
  readonly countersTable?: string;
  /** Delivers the payloads of Step.notify on `channel` (status by default) to `listener` until the returned function is called. */
  listen(listener: ChangeListener, channel?: Channel): Promise<() => Promise<void>>;
  close(): Promise<void>;
}
