import { Mutex } from 'async-mutex';
import type { CompiledQuery, DatabaseConnection, Dialect, Driver, QueryResult, SqliteDatabase, TransactionSettings } from 'kysely';
import { type ConnectionWrapper, WrappingDriver, wrapDriver } from './driver-wrapper.ts';

// SQLite lets one connection write at a time, and better-sqlite3 waits for the lock by sleeping
// on the thread that asked. The main connection's writers and the background writer
// (sqlite-background-writer.ts, in a worker thread) therefore take turns at this gate first, and
// wait for it asynchronously: had the main connection asked for the lock while the background
// writer held it, the event loop would have slept, and the background transaction, whose next
// statement comes from the event loop, with it, until the busy timeout.
//
// On the main connection a transaction takes the gate before its BEGIN and gives it back after
// its COMMIT or ROLLBACK (a deferred transaction that read before another connection committed
// could not write after: SQLITE_BUSY_SNAPSHOT); a statement outside a transaction takes it only
// when it writes. Reads outside a transaction never wait: in WAL they read the last commit while
// the background writer writes, which is the point of it. Other processes (the CLI, a second
// server) meet the lock itself, as they always did.
//
// A writer that finds the gate taken waits for it without the main connection: Kysely's SQLite
// driver hands its one connection to one caller at a time, and a transaction that waited for the
// gate while holding it (behind a fold of the derived-data thread, tens of milliseconds) held
// every read of the main connection too: admin reads, the credential and website lookups of
// every request (issue 38: admin reads' p99 77 ms in the SQLite soak, the event loop free). So
// the writer gives the connection back, takes the gate, then takes the connection again (the
// same one: the driver has one). The order is always the gate, then the connection, so a writer
// holding the gate and waiting for the connection waits only for reads, which never need the gate.

export class WriteGate {
  private readonly mutex = new Mutex();

  /** Waits for the gate; the function returned gives it back. */
  acquire(): Promise<() => void> {
    return this.mutex.acquire();
  }

  run<T>(work: () => Promise<T>): Promise<T> {
    return this.mutex.runExclusive(work);
  }

  /** The gate at once when nobody holds it (taken in the same turn), otherwise null. */
  take(): Promise<() => void> | null {
    return this.mutex.isLocked() ? null : this.mutex.acquire();
  }
}

/** A statement of `database` that may write (sqlite3_stmt_readonly false). */
export type WritesCheck = (sql: string) => boolean;

/** The dialect with the main connection's writes taking turns at `gate`. */
export function gateWrites(dialect: Dialect, gate: WriteGate, writes: WritesCheck): Dialect {
  return wrapDriver(dialect, (inner) => new GatedDriver(inner, gate, writes));
}

/** Whether a statement of `database` may write; its prepared statement is the one the connection then runs (sqlite-driver.ts caches them). */
export function writesOf(database: SqliteDatabase): WritesCheck {
  return (sql) => (database.prepare(sql) as { readonly?: boolean }).readonly === false;
}

class GatedConnection implements ConnectionWrapper {
  /** The gate's release while this connection's transaction is open. */
  release: (() => void) | null = null;

  constructor(
    readonly inner: DatabaseConnection,
    private readonly gate: WriteGate,
    private readonly writes: WritesCheck,
    /** The driver that handed `inner` to this caller, to give it back while the gate is awaited. */
    private readonly driver: Driver,
  ) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (this.release || !this.writes(query.sql)) return this.inner.executeQuery<R>(query);
    const release = await this.takeGate();
    try {
      return await this.inner.executeQuery<R>(query);
    } finally {
      release();
    }
  }

  /** The gate, waited for without the connection (see the top of this file). */
  async takeGate(): Promise<() => void> {
    const free = this.gate.take();
    if (free) return free;
    await this.driver.releaseConnection(this.inner);
    try {
      return await this.gate.acquire();
    } finally {
      await this.driver.acquireConnection();
    }
  }

  streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    return this.inner.streamQuery<R>(query, chunkSize);
  }

  giveBack(): void {
    const release = this.release;
    this.release = null;
    release?.();
  }
}

class GatedDriver extends WrappingDriver<GatedConnection> {
  constructor(
    inner: Driver,
    private readonly gate: WriteGate,
    private readonly writes: WritesCheck,
  ) {
    super(inner);
  }

  protected wrapConnection(connection: DatabaseConnection): GatedConnection {
    return new GatedConnection(connection, this.gate, this.writes, this.inner);
  }

  override async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const gated = this.own(connection);
    if (gated) gated.release = await gated.takeGate();
    try {
      await super.beginTransaction(connection, settings);
    } catch (error) {
      gated?.giveBack();
      throw error;
    }
  }

  override async commitTransaction(connection: DatabaseConnection): Promise<void> {
    try {
      await super.commitTransaction(connection);
    } finally {
      this.own(connection)?.giveBack();
    }
  }

  override async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    try {
      await super.rollbackTransaction(connection);
    } finally {
      this.own(connection)?.giveBack();
    }
  }
}
