import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.ts';
import { type RelocationProgress, relocationProgress } from './day-relocation.ts';
import type { DerivedDataView } from './derived-data.schemas.ts';

// The state of a website's derived data, for GET /websites/{websiteId}/derived-data: the move of
// its day rollups to a new time zone (day-relocation.ts) while one runs, else ready.

const READY: DerivedDataView = {
  state: 'ready',
  reason: null,
  fromTimezone: null,
  toTimezone: null,
  nextTimezone: null,
  visitorsDone: 0,
  visitorsTotal: null,
  progress: null,
  startedAt: null,
};

/**
 * The share of the move done, from 0 to 1; null until the visitors are counted. Visitors who
 * arrive during the move are moved too, so done may pass the total: it stays at 1.
 */
function progressOf(move: RelocationProgress): number | null {
  if (move.visitorsTotal === null) return null;
  if (move.visitorsTotal === 0) return 1;
  return Math.min(1, move.visitorsDone / move.visitorsTotal);
}

export function presentDerivedData(move: RelocationProgress | undefined): DerivedDataView {
  if (!move) return READY;
  return {
    state: 'rebuilding',
    reason: 'timezone',
    fromTimezone: move.fromTimezone,
    toTimezone: move.toTimezone,
    nextTimezone: move.nextTimezone,
    visitorsDone: move.visitorsDone,
    visitorsTotal: move.visitorsTotal,
    progress: progressOf(move),
    startedAt: move.startedAt,
  };
}

export async function getDerivedData(db: Kysely<Database>, websiteId: string): Promise<DerivedDataView> {
  const [move] = await relocationProgress(db, websiteId);
  return presentDerivedData(move);
}
