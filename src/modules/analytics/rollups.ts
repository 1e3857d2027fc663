import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.ts';
import type { RecordedEvent } from '../events/event.types.ts';
import { isPostgres } from '../../db/engine.ts';
import { inChunks } from './chunks.ts';
import { VisitorDayBook } from './visitor-day-book.ts';
import { LocalDays } from './zoned-time.ts';

// Keeps the day rollups (visitor_days, daily_totals, visitor_recency) current, inside the
// transaction that records the events. Days are local days of the website's time zone.
// Each batch costs a few statements per website, whatever its size: read the touched
// visitors' rows, then one upsert per table (INSERT ... ON CONFLICT ... DO UPDATE, on both
// engines).

const localDays = new LocalDays();
const VISITORS_PER_QUERY = 500;
const ROWS_PER_INSERT = 500;

/**
 * The websites' time zones, read under a row lock on PostgreSQL: rollup updates of one website
 * then run one at a time across processes, and wait for a time-zone change (which rebuilds the
 * rollups in the transaction that holds the same lock). SQLite runs one transaction at a time.
 */
async function lockTimezones(db: Kysely<Database>, websiteIds: string[]): Promise<Map<string, string>> {
  let query = db.selectFrom('websites').select(['id', 'timezone']).where('id', 'in', websiteIds).orderBy('id');
  if (isPostgres(db)) query = query.forNoKeyUpdate();
  const rows = await query.execute();
  return new Map(rows.map((row) => [row.id, row.timezone]));
}

export async function updateDailyRollups(trx: Kysely<Database>, events: RecordedEvent[]): Promise<void> {
  if (events.length === 0) return;
  const db = trx;
  const byWebsite = new Map<string, RecordedEvent[]>();
  for (const event of events) {
    const list = byWebsite.get(event.websiteId);
    if (list) list.push(event);
    else byWebsite.set(event.websiteId, [event]);
  }
  const timezones = await lockTimezones(db, [...byWebsite.keys()].sort());
  for (const [websiteId, websiteEvents] of byWebsite) {
    const timezone = timezones.get(websiteId);
    // A missing website cannot have events (foreign key): the insert before this failed already.
    if (timezone !== undefined) await updateWebsiteRollups(db, websiteId, timezone, websiteEvents);
  }
}

async function updateWebsiteRollups(db: Kysely<Database>, websiteId: string, timezone: string, events: RecordedEvent[]) {
  const days = events.map((event) => localDays.dayOf(event.occurredAt, timezone));
  const firstDay = days.reduce((min, day) => (day < min ? day : min));
  const visitorIds = [...new Set(events.map((event) => event.visitorId))];

  const book = new VisitorDayBook(websiteId);
  // Every row of these visitors from the batch's first day on, so links can be recomputed.
  await inChunks(visitorIds, VISITORS_PER_QUERY, async (chunk) => {
    const rows = await db
      .selectFrom('visitor_days')
      .selectAll()
      .where('website_id', '=', websiteId)
      .where('visitor_id', 'in', chunk)
      .where('day', '>=', firstDay)
      .execute();
    for (const row of rows) book.load(row);
  });
  events.forEach((event, i) => book.apply(event.visitorId, days[i]!, event));

  await inChunks(book.visitorsToRelink(), VISITORS_PER_QUERY, async (chunk) => {
    const before = await db
      .selectFrom('visitor_days')
      .select((eb) => [
        'visitor_id',
        eb.fn.max('day').as('last_day'),
        eb.fn.max(eb.case().when('goals', '>', 0).then(eb.ref('day')).end()).as('last_goal_day'),
      ])
      .where('website_id', '=', websiteId)
      .where('visitor_id', 'in', chunk)
      .where('day', '<', firstDay)
      .groupBy('visitor_id')
      .execute();
    const found = new Map(before.map((row) => [row.visitor_id, row]));
    for (const visitorId of chunk) {
      const row = found.get(visitorId);
      book.relink(visitorId, row?.last_day ?? null, row?.last_goal_day ?? null);
    }
  });

  await writeBook(db, websiteId, book, 'increment');
}

/**
 * Writes what a book holds. `increment` adds the totals and recency counts to what is stored
 * (ingestion); `replace` inserts them into tables emptied for the website (rebuild). Changed
 * visitor-day rows are always written whole.
 */
export async function writeBook(db: Kysely<Database>, websiteId: string, book: VisitorDayBook, mode: 'increment' | 'replace') {
  await inChunks(book.changedRows(), ROWS_PER_INSERT, async (rows) => {
    await db
      .insertInto('visitor_days')
      .values(rows)
      .onConflict((oc) =>
        oc.columns(['website_id', 'day', 'visitor_id']).doUpdateSet((eb) => ({
          pageviews: eb.ref('excluded.pageviews'),
          sessions: eb.ref('excluded.sessions'),
          last_session_id: eb.ref('excluded.last_session_id'),
          goals: eb.ref('excluded.goals'),
          prev_day: eb.ref('excluded.prev_day'),
          prev_goal_day: eb.ref('excluded.prev_goal_day'),
        })),
      )
      .execute();
  });

  const totals = book.totalsDeltas().map((delta) => ({ website_id: websiteId, ...delta }));
  await inChunks(totals, ROWS_PER_INSERT, async (rows) => {
    const insert = db.insertInto('daily_totals').values(rows);
    if (mode === 'replace') return void (await insert.execute());
    await insert
      .onConflict((oc) =>
        oc.columns(['website_id', 'day']).doUpdateSet((eb) => ({
          visitors: eb('daily_totals.visitors', '+', eb.ref('excluded.visitors')),
          sessions: eb('daily_totals.sessions', '+', eb.ref('excluded.sessions')),
          pageviews: eb('daily_totals.pageviews', '+', eb.ref('excluded.pageviews')),
          converted_visitors: eb('daily_totals.converted_visitors', '+', eb.ref('excluded.converted_visitors')),
        })),
      )
      .execute();
  });

  const recency = book.recencyDeltas().map((delta) => ({ website_id: websiteId, ...delta }));
  await inChunks(recency, ROWS_PER_INSERT, async (rows) => {
    const insert = db.insertInto('visitor_recency').values(rows);
    if (mode === 'replace') return void (await insert.execute());
    await insert
      .onConflict((oc) =>
        oc.columns(['website_id', 'day', 'prev_day']).doUpdateSet((eb) => ({
          visitors: eb('visitor_recency.visitors', '+', eb.ref('excluded.visitors')),
          converted: eb('visitor_recency.converted', '+', eb.ref('excluded.converted')),
        })),
      )
      .execute();
  });
}
