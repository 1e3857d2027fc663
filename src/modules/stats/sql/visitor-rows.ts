import { type Kysely, sql } from 'kysely';
import type { Database, EventsTable } from '../../../db/schema.ts';
import { num } from './scope-sql.ts';

// What the visitor reads share: each visitor's latest event that names a page, their number of
// sessions, and the campaign parameters of an event.

export type EventRow = EventsTable;

/** The latest event with a path of each visitor (one row each). */
export async function latestEvents(db: Kysely<Database>, websiteId: string, visitorIds: string[]): Promise<Map<string, EventRow>> {
  if (visitorIds.length === 0) return new Map();
  const { rows } = await sql<EventRow & { rn: unknown }>`
    select * from (
      select e.*, row_number() over (partition by e.visitor_id order by e.occurred_at desc, e.id desc) as rn
      from events e where e.website_id = ${websiteId} and e.visitor_id in (${sql.join(visitorIds)}) and e.path is not null
    ) x where x.rn = 1`.execute(db);
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

const PARAMS: [keyof EventRow, string][] = [
  ['utm_source', 'utm_source'],
  ['utm_medium', 'utm_medium'],
  ['utm_campaign', 'utm_campaign'],
  ['utm_term', 'utm_term'],
  ['utm_content', 'utm_content'],
  ['ref_param', 'ref'],
  ['source_param', 'source'],
  ['via_param', 'via'],
];

/** The campaign parameters an event carried, by their URL names. */
export function paramsOf(row: EventRow | undefined): Record<string, string> {
  const params: Record<string, string> = {};
  for (const [column, name] of PARAMS) {
    const value = row?.[column];
    if (typeof value === 'string') params[name] = value;
  }
  return params;
}

export function urlOf(row: Pick<EventRow, 'hostname' | 'path'> | undefined): string | null {
  return row?.hostname && row.path ? `https://${row.hostname}${row.path}` : null;
}

export const iso = (value: string | Date): string => new Date(value).toISOString();
