/**
 * A SQLite file whose write lock another process holds (an operator's `sqlite3` shell in a
 * transaction, a backup tool, a second server started by mistake). A blocked database never
 * blocks the event loop: /healthz answers while a write waits for the lock; the write commits
 * once the lock is free, or answers 503 temporarily_unavailable after waiting 5 s.
 *
 * SQLite only by nature: vitest.config.ts keeps test/sqlite-*.test.ts out of the postgres project.
 */
import { fdatasync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import type { Context } from '../src/context.ts';
import { describeError } from '../src/http/errors.ts';
import { createContext } from '../src/app.ts';
import { SqliteDriver } from '../src/store/sqlite-driver.ts';
import { openStore, sqlitePath } from '../src/store/open.ts';
import { authorizeUrl, metaContent, type Party, pkcePair } from './helpers/flow.ts';
import { freePort } from './helpers/net.ts';
import { registerParty, type TestServer } from './helpers/server.ts';
import { type ServerProcess, spawnServer, waitReady } from './helpers/server-process.ts';

const JWT_SECRET = 'sqlite-busy-test-secret-of-at-least-32-bytes';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A promise's state, without waiting for it. */
function track<T>(promise: Promise<T>) {
  const state: { settled: boolean; value?: T; error?: unknown; at?: number } = { settled: false };
  promise.then(
    (value) => Object.assign(state, { settled: true, value, at: performance.now() }),
    (error: unknown) => Object.assign(state, { settled: true, error, at: performance.now() }),
  );
  return state;
}

/** The longest gap between two ticks of a 5 ms interval while it runs: how long the event loop was blocked. */
function eventLoopWatch() {
  let last = performance.now();
  let longest = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  }, 5);
  return {
    stop() {
      clearInterval(timer);
      return Math.max(longest, performance.now() - last);
    },
  };
}

describe('SqliteDriver while another connection holds the write lock', () => {
  let dir: string;
  let path: string;
  let driver: SqliteDriver | undefined;
  /** The other connection (SQLite's locks work between connections of one process as between processes). */
  let other: Database.Database;
  const insert = (key: string) => [{ sql: 'INSERT INTO t (k) VALUES (?)', params: [key] }];
  const keys = () =>
    (other.prepare('SELECT k FROM t ORDER BY rowid').all() as Array<{ k: string }>).map((row) => row.k);

  /**
   * A connection to the file whose statements `matches` selects throw SQLITE_BUSY from `method`
   * whenever `busy(params)` says so: a lock met where no real one can be made on demand.
   */
  function openWithBusy(
    matches: (sql: string) => boolean,
    method: 'run' | 'get',
    busy: (params: unknown[]) => boolean,
  ): Database.Database {
    const db = new Database(path);
    const prepare = db.prepare.bind(db);
    db.prepare = ((sql: string) => {
      const statement = prepare(sql);
      if (matches(sql)) {
        const original = (statement[method] as (...params: unknown[]) => unknown).bind(statement);
        Object.assign(statement, {
          [method]: (...params: unknown[]) => {
            if (busy(params)) throw new Database.SqliteError('database is locked', 'SQLITE_BUSY');
            return original(...params);
          },
        });
      }
      return statement;
    }) as typeof db.prepare;
    return db;
  }

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'agentauth-busy-driver-'));
    path = join(dir, 'db.sqlite');
    new Database(path).exec('CREATE TABLE t (k text PRIMARY KEY)').close();
    other = new Database(path);
  });
  afterEach(async () => {
    if (other.inTransaction) other.exec('ROLLBACK');
    await driver?.close().catch(() => undefined);
    driver = undefined;
    other.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('waits for the lock without blocking the event loop, and commits the units queued meanwhile together, in order, once it is free', async () => {
    let syncs = 0;
    driver = new SqliteDriver(new Database(path), {
      syncFile: (fd, done) => {
        syncs++;
        fdatasync(fd, done);
      },
    });
    other.exec('BEGIN IMMEDIATE');
    const watch = eventLoopWatch();
    const a = track(driver.write(insert('a')));
    await sleep(100);
    const b = track(driver.write(insert('b')));
    const read = await driver.one<{ n: number }>('SELECT count(*) AS n FROM t'); // reads go on meanwhile
    await sleep(100);
    const c = track(driver.write(insert('c')));
    await sleep(100);
    expect([a.settled, b.settled, c.settled]).toEqual([false, false, false]);
    other.exec('COMMIT');
    await expect.poll(() => a.settled && b.settled && c.settled).toBe(true);
    const blocked = watch.stop();

    expect(read).toEqual({ n: 0 });
    expect([a.value, b.value, c.value]).toEqual([[1], [1], [1]]);
    expect(keys()).toEqual(['a', 'b', 'c']);
    expect(syncs, 'one commit, one sync, for the three units').toBe(1);
    expect(blocked, 'the longest the event loop was blocked (ms)').toBeLessThan(200);
  });

  it('lets a unit that waits for the lock commit before close() closes the file', async () => {
    driver = new SqliteDriver(new Database(path));
    other.exec('BEGIN IMMEDIATE');
    const a = track(driver.write(insert('a')));
    await sleep(50);
    const closed = track(driver.close());
    await sleep(100);
    expect([a.settled, closed.settled]).toEqual([false, false]);
    other.exec('COMMIT');
    await expect.poll(() => closed.settled).toBe(true);
    driver = undefined;
    expect(a.value).toEqual([1]);
    expect(closed.error).toBeUndefined();
    expect(keys()).toEqual(['a']);
  });

  it('fails a unit with SQLITE_BUSY (503) once it has waited lockWaitMs, each unit counting from its own first wait, and keeps nothing of it', async () => {
    driver = new SqliteDriver(new Database(path), { lockWaitMs: 400 });
    other.exec('BEGIN IMMEDIATE');
    const watch = eventLoopWatch();
    const started = performance.now();
    const a = track(driver.write([...insert('a1'), ...insert('a2')]));
    await sleep(200);
    const b = track(driver.write(insert('b')));
    await expect.poll(() => a.settled).toBe(true);
    const waited = a.at! - started;
    expect(b.settled, 'the later unit still waits').toBe(false);
    await sleep(100);
    other.exec('COMMIT');
    await expect.poll(() => b.settled).toBe(true);
    const blocked = watch.stop();

    expect((a.error as { code?: string }).code).toBe('SQLITE_BUSY');
    expect(describeError(a.error)).toMatchObject({
      status: 503,
      headers: { 'retry-after': '5' },
      body: { error: 'temporarily_unavailable' },
    });
    expect(waited).toBeGreaterThanOrEqual(390);
    expect(waited).toBeLessThan(1000);
    expect(b.value).toEqual([1]);
    expect(keys()).toEqual(['b']);
    expect(blocked, 'the longest the event loop was blocked (ms)').toBeLessThan(200);
  });

  it('runs the whole batch again when a statement after BEGIN IMMEDIATE reports SQLITE_BUSY, keeping nothing of the first attempt', async () => {
    let busyLeft = 2;
    const db = openWithBusy(
      (sql) => sql.includes('INSERT'),
      'run',
      (params) => params[0] === 'b' && busyLeft-- > 0,
    );
    driver = new SqliteDriver(db);
    const [a, b, c] = await Promise.all([
      driver.write(insert('a')),
      driver.write(insert('b')),
      driver.write(insert('c')),
    ]);
    expect([a, b, c]).toEqual([[1], [1], [1]]); // a was run three times, committed once (its key is unique)
    expect(busyLeft).toBe(-1);
    expect(keys()).toEqual(['a', 'b', 'c']);
  });

  it('tries a read again when it reports SQLITE_BUSY, and fails it with SQLITE_BUSY after lockWaitMs', async () => {
    other.exec("INSERT INTO t (k) VALUES ('x')");
    let busyLeft = 0;
    const db = openWithBusy(
      (sql) => sql.startsWith('SELECT'),
      'get',
      () => busyLeft-- > 0,
    );
    driver = new SqliteDriver(db, { lockWaitMs: 300 });

    busyLeft = 3;
    expect(await driver.one('SELECT k FROM t')).toEqual({ k: 'x' });
    expect(busyLeft).toBe(-1);

    busyLeft = Number.POSITIVE_INFINITY;
    const started = performance.now();
    await expect(driver.one('SELECT k FROM t')).rejects.toMatchObject({ code: 'SQLITE_BUSY' });
    expect(performance.now() - started).toBeGreaterThanOrEqual(290);
    busyLeft = 0;
    expect(await driver.one('SELECT k FROM t')).toEqual({ k: 'x' });
  });
});

describe('agentauth serve while another process holds the SQLite write lock', () => {
  let dir: string;
  let databaseUrl: string;
  let server: ServerProcess | undefined;
  let admin: Context;
  let party: Party;
  /** The other process's connection: the test process holds the lock, the server is a child. */
  let holder: Database.Database;
  /**
   * The request's status as the file holds it now, read by `holder` in a statement of its own.
   * Not through `admin.store`: its driver shares one read transaction among the reads it makes
   * until the next setImmediate, and a read made after an answer that arrived in the same poll
   * phase as an earlier read would see the database as it was before the server's commit.
   */
  const statusOf = (requestId: string) =>
    (
      holder.prepare('SELECT status FROM authorization_requests WHERE id = ?').get(requestId) as
        | { status: string }
        | undefined
    )?.status;

  const at = () => ({ baseUrl: server!.baseUrl }) as TestServer;
  const authorize = () => {
    const { challenge } = pkcePair();
    return fetch(
      authorizeUrl(at(), {
        client_id: party.clientId,
        redirect_uri: party.redirectUri,
        response_type: 'code',
        state: 'busy-test',
        code_challenge: challenge,
        code_challenge_method: 'S256',
      }),
    );
  };
  const authenticate = (requestId: string) =>
    fetch(new URL('/api/agent/authenticate', server!.baseUrl), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        request_id: requestId,
        agent_id: party.agentId,
        agent_secret: party.agentSecret,
        model: 'busy-test',
      }),
    });
  /** GET /healthz's round trip in milliseconds. */
  const healthz = async () => {
    const started = performance.now();
    const response = await fetch(`${server!.baseUrl}/healthz`);
    await response.text();
    expect(response.status).toBe(200);
    return performance.now() - started;
  };
  /** /healthz round trips, one every `everyMs`, until `until` settles; returns them all. */
  const healthzWhile = async (until: { settled: boolean }, everyMs: number) => {
    const latencies: number[] = [];
    while (!until.settled) {
      latencies.push(await healthz());
      await sleep(everyMs);
    }
    return latencies;
  };
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'agentauth-busy-'));
    databaseUrl = `sqlite:${join(dir, 'agentauth.db')}`;
    const port = await freePort();
    const config = loadConfig({ DATABASE_URL: databaseUrl, JWT_SECRET, BASE_URL: `http://127.0.0.1:${port}` });
    const store = await openStore(databaseUrl);
    await store.migrate();
    admin = await createContext(config, store, JWT_SECRET);
    party = await registerParty(admin, 'Busy Test App');
    holder = new Database(sqlitePath(databaseUrl));
    server = spawnServer({
      PORT: String(port),
      HOST: '127.0.0.1',
      BASE_URL: `http://127.0.0.1:${port}`,
      DATABASE_URL: databaseUrl,
      JWT_SECRET,
      LOG_LEVEL: 'fatal',
    });
    await waitReady(server);
  }, 60_000);

  afterAll(async () => {
    if (holder?.inTransaction) holder.exec('ROLLBACK');
    holder?.close();
    await server?.kill('SIGTERM');
    await admin?.store.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('answers /healthz at once while a write waits for the lock, and commits the write once the lock is released', async () => {
    holder.exec('BEGIN IMMEDIATE');
    const lockedAt = performance.now();
    const write = track(authorize());
    // The lock is released after 1 s by a timer of the test process, whatever the server does.
    let releasedAt = 0;
    let answeredWhileLocked = false;
    const released = track(
      sleep(1000).then(() => {
        answeredWhileLocked = write.settled;
        holder.exec('COMMIT');
        releasedAt = performance.now();
      }),
    );
    await sleep(50); // the write has reached the server and waits for the lock
    const latencies = await healthzWhile(released, 100);
    await expect.poll(() => write.settled, { timeout: 5000 }).toBe(true);
    const answer = write.value!;
    const page = await answer.text();
    console.log(
      `/healthz under an outside lock: ${latencies.map((ms) => ms.toFixed(1)).join(', ')} ms; write answered ${answer.status} ${(write.at! - releasedAt).toFixed(0)} ms after the release (${(write.at! - lockedAt).toFixed(0)} ms after the lock was taken)`,
    );
    expect(Math.max(...latencies), '/healthz latency (ms) while the database is locked').toBeLessThan(500);
    expect(answeredWhileLocked, 'the write waited while the lock was held').toBe(false);
    expect(answer.status, page.slice(0, 300)).toBe(200);
    const requestId = metaContent(page, 'request-id')!;
    expect(statusOf(requestId)).toBe('pending');
  });

  it('answers a write 503 temporarily_unavailable with Retry-After once it has waited 5 s for the lock, answering /healthz all along, with nothing half-written', async () => {
    const created = await authorize();
    expect(created.status).toBe(200);
    const requestId = metaContent(await created.text(), 'request-id')!;

    const requests = () =>
      (holder.prepare('SELECT count(*) AS n FROM authorization_requests').get() as { n: number }).n;
    const requestsBefore = requests();

    holder.exec('BEGIN IMMEDIATE');
    const started = performance.now();
    const authenticating = track(authenticate(requestId)); // JSON: pending -> authenticated
    const authorizing = track(authorize()); // HTML page: a new request row
    let latencies: number[];
    try {
      await sleep(50);
      latencies = await healthzWhile(
        {
          get settled() {
            return authenticating.settled && authorizing.settled;
          },
        },
        250,
      );
    } finally {
      holder.exec('COMMIT');
    }
    const waited = authenticating.at! - started;
    const answer = authenticating.value!;
    const body = await answer.text();
    console.log(
      `/healthz while the lock is held past 5 s: max ${Math.max(...latencies).toFixed(1)} ms over ${latencies.length} requests; authenticate answered ${answer.status} after ${waited.toFixed(0)} ms`,
    );
    expect(answer.status, body).toBe(503);
    expect(JSON.parse(body)).toMatchObject({ error: 'temporarily_unavailable' });
    expect(answer.headers.get('retry-after')).toBe('5');
    expect(waited).toBeGreaterThan(4500);
    expect(waited).toBeLessThan(8000);
    expect(authorizing.value!.status).toBe(503);
    expect(Math.max(...latencies), '/healthz latency (ms) while the database is locked').toBeLessThan(500);

    // Nothing of the failed writes was kept; with the lock free the same write succeeds.
    expect(statusOf(requestId)).toBe('pending');
    expect(requests()).toBe(requestsBefore);
    const retried = await authenticate(requestId);
    expect(retried.status, await retried.clone().text()).toBe(200);
    expect(statusOf(requestId)).toBe('authenticated');
  });
});
