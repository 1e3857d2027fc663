import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.ts';
import { isPostgres } from '../../db/engine.ts';
import { type RecordedFields, VisitorDayBook } from './visitor-day-book.ts';
import { writeBook } from './rollups.ts';
import { rebuildBreakdownDays } from './breakdown-rollups.ts';
import { deriveBacklog } from './rollup-backlog.ts';
import { LocalDays } from './zoned-time.ts';

// Rebuilds a website's day rollups from its raw events, for a new time zone (the local days
// move) or after a bulk load. Events are replayed in time order, a page at a time.

const PAGE = 20_000;

/**
 * Replaces the website's rollups with ones computed from its events in `timezone`. Run it in
 * the transaction that changes the time zone, so readers see old days or new days, never a mix.
 */
export async function rebuildDailyRollups(db: Kysely<Database>, websiteId: string, timezone: string): Promise<void> {
  await db.deleteFrom('visitor_days').where('website_id', '=', websiteId).execute();
  await db.deleteFrom('daily_totals').where('website_id', '=', websiteId).execute();
  await db.deleteFrom('visitor_recency').where('website_id', '=', websiteId).execute();

  const book = new VisitorDayBook(websiteId);
  const days = new LocalDays();
  let after: { occurredAt: string; id: string } | null = null;
  for (;;) {
    let query = db
      .selectFrom('events')
      .select(['id', 'occurred_at', 'visitor_id', 'session_id', 'type', 'name'])
      .where('website_id', '=', websiteId)
      .orderBy('occurred_at')
      .orderBy('id')
      .limit(PAGE);
    if (after) {
      const { occurredAt, id } = after;
      query = query.where((eb) => eb(eb.refTuple('occurred_at', 'id'), '>', eb.tuple(occurredAt, id)));
    }
    const page = await query.execute();
    for (const event of page) {
      const fields: RecordedFields = { type: event.type as RecordedFields['type'], name: event.name, sessionId: event.session_id };
      book.apply(event.visitor_id, days.dayOf(event.occurred_at, timezone), fields);
    }
    if (page.length < PAGE) break;
    const last = page[page.length - 1]!;
    after = { occurredAt: last.occurred_at, id: last.id };
  }
  book.relinkAll();
  await writeBook(db, websiteId, book, 'replace');
}

/**
 * For a website update that sets `timezone`: when it differs from the stored one, rebuilds the
 * rollups in it (the day rollups, and the days of the event breakdowns). Call it inside the
 * update's transaction, before the website row is written; on PostgreSQL it locks that row
 * first, so no event batch updates the rollups in between.
 */
export async function rebuildRollupsForTimezone(db: Kysely<Database>, websiteId: string, timezone: string): Promise<void> {
  let query = db.selectFrom('websites').select('timezone').where('id', '=', websiteId);
  if (isPostgres(db)) query = query.forNoKeyUpdate();
  const current = await query.executeTakeFirst();
  if (!current || current.timezone === timezone) return;
  // The waiting events join the all-time rollups first (the day rollups are rebuilt from every stored event).
  await deriveBacklog(db, websiteId);
  await rebuildDailyRollups(db, websiteId, timezone);
  await rebuildBreakdownDays(db, websiteId, timezone);
}
