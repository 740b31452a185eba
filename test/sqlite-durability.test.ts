/**
 * The SQLite driver's durability: with SQLITE_SYNCHRONOUS=full (the default) no write and no
 * read is answered before the WAL holding its commit has been synced to disk, and the sync
 * runs off the event loop. The syncs are held and released by the test to see the order.
 * Also what reads see, now that the reads of one turn share a read transaction.
 */
import { fdatasync, fstatSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SqliteDriver } from '../src/store/sqlite-driver.ts';

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
const insert = (key: string) => [{ sql: 'INSERT INTO t (k) VALUES (?)', params: [key] }];

/** A promise's state, without waiting for it. */
function track<T>(promise: Promise<T>) {
  const state: { settled: boolean; value?: T; error?: unknown } = { settled: false };
  promise.then(
    (value) => Object.assign(state, { settled: true, value }),
    (error: unknown) => Object.assign(state, { settled: true, error }),
  );
  return state;
}

/** Held syncs of the running test: released at its end, so that a failed test cannot hang the driver's close. */
const held: Array<{ fd: number; done: (error: Error | null) => void; released?: boolean }> = [];

/** A sync function whose calls wait until the test releases them (or fails them). */
function heldSyncs() {
  const calls: typeof held = [];
  return {
    calls,
    syncFile: (fd: number, done: (error: Error | null) => void) => {
      calls.push({ fd, done });
      held.push(calls.at(-1)!);
    },
    release: (i: number, error: Error | null = null) => release(calls[i]!, error),
  };
}

function release(call: (typeof held)[number], error: Error | null = null): void {
  call.released = true;
  fdatasync(call.fd, (syncError) => call.done(error ?? syncError));
}

describe('SQLite durability (SQLITE_SYNCHRONOUS=full)', () => {
  let dir: string;
  let path: string;
  let driver: SqliteDriver | undefined;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'agentauth-durability-'));
    path = join(dir, 'db.sqlite');
    new Database(path).exec('CREATE TABLE t (k text PRIMARY KEY)').close();
  });
  afterEach(async () => {
    for (const call of held.splice(0)) if (!call.released) release(call);
    await driver?.close().catch(() => undefined);
    driver = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers a write only after the WAL has been synced, and one sync covers the commits made while another ran', async () => {
    const syncs = heldSyncs();
    driver = new SqliteDriver(new Database(path), { syncFile: syncs.syncFile });

    const first = track(driver.write(insert('a')));
    await nextTurn();
    expect(syncs.calls).toHaveLength(1);
    // The descriptor synced is the WAL's.
    expect(fstatSync(syncs.calls[0]!.fd).ino).toBe(statSync(`${path}-wal`).ino);
    const second = track(driver.write(insert('b')));
    const third = track(driver.write(insert('c')));
    await nextTurn();
    expect(syncs.calls).toHaveLength(1); // b and c wait for the next sync, together
    expect(first.settled || second.settled || third.settled).toBe(false);

    syncs.release(0);
    await expect.poll(() => first.settled).toBe(true);
    expect(first.value).toEqual([1]);
    expect(syncs.calls).toHaveLength(2);
    expect(second.settled || third.settled).toBe(false);

    syncs.release(1);
    await expect.poll(() => second.settled && third.settled).toBe(true);
    expect([second.value, third.value]).toEqual([[1], [1]]);
    expect(syncs.calls).toHaveLength(2);
  });

  it('holds a read back while a commit it may have seen is not on disk', async () => {
    const syncs = heldSyncs();
    driver = new SqliteDriver(new Database(path), { syncFile: syncs.syncFile });
    const write = track(driver.write(insert('a')));
    await nextTurn();

    const read = track(driver.one<{ k: string }>('SELECT k FROM t WHERE k = ?', ['a']));
    await nextTurn();
    expect(read.settled).toBe(false);
    syncs.release(0);
    await expect.poll(() => read.settled && write.settled).toBe(true);
    expect(read.value).toEqual({ k: 'a' });
    // With nothing unsynced, a read is answered at once.
    expect(await driver.all('SELECT k FROM t')).toEqual([{ k: 'a' }]);
    expect(syncs.calls).toHaveLength(1);
  });

  it('fails the waiting write, and every later read and write, when the sync fails', async () => {
    const syncs = heldSyncs();
    driver = new SqliteDriver(new Database(path), { syncFile: syncs.syncFile });
    const write = driver.write(insert('a'));
    await nextTurn();
    syncs.release(0, Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' }));
    await expect(write).rejects.toThrow(/the SQLite WAL could not be synced to disk: EIO.*restart the server/);
    await expect(driver.one('SELECT 1 AS ok')).rejects.toThrow(/could not be synced/);
    await expect(driver.write(insert('b'))).rejects.toThrow(/could not be synced/);
  });

  it('keeps what it answered across a reopen, with the real fdatasync', async () => {
    driver = new SqliteDriver(new Database(path));
    expect(await driver.write(insert('a'))).toEqual([1]);
    await driver.close();
    driver = new SqliteDriver(new Database(path));
    expect(await driver.all('SELECT k FROM t')).toEqual([{ k: 'a' }]);
  });

  it('shares one read transaction among the reads of a turn of the event loop, and sees every commit made before the turn', async () => {
    driver = new SqliteDriver(new Database(path));
    const other = new Database(path);
    try {
      const read = () => driver!.all<{ k: string }>('SELECT k FROM t ORDER BY k');
      const first = read(); // opens this turn's read transaction
      other.prepare('INSERT INTO t (k) VALUES (?)').run('from another connection');
      const second = read(); // same turn, same snapshot
      expect(await first).toEqual([]);
      expect(await second).toEqual([]);
      await nextTurn();
      expect(await read()).toEqual([{ k: 'from another connection' }]);

      // A write in the same turn as a read commits, and a read after its answer sees it.
      const beforeWrite = read();
      expect(await driver.write(insert('mine'))).toEqual([1]);
      expect(await beforeWrite).toEqual([{ k: 'from another connection' }]);
      expect(await read()).toEqual([{ k: 'from another connection' }, { k: 'mine' }]);
    } finally {
      other.close();
    }
  });

  it('runs SQLite with synchronous=NORMAL and syncs the WAL itself; the opt-in normal syncs nothing per commit', async () => {
    const syncs = heldSyncs();
    const db = new Database(path);
    driver = new SqliteDriver(db, { syncFile: syncs.syncFile });
    expect(db.pragma('synchronous', { simple: true })).toBe(1); // NORMAL: the fsync is the driver's
    await driver.close();

    const unsynced = heldSyncs();
    driver = new SqliteDriver(new Database(path), { synchronous: 'normal', syncFile: unsynced.syncFile });
    expect(await driver.write(insert('a'))).toEqual([1]);
    expect(unsynced.calls).toHaveLength(0);
  });
});
