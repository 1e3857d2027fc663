import type { Kysely } from 'kysely';
import type { Database, VisitorHoursTable } from '../../db/schema.ts';
import { chunks } from '../../lib/chunks.ts';
import { addHourSums, hourOf, writeHourBook } from './hour-rollups.ts';
import { type RecordedFields, VisitorDayBook } from './visitor-day-book.ts';
import { inTimeOrder } from './time-order.ts';
import { bookOfEvents } from './rollup-rebuild.ts';

// The hour rollups (hour-rollups.ts) derived again from the raw events: for the whole website (a
// rebuild, the tests' oracle) or for some of its visitors after events of theirs were deleted.
// As visitor-rollup-repair.ts does for days: each visitor's rows are a function of that visitor's
// events alone and the totals and recency counts are sums over those rows, so the visitors' rows
// leave the sums, their remaining events are replayed in time order, and the new rows join.

const VISITORS_PER_CHUNK = 500;
const ROWS_PER_STATEMENT = 500;

/** Replaces the website's hour rollups with ones computed from all its events, in the caller's transaction. */
export async function rebuildHourRollups(db: Kysely<Database>, websiteId: string): Promise<void> {
  for (const table of ['visitor_hours', 'hour_totals', 'hour_recency'] as const) await db.deleteFrom(table).where('website_id', '=', websiteId).execute();
  const book = await bookOfEvents(db, websiteId, hourOf);
  book.relinkAll();
  await writeHourBook(db, websiteId, book);
}

const fieldsOf = (event: { type: string; name: string | null; session_id: string | null }): RecordedFields => ({
  type: event.type as RecordedFields['type'],
  name: event.name,
  sessionId: event.session_id,
});

/** What the stored rows add to the sums, taken out (negative deltas per hour and per (hour, previous hour)). */
async function subtract(db: Kysely<Database>, websiteId: string, rows: VisitorHoursTable[]): Promise<void> {
  const totals = new Map<string, { visitors: number; sessions: number; pageviews: number; converted_visitors: number }>();
  const recency = new Map<string, { hour: string; prev_hour: string; visitors: number; converted: number }>();
  const recencyOf = (hour: string, prev: string | null) => {
    const key = `${hour}|${prev ?? ''}`;
    let entry = recency.get(key);
    if (!entry) recency.set(key, (entry = { hour, prev_hour: prev ?? '', visitors: 0, converted: 0 }));
    return entry;
  };
  for (const row of rows) {
    let total = totals.get(row.hour);
    if (!total) totals.set(row.hour, (total = { visitors: 0, sessions: 0, pageviews: 0, converted_visitors: 0 }));
    total.visitors -= 1;
    total.sessions -= Number(row.sessions);
    total.pageviews -= Number(row.pageviews);
    recencyOf(row.hour, row.prev_hour).visitors -= 1;
    if (Number(row.goals) > 0) {
      total.converted_visitors -= 1;
      recencyOf(row.hour, row.prev_goal_hour).converted -= 1;
    }
  }
  await addHourSums(db, websiteId, [...totals].map(([hour, t]) => ({ hour, ...t })), [...recency.values()]);
}

/**
 * The hour rollups of `visitorIds` derived again from the events they have left, a chunk of
 * visitors at a time; hours and (hour, previous hour) pairs left with no visitor lose their rows,
 * as a rebuild would have none. Run in the transaction that deleted the events.
 */
export async function repairHourRollups(db: Kysely<Database>, websiteId: string, visitorIds: string[]): Promise<void> {
  const touched = new Set<string>();
  for (const chunk of chunks([...new Set(visitorIds)].sort(), VISITORS_PER_CHUNK)) {
    const stored = await db.selectFrom('visitor_hours').selectAll().where('website_id', '=', websiteId).where('visitor_id', 'in', chunk).execute();
    for (const row of stored) touched.add(row.hour);
    await subtract(db, websiteId, stored);
    await db.deleteFrom('visitor_hours').where('website_id', '=', websiteId).where('visitor_id', 'in', chunk).execute();
    const events = await db
      .selectFrom('events')
      .select(['id', 'occurred_at', 'visitor_id', 'session_id', 'type', 'name'])
      .where('website_id', '=', websiteId)
      .where('visitor_id', 'in', chunk)
      .execute();
    const book = new VisitorDayBook(websiteId);
    for (const event of inTimeOrder(events, (row) => row.occurred_at as unknown as string)) book.apply(event.visitor_id, hourOf(event.occurred_at), fieldsOf(event));
    book.relinkAll();
    await writeHourBook(db, websiteId, book);
  }
  for (const hours of chunks([...touched], ROWS_PER_STATEMENT)) {
    await db.deleteFrom('hour_totals').where('website_id', '=', websiteId).where('hour', 'in', hours).where('visitors', '<=', 0).execute();
    await db.deleteFrom('hour_recency').where('website_id', '=', websiteId).where('hour', 'in', hours).where('visitors', '<=', 0).where('converted', '<=', 0).execute();
  }
}
