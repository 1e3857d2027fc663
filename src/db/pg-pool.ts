import type { PostgresCursor, PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely';
import type pg from 'pg';
import { isDatabaseUnavailable } from './faults.ts';

// The pool as Kysely sees it, made safe against connections that die while idle (a database
// restart, a failover, pg_terminate_backend, a pooler's idle timeout).
//
// node-postgres notices a dead idle connection only when its socket events are read; until then
// the pool may hand it out, and the first statement sent on it fails although the database is
// back. So when the first statement after a checkout fails for a connection reason on a connection
// that had been used before, it is sent again on the next connection (the pool may hold several
// dead ones: they died together), until one that was just opened answers or fails. Only where
// doing it again cannot apply anything twice:
// - BEGIN and read-only statements (SELECT, SHOW) are retried as they are;
// - any other statement sent outside a transaction (an autocommit write) is preceded by a
//   `select 1` that is itself retried, because a write whose connection died may have committed.
// Statements after the first (inside a transaction, or after the ping) are never retried: their
// failure answers 503 and the transaction is rolled back by the server.

const RETRY_AS_IS = /^\s*(select|show|begin|start\s+transaction)\b/i;

export type ConnectionLostListener = (error: Error) => void;

/** Connections opened but not yet handed out: a failure on one of them is an outage, not staleness. */
const justOpened = new WeakSet<pg.PoolClient>();

class FirstStatementRetryingClient implements PostgresPoolClient {
  private first = true;
  private broken: Error | null = null;
  /** Set while no connection is held (a retry gave the dead one back and could not get another). */
  private released = false;

  constructor(
    private client: pg.PoolClient,
    private readonly pool: pg.Pool,
  ) {}

  query<R>(sql: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>>;
  query<R>(cursor: PostgresCursor<R>): PostgresCursor<R>;
  query<R>(sqlOrCursor: string | PostgresCursor<R>, parameters?: ReadonlyArray<unknown>): unknown {
    if (typeof sqlOrCursor !== 'string') return this.client.query(sqlOrCursor as never);
    return this.run<R>(sqlOrCursor, parameters ?? []);
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    // An error here makes the pool close the connection instead of keeping it.
    this.client.release(this.broken ?? undefined);
  }

  private async run<R>(sql: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>> {
    // A connection known to be broken (a timed-out statement may still be running on it) takes no
    // more statements, the rollback included: the pool closes it on release, and the server rolls
    // back what it had.
    if (this.broken) throw this.broken;
    const send = () => this.track(this.client.query(sql, parameters as unknown[]) as unknown as Promise<PostgresQueryResult<R>>);
    if (!this.first) return send();
    this.first = false;
    if (RETRY_AS_IS.test(sql)) return this.retryOnFreshConnection(send);
    await this.retryOnFreshConnection(() => this.track(this.client.query('select 1')));
    return send();
  }

  private async retryOnFreshConnection<T>(attempt: () => Promise<T>): Promise<T> {
    // Bounded by the pool's size: past that many dead connections, the pool opens a new one.
    for (let tries = (this.pool.options.max ?? 10) + 1; ; tries--) {
      const reused = !justOpened.delete(this.client);
      try {
        return await attempt();
      } catch (error) {
        if (!reused || tries <= 1 || !isDatabaseUnavailable(error)) throw error;
        this.released = true;
        this.client.release(error as Error);
        this.client = await this.pool.connect();
        this.released = false;
        this.broken = null;
      }
    }
  }

  private async track<T>(query: Promise<T>): Promise<T> {
    try {
      return await query;
    } catch (error) {
      if (isDatabaseUnavailable(error)) this.broken = error as Error;
      throw error;
    }
  }
}

/**
 * Wraps a pg.Pool for Kysely. Every connection gets an error listener for its whole life, so a
 * connection that dies while checked out (between two statements of a transaction) cannot raise
 * an unhandled 'error' event; its next statement fails instead. Idle connections that die are
 * reported once, through the pool's 'error' event, to `onConnectionLost`.
 */
export function resilientPool(pool: pg.Pool, onConnectionLost: ConnectionLostListener): PostgresPool {
  pool.on('connect', (client) => {
    justOpened.add(client);
    client.on('error', () => {
      // Reported by the pool (idle) or by the failing statement (checked out).
    });
  });
  pool.on('error', (error) => onConnectionLost(error));
  return {
    connect: async () => new FirstStatementRetryingClient(await pool.connect(), pool),
    end: () => pool.end(),
  };
}
