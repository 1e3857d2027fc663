import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.ts';
import { withDeadline } from '../lib/deadline.ts';
import { relocationProgress } from '../modules/analytics/day-relocation.ts';
import { buildProgress } from '../modules/analytics/derived-build.ts';
import { funnelBuildProgress } from '../modules/analytics/funnel-build.ts';
import type { DatabaseReadings } from './metrics-registry.ts';

// The gauges a scrape reads from the database: two small grouped counts on indexed status
// columns, the count of events waiting for their rollups (a short table), and the moves of day
// rollups to a new time zone (a row per website moving), the builds of derived tables and of
// single funnels (a row each). A scrape must
// answer even when the database does not, so the reads get a deadline and any failure reads as
// "no readings" (the scrape then reports sightline_database_up 0).

export const READ_DEADLINE_MS = 2000;

async function read(db: Kysely<Database>, now: number): Promise<DatabaseReadings> {
  const [outbox, jobs, backlog, moves, builds, funnels] = await Promise.all([
    db
      .selectFrom('mail_outbox')
      .select((eb) => ['status', eb.fn.countAll<number>().as('count'), eb.fn.min('created_at').as('oldest')])
      .where('status', 'in', ['pending', 'failed'])
      .groupBy('status')
      .execute(),
    db
      .selectFrom('integration_jobs')
      .select((eb) => ['status', eb.fn.countAll<number>().as('count')])
      .where('status', 'in', ['queued', 'running', 'failed'])
      .groupBy('status')
      .execute(),
    db
      .selectFrom('rollup_backlog')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .executeTakeFirstOrThrow(),
    relocationProgress(db),
    buildProgress(db),
    funnelBuildProgress(db),
  ]);
  const relocations = {
    websites: moves.length,
    visitorsLeft: moves.reduce((sum, move) => sum + Math.max(0, (move.visitorsTotal ?? move.visitorsDone) - move.visitorsDone), 0),
  };
  const derivedBuilds = {
    websites: builds.length,
    eventsLeft: builds.reduce((sum, build) => sum + Math.max(0, (build.eventsTotal ?? build.eventsDone) - build.eventsDone), 0),
  };
  const funnelBuilds = {
    funnels: funnels.length,
    visitorsLeft: funnels.reduce((sum, funnel) => sum + Math.max(0, (funnel.visitorsTotal ?? funnel.visitorsDone) - funnel.visitorsDone), 0),
  };
  const readings: DatabaseReadings = { outbox: {}, oldestPendingMailAgeSeconds: 0, jobs: {}, rollupBacklog: Number(backlog.count), relocations, derivedBuilds, funnelBuilds };
  for (const row of outbox) {
    readings.outbox[row.status as 'pending' | 'failed'] = Number(row.count);
    if (row.status === 'pending' && row.oldest) {
      readings.oldestPendingMailAgeSeconds = Math.max(0, (now - Date.parse(row.oldest)) / 1000);
    }
  }
  for (const row of jobs) readings.jobs[row.status as 'queued' | 'running' | 'failed'] = Number(row.count);
  return readings;
}

/** The readings, or null when the database fails or does not answer within the deadline. */
export async function readDatabase(db: Kysely<Database>, deadlineMs = READ_DEADLINE_MS): Promise<DatabaseReadings | null> {
  try {
    return await withDeadline(read(db, Date.now()), deadlineMs);
  } catch {
    return null;
  }
}
