import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { DerivedState } from '../read-planner.ts';
import { answerRead } from '../read-planner.ts';
import type { Database } from '../../../db/schema.ts';
import type { LiveMap } from '../event-store.ts';
import { num } from './scope-sql.ts';
import { liveEvent, liveVisitor } from '../visitor-shapes.ts';
import { recentPayments, visitorPeople } from './visitor-people.ts';
import { iso, latestEvents, sessionsOf, visitStats } from './visitor-rows.ts';

// Realtime: who has had an event since a moment, and what happened. Who is online comes from
// visitor_totals (each visitor's latest event, `last_at`, on its index (website, last_at desc,
// visitor)), one row per visitor since the moment, when the planner may read it: the raw events'
// count grew with the window (five minutes of a busy website's events, each fetched for its
// visitor: 9 ms at the soak's start, 40-67 ms at five minutes on PostgreSQL, the read that filled
// the one read slot). While a build runs, the raw events answer (visitor_totals' rows of the
// visitors not yet built lack the events since it began).

export const RECENT_EVENTS = 50;
export const MAP_VISITORS = 500;

const REALTIME_SHAPE = { range: 'up-to-now', filters: 'none' } as const;

export async function liveVisitors(db: Kysely<Database>, websiteId: string, since: string, state: DerivedState): Promise<number> {
  const count = (query: RawBuilder<{ n: unknown }>) => query.execute(db).then(({ rows }) => num(rows[0]?.n));
  return answerRead('realtime', REALTIME_SHAPE, state, {
    visitor_totals: () => count(sql`select count(*) as n from visitor_totals v where v.website_id = ${websiteId} and v.last_at >= ${since}`),
    events: () => count(sql`select count(distinct e.visitor_id) as n from events e where e.website_id = ${websiteId} and e.occurred_at >= ${since}`),
  });
}

/** The visitors online, the latest first (ties by id), at most MAP_VISITORS. */
function activeVisitors(db: Kysely<Database>, websiteId: string, since: string, state: DerivedState): Promise<string[]> {
  const ids = (query: RawBuilder<{ visitor_id: string }>) => query.execute(db).then(({ rows }) => rows.map((row) => row.visitor_id));
  return answerRead('realtime', REALTIME_SHAPE, state, {
    visitor_totals: () =>
      ids(sql`select v.visitor_id from visitor_totals v where v.website_id = ${websiteId} and v.last_at >= ${since} order by v.last_at desc, v.visitor_id limit ${MAP_VISITORS}`),
    events: () =>
      ids(sql`
        select e.visitor_id from events e where e.website_id = ${websiteId} and e.occurred_at >= ${since}
        group by e.visitor_id order by max(e.occurred_at) desc, e.visitor_id limit ${MAP_VISITORS}`),
  });
}

export async function liveMap(db: Kysely<Database>, websiteId: string, since: string, state: DerivedState): Promise<LiveMap> {
  const [ids, recent, payments] = await Promise.all([
    activeVisitors(db, websiteId, since, state),
    db
      .selectFrom('events')
      .selectAll()
      .where('website_id', '=', websiteId)
      .where('occurred_at', '>=', since)
      .orderBy('occurred_at', 'desc')
      .orderBy('id', 'desc')
      .limit(RECENT_EVENTS)
      .execute(),
    recentPayments(db, websiteId, since, RECENT_EVENTS),
  ]);
  const [latest, visits, people] = await Promise.all([
    latestEvents(db, websiteId, ids),
    visitStats(db, websiteId, ids),
    visitorPeople(db, websiteId, peopleOf(ids, recent, payments)),
  ]);
  const sessions = await sessionsOf(db, websiteId, latest.values());
  const visitOf = (visitorId: string) => {
    const sessionId = latest.get(visitorId)?.session_id;
    return sessionId ? sessions.get(sessionId) : undefined;
  };
  return {
    visitors: ids.map((visitorId) => liveVisitor(visitorId, latest.get(visitorId), visits.get(visitorId), visitOf(visitorId))),
    events: recent.map((row) => liveEvent(row, iso(row.occurred_at))),
    payments,
    people,
  };
}

/** Every visitor the map names: the active ones, those of the recent events and of the recent payments. */
export function peopleOf(active: string[], events: { visitor_id: string }[], payments: { visitorId: string | null }[]): string[] {
  const ids = new Set(active);
  for (const event of events) ids.add(event.visitor_id);
  for (const payment of payments) if (payment.visitorId) ids.add(payment.visitorId);
  return [...ids];
}
