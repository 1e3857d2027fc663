import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import { describeFault } from '../../db/faults.ts';
import type { Database } from '../../db/schema.ts';
import { relocateChunk } from './day-relocation.ts';
import { buildChunk } from './derived-build.ts';

// Runs the background work on websites' derived data, a chunk of visitors per transaction, sized
// so each takes about `chunkMs`, until none is left: the builds of derived tables from the raw
// events (derived-build.ts) and the moves of day rollups to a new time zone (day-relocation.ts);
// a website has at most one of the two. On SQLite every statement runs on the event loop and the
// one connection serves every write, so chunks there are short (8 ms by default; 200 ms on
// PostgreSQL, where a chunk holds only the website's rollup row lock and every statement is
// planned anew): between two of them the loop answers what waits. The work is rows of
// derived_builds and rollup_relocations, so a crash or a stop loses nothing: the next start (of
// any instance) goes on from the cursor. Several instances may run at once; each chunk takes the
// website's row lock and reads the cursor under it, so they take turns.

/**
 * One chunk of the website's build, or else of its move, in the caller's transaction (a website
 * has at most one: starting a build drops the move, derived-build.ts startBuild).
 */
export async function derivedDataChunk(trx: Kysely<Database>, websiteId: string, size: number) {
  const built = await buildChunk(trx, websiteId, size);
  return built.phase !== null ? built : { ...(await relocateChunk(trx, websiteId, size)), phase: 'move' as const };
}

/** How often the table is looked at besides the wake-ups (moves another instance started or left). */
const POLL_INTERVAL_MS = 5_000;
/** Visitors in a website's first chunk, before its chunks' durations are known. */
const FIRST_CHUNK = 2;
/** Fewest visitors per chunk, however slow (one visitor's days move in one transaction). */
const MIN_CHUNK = 1;

export interface DerivedDataWorkerOptions {
  /** What each chunk's transaction aims to take. */
  chunkMs: number;
  /** Most visitors per chunk. */
  maxVisitors: number;
}

export class DerivedDataWorker {
  private running: Promise<void> | null = null;
  private again = false;
  private poll: NodeJS.Timeout | null = null;
  private stopped = true;
  private failing = false;
  /** Visitors per chunk, per website, adapted to the chunks' durations. */
  private readonly sizes = new Map<string, number>();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly log: FastifyBaseLogger,
    private readonly options: DerivedDataWorkerOptions,
  ) {}

  /** Starts watching (again, after a stop); does nothing while it already watches. */
  start(): void {
    if (this.poll) return;
    this.stopped = false;
    this.poll = setInterval(() => this.wake(), POLL_INTERVAL_MS);
    this.poll.unref();
    this.wake();
  }

  /** A build or a move was recorded (or may have been): run it now. */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.runAll()
      .then(() => this.recovered())
      .catch((error: unknown) => this.failed(error))
      .finally(() => {
        this.running = null;
        if (this.again) {
          this.again = false;
          this.wake();
        }
      });
  }

  /** Resolves once no build or move is left (tests and the bench), running them itself if need be. */
  async settle(): Promise<void> {
    if (this.running) await this.running;
    await this.runAll(true);
  }

  /** Stops after the chunk under way; what is left goes on at the next start. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.poll) clearInterval(this.poll);
    this.poll = null;
    if (this.running) await this.running;
  }

  private async runAll(force = false): Promise<void> {
    for (;;) {
      const rows = await this.db
        .selectFrom('derived_builds')
        .select('website_id')
        .union(this.db.selectFrom('rollup_relocations').select('website_id'))
        .execute();
      if (rows.length === 0) return;
      for (const { website_id: websiteId } of rows) {
        let finished = false;
        while (!finished) {
          if (this.stopped && !force) return;
          finished = await this.chunk(websiteId);
          // Between two chunks, whatever waits for the connection or the event loop goes first.
          await new Promise((resolve) => setImmediate(resolve));
        }
        this.sizes.delete(websiteId);
      }
    }
  }

  /** One chunk of the website's build or move; whether the website has none left. */
  private async chunk(websiteId: string): Promise<boolean> {
    const size = this.sizes.get(websiteId) ?? Math.min(FIRST_CHUNK, this.options.maxVisitors);
    const started = performance.now();
    const result = await this.db.transaction().execute((trx) => derivedDataChunk(trx, websiteId, size));
    const took = performance.now() - started;
    // A chunk of the clear phase deletes a fixed number of rows, whatever the size.
    if (result.phase === 'clear') return false;
    // Aim the next chunk at chunkMs, growing at most fourfold at a time.
    const aimed = took > 0 ? Math.round((size * this.options.chunkMs) / took) : size * 4;
    this.sizes.set(websiteId, Math.min(this.options.maxVisitors, Math.max(MIN_CHUNK, Math.min(aimed, size * 4))));
    return result.finished;
  }

  private recovered(): void {
    if (this.failing) this.log.info('rollups: building and moving derived data again');
    this.failing = false;
  }

  private failed(error: unknown): void {
    // The cursors are committed with each chunk; the poll tries again from there.
    if (!this.failing) this.log.warn({ fault: describeFault(error) }, 'rollups: cannot build or move derived data now; retrying');
    this.failing = true;
  }
}
