import type { DatabaseConnection, Dialect, Driver, TransactionSettings } from 'kysely';

// A Kysely driver around another one, which gives each connection of the inner driver a wrapper
// of its own (the same one each time the connection is acquired) and hands the inner driver its
// own connections back. The write watch (src/db/write-watch.ts) and the SQLite log flush
// (src/db/sqlite-durability.ts) are built on it; they stack, each unwrapping only its own wrappers.

export interface ConnectionWrapper extends DatabaseConnection {
  readonly inner: DatabaseConnection;
}

/** The dialect with its driver wrapped; compiler, adapter and introspector stay the dialect's. */
export function wrapDriver(dialect: Dialect, wrap: (inner: Driver) => Driver): Dialect {
  return {
    createDriver: () => wrap(dialect.createDriver()),
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createAdapter: () => dialect.createAdapter(),
    createIntrospector: (db) => dialect.createIntrospector(db),
  };
}

export abstract class WrappingDriver<W extends ConnectionWrapper> implements Driver {
  private readonly wrappers = new WeakMap<DatabaseConnection, W>();
  private readonly mine = new WeakSet<DatabaseConnection>();

  constructor(protected readonly inner: Driver) {}

  /** A new wrapper for a connection of the inner driver. */
  protected abstract wrapConnection(connection: DatabaseConnection): W;

  /** The wrapper, when `connection` is one this driver handed out. */
  protected own(connection: DatabaseConnection): W | null {
    return this.mine.has(connection) ? (connection as W) : null;
  }

  protected unwrap(connection: DatabaseConnection): DatabaseConnection {
    return this.own(connection)?.inner ?? connection;
  }

  init(): Promise<void> {
    return this.inner.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    const connection = await this.inner.acquireConnection();
    let wrapper = this.wrappers.get(connection);
    if (!wrapper) {
      wrapper = this.wrapConnection(connection);
      this.wrappers.set(connection, wrapper);
      this.mine.add(wrapper);
    }
    return wrapper;
  }

  beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    return this.inner.beginTransaction(this.unwrap(connection), settings);
  }

  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return this.inner.commitTransaction(this.unwrap(connection));
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return this.inner.rollbackTransaction(this.unwrap(connection));
  }

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    return this.inner.releaseConnection(this.unwrap(connection));
  }

  destroy(): Promise<void> {
    return this.inner.destroy();
  }
}
