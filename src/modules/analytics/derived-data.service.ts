import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.ts';
import { type RelocationProgress, relocationProgress } from './day-relocation.ts';
import { type BuildProgress, buildProgress } from './derived-build.ts';
import type { DerivedDataView } from './derived-data.schemas.ts';
import { type FunnelBuildProgress, funnelBuildProgress } from './funnel-build.ts';

// The state of a website's derived data, for GET /websites/{websiteId}/derived-data: the build of
// its derived tables (derived-build.ts) or the move of its day rollups to a new time zone
// (day-relocation.ts) while one runs, else ready; and the builds of single funnels
// (funnel-build.ts), which leave the state as it is (only those funnels' reports read raw).

const READY: DerivedDataView = {
  state: 'ready',
  reason: null,
  detail: null,
  fromTimezone: null,
  toTimezone: null,
  nextTimezone: null,
  visitorsDone: 0,
  visitorsTotal: null,
  eventsDone: 0,
  eventsTotal: null,
  progress: null,
  startedAt: null,
  funnelBuilds: [],
};

/**
 * The share done, from 0 to 1; null until the total is counted. What arrives meanwhile is moved
 * or derived too, so done may pass the total: it stays at 1.
 */
function share(done: number, total: number | null): number | null {
  if (total === null) return null;
  if (total === 0) return 1;
  return Math.min(1, done / total);
}

export function presentDerivedData(move: RelocationProgress | undefined, build?: BuildProgress, funnels: FunnelBuildProgress[] = []): DerivedDataView {
  const funnelBuilds = funnels.map((funnel) => ({
    funnelId: funnel.funnelId,
    visitorsDone: funnel.visitorsDone,
    visitorsTotal: funnel.visitorsTotal,
    progress: share(funnel.visitorsDone, funnel.visitorsTotal),
    startedAt: funnel.startedAt,
  }));
  return { ...presentWebsiteBuild(move, build), funnelBuilds };
}

function presentWebsiteBuild(move: RelocationProgress | undefined, build?: BuildProgress): DerivedDataView {
  if (build) {
    return {
      ...READY,
      state: 'rebuilding',
      reason: 'build',
      detail: build.reason,
      visitorsDone: build.visitorsDone,
      eventsDone: build.eventsDone,
      eventsTotal: build.eventsTotal,
      progress: share(build.eventsDone, build.eventsTotal),
      startedAt: build.startedAt,
    };
  }
  if (!move) return READY;
  return {
    ...READY,
    state: 'rebuilding',
    reason: 'timezone',
    fromTimezone: move.fromTimezone,
    toTimezone: move.toTimezone,
    nextTimezone: move.nextTimezone,
    visitorsDone: move.visitorsDone,
    visitorsTotal: move.visitorsTotal,
    progress: share(move.visitorsDone, move.visitorsTotal),
    startedAt: move.startedAt,
  };
}

export async function getDerivedData(db: Kysely<Database>, websiteId: string): Promise<DerivedDataView> {
  const [[move], [build], funnels] = await Promise.all([relocationProgress(db, websiteId), buildProgress(db, websiteId), funnelBuildProgress(db, websiteId)]);
  return presentDerivedData(move, build, funnels);
}
