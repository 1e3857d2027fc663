import { type Kysely, sql } from 'kysely';
import type { Breakdown } from '../stats/event-store.ts';

// What the writers of both kinds of breakdown rollups share (breakdown-rollups.ts for the
// breakdowns over events, session-breakdown-rollups.ts for those over sessions): the two tables
// hold the rows of every breakdown, told apart by their `breakdown` column.

/** An insert into breakdown_totals adds to the key's row when it has one. */
export const ADD_TO_TOTALS = sql`on conflict (website_id, breakdown, key) do update set
  visitors = breakdown_totals.visitors + excluded.visitors,
  pageviews = breakdown_totals.pageviews + excluded.pageviews,
  events = breakdown_totals.events + excluded.events`;

/** `breakdown in (...)`: the rows of these breakdowns (literals from code). */
export const breakdownIn = (kinds: readonly Breakdown[]) => sql`breakdown in (${sql.join(kinds.map((kind) => sql.lit(kind)))})`;

/**
 * Adds to breakdown_totals one row per key of these breakdowns, from breakdown_visitors (one
 * website's rows, or every website's): after a fill of breakdown_visitors.
 */
export async function totalsFromVisitorRows<DB>(db: Kysely<DB>, websiteId: string | null, kinds: readonly Breakdown[]): Promise<void> {
  const website = websiteId === null ? sql`true` : sql`website_id = ${websiteId}`;
  await sql`insert into breakdown_totals (website_id, breakdown, key, visitors, pageviews, events)
    select website_id, breakdown, key, count(*), sum(pageviews), sum(events)
    from breakdown_visitors where ${website} and ${breakdownIn(kinds)} group by website_id, breakdown, key`.execute(db);
}
