import { parentPort, workerData } from 'node:worker_threads';
import { Kysely, SqliteDialect } from 'kysely';
import type { Database } from '../../db/schema.ts';
import { openSqlite } from '../../db/sqlite-driver.ts';
import { lazyTransaction } from '../../db/lazy-commits.ts';
import { type ChunkOutcome, type ChunkRequest, runChunk } from './derived-chunk.ts';
import { deriveBacklog } from './rollup-backlog.ts';

// The derived-data thread: runs the derived-data work of a SQLite file on a connection of its
// own, so neither the deriver's JavaScript nor its statements hold the event loop
// (derived-data-thread.ts starts it, and takes the write gate for each job): the chunks of builds
// and moves, and the fold of waiting events into the derived tables (rollup-backlog.ts). Its
// commits do not wait for the disk (`synchronous = NORMAL`, nothing flushed after): they are lazy
// commits (lazy-commits.ts), made durable by the next durable commit of the main connection. A
// fold lost with them leaves its events in the backlog, as atomic as before: derived again.

/** A job for the thread: a chunk of a build or move, or up to `limit` of a website's waiting events folded in. */
export type ThreadJob = { kind: 'chunk'; request: ChunkRequest } | { kind: 'backlog'; websiteId: string; limit: number | null };

export interface ThreadRequest {
  id: number;
  job: ThreadJob;
}

export interface ThreadAnswer {
  id: number;
  /** A chunk's outcome, or how many waiting events a backlog job took. */
  outcome?: ChunkOutcome | number;
  error?: { message: string; code?: string };
}

/** Sent once, when the thread has loaded its code and opened its connection. */
export interface ThreadReady {
  ready: true;
}

const { path } = workerData as { path: string };
const { database } = openSqlite(path, { flushedByCaller: true });
const db = new Kysely<Database>({ dialect: new SqliteDialect({ database }) });
const port = parentPort!;

function run(job: ThreadJob): Promise<ChunkOutcome | number> {
  if (job.kind === 'chunk') return runChunk(db, job.request);
  return lazyTransaction(db, (trx) => deriveBacklog(trx, job.websiteId, job.limit ?? Number.POSITIVE_INFINITY));
}

port.on('message', ({ id, job }: ThreadRequest) => {
  run(job).then(
    (outcome) => port.postMessage({ id, outcome } satisfies ThreadAnswer),
    (error: unknown) => {
      const { message, code } = error as { message?: unknown; code?: unknown };
      port.postMessage({ id, error: { message: String(message), code: typeof code === 'string' ? code : undefined } } satisfies ThreadAnswer);
    },
  );
});
port.postMessage({ ready: true } satisfies ThreadReady);
