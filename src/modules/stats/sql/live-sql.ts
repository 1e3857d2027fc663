import { type Kysely, sql } from 'kysely';
import type { Database } from '../../../db/schema.ts';
import type { LiveMap } from '../event-store.ts';
import { num } from './scope-sql.ts';
import { liveEvent, liveVisitor } from '../visitor-shapes.ts';
import { recentPayments, visitorPeople } from './visitor-people.ts';
import { iso, latestEvents, sessionsOf, visitStats } from './visitor-rows.ts';

// Realtime: who has had an event since a moment, and what happened.

export const RECENT_EVENTS = 50;
export const MAP_VISITORS = 500;

export async function liveVisitors(db: Kysely<Database>, websiteId: string, since: string): Promise<number> {
  const { rows } = await sql<{ n: unknown }>`
    select count(distinct e.visitor_id) as n from events e where e.website_id = ${websiteId} and e.occurred_at >= ${since}`.execute(db);
  return num(rows[0]?.n);
}

export async function liveMap(db: Kysely<Database>, websiteId: string, since: string): Promise<LiveMap> {
  const [active, recent, payments] = await Promise.all([
    sql<{ visitor_id: string }>`
      select e.visitor_id from events e where e.website_id = ${websiteId} and e.occurred_at >= ${since}
      group by e.visitor_id order by max(e.occurred_at) desc limit ${MAP_VISITORS}`.execute(db),
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
  const ids = active.rows.map((row) => row.visitor_id);
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
