import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import { Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely';
import pg from 'pg';
import { type ConnectionLostListener, resilientPool } from './pg-pool.ts';
import { databaseUrlKind, sqlitePathFromUrl } from './database-url.ts';
import { introspectOneSchema } from './schema-introspector.ts';
import type { Database } from './schema.ts';
import { openSqlite } from './sqlite-driver.ts';
import { WalFlusher, flushCommits } from './sqlite-durability.ts';
import { sqliteReadWorkers } from './sqlite-read-workers.ts';
import { WriteGate, gateWrites, writesOf } from './sqlite-write-gate.ts';
import { CREDENTIALS_CHANNEL, isCredentialWrite } from './credential-tables.ts';
import { subscribe } from './pg-notifications.ts';
import { WriteWatch } from './write-watch.ts';

export type Engine = 'sqlite' | 'postgres';

export interface Db {
  kysely: Kysely<Database>;
  /**
   * For long analytics reads: on a SQLite file, read-only connections in worker threads, so a
   * scan never holds the event loop; otherwise the same as `kysely`. Never for writes.
   */
  reads: Kysely<Database>;
  /** How many worker threads serve `reads` (0: they run on the main connection or pool). */
  readWorkers: number;
  /**
   * On a SQLite file: where the main connection's writers take turns with another connection of
   * this process that writes from a worker thread (sqlite-write-gate.ts); otherwise null.
   */
  writeGate: WriteGate | null;
  engine: Engine;
  /** The SQLite file (for the generated secret key's home), or null on PostgreSQL. */
  sqlitePath: string | null;
  /** PostgreSQL only: the schema that holds the tables. */
  pgSchema: string | null;
  ping(): Promise<void>;
  /**
   * PostgreSQL: called when an idle pooled connection dies (a restart, a failover, a pooler's
   * timeout). The pool has already dropped it and opens a new one on demand; this is for the log.
   */
  onConnectionLost(listener: ConnectionLostListener): void;
  /** Counts this process's writes to the credential tables (src/db/credential-tables.ts). */
  credentialWrites: WriteWatch;
  /**
   * Starts counting other writers' changes to the credential tables into `credentialWrites`:
   * on SQLite, other processes (the file's data_version, read at each `upToDate()`); on
   * PostgreSQL, other instances and operators (the triggers' notifications). `upToDate()` is
   * false while such changes could go unseen (the notification connection is down).
   */
  watchOtherWriters(log?: FastifyBaseLogger): OtherWriters;
  close(): Promise<void>;
}

export interface OtherWriters {
  upToDate(): boolean;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  /** PostgreSQL only: put every table in this schema (tests use one schema per suite). */
  pgSchema?: string;
  pgPoolSize?: number;
  /** PostgreSQL only: the application_name the server sees (pg_stat_activity); tests name their own. */
  applicationName?: string;
  /**
   * PostgreSQL only: how long a statement may wait for the server's answer before its connection
   * is given up (the request answers 503). Without it, a server that stops answering without
   * closing the connection (a blackholed failover, a partition) holds a request until the kernel's
   * TCP timeout, about 15 minutes. Unset: no limit (migrations and operator commands).
   */
  queryTimeoutMs?: number;
  /** SQLite only: worker threads for analytics reads (0: read on the main connection). */
  sqliteReadWorkers?: number;
}

/** Two readers beside the main thread: on two cores, one long read never waits for another. */
const SQLITE_READ_WORKERS = 2;

/** How long a request waits for a connection (a new one, or a free one of a busy pool) before a 503. */
const PG_CONNECT_TIMEOUT_MS = 5_000;
/** TCP keepalive on pooled connections, so a silently vanished server is noticed on idle ones too. */
const PG_KEEPALIVE_DELAY_MS = 10_000;

const PG_TIMESTAMPTZ = 1184;
const PG_INT8 = 20;
const PG_NUMERIC = 1700;

// Dialect differences stop here and at the mappers: timestamps come back as ISO strings and
// counts as numbers on both engines.
const pgTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === PG_TIMESTAMPTZ) return (value: string) => new Date(value).toISOString();
    if (oid === PG_INT8 || oid === PG_NUMERIC) return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format);
  },
};

export function createDatabase(url: string, options: DatabaseOptions = {}): Db {
  const sqlitePath = sqlitePathFromUrl(url);
  if (sqlitePath !== null) {
    if (sqlitePath !== ':memory:') mkdirSync(dirname(sqlitePath), { recursive: true });
    // On a file, commits are flushed off the event loop (src/db/sqlite-durability.ts).
    const flusher = sqlitePath === ':memory:' ? null : new WalFlusher(`${sqlitePath}-wal`);
    const { database, raw } = openSqlite(sqlitePath, { flushedByCaller: flusher !== null, onWrite: () => flusher?.noteWrite() });
    const credentialWrites = new WriteWatch(isCredentialWrite);
    // Writers take turns at the gate with the derived-data thread's connection (sqlite-write-gate.ts).
    const gate = new WriteGate();
    const sqlite = gateWrites(new SqliteDialect({ database }), gate, writesOf(database));
    const dialect = flusher ? flushCommits(sqlite, flusher) : sqlite;
    const kysely = new Kysely<Database>({ dialect: credentialWrites.wrap(dialect) });
    // Moves when another connection (another process: the CLI, a second server) commits.
    const dataVersion = raw.prepare('PRAGMA data_version').pluck();
    const workers = options.sqliteReadWorkers ?? SQLITE_READ_WORKERS;
    const reads = sqlitePath === ':memory:' || workers === 0 ? kysely : sqliteReadWorkers(sqlitePath, workers);
    return {
      kysely,
      reads,
      readWorkers: reads === kysely ? 0 : workers,
      writeGate: sqlitePath === ':memory:' ? null : gate,
      engine: 'sqlite',
      sqlitePath: sqlitePath === ':memory:' ? null : sqlitePath,
      pgSchema: null,
      ping: async () => void (await sql`select 1`.execute(kysely)),
      onConnectionLost: () => {},
      credentialWrites,
      watchOtherWriters: () => {
        let seen = dataVersion.get();
        return {
          upToDate: () => {
            const now = dataVersion.get();
            if (now !== seen) {
              seen = now;
              credentialWrites.bump();
            }
            return true;
          },
          close: async () => {},
        };
      },
      close: async () => {
        if (reads !== kysely) await reads.destroy();
        await kysely.destroy();
      },
    };
  }
  if (/^postgres(ql)?:\/\//.test(url)) {
    const pool = new pg.Pool({
      connectionString: url,
      max: options.pgPoolSize ?? 10,
      types: pgTypes,
      application_name: options.applicationName ?? 'sightline',
      connectionTimeoutMillis: PG_CONNECT_TIMEOUT_MS,
      keepAlive: true,
      keepAliveInitialDelayMillis: PG_KEEPALIVE_DELAY_MS,
      ...(options.queryTimeoutMs ? { query_timeout: options.queryTimeoutMs } : {}),
      // JIT compilation costs more than it saves on the short analytics queries (10 ms and up).
      options: ['-c jit=off', ...(options.pgSchema ? [`-c search_path=${options.pgSchema}`] : [])].join(' '),
    });
    const lostListeners: ConnectionLostListener[] = [];
    const kyselyPool = resilientPool(pool, (error) => {
      for (const listener of lostListeners) listener(error);
    });
    const credentialWrites = new WriteWatch(isCredentialWrite);
    const schema = options.pgSchema ?? 'public';
    const kysely = new Kysely<Database>({ dialect: introspectOneSchema(credentialWrites.wrap(new PostgresDialect({ pool: kyselyPool })), schema) });
    pools.set(kysely, pool);
    return {
      kysely,
      reads: kysely,
      readWorkers: 0,
      writeGate: null,
      engine: 'postgres',
      sqlitePath: null,
      pgSchema: options.pgSchema ?? 'public',
      ping: async () => void (await sql`select 1`.execute(kysely)),
      onConnectionLost: (listener) => void lostListeners.push(listener),
      credentialWrites,
      watchOtherWriters: (log) => {
        const subscription = subscribe(url, CREDENTIALS_CHANNEL, {
          // The payload is the schema whose table changed; other installations on the database are not ours.
          onNotification: (payload) => payload === schema && credentialWrites.bump(),
          onResumed: () => credentialWrites.bump(),
          log,
        });
        return { upToDate: () => subscription.hearing, close: () => subscription.close() };
      },
      close: () => kysely.destroy(),
    };
  }
  databaseUrlKind(url); // throws the sentence that names what is wrong
  throw new Error('DATABASE_URL names no engine');
}

/** How the PostgreSQL connection pool is used, for /metrics. */
export interface PoolStats {
  /** Open connections, idle or in use. */
  total: number;
  idle: number;
  /** Queries waiting for a connection. */
  waiting: number;
  max: number;
}

const pools = new WeakMap<Kysely<Database>, pg.Pool>();

/** The pool's use on PostgreSQL; null on SQLite (one connection, no pool). */
export function poolStats(db: Db): PoolStats | null {
  const pool = pools.get(db.kysely);
  if (!pool) return null;
  return { total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount, max: pool.options.max ?? 10 };
}
