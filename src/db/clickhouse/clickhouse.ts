import { type ClickHouseClient, ClickHouseLogLevel, createClient } from '@clickhouse/client';
import {
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type RawBuilder,
} from 'kysely';
import { clickhouseLiteral } from './literal.ts';

// The connection to ClickHouse, where the events live when CLICKHOUSE_URL is set. Queries are
// written with Kysely's `sql` template like the relational ones (identifiers quoted, values as
// ${...}); they are compiled here with every value written as a vetted literal (./literal.ts)
// instead of a bound parameter, which this ClickHouse release does not have.

class LiteralQueryCompiler extends PostgresQueryCompiler {
  protected override appendValue(value: unknown): void {
    this.append(clickhouseLiteral(value));
  }
}

const compiler = new Kysely<unknown>({
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new PostgresIntrospector(db),
    createQueryCompiler: () => new LiteralQueryCompiler(),
  },
});

/** The SQL text of a query, every value written as a literal. */
export function compileClickHouse(query: RawBuilder<unknown>): string {
  const compiled = query.compile(compiler);
  if (compiled.parameters.length > 0) throw new Error('a ClickHouse query compiled with bound parameters');
  return compiled.sql;
}

export interface ClickHouse {
  /** The database that holds Sightline's tables. */
  readonly database: string;
  rows<T>(query: RawBuilder<unknown>): Promise<T[]>;
  command(query: RawBuilder<unknown>): Promise<void>;
  /**
   * Rows as JSON objects, one INSERT (one block per partition on the server). With a query id,
   * the server refuses a second INSERT of that id while the first still runs.
   */
  insert(table: string, rows: object[], queryId?: string): Promise<void>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface ClickHouseTarget {
  /** http(s)://host:port, without credentials or path. */
  url: string;
  username: string;
  password: string;
  database: string;
}

/** CLICKHOUSE_URL: http(s)://[user[:password]@]host[:port]/database (default database `sightline`). */
export function parseClickHouseUrl(raw: string): ClickHouseTarget {
  const url = new URL(raw);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('CLICKHOUSE_URL must start with http:// or https://');
  const database = decodeURIComponent(url.pathname.replace(/^\/+|\/+$/g, '')) || 'sightline';
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(database)) throw new Error('CLICKHOUSE_URL names a database that is not a plain identifier');
  return {
    url: `${url.protocol}//${url.host}`,
    username: decodeURIComponent(url.username) || 'default',
    password: decodeURIComponent(url.password),
    database,
  };
}

/** How long one query may take before it is abandoned (the request answers 503). */
const REQUEST_TIMEOUT_MS = 30_000;

/**
 * How long the server may run a read (`rows`) before it stops it itself, a little under the
 * client's timeout: a request given up by the client would otherwise leave its query running on
 * the server, taking the cores from the next ones (seen in the bench at 100 million events).
 */
export const READ_LIMIT_SECONDS = 25;

export interface OpenOptions {
  /** Seconds a read may run on the server (READ_LIMIT_SECONDS). */
  readLimitSeconds?: number;
}

function clientFor(target: ClickHouseTarget, database: string | undefined): ClickHouseClient {
  return createClient({
    url: target.url,
    username: target.username,
    password: target.password,
    database,
    request_timeout: REQUEST_TIMEOUT_MS,
    // The client logs every failed query with its text at ERROR; failures are the caller's to
    // report (a 503, a relay retry), and a query's text can hold a visitor's values.
    log: { level: ClickHouseLogLevel.OFF },
  });
}

/**
 * A connection to the database named by the URL. Nothing is sent until the first use, which
 * creates the database when it is missing and runs `prepare` (the tables); a failure there is
 * retried at the next use, so a server started before its ClickHouse answers 503 until then.
 */
export function openClickHouse(raw: string, prepare: (ch: ClickHouse) => Promise<void> = async () => {}, options: OpenOptions = {}): ClickHouse {
  const target = parseClickHouseUrl(raw);
  const readSettings = { max_execution_time: options.readLimitSeconds ?? READ_LIMIT_SECONDS };
  const client = clientFor(target, target.database);
  let prepared: Promise<void> | null = null;
  const ready = (): Promise<void> => {
    prepared ??= (async () => {
      const bootstrap = clientFor(target, undefined);
      try {
        await bootstrap.command({ query: `CREATE DATABASE IF NOT EXISTS ${target.database}` });
      } finally {
        await bootstrap.close();
      }
      await prepare(bare);
    })().catch((error: unknown) => {
      prepared = null;
      throw error;
    });
    return prepared;
  };
  const bare: ClickHouse = {
    database: target.database,
    async rows<T>(query: RawBuilder<unknown>): Promise<T[]> {
      const result = await client.query({ query: compileClickHouse(query), format: 'JSONEachRow', clickhouse_settings: readSettings });
      return result.json<T>();
    },
    async command(query: RawBuilder<unknown>): Promise<void> {
      await client.command({ query: compileClickHouse(query) });
    },
    async insert(table: string, rows: object[], queryId?: string): Promise<void> {
      if (rows.length === 0) return;
      await client.insert({ table, values: rows, format: 'JSONEachRow', query_id: queryId });
    },
    async ping(): Promise<void> {
      const result = await client.ping();
      if (!result.success) throw result.error;
    },
    close: () => client.close(),
  };
  return {
    ...bare,
    rows: async (query) => {
      await ready();
      return bare.rows(query);
    },
    command: async (query) => {
      await ready();
      return bare.command(query);
    },
    insert: async (table, rows, queryId) => {
      await ready();
      return bare.insert(table, rows, queryId);
    },
  };
}
