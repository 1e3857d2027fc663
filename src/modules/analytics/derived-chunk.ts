import type { Kysely } from 'kysely';
import { lazyTransaction } from '../../db/lazy-commits.ts';
import type { Database } from '../../db/schema.ts';
import { relocateChunk } from './day-relocation.ts';
import { type ClearRows, buildChunk } from './derived-build.ts';
import { funnelBuildChunk } from './funnel-build.ts';

// One chunk of a website's background work on its derived data, the unit the derived-data worker
// (derived-data-worker.ts) runs and sizes: on PostgreSQL and on a SQLite database in memory in a
// transaction of the caller's connection (`runChunk`), on a SQLite file in the derived-data thread
// (derived-data-thread-main.ts), whose requests and outcomes are plain data for that reason.

/**
 * One chunk of the website's build, or else of its move (a website has at most one: starting a
 * build drops the move, derived-build.ts startBuild), or else of a funnel's build (funnel-build.ts:
 * after the move, which would otherwise find some of its rows in the old zone), in the caller's
 * transaction, under the website's derived-data lock (buildChunk takes it).
 */
export async function derivedDataChunk(trx: Kysely<Database>, websiteId: string, size: number, clearRows?: ClearRows) {
  const built = await buildChunk(trx, websiteId, size, clearRows);
  if (built.phase !== null) return built;
  const moving = await trx.selectFrom('rollup_relocations').select('website_id').where('website_id', '=', websiteId).executeTakeFirst();
  if (moving) return { ...(await relocateChunk(trx, websiteId, size)), phase: 'move' as const };
  return { ...(await funnelBuildChunk(trx, websiteId, size)), phase: 'funnel' as const };
}

export type DerivedDataChunkResult = Awaited<ReturnType<typeof derivedDataChunk>>;

export interface ChunkRequest {
  websiteId: string;
  /** Events of a build, or visitors of a move or of a funnel's build. */
  size: number;
  /** Rows per chunk of a clear phase, by table; `defaultClearRows` for a table not named. */
  clearRows: Readonly<Record<string, number>>;
  defaultClearRows: number;
}

export interface ChunkOutcome {
  result: DerivedDataChunkResult;
  /** Milliseconds of work inside the transaction (its commit left out: it does not wait for the disk). */
  took: number;
}

/** Runs a chunk; on a SQLite file, in the derived-data thread. */
export type ChunkRunner = (request: ChunkRequest) => Promise<ChunkOutcome>;

/** Runs the chunk in a transaction on `db`, whose commit does not wait for the disk (lazy-commits.ts: a crash loses the cursor with the rows). */
export async function runChunk(db: Kysely<Database>, request: ChunkRequest): Promise<ChunkOutcome> {
  let took = 0;
  const clearRows = (table: string) => request.clearRows[table] ?? request.defaultClearRows;
  const result = await lazyTransaction(db, async (trx) => {
    const started = performance.now();
    const done = await derivedDataChunk(trx, request.websiteId, request.size, clearRows);
    took = performance.now() - started;
    return done;
  });
  return { result, took };
}
