import { type RawBuilder, sql } from 'kysely';
import type { ClickHouse } from '../../../db/clickhouse/clickhouse.ts';
import { SAMPLING_KEY } from '../../../db/clickhouse/sampling-key.ts';
import { SESSION_SOURCE_COLUMNS } from '../../../db/clickhouse/session-attributes.ts';
import type { EventRow, SourceRow, VisitStats } from '../visitor-shapes.ts';
import { type SessionSource, isoOf, num } from './scope-ch.ts';
import { latestOf } from './stored-sessions-ch.ts';

// What the visitor reads share over ClickHouse (the meaning of ../sql/visitor-rows.ts): each
// visitor's latest event that names a page, their sessions and their first one. The campaign
// parameters, URL and the shapes built from them are ../visitor-shapes.ts's. Once the sessions
// table is filled (SessionSource 'table'), sessions are read from it, one row per session,
// instead of grouping every event of the visitors over all time (docs/decisions.md, "The
// ClickHouse visitor list reads a bounded amount").

/**
 * The events of these visitors: by id, and by the visitor hash in the events' sorting key
 * (website, day, hash, instant), so each day's index skips the granules of other visitors
 * instead of the read scanning every event of the website (checked on 18.16).
 */
export function ofVisitors(visitorIds: string[]): RawBuilder<unknown> {
  const hashes = visitorIds.map((id) => sql`cityHash64(${id})`);
  return sql`visitor_id in (${sql.join(visitorIds)}) and ${sql.raw(SAMPLING_KEY)} in (${sql.join(hashes)})`;
}

/** An event row as ClickHouse returns it: `occurred_at` is DateTime text; use `occurred_ms`. */
export type ChEventRow = EventRow & { occurred_ms: string | number };

/** Events at or after `ms` (the DateTime bound lets the primary key skip the days before it). */
export function atOrAfter(ms: number): RawBuilder<unknown> {
  return sql`occurred_at >= toDateTime(${Math.floor(ms / 1000)}) and occurred_ms >= ${ms}`;
}

/**
 * The latest event with a path of each visitor (one row each; ties by the greatest id). `since`
 * (epoch ms) is a bound the caller knows most of them had such an event after (the window a list
 * page was read from, the live map's moment): the latest is then read from there on only, since
 * a visitor with a path event after `since` has its latest one there too, and over all time only
 * for the visitors without one (a goal sent through the API has no path).
 */
export async function latestEvents(ch: ClickHouse, websiteId: string, visitorIds: string[], since: number | null = null): Promise<Map<string, ChEventRow>> {
  if (visitorIds.length === 0) return new Map();
  const latest = (ids: string[], bound: RawBuilder<unknown>) =>
    ch.rows<ChEventRow>(sql`
      select * from events
      where website_id = ${websiteId} and ${ofVisitors(ids)} and isNotNull(path) and ${bound}
      order by visitor_id, occurred_ms desc, id desc
      limit 1 by visitor_id`);
  const found = new Map((await latest(visitorIds, since === null ? sql`1 = 1` : atOrAfter(since))).map((row) => [row.visitor_id, row]));
  const missing = since === null ? [] : visitorIds.filter((id) => !found.has(id));
  if (missing.length > 0) for (const row of await latest(missing, sql`1 = 1`)) found.set(row.visitor_id, row);
  return found;
}

/** A session of the table as the visitor reads use it: its visitor, start and source (the live row's). */
type StoredSession = { session_id: string; visitor_id: string; started_ms: unknown } & SourceRow;

/**
 * The live sessions of these visitors in the sessions table, one row each. The rows are kept by
 * the visitor before they are grouped (so the key's visitor hash skips other visitors' granules):
 * a session whose visitor changed (an earlier event of another visitor arrived late) left the
 * kept rows of its old visitor in cancelled pairs only, whose signs sum to 0, so it counts for its
 * live row's visitor alone, as the relational sessions table has it.
 */
function storedSessionsOf(websiteId: string, visitorIds: string[]): RawBuilder<unknown> {
  const columns = ['visitor_id', 'started_ms', ...SESSION_SOURCE_COLUMNS];
  // Aliases of their own: an alias named as a column would stand for it inside the other aggregates.
  const latest = columns.map((name) => sql`${latestOf(name)} as ${sql.ref(`v_${name}`)}`);
  const renamed = columns.map((name) => sql`${sql.ref(`v_${name}`)} as ${sql.ref(name)}`);
  return sql`(select session_id, ${sql.join(renamed)} from (select session_id, ${sql.join(latest)} from sessions
    where website_id = ${websiteId} and ${ofVisitors(visitorIds)}
    group by session_id having sum(sign) > 0))`;
}

/**
 * Each visitor's first session (earliest start; ties by session id, as the relational read), from
 * the sessions table: its source columns are its first event's, which is where the visitor came from.
 */
export async function firstSessions(ch: ClickHouse, websiteId: string, visitorIds: string[]): Promise<Map<string, StoredSession>> {
  if (visitorIds.length === 0) return new Map();
  const rows = await ch.rows<StoredSession>(sql`
    select * from ${storedSessionsOf(websiteId, visitorIds)}
    order by visitor_id, started_ms, session_id
    limit 1 by visitor_id`);
  return new Map(rows.map((row) => [row.visitor_id, row]));
}

/**
 * Each visitor's sessions: their number (the visit count) and the latest one's start. The
 * relational sessions table gives a session the visitor of its first event, as the sessions table
 * here does; before it is filled, the sessions are those of the visitors' events, each counted
 * for the visitor of its first event.
 */
export async function visitStats(ch: ClickHouse, websiteId: string, visitorIds: string[], source: SessionSource): Promise<Map<string, VisitStats>> {
  if (visitorIds.length === 0) return new Map();
  const ids = sql.join(visitorIds);
  const rows = await ch.rows<{ visitor_id: string; n: unknown; latest_ms: unknown }>(
    source === 'table'
      ? sql`select visitor_id, count() as n, max(started_ms) as latest_ms from ${storedSessionsOf(websiteId, visitorIds)} group by visitor_id`
      : sql`
    select visitor_id, count() as n, max(started_ms) as latest_ms from (
      select session_id, argMin(visitor_id, occurred_ms) as visitor_id, min(occurred_ms) as started_ms from events
      where website_id = ${websiteId} and isNotNull(session_id)
        and session_id in (select session_id from events where website_id = ${websiteId} and ${ofVisitors(visitorIds)} and isNotNull(session_id))
      group by session_id
    )
    where visitor_id in (${ids})
    group by visitor_id`,
  );
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
 * Each visitor's first event of a session, before the sessions table is filled (firstSessions
 * reads the first session, as the relational store does; this is its first event unless
 * another visitor began that session): where the visitor came from.
 */
export async function firstVisitEvents(ch: ClickHouse, websiteId: string, visitorIds: string[]): Promise<Map<string, ChEventRow>> {
  if (visitorIds.length === 0) return new Map();
  const rows = await ch.rows<ChEventRow>(sql`
    select * from events
    where website_id = ${websiteId} and ${ofVisitors(visitorIds)} and isNotNull(session_id)
    order by visitor_id, occurred_ms, id
    limit 1 by visitor_id`);
  return new Map(rows.map((row) => [row.visitor_id, row]));
}
