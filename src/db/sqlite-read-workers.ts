import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import {
  type CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  Kysely,
  type QueryResult,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
} from 'kysely';
import type { Database } from './schema.ts';

// better-sqlite3 is synchronous: a 100 ms analytics scan on the main thread holds every other
// request for 100 ms. Long reads run here instead, on read-only connections of their own, each in
// a worker thread; WAL lets them read the last committed state while the main connection writes.
// Kysely compiles on the main thread and the worker only prepares and runs the SQL.
//
// The workers start on the first query (most commands never read analytics; the server makes one
// before it listens) and are terminated by destroy(). The worker is inline JavaScript so the same code runs from the
// TypeScript sources and from the esbuild bundle.

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const SQLite = require(workerData.driver);
const db = new SQLite(workerData.path, { readonly: true, fileMustExist: true });
db.pragma('busy_timeout = 5000');
const statements = new Map();
parentPort.on('message', ({ id, sql, parameters }) => {
  try {
    let statement = statements.get(sql);
    if (!statement) {
      statement = db.prepare(sql);
      if (statements.size >= 200) statements.delete(statements.keys().next().value);
      statements.set(sql, statement);
    }
    const values = parameters.map((v) => (typeof v === 'boolean' ? (v ? 1 : 0) : v));
    const rows = statement.reader ? statement.all(...values) : (statement.run(...values), []);
    parentPort.postMessage({ id, rows });
  } catch (error) {
    parentPort.postMessage({ id, error: { message: String(error && error.message), code: error && error.code } });
  }
});
`;

interface Pending {
  resolve: (rows: unknown[]) => void;
  reject: (error: Error) => void;
}

/**
 * A worker that stopped (it could not open the file, or died) fails what it held with an error
 * that reads as "database unavailable" (503, retry), and the driver starts a new one.
 */
function workerGone(reason: string): Error {
  return Object.assign(new Error(`the SQLite read worker stopped: ${reason}`), { code: 'SQLITE_IOERR' });
}

class ReadWorker {
  private readonly worker: Worker;
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;
  alive = true;

  constructor(path: string, driver: string) {
    this.worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { path, driver } });
    this.worker.on('message', (message: { id: number; rows?: unknown[]; error?: { message: string; code?: string } }) => {
      const pending = this.pending.get(message.id);
      if (!pending) return;
      this.pending.delete(message.id);
      if (message.error) pending.reject(Object.assign(new Error(message.error.message), { code: message.error.code }));
      else pending.resolve(message.rows ?? []);
    });
    this.worker.on('error', (error) => {
      this.alive = false;
      this.failAll(workerGone(error.message));
    });
    this.worker.on('exit', (code) => {
      this.alive = false;
      this.failAll(workerGone(`exit code ${code}`));
    });
  }

  get load(): number {
    return this.pending.size;
  }

  run(sql: string, parameters: readonly unknown[]): Promise<unknown[]> {
    return new Promise((resolve, reject) => {
      const id = this.nextId++;
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ id, sql, parameters });
    });
  }

  private failAll(error: Error): void {
    for (const pending of this.pending.values()) pending.reject(error);
    this.pending.clear();
  }

  async stop(): Promise<void> {
    this.alive = false;
    await this.worker.terminate();
  }
}

class ReadWorkersDriver implements Driver {
  private workers: ReadWorker[] | null = null;

  constructor(
    private readonly path: string,
    private readonly size: number,
  ) {}

  /** Kysely calls it before the first query: every worker starts and answers once (the server's start asks for it). */
  async init(): Promise<void> {
    const workers = this.live();
    await Promise.all(workers.map((worker) => worker.run('select 1', [])));
  }

  private live(): ReadWorker[] {
    const start = () => new ReadWorker(this.path, createRequire(import.meta.url).resolve('better-sqlite3'));
    this.workers ??= Array.from({ length: this.size }, start);
    this.workers = this.workers.map((worker) => (worker.alive ? worker : start()));
    return this.workers;
  }

  private pick(): ReadWorker {
    // The least busy worker: a short read does not queue behind a long one when another is free.
    return this.live().reduce((best, worker) => (worker.load < best.load ? worker : best));
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    return {
      executeQuery: async <R>(query: CompiledQuery): Promise<QueryResult<R>> => ({ rows: (await this.pick().run(query.sql, query.parameters)) as R[] }),
      // eslint-disable-next-line require-yield
      streamQuery: async function* () {
        throw new Error('the SQLite read workers do not stream');
      },
    };
  }

  async beginTransaction(): Promise<void> {
    throw new Error('the SQLite read workers are read-only: no transactions');
  }

  async commitTransaction(): Promise<void> {}
  async rollbackTransaction(): Promise<void> {}
  async releaseConnection(): Promise<void> {}

  async destroy(): Promise<void> {
    const workers = this.workers ?? [];
    this.workers = null;
    await Promise.all(workers.map((worker) => worker.stop()));
  }
}

/** A read-only Kysely over `path` whose queries run in `size` worker threads. */
export function sqliteReadWorkers(path: string, size: number): Kysely<Database> {
  const dialect: Dialect = {
    createAdapter: () => new SqliteAdapter(),
    createDriver: () => new ReadWorkersDriver(path, size),
    createQueryCompiler: () => new SqliteQueryCompiler(),
    createIntrospector: (db) => new SqliteIntrospector(db),
  };
  return new Kysely<Database>({ dialect });
}
