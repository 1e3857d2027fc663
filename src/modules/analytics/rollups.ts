import type { Kysely } from 'kysely';
import { lockWebsiteRollups } from '../../db/locks.ts';
import { prepareListQuery } from '../../db/prepared.ts';
import type { Database } from '../../db/schema.ts';
import type { RecordedEvent } from '../../db/event-records.ts';
import { inChunks } from '../../lib/chunks.ts';
import { VisitorDayBook } from './visitor-day-book.ts';
import { LocalDays } from './zoned-time.ts';

// Keeps the day rollups (visitor_days, daily_totals, visitor_recency) current, inside the
// transaction that records the events. Days are local days of the website's time zone.
// Each batch costs a few statements per website, whatever its size: read the touched
// visitors' rows, then one upsert per table (INSERT ... ON CONFLICT ... DO UPDATE, on both
// engines). The statements are prepared queries (built once per list length), since building
// them with Kysely on every batch cost more than running them.

const localDays = new LocalDays();
const VISITORS_PER_QUERY = 500;
const ROWS_PER_INSERT = 500;

/**
 * The websites' time zones, read under their derived-data locks on PostgreSQL (src/db/locks.ts,
 * taken in id order, so two batches never wait on each other in a circle): rollup updates of one
 * website then run one at a time across processes, and wait for a time-zone change (which takes
 * the same lock). SQLite runs one transaction at a time.
 */
const timezonesQuery = prepareListQuery(1, (db, ids: [string][]) =>
  db
    .selectFrom('websites')
    .select(['id', 'timezone'])
    .where('id', 'in', ids.map(([id]) => id)),
);

async function lockTimezones(db: Kysely<Database>, websiteIds: string[]): Promise<Map<string, string>> {
  for (const websiteId of websiteIds) await lockWebsiteRollups(db, websiteId);
  const timezones = new Map<string, string>();
  await inChunks(websiteIds, VISITORS_PER_QUERY, async (chunk) => {
    const rows = await timezonesQuery.all(db, chunk.map((id): [string] => [id]));
    for (const row of rows) timezones.set(row.id, row.timezone);
  });
  return timezones;
}

/** Every row of these visitors from the batch's first day on, so links can be recomputed. */
const visitorDaysFrom = prepareListQuery(1, (db, visitors: [string][], websiteId: string, firstDay: string) =>
  db
    .selectFrom('visitor_days')
    .selectAll()
    .where('website_id', '=', websiteId)
    .where('visitor_id', 'in', visitors.map(([visitorId]) => visitorId))
    .where('day', '>=', firstDay),
  { pieces: true },
);

/** Each visitor's latest active day and latest converting day before the batch's first day. */
const lastDaysBefore = prepareListQuery(1, (db, visitors: [string][], websiteId: string, firstDay: string) =>
  db
    .selectFrom('visitor_days')
    .select((eb) => [
      'visitor_id',
      eb.fn.max('day').as('last_day'),
      eb.fn.max(eb.case().when('goals', '>', 0).then(eb.ref('day')).end()).as('last_goal_day'),
    ])
    .where('website_id', '=', websiteId)
    .where('visitor_id', 'in', visitors.map(([visitorId]) => visitorId))
    .where('day', '<', firstDay)
    .groupBy('visitor_id'),
  { pieces: true },
);

type VisitorDayTuple = [
  websiteId: string,
  day: string,
  visitorId: string,
  pageviews: number,
  sessions: number,
  lastSessionId: string | null,
  goals: number,
  prevDay: string | null,
  prevGoalDay: string | null,
];

const upsertVisitorDays = prepareListQuery(9, (db, rows: VisitorDayTuple[]) =>
  db
    .insertInto('visitor_days')
    .values(
      rows.map((r) => ({
        website_id: r[0],
        day: r[1],
        visitor_id: r[2],
        pageviews: r[3],
        sessions: r[4],
        last_session_id: r[5],
        goals: r[6],
        prev_day: r[7],
        prev_goal_day: r[8],
      })),
    )
    .onConflict((oc) =>
      oc.columns(['website_id', 'day', 'visitor_id']).doUpdateSet((eb) => ({
        pageviews: eb.ref('excluded.pageviews'),
        sessions: eb.ref('excluded.sessions'),
        last_session_id: eb.ref('excluded.last_session_id'),
        goals: eb.ref('excluded.goals'),
        prev_day: eb.ref('excluded.prev_day'),
        prev_goal_day: eb.ref('excluded.prev_goal_day'),
      })),
    ),
  { pieces: true },
);

type TotalsTuple = [websiteId: string, day: string, visitors: number, sessions: number, pageviews: number, convertedVisitors: number];

const totalsValues = (db: Kysely<Database>, rows: TotalsTuple[]) =>
  db.insertInto('daily_totals').values(
    rows.map((r) => ({ website_id: r[0], day: r[1], visitors: r[2], sessions: r[3], pageviews: r[4], converted_visitors: r[5] })),
  );

const insertTotals = prepareListQuery(6, totalsValues);
const addTotals = prepareListQuery(
  6,
  (db, rows: TotalsTuple[]) =>
    totalsValues(db, rows).onConflict((oc) =>
      oc.columns(['website_id', 'day']).doUpdateSet((eb) => ({
        visitors: eb('daily_totals.visitors', '+', eb.ref('excluded.visitors')),
        sessions: eb('daily_totals.sessions', '+', eb.ref('excluded.sessions')),
        pageviews: eb('daily_totals.pageviews', '+', eb.ref('excluded.pageviews')),
        converted_visitors: eb('daily_totals.converted_visitors', '+', eb.ref('excluded.converted_visitors')),
      })),
    ),
  { pieces: true },
);

type RecencyTuple = [websiteId: string, day: string, prevDay: string, visitors: number, converted: number];

const recencyValues = (db: Kysely<Database>, rows: RecencyTuple[]) =>
  db
    .insertInto('visitor_recency')
    .values(rows.map((r) => ({ website_id: r[0], day: r[1], prev_day: r[2], visitors: r[3], converted: r[4] })));

const insertRecency = prepareListQuery(5, recencyValues);
const addRecency = prepareListQuery(
  5,
  (db, rows: RecencyTuple[]) =>
    recencyValues(db, rows).onConflict((oc) =>
      oc.columns(['website_id', 'day', 'prev_day']).doUpdateSet((eb) => ({
        visitors: eb('visitor_recency.visitors', '+', eb.ref('excluded.visitors')),
        converted: eb('visitor_recency.converted', '+', eb.ref('excluded.converted')),
      })),
    ),
  { pieces: true },
);

/** The events grouped by website, in first-seen order. */
function eventsByWebsite(events: RecordedEvent[]): Map<string, RecordedEvent[]> {
  const byWebsite = new Map<string, RecordedEvent[]>();
  for (const event of events) {
    const list = byWebsite.get(event.websiteId);
    if (list) list.push(event);
    else byWebsite.set(event.websiteId, [event]);
  }
  return byWebsite;
}

/** The websites' zones under their derived-data locks (in id order, so two batches never wait on each other in a circle). */
export function lockWebsiteZones(db: Kysely<Database>, websiteIds: Iterable<string>): Promise<Map<string, string>> {
  return lockTimezones(db, [...new Set(websiteIds)].sort());
}

/**
 * Folds the events into the day rollups, each website's in the zone `zones` gives it (the
 * website's own, or the one a relocation holds its visitors' days in: day-relocation.ts).
 */
export async function updateDailyRollups(db: Kysely<Database>, events: RecordedEvent[], zones: Map<string, string>): Promise<void> {
  for (const [websiteId, websiteEvents] of eventsByWebsite(events)) {
    const timezone = zones.get(websiteId);
    // A missing website cannot have events (foreign key): the insert before this failed already.
    if (timezone !== undefined) await updateWebsiteRollups(db, websiteId, timezone, websiteEvents);
  }
}

const asItems = (ids: string[]) => ids.map((id): [string] => [id]);

async function updateWebsiteRollups(db: Kysely<Database>, websiteId: string, timezone: string, events: RecordedEvent[]) {
  const days = events.map((event) => localDays.dayOf(event.occurredAt, timezone));
  const firstDay = days.reduce((min, day) => (day < min ? day : min));
  const visitorIds = [...new Set(events.map((event) => event.visitorId))];

  const book = new VisitorDayBook(websiteId);
  // Every row of these visitors from the batch's first day on, so links can be recomputed.
  await inChunks(visitorIds, VISITORS_PER_QUERY, async (chunk) => {
    const rows = await visitorDaysFrom.all(db, asItems(chunk), websiteId, firstDay);
    for (const row of rows) book.load(row);
  });
  events.forEach((event, i) => book.apply(event.visitorId, days[i]!, event));

  await inChunks(book.visitorsToRelink(), VISITORS_PER_QUERY, async (chunk) => {
    const before = await lastDaysBefore.all(db, asItems(chunk), websiteId, firstDay);
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
  const changed = book
    .changedRows()
    .map((r): VisitorDayTuple => [r.website_id, r.day, r.visitor_id, r.pageviews, r.sessions, r.last_session_id, r.goals, r.prev_day, r.prev_goal_day]);
  await inChunks(changed, ROWS_PER_INSERT, async (rows) => void (await upsertVisitorDays.all(db, rows)));

  const totals = book
    .totalsDeltas()
    .map((d): TotalsTuple => [websiteId, d.day, d.visitors, d.sessions, d.pageviews, d.converted_visitors]);
  const totalsQuery = mode === 'replace' ? insertTotals : addTotals;
  await inChunks(totals, ROWS_PER_INSERT, async (rows) => void (await totalsQuery.all(db, rows)));

  const recency = book.recencyDeltas().map((d): RecencyTuple => [websiteId, d.day, d.prev_day, d.visitors, d.converted]);
  const recencyQuery = mode === 'replace' ? insertRecency : addRecency;
  await inChunks(recency, ROWS_PER_INSERT, async (rows) => void (await recencyQuery.all(db, rows)));
}
