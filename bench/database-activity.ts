/**
 * What one operation costs PostgreSQL besides CPU: the statements it runs (each a round trip:
 * the driver sends one statement per query, BEGIN and COMMIT included), the transactions it
 * commits (each a WAL flush) and the WAL it writes. Statements come from pg_stat_statements,
 * commits and WAL from the WAL itself (pg_walinspect), so neither lags the way the statistics
 * collector's counters do. An operator sizes a cluster from these (docs/performance.md).
 */
import pg from 'pg';

export interface ActivitySnapshot {
  lsn: string;
  statements: number;
}

export interface ActivityPerOp {
  statements: number;
  commits: number;
  walBytes: number;
}

/** Reads the counters of one database; `prepare` once before the first snapshot. */
export class DatabaseActivity {
  constructor(private readonly url: string) {}

  private async withClient<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
    const client = new pg.Client({ connectionString: this.url });
    await client.connect();
    try {
      return await work(client);
    } finally {
      await client.end();
    }
  }

  /** Creates the two extensions in the database (the cluster must preload pg_stat_statements). */
  prepare(): Promise<void> {
    return this.withClient(async (client) => {
      await client.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
      await client.query('CREATE EXTENSION IF NOT EXISTS pg_walinspect');
    });
  }

  snapshot(): Promise<ActivitySnapshot> {
    return this.withClient(async (client) => {
      const { rows } = await client.query<{ lsn: string; statements: string }>(
        `SELECT pg_current_wal_flush_lsn()::text AS lsn,
                (SELECT coalesce(sum(s.calls), 0) FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = current_database())::text AS statements`,
      );
      return { lsn: rows[0]!.lsn, statements: Number(rows[0]!.statements) };
    });
  }

  /** Per operation between two snapshots, for `operations` operations. */
  perOperation(before: ActivitySnapshot, after: ActivitySnapshot, operations: number): Promise<ActivityPerOp> {
    return this.withClient(async (client) => {
      // Flushed positions only: pg_walinspect reads no further than the WAL on disk.
      const query = (commits: string) =>
        client.query<{ commits: string; wal_bytes: string }>(
          `SELECT ${commits}::text AS commits, pg_wal_lsn_diff($2::pg_lsn, $1::pg_lsn)::text AS wal_bytes`,
          [before.lsn, after.lsn],
        );
      const { rows } = await query(
        `CASE WHEN $2::pg_lsn > $1::pg_lsn
           THEN (SELECT count(*) FROM pg_get_wal_records_info($1::pg_lsn, $2::pg_lsn) WHERE resource_manager = 'Transaction' AND record_type LIKE 'COMMIT%')
           ELSE 0 END`,
      ).catch((error: { code?: string; message?: string }) => {
        // pg_walinspect finds no record to start from when the first position fell where none
        // begins ("could not find a valid record after …", seen now and then): the commits are
        // then unknown, the WAL's length still is.
        if (error.code !== 'XX000') throw error;
        return query("'NaN'");
      });
      const per = (n: number) => n / Math.max(operations, 1);
      // The snapshot before this one ran one statement of its own.
      return {
        statements: per(after.statements - before.statements - 1),
        commits: per(Number(rows[0]!.commits)),
        walBytes: per(Number(rows[0]!.wal_bytes)),
      };
    });
  }
}
