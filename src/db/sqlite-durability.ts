import { type FileHandle, open } from 'node:fs/promises';
import type { CompiledQuery, DatabaseConnection, Dialect, Driver, QueryResult, TransactionSettings } from 'kysely';
import { type ConnectionWrapper, WrappingDriver, wrapDriver } from './driver-wrapper.ts';
import { commitIsLazy } from './lazy-commits.ts';

// Durable commits on SQLite without stopping the event loop.
//
// better-sqlite3 is synchronous: with `synchronous = FULL`, every COMMIT waits for the fsync of
// the write-ahead log on the main thread, and every request waits with it (a sixth of the main
// thread's time under ingestion load). Instead the main connection commits with
// `synchronous = NORMAL` (the log is written, not flushed; SQLite stays consistent after any
// crash), and the commit's caller then waits for an fdatasync of the log on libuv's thread pool
// before it answers. An acknowledged write is on disk exactly as with FULL; meanwhile the event
// loop parses, checks and queues the next requests.
//
// The log file stays the same file while the main connection is open: SQLite deletes it only
// when its last connection closes, and truncating it (a checkpoint) keeps the file. Checkpoints
// under NORMAL flush the log and the database file themselves, as under FULL.

/** Flushes the write-ahead log when something was written; concurrent callers share flushes. */
export class WalFlusher {
  private handle: Promise<FileHandle> | null = null;
  private running: Promise<void> | null = null;
  private queued: Promise<void> | null = null;
  /** A statement wrote since the last flush started. */
  private written = false;

  constructor(
    private readonly walPath: string,
    /** How the open log is flushed (a test wraps it to see when flushes start and end). */
    private readonly datasync: (handle: FileHandle) => Promise<void> = (handle) => handle.datasync(),
  ) {}

  /** Called by the connection for every statement that writes (sqlite3_stmt_readonly false). */
  noteWrite(): void {
    this.written = true;
  }

  /** Resolves once everything written to the log before the call is on disk. */
  flush(): Promise<void> {
    // Nothing written since the running flush started (if any): it covers this caller.
    if (!this.written) return this.running ?? Promise.resolve();
    // A flush that has not started yet covers this caller too.
    if (this.queued) return this.queued;
    if (!this.running) return this.start();
    // The running flush started before this caller's write: flush again after it.
    const queued = this.running
      .catch(() => {})
      .then(() => {
        this.queued = null;
        return this.start();
      });
    this.queued = queued;
    return queued;
  }

  async close(): Promise<void> {
    await this.running?.catch(() => {});
    await this.queued?.catch(() => {});
    const handle = this.handle;
    this.handle = null;
    if (handle) await (await handle.catch(() => null))?.close();
  }

  private start(): Promise<void> {
    this.written = false;
    const flushing = this.flushLog().finally(() => {
      if (this.running === flushing) this.running = null;
    });
    this.running = flushing;
    return flushing;
  }

  private async flushLog(): Promise<void> {
    try {
      this.handle ??= open(this.walPath, 'r');
      let handle: FileHandle;
      try {
        handle = await this.handle;
      } catch (error) {
        this.handle = null; // Tried again by the next flush.
        throw error;
      }
      await this.datasync(handle);
    } catch (error) {
      // Whether the commit reached the disk is unknown: the write fails as SQLite's own I/O
      // errors do (503, try again), and is never acknowledged.
      const code = (error as NodeJS.ErrnoException).code ?? 'unknown';
      throw Object.assign(new Error(`flushing the SQLite log failed (${code})`), { code: 'SQLITE_IOERR_FSYNC', cause: error });
    }
  }
}

/**
 * The dialect with every commit flushed before it resolves: a transaction's COMMIT, and a
 * statement outside a transaction (which SQLite commits by itself) when it wrote. Commits of
 * different callers share flushes.
 */
export function flushCommits(dialect: Dialect, flusher: WalFlusher): Dialect {
  return wrapDriver(dialect, (inner) => new FlushingDriver(inner, flusher));
}

class FlushingConnection implements ConnectionWrapper {
  inTransaction = false;
  /** The flush of this connection's last commit, awaited once the connection is released. */
  private flushing: Promise<void> | null = null;

  constructor(
    readonly inner: DatabaseConnection,
    private readonly flusher: WalFlusher,
  ) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const result = await this.inner.executeQuery<R>(query);
    if (!this.inTransaction) this.committed();
    return result;
  }

  /** Starts the flush that makes what was just committed durable (a lazy commit waits for the next: lazy-commits.ts). */
  committed(): void {
    if (commitIsLazy()) return;
    const flushing = this.flusher.flush();
    flushing.catch(() => {}); // Handled by whoever releases the connection.
    this.flushing = flushing;
  }

  /** The flush the caller still has to wait for, if any. */
  takeFlush(): Promise<void> | null {
    const flushing = this.flushing;
    this.flushing = null;
    return flushing;
  }

  streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    return this.inner.streamQuery<R>(query, chunkSize);
  }
}

class FlushingDriver extends WrappingDriver<FlushingConnection> {
  constructor(
    inner: Driver,
    private readonly flusher: WalFlusher,
  ) {
    super(inner);
  }

  protected wrapConnection(connection: DatabaseConnection): FlushingConnection {
    return new FlushingConnection(connection, this.flusher);
  }

  override async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    await super.beginTransaction(connection, settings);
    const flushing = this.own(connection);
    if (flushing) flushing.inTransaction = true;
  }

  override async commitTransaction(connection: DatabaseConnection): Promise<void> {
    const flushing = this.own(connection);
    try {
      await super.commitTransaction(connection);
    } finally {
      if (flushing) flushing.inTransaction = false;
    }
    flushing?.committed();
  }

  override async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    try {
      await super.rollbackTransaction(connection);
    } finally {
      const flushing = this.own(connection);
      if (flushing) flushing.inTransaction = false;
    }
  }

  /**
   * The connection goes back first, so the next transaction runs while this one's flush is on
   * the thread pool; the caller (Kysely's execute) then waits for the flush before it resolves.
   */
  override async releaseConnection(connection: DatabaseConnection): Promise<void> {
    const flushing = this.own(connection)?.takeFlush();
    await super.releaseConnection(connection);
    if (flushing) await flushing;
  }

  override async destroy(): Promise<void> {
    await super.destroy();
    await this.flusher.close();
  }
}
