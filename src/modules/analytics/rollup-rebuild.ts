import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.ts';
import { type RecordedFields, VisitorDayBook } from './visitor-day-book.ts';
import { writeBook } from './rollups.ts';
import { LocalDays } from './zoned-time.ts';

// Rebuilds a website's day rollups from its raw events, after a bulk load or a delete that
// touched a large share of its visitors. Events are replayed in time order, a page at a time.

const PAGE = 20_000;

/**
 * Replaces the website's rollups with ones computed from its events in `timezone`, in the
 * caller's transaction. A time-zone change does not come here: it moves the days a chunk of
 * visitors at a time in the background (day-relocation.ts).
 */
export async function rebuildDailyRollups(db: Kysely<Database>, websiteId: string, timezone: string): Promise<void> {
  await db.deleteFrom('visitor_days').where('website_id', '=', websiteId).execute();
  await db.deleteFrom('daily_totals').where('website_id', '=', websiteId).execute();
  await db.deleteFrom('visitor_recency').where('website_id', '=', websiteId).execute();

  const days = new LocalDays();
  const book = await bookOfEvents(db, websiteId, (occurredAt) => days.dayOf(occurredAt, timezone));
  book.relinkAll();
  await writeBook(db, websiteId, book, 'replace');
}

/**
 * The book (visitor-day-book.ts) of every event of the website, replayed in time order a page at a
 * time, each in the bucket `bucketOf` gives its instant (a local day, a UTC hour), links not yet made.
 */
export async function bookOfEvents(db: Kysely<Database>, websiteId: string, bucketOf: (occurredAt: string) => string): Promise<VisitorDayBook> {
  const book = new VisitorDayBook(websiteId);
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
      book.apply(event.visitor_id, bucketOf(event.occurred_at), fields);
    }
    if (page.length < PAGE) break;
    const last = page[page.length - 1]!;
    after = { occurredAt: last.occurred_at, id: last.id };
  }
  return book;
}
