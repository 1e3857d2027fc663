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
//
// Nor do its commits checkpoint the log (`wal_autocheckpoint = 0`): a commit that did held the
// write gate while it copied the log into the database file and waited for the disk. After a
// job, at most once a second, with the gate given back, derived-data-thread.ts sends a checkpoint
// job: a PASSIVE checkpoint, which waits for no writer, so the main connection commits meanwhile.
// The main connection keeps SQLite's automatic checkpoint, which these leave little to do.

/**
 * A job for the thread: a chunk of a build or move, up to `limit` of a website's waiting events
 * folded in, or a checkpoint of the log (sent without the write gate).
 */
export type ThreadJob = { kind: 'chunk'; request: ChunkRequest } | { kind: 'backlog'; websiteId: string; limit: number | null } | { kind: 'checkpoint' };

export interface ThreadRequest {
  id: number;
  job: ThreadJob;
}

export interface ThreadAnswer {
  id: number;
  /** A chunk's outcome, how many waiting events a backlog job took, or how many pages of the log a checkpoint copied. */
  outcome?: ChunkOutcome | number;
  error?: { message: string; code?: string };
}

/** Sent once, when the thread has loaded its code and opened its connection. */
export interface ThreadReady {
  ready: true;
}

const { path } = workerData as { path: string };
const { database, raw } = openSqlite(path, { flushedByCaller: true });
raw.pragma('wal_autocheckpoint = 0');
const db = new Kysely<Database>({ dialect: new SqliteDialect({ database }) });
const port = parentPort!;

/** Copies what it can of the log into the database file, waiting for no one; how many pages it copied. */
function checkpoint(): number {
  const [result] = raw.pragma('wal_checkpoint(PASSIVE)') as { busy: number; log: number; checkpointed: number }[];
  return result?.checkpointed ?? 0;
}

function run(job: ThreadJob): Promise<ChunkOutcome | number> {
  if (job.kind === 'chunk') return runChunk(db, job.request);
  if (job.kind === 'checkpoint') return Promise.resolve().then(checkpoint);
  return lazyTransaction(db, (trx) => deriveBacklog(trx, job.websiteId, job.limit ?? Number.POSITIVE_INFINITY));
}

// One job at a time, in the order sent: a checkpoint must not run inside a job's transaction.
let tail: Promise<unknown> = Promise.resolve();

port.on('message', ({ id, job }: ThreadRequest) => {
  const running = tail.then(() => run(job));
  tail = running.catch(() => {});
  running.then(
    (outcome) => port.postMessage({ id, outcome } satisfies ThreadAnswer),
    (error: unknown) => {
      const { message, code } = error as { message?: unknown; code?: unknown };
      port.postMessage({ id, error: { message: String(message), code: typeof code === 'string' ? code : undefined } } satisfies ThreadAnswer);
    },
  );
});
port.postMessage({ ready: true } satisfies ThreadReady);
