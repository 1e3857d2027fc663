import type { CompiledQuery, DatabaseConnection, Dialect, Driver, QueryResult } from 'kysely';
import { type ConnectionWrapper, WrappingDriver, wrapDriver } from './driver-wrapper.ts';

/**
 * Counts the writes this process makes to some tables, so a cache of what they hold can tell
 * whether a write may have overlapped the read it was filled from: a reader notes `version`
 * before reading, and its result is current only while `version` has not moved since.
 *
 * The count moves when a watched statement starts (the read that follows may already see it),
 * when it ends, and when the transaction that held it commits or rolls back (a read on another
 * connection in between still saw the old rows). Statements are recognised by their SQL text, so
 * raw SQL and cascades from a watched DELETE count too, whoever built them.
 */
export class WriteWatch {
  private count = 0;

  constructor(private readonly isWatched: (sql: string) => boolean) {}

  get version(): number {
    return this.count;
  }

  /** Another source of change (another process, another instance) says the tables moved. */
  bump(): void {
    this.count++;
  }

  /** The dialect with its connections counting watched writes. */
  wrap(dialect: Dialect): Dialect {
    return wrapDriver(dialect, (inner) => new WatchingDriver(inner, this));
  }

  /** Wraps a connection's statements; returns whether this one was a watched write. */
  watches(query: CompiledQuery): boolean {
    return this.isWatched(query.sql);
  }
}

class WatchedConnection implements ConnectionWrapper {
  /** A watched write ran in the open transaction: its commit or rollback moves the count. */
  pending = false;

  constructor(
    readonly inner: DatabaseConnection,
    private readonly watch: WriteWatch,
  ) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (!this.watch.watches(query)) return this.inner.executeQuery<R>(query);
    this.watch.bump();
    this.pending = true;
    try {
      return await this.inner.executeQuery<R>(query);
    } finally {
      this.watch.bump();
    }
  }

  streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    if (this.watch.watches(query)) this.watch.bump();
    return this.inner.streamQuery<R>(query, chunkSize);
  }
}

class WatchingDriver extends WrappingDriver<WatchedConnection> {
  constructor(
    inner: Driver,
    private readonly watch: WriteWatch,
  ) {
    super(inner);
  }

  protected wrapConnection(connection: DatabaseConnection): WatchedConnection {
    return new WatchedConnection(connection, this.watch);
  }

  override commitTransaction(connection: DatabaseConnection): Promise<void> {
    return this.settle(connection, () => super.commitTransaction(connection));
  }

  override rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return this.settle(connection, () => super.rollbackTransaction(connection));
  }

  private async settle(connection: DatabaseConnection, end: () => Promise<void>): Promise<void> {
    try {
      await end();
    } finally {
      const watched = this.own(connection);
      if (watched?.pending) {
        watched.pending = false;
        this.watch.bump();
      }
    }
  }
}
