/**
 * The floor's database work (issue 25): the durable commits and reads of one operation, issued as
 * bare statements by a minimal better-sqlite3 / pg script, with no HTTP, no JWT and no validation.
 * bench/floor.ts starts it, tells it the shape of each figure's operation and measures its
 * process (and, on PostgreSQL, the cluster's) as it measures a server.
 *
 * - A commit is one INSERT of a new row (a random UUID as its text primary key, and a payload
 *   of PAYLOAD_CHARS random characters, sized so that a commit writes about as much WAL as one of
 *   agentauth's) in autocommit: one statement, one durable commit.
 * - A read is one primary-key SELECT of a row among ROWS written before any measurement.
 * - SQLite: WAL, synchronous=FULL (SQLite syncs the WAL inside each COMMIT), agentauth's
 *   wal_autocheckpoint; one operation at a time (better-sqlite3 is synchronous), the event loop
 *   turning between two so that commands are heard.
 * - PostgreSQL: a pg.Pool of agentauth's default size (10), named prepared statements (as
 *   agentauth's driver does), CONCURRENCY operations in flight, each one's statements one after
 *   the other.
 *
 * Every statement is checked (a read must find its row, a commit must insert one); a failure is
 * counted as an error, never as an operation.
 *
 * Commands on stdin, one line each, each answered by one line on stdout:
 *   run <reads> <commits>   starts running operations of that shape     → "running"
 *   count                   operations completed so far                 → "<completed> <errors>"
 *   stop                    ends the loop once the operations in flight end → "stopped <errors> <first error>"
 *   sync                    SQLite: the CPU of one commit's fsync       → "<ms>"
 * and "ready" once the table is filled. The parent brackets its measured window between two
 * `count`s, so the commands' own cost (a line each) is a few microseconds per window.
 *
 * Environment: STORE (sqlite:<path> or a postgres:// URL), CONCURRENCY (PostgreSQL; 16), POOL_SIZE (10).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import { setImmediate as nextTurn } from 'node:timers/promises';
import Database from 'better-sqlite3';
import pg from 'pg';

/** Rows written before any measurement, among which reads pick. */
const ROWS = 10_000;
/**
 * Characters of a row's payload. agentauth/postgres writes about 960 WAL bytes per commit in a
 * flow (3,851 over 4) and 1,050 in a refresh; a row of this size with its primary-key entry and
 * the commit record writes about 1,000 (bench/floor.ts prints what the floor wrote).
 */
const PAYLOAD_CHARS = 720;

const store = process.env.STORE;
if (!store) throw new Error('STORE is required');
const concurrency = store.startsWith('sqlite:') ? 1 : Number(process.env.CONCURRENCY ?? 16);
const payload = randomBytes(PAYLOAD_CHARS).toString('base64url').slice(0, PAYLOAD_CHARS);
const existing = Array.from({ length: ROWS }, () => randomUUID());
const anyExisting = () => existing[Math.floor(Math.random() * ROWS)]!;

interface Engine {
  /** One primary-key read of an existing row; throws if it is not found. */
  read(): unknown;
  /** One durable commit of a new row; throws if no row was inserted. */
  commit(): unknown;
  /** Whether read and commit are synchronous (the loop then yields to the event loop between operations). */
  synchronous: boolean;
  /** SQLite: the CPU ms of a commit's fsync (a FULL commit's CPU less a NORMAL one's), measured when asked. */
  syncCpuMs?(): number;
}

/** CPU ms per call of `work`, over `count` calls. */
function cpuPerCall(count: number, work: () => unknown): number {
  const started = process.cpuUsage();
  for (let i = 0; i < count; i++) work();
  const used = process.cpuUsage(started);
  return (used.user + used.system) / 1000 / count;
}

function sqlite(path: string): Engine {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('wal_autocheckpoint = 4000'); // as agentauth's driver (src/store/sqlite-driver.ts)
  db.exec('CREATE TABLE floor_rows (id text PRIMARY KEY, payload text NOT NULL)');
  const insert = db.prepare('INSERT INTO floor_rows (id, payload) VALUES (?, ?)');
  const select = db.prepare('SELECT id, payload FROM floor_rows WHERE id = ?');
  db.transaction(() => {
    for (const id of existing) insert.run(id, payload);
  })();
  const commit = () => {
    if (insert.run(randomUUID(), payload).changes !== 1) throw new Error('commit: no row inserted');
  };
  return {
    synchronous: true,
    // What the fsync of each commit costs the process: agentauth's driver shares one among the
    // commits of concurrent requests (group commit), which bare statements do not
    // (docs/performance.md). Rounds of each mode alternated, the medians compared.
    syncCpuMs() {
      const rounds: Record<'NORMAL' | 'FULL', number[]> = { NORMAL: [], FULL: [] };
      for (let round = 0; round < 5; round++)
        for (const mode of ['NORMAL', 'FULL'] as const) {
          db.pragma(`synchronous = ${mode}`);
          rounds[mode].push(cpuPerCall(100, commit));
        }
      db.pragma('synchronous = FULL');
      const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
      return Math.max(0, median(rounds.FULL) - median(rounds.NORMAL));
    },
    read() {
      if (select.get(anyExisting()) === undefined) throw new Error('read: row not found');
    },
    commit,
  };
}

async function postgres(url: string): Promise<Engine> {
  const pool = new pg.Pool({ connectionString: url, max: Number(process.env.POOL_SIZE ?? 10) });
  await pool.query('CREATE TABLE floor_rows (id text PRIMARY KEY, payload text NOT NULL)');
  await pool.query('INSERT INTO floor_rows (id, payload) SELECT unnest($1::text[]), $2', [existing, payload]);
  await pool.query('VACUUM ANALYZE floor_rows');
  return {
    synchronous: false,
    async read() {
      const result = await pool.query({
        name: 'floor_read',
        text: 'SELECT id, payload FROM floor_rows WHERE id = $1',
        values: [anyExisting()],
      });
      if (result.rowCount !== 1) throw new Error('read: row not found');
    },
    async commit() {
      const result = await pool.query({
        name: 'floor_commit',
        text: 'INSERT INTO floor_rows (id, payload) VALUES ($1, $2)',
        values: [randomUUID(), payload],
      });
      if (result.rowCount !== 1) throw new Error('commit: no row inserted');
    },
  };
}

const engine = store.startsWith('sqlite:') ? sqlite(store.slice('sqlite:'.length)) : await postgres(store);

let running: Promise<void>[] = [];
let stopping = false;
let completed = 0;
let errors = 0;
let firstError = '';

/** One virtual user: operations of the shape, one after the other, until stopped. */
async function user(reads: number, commits: number): Promise<void> {
  while (!stopping) {
    try {
      for (let i = 0; i < reads; i++) await engine.read();
      for (let i = 0; i < commits; i++) await engine.commit();
      completed += 1;
    } catch (error) {
      errors += 1;
      firstError ||= (error as Error).message;
    }
    if (engine.synchronous) await nextTurn();
  }
}

const answer = (line: string) => process.stdout.write(`${line}\n`);
answer('ready');

for await (const line of createInterface({ input: process.stdin })) {
  const [command, ...args] = line.trim().split(' ');
  if (command === 'run') {
    const [reads, commits] = args.map(Number) as [number, number];
    stopping = false;
    completed = 0;
    errors = 0;
    firstError = '';
    running = Array.from({ length: concurrency }, () => user(reads, commits));
    answer('running');
  } else if (command === 'count') {
    answer(`${completed} ${errors}`);
  } else if (command === 'sync') {
    answer(String(engine.syncCpuMs?.() ?? ''));
  } else if (command === 'stop') {
    stopping = true;
    await Promise.all(running);
    answer(`stopped ${errors} ${firstError}`);
  }
}
process.exit(0);
