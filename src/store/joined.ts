/**
 * Joined reads: one statement reads one row whatever exists, as values in select order
 * (Driver.values), taken apart by table. These reads serve every step of a flow and every
 * introspection, userinfo and refresh, so their SQL and where each table's columns sit are worked
 * out once, when the module loads, not per call. A leaf: the entity modules declare their tables
 * (agents.ts, clients.ts, requests.ts, tokens.ts) and build their reads with it.
 */

/** One table's columns in a joined read, under its alias; the first is its key, null when the row is absent. */
export interface Table {
  alias: string;
  columns: readonly string[];
}

/**
 * Every column of a record, checked by the compiler: a column added to the record type and not
 * listed here is a type error, so a joined read never silently drops one.
 *
 * @example
 * const GRANT_COLUMNS = columnsOf<GrantRecord>()(['id', 'client_id', ...]); // every key, or a type error
 */
export function columnsOf<T>() {
  return <const C extends readonly (keyof T & string)[]>(
    columns: C & ([Exclude<keyof T, C[number]>] extends [never] ? unknown : never),
  ) => [...columns];
}

/** A joined read's SQL, and each of its tables' records taken from a row of values. */
export class JoinedRead {
  readonly sql: string;
  private readonly offsets = new Map<Table, number>();

  constructor(tables: Table[], from: string) {
    const items: string[] = [];
    for (const table of tables) {
      this.offsets.set(table, items.length);
      items.push(...table.columns.map((column) => `${table.alias}.${column}`));
    }
    this.sql = `SELECT ${items.join(', ')} ${from}`;
  }

  /** The table's record in the row, or undefined when the row has none. */
  take<T>(row: readonly unknown[], table: Table): T | undefined {
    const at = this.offsets.get(table)!;
    if (row[at] == null) return undefined;
    const record: Record<string, unknown> = {};
    for (let i = 0; i < table.columns.length; i++) record[table.columns[i]!] = row[at + i];
    return record as T;
  }
}
