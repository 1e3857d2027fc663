import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.ts';
import * as derivedData from '../analytics/maintainer.ts';
import { recountGoalStats } from '../goals/goal-stats.ts';
import { type GoalStatsRow, goalStatsBetween } from '../goals/tracked-goals.repository.ts';
import { visitorHasEvent } from '../identify/identify.repository.ts';
import { notFound } from '../../errors.ts';
import * as deletes from './server-deletes.repository.ts';
import { type PageviewContext, findLatestPageview } from './server-events.repository.ts';
import { type EventCursor, type StoredEvent, sqlEventPage } from './event-export.ts';

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
  /** A page of the website's raw events, every stored column, in (occurred_at, id) order after `after` (the raw export). */
  eventPage(websiteId: string, after: EventCursor | null, limit: number): Promise<StoredEvent[]>;
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
        // The repairs derive the visitors again from their stored events: first fold in the
        // waiting ones, or they would count once from the events and again when derived.
        await derivedData.settleWebsite(trx, websiteId);
        const doomed = await deletes.findServerGoals(trx, websiteId, filters);
        if (doomed.length === 0) return 0;
        let rows: Awaited<ReturnType<typeof deletes.deleteEvents>> = [];
        await derivedData.deleteEvents(trx, websiteId, timezone, doomed, async () => {
          rows = await deletes.deleteEvents(trx, websiteId, doomed.map((event) => event.id));
          return rows.map((row) => row.visitor_id);
        });
        const visitorIds = [...new Set(rows.map((row) => row.visitor_id))];
        // The goal statistics are kept at ingestion, never built: every visitor's are recounted.
        await recountGoalStats(trx, websiteId, rows.map((row) => row.name as string), visitorIds);
        return rows.length;
      }),
    // The website's transaction deleted its events with everything else.
    deleteWebsiteEvents: async () => {},
    eventPage: (websiteId, after, limit) => sqlEventPage(db, websiteId, after, limit),
  };
}
