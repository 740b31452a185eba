/**
 * Durable SQLite commits without blocking the event loop.
 *
 * With `synchronous=FULL`, SQLite calls fsync inside COMMIT, and better-sqlite3 runs COMMIT on
 * the event loop: every group commit stopped all request handling for the length of one fsync
 * (about 0.3 ms on the benchmark machine, a third of the server's time under refresh load).
 * Instead the driver commits with `synchronous=NORMAL` (frames are written to the WAL, without
 * fsync) and this class fsyncs the WAL file in libuv's thread pool. A commit's waiters resolve
 * only when an fdatasync that began after the commit has finished, so an answer is on disk
 * before it is sent, exactly as with FULL. While one fdatasync runs, later commits queue for
 * the next one, which covers them all (the WAL is one append-only file).
 *
 * Checkpoints stay synchronous and synced by SQLite itself (NORMAL syncs the WAL before it
 * copies pages into the database, and the database before it reuses the WAL), so a power loss
 * can cost only frames that no answer has waited for. The WAL file keeps its inode while the
 * database is open: SQLite deletes it only when the last connection closes, and truncates or
 * rewinds it otherwise.
 *
 * Reads wait too (`settled`): a read may see a commit before it is on disk, and its answer must
 * not report state that a power loss could undo.
 */
import { closeSync, fdatasync, openSync } from 'node:fs';

export type SyncFile = (fd: number, done: (error: Error | null) => void) => void;

interface Waiter {
  commit: number;
  resolve(): void;
  reject(error: Error): void;
}

export class WalSync {
  private fd: number | undefined;
  /** Commits made so far, and of those, how many are known to be on disk. */
  private committed = 0;
  private synced = 0;
  private syncing = false;
  private waiters: Waiter[] = [];
  private failed: Error | undefined;

  constructor(
    private readonly walPath: string,
    private readonly syncFile: SyncFile = fdatasync,
  ) {}

  /** True while some commit is not yet known to be on disk (or never will be: see failure). */
  get pending(): boolean {
    return this.committed > this.synced || this.failed !== undefined;
  }

  /**
   * Set once an fdatasync has failed. Nothing is known to be on disk after that (the kernel
   * may have dropped the unwritten pages and cleared the error), so nothing more is answered.
   */
  get failure(): Error | undefined {
    return this.failed;
  }

  /** Records a commit just made; resolves once it is on disk. */
  committedNow(): Promise<void> {
    this.committed += 1;
    const waiting = this.waitFor(this.committed);
    this.startSync();
    return waiting;
  }

  /** Resolves once every commit made so far is on disk. */
  settled(): Promise<void> {
    return this.waitFor(this.committed);
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  private waitFor(commit: number): Promise<void> {
    if (this.failed) return Promise.reject(this.failed);
    if (commit <= this.synced) return Promise.resolve();
    return new Promise((resolve, reject) => this.waiters.push({ commit, resolve, reject }));
  }

  private startSync(): void {
    if (this.syncing || this.failed || this.synced === this.committed) return;
    this.syncing = true;
    const covered = this.committed;
    try {
      // The WAL exists once something has been committed; its descriptor is kept open.
      this.fd ??= openSync(this.walPath, 'r');
    } catch (error) {
      this.fail(error as Error);
      return;
    }
    this.syncFile(this.fd, (error) => {
      this.syncing = false;
      if (error) return this.fail(error);
      this.synced = covered;
      while (this.waiters.length > 0 && this.waiters[0]!.commit <= covered) this.waiters.shift()!.resolve();
      this.startSync();
    });
  }

  private fail(error: Error): void {
    this.syncing = false;
    this.failed = new Error(`the SQLite WAL could not be synced to disk: ${error.message}; restart the server`, {
      cause: error,
    });
    for (const waiter of this.waiters.splice(0)) waiter.reject(this.failed);
  }
}
