import type { CompiledQuery, DatabaseConnection, Dialect, Driver, QueryResult, TransactionSettings } from 'kysely';

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
    return {
      createDriver: () => new WatchingDriver(dialect.createDriver(), this),
      createQueryCompiler: () => dialect.createQueryCompiler(),
      createAdapter: () => dialect.createAdapter(),
      createIntrospector: (db) => dialect.createIntrospector(db),
    };
  }

  /** Wraps a connection's statements; returns whether this one was a watched write. */
  watches(query: CompiledQuery): boolean {
    return this.isWatched(query.sql);
  }
}

class WatchedConnection implements DatabaseConnection {
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

class WatchingDriver implements Driver {
  private readonly wrapped = new WeakMap<DatabaseConnection, WatchedConnection>();

  constructor(
    private readonly inner: Driver,
    private readonly watch: WriteWatch,
  ) {}

  init(): Promise<void> {
    return this.inner.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    const connection = await this.inner.acquireConnection();
    let watched = this.wrapped.get(connection);
    if (!watched) {
      watched = new WatchedConnection(connection, this.watch);
      this.wrapped.set(connection, watched);
    }
    return watched;
  }

  beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    return this.inner.beginTransaction(unwrap(connection), settings);
  }

  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return this.settle(connection, () => this.inner.commitTransaction(unwrap(connection)));
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return this.settle(connection, () => this.inner.rollbackTransaction(unwrap(connection)));
  }

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    return this.inner.releaseConnection(unwrap(connection));
  }

  destroy(): Promise<void> {
    return this.inner.destroy();
  }

  private async settle(connection: DatabaseConnection, end: () => Promise<void>): Promise<void> {
    try {
      await end();
    } finally {
      if (connection instanceof WatchedConnection && connection.pending) {
        connection.pending = false;
        this.watch.bump();
      }
    }
  }
}

function unwrap(connection: DatabaseConnection): DatabaseConnection {
  return connection instanceof WatchedConnection ? connection.inner : connection;
}
