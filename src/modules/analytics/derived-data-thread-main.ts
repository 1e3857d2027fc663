import { parentPort, workerData } from 'node:worker_threads';
import { Kysely, SqliteDialect } from 'kysely';
import type { Database } from '../../db/schema.ts';
import { openSqlite } from '../../db/sqlite-driver.ts';
import { type ChunkRequest, runChunk } from './derived-chunk.ts';

// The derived-data thread: runs the chunks of builds and moves of a SQLite file's derived data on
// a connection of its own, so neither the deriver's JavaScript nor its statements hold the event
// loop (derived-data-thread.ts starts it, and takes the write gate for each chunk). Its commits
// do not wait for the disk (`synchronous = NORMAL`, nothing flushed after): the chunks are lazy
// commits (lazy-commits.ts), made durable by the next durable commit of the main connection.

export interface ThreadRequest {
  id: number;
  request: ChunkRequest;
}

export interface ThreadAnswer {
  id: number;
  outcome?: Awaited<ReturnType<typeof runChunk>>;
  error?: { message: string; code?: string };
}

const { path } = workerData as { path: string };
const { database } = openSqlite(path, { flushedByCaller: true });
const db = new Kysely<Database>({ dialect: new SqliteDialect({ database }) });
const port = parentPort!;

port.on('message', ({ id, request }: ThreadRequest) => {
  runChunk(db, request).then(
    (outcome) => port.postMessage({ id, outcome } satisfies ThreadAnswer),
    (error: unknown) => {
      const { message, code } = error as { message?: unknown; code?: unknown };
      port.postMessage({ id, error: { message: String(message), code: typeof code === 'string' ? code : undefined } } satisfies ThreadAnswer);
    },
  );
});
