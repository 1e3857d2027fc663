import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { ClickHouse } from '../../../db/clickhouse/clickhouse.ts';
import type { Database } from '../../../db/schema.ts';
import type { LiveMap } from '../event-store.ts';
import { MAP_VISITORS, RECENT_EVENTS, peopleOf } from '../sql/live-sql.ts';
import { recentPayments, visitorPeople } from '../sql/visitor-people.ts';
import { liveEvent, liveVisitor } from '../visitor-shapes.ts';
import { type SessionSource, isoOf, msOf, num } from './scope-ch.ts';
import { type ChEventRow, latestEvents, sessionStarts, visitStats } from './visitor-rows-ch.ts';

// Realtime over ClickHouse (the meaning of ../sql/live-sql.ts): who has had an event since a
// moment, and what happened. Payments and who the visitors are (what they paid under, their
// profile) are read from the relational engine.

/** The website's events at or after `since` (the DateTime bound lets the primary key skip the rest). */
function sinceCondition(websiteId: string, since: string): RawBuilder<unknown> {
  const ms = msOf(since);
  return sql`website_id = ${websiteId} and occurred_at >= toDateTime(${Math.floor(ms / 1000)}) and occurred_ms >= ${ms}`;
}

export async function liveVisitors(ch: ClickHouse, websiteId: string, since: string): Promise<number> {
  const rows = await ch.rows<{ n: unknown }>(sql`select uniq(visitor_id) as n from events where ${sinceCondition(websiteId, since)}`);
  return num(rows[0]?.n);
}

export async function liveMap(ch: ClickHouse, db: Kysely<Database>, websiteId: string, since: string, sessions: SessionSource): Promise<LiveMap> {
  const recentOnes = sinceCondition(websiteId, since);
  type Recent = Pick<ChEventRow, 'id' | 'type' | 'name' | 'visitor_id' | 'occurred_ms' | 'path' | 'country' | 'referrer_source' | 'metadata'>;
  const [active, recent, payments] = await Promise.all([
    // The SQL store leaves ties of the latest instant unordered; here they go by visitor id.
    ch.rows<{ visitor_id: string }>(sql`
      select visitor_id from events where ${recentOnes}
      group by visitor_id order by max(occurred_ms) desc, visitor_id limit ${MAP_VISITORS}`),
    ch.rows<Recent>(sql`
      select id, type, name, visitor_id, occurred_ms, path, country, referrer_source, metadata from events where ${recentOnes}
      order by occurred_ms desc, id desc limit ${RECENT_EVENTS}`),
    recentPayments(db, websiteId, since, RECENT_EVENTS),
  ]);
  const ids = active.map((row) => row.visitor_id);
  const [latest, visits, people] = await Promise.all([
    // Each of them had an event since `since`: most have their latest page there too.
    latestEvents(ch, websiteId, ids, msOf(since)),
    visitStats(ch, websiteId, ids, sessions),
    visitorPeople(db, websiteId, peopleOf(ids, recent, payments)),
  ]);
  const starts = await sessionStarts(ch, websiteId, latest.values());
  const visitOf = (visitorId: string) => {
    const sessionId = latest.get(visitorId)?.session_id;
    return sessionId ? starts.get(sessionId) : undefined;
  };
  return {
    visitors: ids.map((visitorId) => liveVisitor(visitorId, latest.get(visitorId), visits.get(visitorId), visitOf(visitorId))),
    events: recent.map((row) => liveEvent(row, isoOf(row.occurred_ms))),
    payments,
    people,
  };
}
