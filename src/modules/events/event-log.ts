import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.ts';
import { joinProfiles, leaveProfiles } from '../analytics/breakdown-profiles.ts';
import { repairBreakdownRollups, subtractDeletedEvents } from '../analytics/breakdown-rollups.ts';
import { buildScope } from '../analytics/derived-build.ts';
import { deriveBacklog } from '../analytics/rollup-backlog.ts';
import { profileTotalsIn, profileTotalsOut } from '../analytics/profile-totals.ts';
import { rebuildVisitorRollups, repairRollupsAfterDelete } from '../analytics/visitor-rollup-repair.ts';
import { visitorsByZone } from '../analytics/visitor-zones.ts';
import { repairVisitorTotals } from '../analytics/visitor-totals.ts';
import { recountGoalStats } from '../goals/goal-stats.ts';
import { type GoalStatsRow, goalStatsBetween } from '../goals/tracked-goals.repository.ts';
import { visitorHasEvent } from '../identify/identify.repository.ts';
import { notFound } from '../../errors.ts';
import * as deletes from './server-deletes.repository.ts';
import { type PageviewContext, findLatestPageview } from './server-events.repository.ts';

// What the rest of the server asks of the raw events besides the website API's reads
// (src/modules/stats/event-store.ts): a few lookups, and the deletes that must leave every count
// consistent. One implementation per place the events live: here for the relational database,
// ./clickhouse-event-log.ts for ClickHouse.

export interface EventLog {
  /** Whether the visitor has any event on the website. */
  visitorHasEvent(websiteId: string, visitorId: string): Promise<boolean>;
  /** The visitor's latest pageview on the website, or undefined. */
  findLatestPageview(websiteId: string, visitorId: string): Promise<PageviewContext | undefined>;
  /** Goal statistics over from <= occurred_at < to. */
  goalStatsBetween(websiteId: string, from: string, to: string): Promise<GoalStatsRow[]>;
  /** Deletes the server-recorded goal completions that match, with every count that includes them; how many went. */
  deleteServerGoals(websiteId: string, filters: deletes.GoalFilters): Promise<number>;
  /** After the website's relational rows are deleted: its events where they live apart from them. */
  deleteWebsiteEvents(websiteId: string): Promise<void>;
}

export function sqlEventLog(db: Kysely<Database>): EventLog {
  return {
    visitorHasEvent: (websiteId, visitorId) => visitorHasEvent(db, websiteId, visitorId),
    findLatestPageview: (websiteId, visitorId) => findLatestPageview(db, websiteId, visitorId),
    goalStatsBetween: (websiteId, from, to) => goalStatsBetween(db, websiteId, from, to),
    deleteServerGoals: (websiteId, filters) =>
      db.transaction().execute(async (trx) => {
        const timezone = await deletes.lockWebsiteTimezone(trx, websiteId);
        if (timezone === undefined) throw notFound('Website not found');
        // The repairs below derive the visitors again from their stored events: first fold in
        // the waiting ones, or they would count once from the events and again when derived.
        await deriveBacklog(trx, websiteId);
        const doomed = await deletes.findServerGoals(trx, websiteId, filters);
        if (doomed.length === 0) return 0;
        // While a build runs, only the visitors it has derived have rows to repair; the others'
        // chunks will read what is left of their events (derived-build.ts).
        const { building, built } = await buildScope(trx, websiteId, doomed.map((event) => event.visitorId));
        const repaired = new Set(built);
        const inRollups = doomed.filter((event) => repaired.has(event.visitorId));
        // While the website's days move to a new zone, each visitor's are repaired in theirs (visitor-zones.ts).
        const { moving, groups } = await visitorsByZone(trx, websiteId, timezone, inRollups.map((event) => event.visitorId));
        // Their days leave breakdown_days while the events can still be read.
        for (const [zone, ids] of groups) {
          const theirs = new Set(ids);
          await subtractDeletedEvents(trx, websiteId, zone, inRollups.filter((event) => theirs.has(event.visitorId)));
        }
        const rows = await deletes.deleteEvents(trx, websiteId, doomed.map((event) => event.id));
        const visitorIds = [...new Set(rows.map((row) => row.visitor_id))];
        const repairedIds = visitorIds.filter((id) => repaired.has(id));
        for (const [zone, ids] of groups) {
          // A move or a build keeps the other visitors' days as they are, so it repairs these visitors only.
          if (moving || building) await rebuildVisitorRollups(trx, websiteId, zone, ids);
          else await repairRollupsAfterDelete(trx, websiteId, zone, ids);
        }
        if (repairedIds.length > 0) {
          // The visitors leave their profiles as they were and join them as repaired.
          await leaveProfiles(trx, websiteId, repairedIds);
          await profileTotalsOut(trx, websiteId, repairedIds);
          for (const [zone, ids] of groups) await repairBreakdownRollups(trx, websiteId, zone, ids);
          await repairVisitorTotals(trx, websiteId, repairedIds);
          await joinProfiles(trx, websiteId, repairedIds);
          await profileTotalsIn(trx, websiteId, repairedIds);
        }
        // The goal statistics are kept at ingestion, never built: every visitor's are recounted.
        await recountGoalStats(trx, websiteId, rows.map((row) => row.name as string), visitorIds);
        return rows.length;
      }),
    // The website's transaction deleted its events with everything else.
    deleteWebsiteEvents: async () => {},
  };
}
