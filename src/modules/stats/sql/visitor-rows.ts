import { type Kysely, sql } from 'kysely';
import type { Database, SessionsTable } from '../../../db/schema.ts';
import type { EventRow, VisitStats } from '../visitor-shapes.ts';
import { num } from './scope-sql.ts';

// What the visitor reads share: each visitor's latest event that names a page, their sessions
// (how many, the latest's start) and their first session (the shapes built from them:
// ../visitor-shapes.ts).

/**
 * The latest event with a path of each visitor (one row each): the event visitor_totals names
 * (kept by src/modules/analytics/visitor-totals.ts), fetched by its id.
 */
export async function latestEvents(db: Kysely<Database>, websiteId: string, visitorIds: string[]): Promise<Map<string, EventRow>> {
  if (visitorIds.length === 0) return new Map();
  const { rows } = await sql<EventRow>`
    select e.* from visitor_totals v cross join events e
    where v.website_id = ${websiteId} and v.visitor_id in (${sql.join(visitorIds)}) and e.id = v.latest_event_id`.execute(db);
  return new Map(rows.map((row) => [row.visitor_id, row]));
}

/** Each visitor's sessions: their number (the visit count) and the latest one's start. */
export async function visitStats(db: Kysely<Database>, websiteId: string, visitorIds: string[]): Promise<Map<string, VisitStats>> {
  if (visitorIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('sessions')
    .select((eb) => ['visitor_id', eb.fn.countAll().as('n'), eb.fn.max('started_at').as('latest')])
    .where('website_id', '=', websiteId)
    .where('visitor_id', 'in', visitorIds)
    .groupBy('visitor_id')
    .execute();
  return new Map(rows.map((row) => [row.visitor_id, { count: num(row.n), currentStartAt: iso(row.latest) }]));
}

/** The sessions of these events, by session id: where each event's visit came from. */
export async function sessionsOf(db: Kysely<Database>, websiteId: string, events: Iterable<{ session_id: string | null }>): Promise<Map<string, SessionsTable>> {
  const ids = [...new Set([...events].map((event) => event.session_id).filter((id): id is string => id !== null))];
  if (ids.length === 0) return new Map();
  const rows = await db.selectFrom('sessions').selectAll().where('website_id', '=', websiteId).where('session_id', 'in', ids).execute();
  return new Map(rows.map((row) => [row.session_id, row]));
}

/** Each visitor's first session (earliest start; ties by session id): where the visitor came from. */
export async function firstSessions(db: Kysely<Database>, websiteId: string, visitorIds: string[]): Promise<Map<string, SessionsTable>> {
  if (visitorIds.length === 0) return new Map();
  const { rows } = await sql<SessionsTable>`
    select * from (
      select s.*, row_number() over (partition by s.visitor_id order by s.started_at, s.session_id) as n
      from sessions s where s.website_id = ${websiteId} and s.visitor_id in (${sql.join(visitorIds)})
    ) x where x.n = 1`.execute(db);
  return new Map(rows.map((row) => [row.visitor_id, row]));
}

export const iso = (value: string | Date): string => new Date(value).toISOString();
