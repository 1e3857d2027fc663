import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import { describeFault } from '../../db/faults.ts';
import type { Database } from '../../db/schema.ts';
import { WakeLoop } from '../../lib/wake-loop.ts';
import { vacuumCleared } from './derived-build.ts';
import { type ChunkRunner, runChunk } from './derived-chunk.ts';

// Runs the background work on websites' derived data, a chunk per transaction (of events for a
// build, of visitors for a move), sized so each takes about `chunkMs`, until none is left: the
// builds of derived tables from the raw events (derived-build.ts) and the moves of day rollups
// to a new time zone (day-relocation.ts), a website has at most one of the two; then the builds of
// single funnels' rows (funnel-build.ts), a chunk of visitors each. Where a chunk runs
// is its runner's (derived-chunk.ts): on a SQLite file the derived-data thread
// (derived-data-thread.ts), whose chunks hold the write gate and nothing else (50 ms by default:
// the main connection's writers wait for them, its reads and the event loop do not); in memory the
// main connection, whose statements hold the event loop (8 ms, and a pause of `pauseMs` between
// chunks so that requests get the connection); on PostgreSQL a connection of the pool, where a chunk
// holds only the website's derived-data lock and every statement is planned anew (200 ms). The work
// is rows of derived_builds, rollup_relocations and funnel_builds, so a crash or a stop loses nothing: the next
// start (of any instance) goes on from the cursor. Several instances may run at once; each chunk
// takes the website's derived-data lock and reads the cursor under it, so they take turns.

/** How often the table is looked at besides the wake-ups (moves another instance started or left). */
const POLL_INTERVAL_MS = 5_000;
/** Events or visitors in a website's first chunk, before its chunks' durations are known. */
const FIRST_CHUNK = 2;
/** Rows in a website's first chunk of a clear phase. */
const FIRST_CLEAR = 100;
/** Fewest per chunk, however slow (one visitor's days move, or are derived for a funnel, in one transaction). */
const MIN_CHUNK = 1;
/** Most events per chunk of a build, rows per chunk of its clear phase. */
const MAX_BUILD_EVENTS = 20_000;
const MAX_CLEAR_ROWS = 20_000;

/**
 * How many per chunk, per website: events (a build) or visitors (a move, a funnel's build), and rows of each table
 * (a clear phase: a row of one table costs several times one of another, by their indexes).
 */
interface ChunkSizes {
  work: number;
  clear: Map<string, number>;
}

export interface DerivedDataWorkerOptions {
  /** What each chunk's transaction aims to take. */
  chunkMs: number;
  /** The pause between two chunks, for the requests under way. */
  pauseMs?: number;
  /** Most visitors per chunk of a move or of a funnel's build. */
  maxVisitors: number;
  /** Where each chunk runs (on a SQLite file, the derived-data thread); default: a transaction on `db`. */
  runner?: ChunkRunner;
}

export class DerivedDataWorker {
  private readonly loop: WakeLoop;
  private failing = false;
  /** Per website, adapted to the chunks' durations. */
  private readonly sizes = new Map<string, ChunkSizes>();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly log: FastifyBaseLogger,
    private readonly options: DerivedDataWorkerOptions,
  ) {
    this.loop = new WakeLoop(
      () =>
        this.runAll().then(
          () => this.recovered(),
          (error: unknown) => this.failed(error),
        ),
      POLL_INTERVAL_MS,
    );
  }

  /** Starts watching (again, after a stop); does nothing while it already watches. */
  start(): void {
    this.loop.start();
  }

  /** A build or a move was recorded (or may have been): run it now. */
  wake(): void {
    this.loop.wake();
  }

  /** Resolves once no build or move is left (tests and the bench), running them itself if need be. */
  async settle(): Promise<void> {
    await this.loop.idle();
    await this.runAll(true);
  }

  /** Stops after the chunk under way; what is left goes on at the next start. */
  async stop(): Promise<void> {
    this.loop.halt();
    await this.loop.idle();
  }

  private async runAll(force = false): Promise<void> {
    for (;;) {
      const rows = await this.db
        .selectFrom('derived_builds')
        .select('website_id')
        .union(this.db.selectFrom('rollup_relocations').select('website_id'))
        .union(this.db.selectFrom('funnel_builds').select('website_id'))
        .execute();
      if (rows.length === 0) return;
      for (const { website_id: websiteId } of rows) {
        let finished = false;
        while (!finished) {
          if (this.loop.isStopped && !force) return;
          finished = await this.chunk(websiteId);
          // Between two chunks, whatever waits for the connection or the event loop goes first.
          const pauseMs = force ? 0 : (this.options.pauseMs ?? 0);
          await new Promise((resolve) => (pauseMs > 0 ? setTimeout(resolve, pauseMs) : setImmediate(resolve)));
        }
        this.sizes.delete(websiteId);
      }
    }
  }

  /**
   * One chunk of the website's build or move; whether the website has none left. Its size aims
   * at `chunkMs` of the work inside the transaction (what the runner holds: the write gate, or
   * the event loop); the commit does not wait for the disk (lazy-commits.ts: a crash loses the
   * cursor with the rows).
   */
  private async chunk(websiteId: string): Promise<boolean> {
    let sizes = this.sizes.get(websiteId);
    if (!sizes) this.sizes.set(websiteId, (sizes = { work: FIRST_CHUNK, clear: new Map() }));
    const clearRows = (table: string) => sizes.clear.get(table) ?? FIRST_CLEAR;
    const run = this.options.runner ?? ((request) => runChunk(this.db, request));
    const { result, took } = await run({ websiteId, size: sizes.work, clearRows: Object.fromEntries(sizes.clear), defaultClearRows: FIRST_CLEAR });
    // Aim the next chunk at chunkMs, growing at most twofold at a time (a jump overshoots on SQLite, where a chunk holds the loop).
    const next = (size: number, most: number) => {
      const aimed = took > 0 ? Math.round((size * this.options.chunkMs) / took) : size * 2;
      return Math.min(most, Math.max(MIN_CHUNK, Math.min(aimed, size * 2)));
    };
    // Outside the chunk's transaction, as VACUUM must be.
    if (result.phase === 'clear' && 'cleared' in result && result.cleared) await vacuumCleared(this.db);
    if (result.phase === 'clear') {
      if (result.table !== undefined) sizes.clear.set(result.table, next(clearRows(result.table), MAX_CLEAR_ROWS));
    } else {
      sizes.work = next(sizes.work, result.phase === 'derive' ? MAX_BUILD_EVENTS : this.options.maxVisitors);
    }
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
