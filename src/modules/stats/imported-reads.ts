import { type Kysely, sql } from 'kysely';
import type { Database } from '../../db/schema.ts';
import type { OverviewCounts } from './event-store.ts';
import type { TrafficCounts } from './sql/series-sql.ts';
import type { StatsScope } from './stats.params.ts';
import type { DaySpan } from './whole-days.ts';

// Imported history (src/modules/imports) merged into the reads, as Plausible merges its imported_*
// tables: only the aggregates of imports that are done, for the local days of the website the read
// covers. A read can use them when its range is whole days of the website's own time zone (or all
// time) and it has no filter, or (breakdowns) a filter on the dimension the breakdown's imported
// table holds; otherwise the imported data is left out, and the X-Sightline-Imported-Data header
// says so. Visitors over several days are the sum of the imported days' visitors (Plausible cannot
// tell a visitor of two days apart either). docs/decisions.md has the rules.

export const IMPORTED_DATA_HEADER = 'x-sightline-imported-data';

/** What a read did with imported data: merged it, or left it out and why (absent: the website has none). */
export type ImportedUse = 'included' | 'left-out: filters' | 'left-out: range' | 'left-out: interval' | 'left-out: breakdown';

export interface ImportedTotals {
  visitors: number;
  pageviews: number;
  visits: number;
  bounces: number;
  /** Seconds. */
  visitDuration: number;
}

/** Whether the website has an import whose data the reads merge. */
export async function hasImportedData(db: Kysely<Database>, websiteId: string): Promise<boolean> {
  const row = await db.selectFrom('imports').select('id').where('website_id', '=', websiteId).where('status', '=', 'done').limit(1).executeTakeFirst();
  return row !== undefined;
}

/** Rows of an imported table for the website's done imports within `span`. */
export function importedRows<T extends keyof Database & `imported_${string}`>(db: Kysely<Database>, table: T, websiteId: string, span: DaySpan) {
  let query = db
    .selectFrom(table as 'imported_visitors')
    .where('imported_visitors.website_id', '=', websiteId)
    .where(({ exists, selectFrom }) =>
      exists(selectFrom('imports').select('imports.id').whereRef('imports.id', '=', 'imported_visitors.import_id').where('imports.status', '=', 'done')),
    );
  if (span !== 'all') query = query.where('imported_visitors.day', '>=', span.first).where('imported_visitors.day', '<=', span.last);
  return query;
}

/** The imported visitors table's days within `span`, summed per day. */
export async function importedDays(db: Kysely<Database>, websiteId: string, span: DaySpan): Promise<Map<string, ImportedTotals>> {
  const rows = await importedRows(db, 'imported_visitors', websiteId, span)
    .select([
      'imported_visitors.day as day',
      sql<number>`sum(visitors)`.as('visitors'),
      sql<number>`sum(pageviews)`.as('pageviews'),
      sql<number>`sum(visits)`.as('visits'),
      sql<number>`sum(bounces)`.as('bounces'),
      sql<number>`sum(visit_duration)`.as('visit_duration'),
    ])
    .groupBy('imported_visitors.day')
    .execute();
  return new Map(
    rows.map((row) => [
      row.day,
      { visitors: Number(row.visitors), pageviews: Number(row.pageviews), visits: Number(row.visits), bounces: Number(row.bounces), visitDuration: Number(row.visit_duration) },
    ]),
  );
}

export async function importedTotals(db: Kysely<Database>, websiteId: string, span: DaySpan): Promise<ImportedTotals> {
  const total: ImportedTotals = { visitors: 0, pageviews: 0, visits: 0, bounces: 0, visitDuration: 0 };
  for (const day of (await importedDays(db, websiteId, span)).values()) {
    total.visitors += day.visitors;
    total.pageviews += day.pageviews;
    total.visits += day.visits;
    total.bounces += day.bounces;
    total.visitDuration += day.visitDuration;
  }
  return total;
}

/** The overview's counts with the imported days of its range added; what it did with them. */
export async function mergeImportedOverview(db: Kysely<Database>, scope: StatsScope, counts: OverviewCounts): Promise<ImportedUse | undefined> {
  if (!(await hasImportedData(db, scope.websiteId))) return undefined;
  if (scope.filters.length > 0) return 'left-out: filters';
  const span = scope.wholeDays;
  if (!span) return 'left-out: range';
  const imported = await importedTotals(db, scope.websiteId, span);
  counts.visitors += imported.visitors;
  counts.pageviews += imported.pageviews;
  counts.sessions += imported.visits;
  counts.bounces += imported.bounces;
  counts.sessionMillis += imported.visitDuration * 1000;
  return 'included';
}

interface SeriesBucket {
  firstDay: string;
  lastDay: string;
}

/**
 * A day, week or month series' traffic with the imported days added to their buckets (and to the
 * total visitors); hour series and filtered or other-zone series leave them out.
 */
export async function mergeImportedSeries(
  db: Kysely<Database>,
  websiteId: string,
  use: { interval: string; ownZone: boolean; filtered: boolean },
  buckets: SeriesBucket[],
  traffic: { perBucket: Map<number, TrafficCounts>; totalVisitors: number },
): Promise<ImportedUse | undefined> {
  if (!(await hasImportedData(db, websiteId))) return undefined;
  if (use.interval === 'hour') return 'left-out: interval';
  if (!use.ownZone) return 'left-out: range';
  if (use.filtered) return 'left-out: filters';
  const days = await importedDays(db, websiteId, { first: buckets[0]!.firstDay, last: buckets.at(-1)!.lastDay });
  for (const [day, imported] of days) {
    const index = buckets.findIndex((bucket) => bucket.firstDay <= day && day <= bucket.lastDay);
    if (index < 0) continue;
    const counts = traffic.perBucket.get(index) ?? { visitors: 0, sessions: 0, pageviews: 0, converted: 0 };
    counts.visitors += imported.visitors;
    counts.sessions += imported.visits;
    counts.pageviews += imported.pageviews;
    traffic.perBucket.set(index, counts);
    traffic.totalVisitors += imported.visitors;
  }
  return 'included';
}
