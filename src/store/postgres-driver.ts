/** The PostgreSQL driver: a pg pool, one transaction (or one statement) per unit, named prepared statements. */
import type pg from 'pg';
import { RateLimiterPostgres } from 'rate-limiter-flexible';
import {
  type ChangeListener,
  type Channel,
  type Driver,
  type Migration,
  type Params,
  STATUS_CHANNEL,
  type Step,
  type UnitOptions,
} from './driver.ts';
import type { Limiter, LimiterOptions } from './limits.ts';

const INT8_OID = 20;

/** A step's notification, as a RETURNING item: sent for each row the step changes (Step.notify). */
const NOTIFY = 'pg_notify(?, ?)';
/** A step's parameters, with its notification's channel and payload last when it has one (NOTIFY's placeholders). */
const withPayload = (step: Step): Params =>
  step.notify === undefined ? step.params : [...step.params, step.channel ?? STATUS_CHANNEL, step.notify];

/** The SQLSTATE of agentauth_void_unit(): a guarded step of a one-statement unit changed no row. */
const VOID_UNIT = 'AA001';

/** Where the shared throttles' counters live (migration 0014, rate-limiter-flexible's schema). */
const COUNTERS_TABLE = 'auth_failure_counters';

export class PostgresDriver implements Driver {
  readonly engine = 'postgres';
  readonly countersTable = COUNTERS_TABLE;
  private readonly names = new Map<string, { name: string; text: string }>();

  constructor(
    private readonly pool: pg.Pool,
    private readonly connect: () => pg.Client,
  ) {}

  static async open(
    databaseUrl: string,
    options: { poolSize?: number; onBackgroundError?: (error: Error) => void },
  ): Promise<PostgresDriver> {
    // Loaded only when PostgreSQL is configured: a SQLite node never pays for it.
    const { default: pg } = await import('pg');
    const pool = new pg.Pool({
      connectionString: databaseUrl,
      max: options.poolSize ?? 10,
      connectionTimeoutMillis: 5000,
      idleTimeoutMillis: 30_000,
      statement_timeout: 10_000,
      // Times are epoch seconds in bigint columns; they fit a JavaScript number exactly.
      types: {
        getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
          oid === INT8_OID ? Number : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
      },
    });
    // A connection that breaks (database restart, failover, network) emits 'error': on the
    // pool while idle, on the client while checked out. Unhandled, either would end the
    // process; handled, the query in flight fails (503) and the pool replaces the connection.
    pool.on('error', (error) => options.onBackgroundError?.(error));
    pool.on('connect', (client) => client.on('error', (error) => options.onBackgroundError?.(error)));
    return new PostgresDriver(
      pool,
      () => new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 5000 }),
    );
  }

  /** The statement with `$n` placeholders and a stable name, so each connection prepares it once. */
  private prepared(sql: string): { name: string; text: string } {
    let statement = this.names.get(sql);
    if (!statement) {
      let n = 0;
      statement = { name: `s${this.names.size}`, text: sql.replace(/\?/g, () => `$${++n}`) };
      this.names.set(sql, statement);
    }
    return statement;
  }

  /** A prepared statement's result; with `rowMode` 'array', rows are arrays of values (Driver.values). */
  private query(client: pg.Pool | pg.PoolClient, sql: string, params: Params, rowMode?: 'array') {
    const config = { ...this.prepared(sql), values: params as unknown[] };
    return rowMode ? client.query({ ...config, rowMode }) : client.query(config);
  }

  async one<T>(sql: string, params: Params = []): Promise<T | undefined> {
    return (await this.query(this.pool, sql, params)).rows[0] as T | undefined;
  }

  async all<T>(sql: string, params: Params = []): Promise<T[]> {
    return (await this.query(this.pool, sql, params)).rows as T[];
  }

  async values(sql: string, params: Params = []): Promise<readonly unknown[] | undefined> {
    return (await this.query(this.pool, sql, params, 'array')).rows[0] as readonly unknown[] | undefined;
  }

  /**
   * A step's statement, with its notification in the same statement: NOTIFY is sent for each
   * row it changes (PostgreSQL folds repeats within a transaction) and delivered at commit.
   */
  private run(client: pg.Pool | pg.PoolClient, step: Step) {
    return step.notify === undefined
      ? this.query(client, step.sql, step.params)
      : this.query(client, `${step.sql} RETURNING ${NOTIFY}`, withPayload(step));
  }

  async write(steps: Step[], options: UnitOptions = {}): Promise<number[] | null> {
    if (steps.length === 1) {
      const changed = (await this.run(this.pool, steps[0]!)).rowCount ?? 0;
      return steps[0]!.guard && changed === 0 ? null : [changed];
    }
    if (options.independent) return this.writeAsOneStatement(steps);
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      const changes: number[] = [];
      for (const step of steps) {
        const changed = (await this.run(client, step)).rowCount ?? 0;
        if (step.guard && changed === 0) {
          await client.query('ROLLBACK');
          return null;
        }
        changes.push(changed);
      }
      await client.query('COMMIT');
      return changes;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }

  /**
   * An independent unit as one statement, atomic by itself: each step a data-modifying WITH
   * clause (all run to completion, on one snapshot), and the rows each changed counted by the
   * outer SELECT. A guarded step that changed no row makes the statement fail with VOID_UNIT
   * (agentauth_void_unit(), migration 0007), which undoes the other steps and their NOTIFY.
   */
  private async writeAsOneStatement(steps: Step[]): Promise<number[] | null> {
    const clauses: string[] = [];
    const params: unknown[] = [];
    steps.forEach((step, i) => {
      clauses.push(`s${i} AS (${step.sql} RETURNING ${step.notify === undefined ? '1' : NOTIFY})`);
      params.push(...withPayload(step));
    });
    const counts = steps.map((_, i) => `(SELECT count(*) FROM s${i}) AS c${i}`);
    const guards = steps.flatMap((step, i) => (step.guard ? [`NOT EXISTS (SELECT 1 FROM s${i})`] : []));
    if (guards.length > 0) counts.push(`CASE WHEN ${guards.join(' OR ')} THEN agentauth_void_unit() END AS void`);
    try {
      const row = (await this.query(this.pool, `WITH ${clauses.join(', ')} SELECT ${counts.join(', ')}`, params))
        .rows[0] as Record<string, number>;
      return steps.map((_, i) => row[`c${i}`]!);
    } catch (error) {
      if ((error as { code?: unknown }).code === VOID_UNIT) return null;
      throw error;
    }
  }

  async migrate(migrations: Migration[]): Promise<void> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      // Nodes starting together migrate one after the other.
      await client.query("SELECT pg_advisory_xact_lock(hashtext('agentauth.migrate'))");
      // Made only when missing: CREATE TABLE IF NOT EXISTS needs the CREATE privilege even when
      // the table is there, and a server role with only read and write grants starts here too.
      const history = await client.query("SELECT to_regclass('schema_migrations') IS NOT NULL AS present");
      if (!history.rows[0]?.present)
        await client.query(
          'CREATE TABLE schema_migrations (version varchar(100) PRIMARY KEY, applied_at bigint NOT NULL)',
        );
      const kysely = await client.query("SELECT to_regclass('kysely_migration') IS NOT NULL AS present");
      if (kysely.rows[0]?.present) {
        await client.query(
          'INSERT INTO schema_migrations (version, applied_at) SELECT name, $1 FROM kysely_migration ON CONFLICT DO NOTHING',
          [Date.now()],
        );
      }
      const applied = new Set(
        (await client.query('SELECT version FROM schema_migrations')).rows.map(
          (row: { version: string }) => row.version,
        ),
      );
      for (const migration of migrations) {
        if (applied.has(migration.version)) continue;
        for (const statement of [...migration.statements, ...(migration.postgresOnly ?? [])])
          await client.query(statement);
        await client.query('INSERT INTO schema_migrations (version, applied_at) VALUES ($1, $2)', [
          migration.version,
          Date.now(),
        ]);
      }
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }

  async createLimiter(options: LimiterOptions): Promise<Limiter> {
    // Ready once made: its table is migration 0014's, made under the migration lock.
    return new RateLimiterPostgres({
      ...options,
      storeClient: this.pool,
      storeType: 'pool',
      tableName: COUNTERS_TABLE,
      tableCreated: true,
      clearExpiredByTimeout: true,
    });
  }

  /**
   * One dedicated connection per node LISTENs (not from the pool: a pooled connection would be
   * handed to queries, and its LISTEN lost). When it breaks it is opened again, with a growing
   * pause, and the listener is told to re-read what it watches.
   */
  async listen(listener: ChangeListener, channel: Channel = STATUS_CHANNEL): Promise<() => Promise<void>> {
    let stopped = false;
    let client: pg.Client | undefined;
    const attach = async (): Promise<void> => {
      const candidate = this.connect();
      candidate.on('error', () => undefined); // a broken connection also ends: 'end' below reopens it
      candidate.on('notification', (message) => {
        if (message.channel === channel && message.payload !== undefined) listener.changed(message.payload);
      });
      try {
        await candidate.connect();
        await candidate.query(`LISTEN ${channel}`);
      } catch (error) {
        await candidate.end().catch(() => undefined);
        throw error;
      }
      client = candidate;
      candidate.once('end', () => {
        client = undefined;
        if (!stopped) void reattach();
      });
    };
    const reattach = async (): Promise<void> => {
      for (let pause = 100; !stopped; pause = Math.min(pause * 2, 5000)) {
        await new Promise((resolve) => setTimeout(resolve, pause).unref());
        if (stopped) return;
        try {
          await attach();
          listener.resumed();
          return;
        } catch {
          // the database is still away: try again later
        }
      }
    };
    // The first attempt's failure is the caller's (it answers 503); later ones retry by themselves.
    await attach();
    return async () => {
      stopped = true;
      await client?.end().catch(() => undefined);
    };
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
