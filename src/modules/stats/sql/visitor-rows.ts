import { type Kysely, sql } from 'kysely';
import type { Database } from '../../../db/schema.ts';
import type { EventRow } from '../visitor-shapes.ts';
import { num } from './scope-sql.ts';

// What the visitor reads share: each visitor's latest event that names a page and their number
// of sessions (the shapes built from them: ../visitor-shapes.ts).

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

/** Sessions per visitor (a visitor's visit count). */
export async function sessionCounts(db: Kysely<Database>, websiteId: string, visitorIds: string[]): Promise<Map<string, number>> {
  if (visitorIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('sessions')
    .select((eb) => ['visitor_id', eb.fn.countAll().as('n')])
    .where('website_id', '=', websiteId)
    .where('visitor_id', 'in', visitorIds)
    .groupBy('visitor_id')
    .execute();
  return new Map(rows.map((row) => [row.visitor_id, num(row.n)]));
}

export const iso = (value: string | Date): string => new Date(value).toISOString();
