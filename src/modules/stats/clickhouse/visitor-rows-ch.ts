import { sql } from 'kysely';
import type { ClickHouse } from '../../../db/clickhouse/clickhouse.ts';
import type { EventRow, VisitStats } from '../visitor-shapes.ts';
import { isoOf, num } from './scope-ch.ts';

// What the visitor reads share over ClickHouse (the meaning of ../sql/visitor-rows.ts): each
// visitor's latest event that names a page, their sessions and the first event of one. The campaign
// parameters, URL and the shapes built from them are ../visitor-shapes.ts's.

/** An event row as ClickHouse returns it: `occurred_at` is DateTime text; use `occurred_ms`. */
export type ChEventRow = EventRow & { occurred_ms: string | number };

/** The latest event with a path of each visitor (one row each; ties by the greatest id). */
export async function latestEvents(ch: ClickHouse, websiteId: string, visitorIds: string[]): Promise<Map<string, ChEventRow>> {
  if (visitorIds.length === 0) return new Map();
  const rows = await ch.rows<ChEventRow>(sql`
    select * from events
    where website_id = ${websiteId} and visitor_id in (${sql.join(visitorIds)}) and isNotNull(path)
    order by visitor_id, occurred_ms desc, id desc
    limit 1 by visitor_id`);
  return new Map(rows.map((row) => [row.visitor_id, row]));
}

/**
 * Each visitor's sessions: their number (the visit count) and the latest one's start. The
 * relational sessions table gives a session the visitor of its first event; here the sessions
 * are those of the visitors' events, each counted for the visitor of its first event.
 */
export async function visitStats(ch: ClickHouse, websiteId: string, visitorIds: string[]): Promise<Map<string, VisitStats>> {
  if (visitorIds.length === 0) return new Map();
  const ids = sql.join(visitorIds);
  const rows = await ch.rows<{ visitor_id: string; n: unknown; latest_ms: unknown }>(sql`
    select visitor_id, count() as n, max(started_ms) as latest_ms from (
      select session_id, argMin(visitor_id, occurred_ms) as visitor_id, min(occurred_ms) as started_ms from events
      where website_id = ${websiteId} and isNotNull(session_id)
        and session_id in (select session_id from events where website_id = ${websiteId} and visitor_id in (${ids}) and isNotNull(session_id))
      group by session_id
    )
    where visitor_id in (${ids})
    group by visitor_id`);
  return new Map(rows.map((row) => [row.visitor_id, { count: num(row.n), currentStartAt: isoOf(row.latest_ms) }]));
}

/**
 * The first event of each of these events' sessions, by session id: where each event's visit came
 * from (the relational store reads the session's row, which keeps its first event's values).
 */
export async function sessionStarts(ch: ClickHouse, websiteId: string, events: Iterable<{ session_id: string | null }>): Promise<Map<string, ChEventRow>> {
  const ids = [...new Set([...events].map((event) => event.session_id).filter((id): id is string => id !== null))];
  if (ids.length === 0) return new Map();
  const rows = await ch.rows<ChEventRow>(sql`
    select * from events
    where website_id = ${websiteId} and session_id in (${sql.join(ids)})
    order by session_id, occurred_ms, id
    limit 1 by session_id`);
  return new Map(rows.map((row) => [row.session_id!, row]));
}

/**
 * Each visitor's first event of a session (the relational store reads their first session, which
 * carries its first event's referrer and campaign parameters): where the visitor came from.
 */
export async function firstVisitEvents(ch: ClickHouse, websiteId: string, visitorIds: string[]): Promise<Map<string, ChEventRow>> {
  if (visitorIds.length === 0) return new Map();
  const rows = await ch.rows<ChEventRow>(sql`
    select * from events
    where website_id = ${websiteId} and visitor_id in (${sql.join(visitorIds)}) and isNotNull(session_id)
    order by visitor_id, occurred_ms, id
    limit 1 by visitor_id`);
  return new Map(rows.map((row) => [row.visitor_id, row]));
}
