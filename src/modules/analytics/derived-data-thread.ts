import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { WriteGate } from '../../db/sqlite-write-gate.ts';
import type { ChunkOutcome, ChunkRunner } from './derived-chunk.ts';
import type { ThreadAnswer, ThreadJob, ThreadReady, ThreadRequest } from './derived-data-thread-main.ts';

// On a SQLite file, the derived-data work runs in a worker thread of its own
// (derived-data-thread-main.ts) with a connection of its own: the chunks of builds and moves, and
// the fold of ingested events into the derived tables (rollup-backlog.ts). On the main thread a chunk held
// the event loop: during a build of a million events /healthz waited for chunks (p99 24 ms), and
// with only the statements moved to a thread the deriver's JavaScript still shared the loop with
// every request (a build of 100,000 events under load took 159 s instead of 47 s). In the thread
// it uses the second core; so does the fold of ingested events, which on the main thread took
// about half of its time under returning-visitor traffic (issue 39).
//
// SQLite has one writer at a time, and better-sqlite3 waits for the lock by sleeping: each chunk
// first takes the write gate (sqlite-write-gate.ts), which the main connection's writers take too
// and wait for asynchronously; its reads go on meanwhile, reading the last commit.
//
// The thread starts with the server (`start()`, before it listens) or else with the first job, and
// stops with `stop()`; one that died (or could not start) fails its job as "database
// unavailable", and the next job starts another. A job takes the write gate only once the thread
// has loaded its code and opened its connection: a thread starting (seconds on a loaded machine
// when it runs from the TypeScript sources) must not hold every writer of the server (issue 38:
// the soak's first requests waited 0.7 to 6 s for it).

/** A thread's death, as a fault of the database: the worker logs it and tries again later. */
function threadGone(reason: string): Error {
  return Object.assign(new Error(`the derived-data thread stopped: ${reason}`), { code: 'SQLITE_IOERR' });
}

// Run from the TypeScript sources (tests, the bench), the thread registers tsx's loader before it
// imports them; from the bundle (dist/, `sightline serve`), the compiled entry lies beside this code.
const FROM_SOURCES = `
const { workerData } = require('node:worker_threads');
import(workerData.tsx).then(({ register }) => {
  register();
  return import(workerData.entry);
});
`;

function startThread(path: string): Worker {
  const compiled = join(import.meta.dirname, 'derived-data-thread-main.js');
  if (existsSync(compiled)) return new Worker(compiled, { workerData: { path } });
  // tsx's ESM API (its package's export for import, which require.resolve cannot name).
  const tsx = pathToFileURL(join(dirname(createRequire(import.meta.url).resolve('tsx')), 'esm', 'api', 'index.mjs')).href;
  const entry = pathToFileURL(join(import.meta.dirname, 'derived-data-thread-main.ts')).href;
  return new Worker(FROM_SOURCES, { eval: true, workerData: { path, tsx, entry } });
}

/**
 * At most one checkpoint of the log per this many ms, after the job that ends the interval: each
 * copies the pages written since the last and waits for the disk, and a page that the folds of a
 * second rewrite (the rollups' hot rows) is copied once. After every job the returning-visitor
 * bench gave 855 and 898 events/s (441 and 452 µs of server CPU an event), once a second 973 and
 * 949 (438 and 420): docs/decisions.md. The main connection's automatic checkpoint (1,000 pages)
 * still bounds the log.
 */
const CHECKPOINT_INTERVAL_MS = 1000;

export class DerivedDataThread {
  private worker: Worker | null = null;
  /** Settles when the current worker has said it is ready (or failed before). */
  private ready: Promise<Worker> | null = null;
  private readonly pending = new Map<number, { resolve: (outcome: ChunkOutcome | number) => void; reject: (error: Error) => void }>();
  private nextId = 0;
  /** The checkpoint sent after the last job, if it runs: the next job takes the gate once it is done. */
  private checkpointing: Promise<unknown> = Promise.resolve();
  /** When the last checkpoint was sent (ms since the epoch). */
  private lastCheckpoint = 0;

  constructor(
    private readonly path: string,
    private readonly gate: WriteGate,
  ) {}

  /** Runs one chunk in the thread, holding the write gate meanwhile. */
  readonly run: ChunkRunner = async (request) => (await this.gated({ kind: 'chunk', request })) as ChunkOutcome;

  /**
   * Folds up to `limit` (all without one) of the website's waiting events into the derived
   * tables, in one transaction of the thread's, holding the write gate meanwhile; how many it took.
   */
  readonly deriveBacklog = async (websiteId: string, limit?: number): Promise<number> =>
    (await this.gated({ kind: 'backlog', websiteId, limit: limit ?? null })) as number;

  /**
   * Runs a job holding the write gate, then, once a second, checkpoints the log without it
   * (derived-data-thread-main.ts): the main connection commits while the thread copies the log into
   * the database file and waits for the disk. The next job takes the gate only once that
   * checkpoint is done, so the gate is never held while the thread is busy with one.
   */
  private async gated(job: ThreadJob): Promise<ChunkOutcome | number> {
    const worker = await this.started();
    await this.checkpointing;
    const outcome = await this.gate.run(() => this.send(worker, job));
    if (Date.now() - this.lastCheckpoint >= CHECKPOINT_INTERVAL_MS) {
      this.lastCheckpoint = Date.now();
      // A failed checkpoint loses nothing: the log is copied by the next one, or by the main connection's own.
      this.checkpointing = this.send(worker, { kind: 'checkpoint' }).catch(() => {});
    }
    return outcome;
  }

  /** Starts the thread and waits until it can take jobs (the server calls it before listening). */
  async start(): Promise<void> {
    await this.started();
  }

  private started(): Promise<Worker> {
    this.current();
    return this.ready!;
  }

  private send(worker: Worker, job: ThreadJob): Promise<ChunkOutcome | number> {
    if (worker !== this.worker) return Promise.reject(threadGone('it stopped before the job was sent'));
    return new Promise((resolve, reject) => {
      const id = this.nextId++;
      this.pending.set(id, { resolve, reject });
      worker.postMessage({ id, job } satisfies ThreadRequest);
    });
  }

  private current(): Worker {
    if (this.worker) return this.worker;
    const worker = startThread(this.path);
    worker.unref();
    let readied!: (worker: Worker) => void;
    let failed!: (error: Error) => void;
    this.ready = new Promise<Worker>((resolve, reject) => {
      readied = resolve;
      failed = reject;
    });
    // Nobody may be waiting yet: a start that fails is reported to the jobs that wait for it.
    this.ready.catch(() => {});
    worker.on('message', (message: ThreadAnswer | ThreadReady) => {
      if ('ready' in message) return readied(worker);
      const { id, outcome, error } = message;
      const pending = this.pending.get(id);
      if (!pending) return;
      this.pending.delete(id);
      if (error) pending.reject(Object.assign(new Error(error.message), { code: error.code }));
      else pending.resolve(outcome!);
    });
    const gone = (reason: string) => {
      failed(threadGone(reason));
      if (this.worker === worker) this.worker = null;
      for (const pending of this.pending.values()) pending.reject(threadGone(reason));
      this.pending.clear();
    };
    worker.on('error', (error) => gone(error.message));
    worker.on('exit', (code) => gone(`exit code ${code}`));
    this.worker = worker;
    return worker;
  }

  /** Stops the thread after the chunk under way (the caller waits for it first). */
  async stop(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    await worker?.terminate();
  }
}
