import type { Kysely } from 'kysely';
import { prepareListQuery } from '../../db/prepared.ts';
import type { Database, VisitorDaysTable, VisitorHoursTable } from '../../db/schema.ts';
import type { RecordedEvent } from '../../db/event-records.ts';
import { inChunks } from '../../lib/chunks.ts';
import { VisitorDayBook } from './visitor-day-book.ts';

// Keeps the hour rollups (visitor_hours, hour_totals, hour_recency: migration 0036) current, as
// rollups.ts keeps the day rollups, with the same arithmetic (visitor-day-book.ts, whose "day"
// is here a UTC hour 'YYYY-MM-DDTHH'): per visitor and hour its pageviews, sessions and goals and
// the links to its previous active and converting hours; per hour the visitors, sessions,
// pageviews and converted visitors; per (hour, previous hour) the visitor-hours, so distinct
// visitors over several hours are a sum. Hours are UTC: no zone, nothing moves when it changes.
// Each batch costs a few statements per website: the touched visitors' rows from the batch's
// first hour on, their latest hours before it (for visitors with a new hour), one upsert per table.

const VISITORS_PER_QUERY = 500;
const ROWS_PER_INSERT = 500;
const HOUR_MS = 3_600_000;

/** The UTC hour 'YYYY-MM-DDTHH' of an instant (an ISO string or a Date, as the drivers return it). */
export function hourOf(occurredAt: string | Date): string {
  const ms = typeof occurredAt === 'string' ? Date.parse(occurredAt) : occurredAt.getTime();
  return new Date(Math.floor(ms / HOUR_MS) * HOUR_MS).toISOString().slice(0, 13);
}

/** The instant an hour key starts at, in ms. */
export const hourStartMs = (hour: string): number => Date.parse(`${hour}:00:00.000Z`);

/** A visitor_hours row as the book holds it (its day is the hour). */
export const bookRow = (row: VisitorHoursTable): VisitorDaysTable => ({
  website_id: row.website_id,
  day: row.hour,
  visitor_id: row.visitor_id,
  pageviews: Number(row.pageviews),
  sessions: Number(row.sessions),
  last_session_id: row.last_session_id,
  goals: Number(row.goals),
  prev_day: row.prev_hour,
  prev_goal_day: row.prev_goal_hour,
});

const hoursFrom = prepareListQuery(1, (db, visitors: [string][], websiteId: string, firstHour: string) =>
  db
    .selectFrom('visitor_hours')
    .selectAll()
    .where('website_id', '=', websiteId)
    .where('visitor_id', 'in', visitors.map(([visitorId]) => visitorId))
    .where('hour', '>=', firstHour),
);

const lastHoursBefore = prepareListQuery(1, (db, visitors: [string][], websiteId: string, firstHour: string) =>
  db
    .selectFrom('visitor_hours')
    .select((eb) => ['visitor_id', eb.fn.max('hour').as('last_hour'), eb.fn.max(eb.case().when('goals', '>', 0).then(eb.ref('hour')).end()).as('last_goal_hour')])
    .where('website_id', '=', websiteId)
    .where('visitor_id', 'in', visitors.map(([visitorId]) => visitorId))
    .where('hour', '<', firstHour)
    .groupBy('visitor_id'),
);

type VisitorHourTuple = [websiteId: string, visitorId: string, hour: string, pageviews: number, sessions: number, lastSessionId: string | null, goals: number, prevHour: string | null, prevGoalHour: string | null];

const upsertVisitorHours = prepareListQuery(9, (db, rows: VisitorHourTuple[]) =>
  db
    .insertInto('visitor_hours')
    .values(
      rows.map((r) => ({ website_id: r[0], visitor_id: r[1], hour: r[2], pageviews: r[3], sessions: r[4], last_session_id: r[5], goals: r[6], prev_hour: r[7], prev_goal_hour: r[8] })),
    )
    .onConflict((oc) =>
      oc.columns(['website_id', 'visitor_id', 'hour']).doUpdateSet((eb) => ({
        pageviews: eb.ref('excluded.pageviews'),
        sessions: eb.ref('excluded.sessions'),
        last_session_id: eb.ref('excluded.last_session_id'),
        goals: eb.ref('excluded.goals'),
        prev_hour: eb.ref('excluded.prev_hour'),
        prev_goal_hour: eb.ref('excluded.prev_goal_hour'),
      })),
    ),
);

type TotalsTuple = [websiteId: string, hour: string, visitors: number, sessions: number, pageviews: number, convertedVisitors: number];

const addTotals = prepareListQuery(6, (db, rows: TotalsTuple[]) =>
  db
    .insertInto('hour_totals')
    .values(rows.map((r) => ({ website_id: r[0], hour: r[1], visitors: r[2], sessions: r[3], pageviews: r[4], converted_visitors: r[5] })))
    .onConflict((oc) =>
      oc.columns(['website_id', 'hour']).doUpdateSet((eb) => ({
        visitors: eb('hour_totals.visitors', '+', eb.ref('excluded.visitors')),
        sessions: eb('hour_totals.sessions', '+', eb.ref('excluded.sessions')),
        pageviews: eb('hour_totals.pageviews', '+', eb.ref('excluded.pageviews')),
        converted_visitors: eb('hour_totals.converted_visitors', '+', eb.ref('excluded.converted_visitors')),
      })),
    ),
);

type RecencyTuple = [websiteId: string, hour: string, prevHour: string, visitors: number, converted: number];

const addRecency = prepareListQuery(5, (db, rows: RecencyTuple[]) =>
  db
    .insertInto('hour_recency')
    .values(rows.map((r) => ({ website_id: r[0], hour: r[1], prev_hour: r[2], visitors: r[3], converted: r[4] })))
    .onConflict((oc) =>
      oc.columns(['website_id', 'hour', 'prev_hour']).doUpdateSet((eb) => ({
        visitors: eb('hour_recency.visitors', '+', eb.ref('excluded.visitors')),
        converted: eb('hour_recency.converted', '+', eb.ref('excluded.converted')),
      })),
    ),
);

/** Writes what a book of hours holds: changed visitor-hour rows whole, the totals and recency counts added to what is stored. */
export async function writeHourBook(db: Kysely<Database>, websiteId: string, book: VisitorDayBook): Promise<void> {
  const changed = book
    .changedRows()
    .map((r): VisitorHourTuple => [r.website_id, r.visitor_id, r.day, r.pageviews, r.sessions, r.last_session_id, r.goals, r.prev_day, r.prev_goal_day]);
  await inChunks(changed, ROWS_PER_INSERT, async (rows) => void (await upsertVisitorHours.all(db, rows)));
  const totals = book.totalsDeltas().map((d) => ({ hour: d.day, visitors: d.visitors, sessions: d.sessions, pageviews: d.pageviews, converted_visitors: d.converted_visitors }));
  const recency = book.recencyDeltas().map((d) => ({ hour: d.day, prev_hour: d.prev_day, visitors: d.visitors, converted: d.converted }));
  await addHourSums(db, websiteId, totals, recency);
}

/** Deltas of hour_totals per hour and of hour_recency per (hour, previous hour), added to what is stored. */
export async function addHourSums(
  db: Kysely<Database>,
  websiteId: string,
  totals: { hour: string; visitors: number; sessions: number; pageviews: number; converted_visitors: number }[],
  recency: { hour: string; prev_hour: string; visitors: number; converted: number }[],
): Promise<void> {
  const totalRows = totals.map((d): TotalsTuple => [websiteId, d.hour, d.visitors, d.sessions, d.pageviews, d.converted_visitors]);
  await inChunks(totalRows, ROWS_PER_INSERT, async (rows) => void (await addTotals.all(db, rows)));
  const recencyRows = recency.map((d): RecencyTuple => [websiteId, d.hour, d.prev_hour, d.visitors, d.converted]);
  await inChunks(recencyRows, ROWS_PER_INSERT, async (rows) => void (await addRecency.all(db, rows)));
}

const asItems = (ids: string[]) => ids.map((id): [string] => [id]);

/** Folds new events into the hour rollups, website by website. */
export async function updateHourRollups(db: Kysely<Database>, events: RecordedEvent[]): Promise<void> {
  const byWebsite = new Map<string, RecordedEvent[]>();
  for (const event of events) {
    const list = byWebsite.get(event.websiteId);
    if (list) list.push(event);
    else byWebsite.set(event.websiteId, [event]);
  }
  for (const [websiteId, list] of byWebsite) await foldWebsite(db, websiteId, list);
}

async function foldWebsite(db: Kysely<Database>, websiteId: string, events: RecordedEvent[]): Promise<void> {
  // Events come mostly in time order: the last hour computed is usually the next one's too.
  let last = { start: 0, end: 0, hour: '' };
  const hours = events.map((event) => {
    const ms = Date.parse(event.occurredAt);
    if (ms < last.start || ms >= last.end) {
      const start = Math.floor(ms / HOUR_MS) * HOUR_MS;
      last = { start, end: start + HOUR_MS, hour: new Date(start).toISOString().slice(0, 13) };
    }
    return last.hour;
  });
  const firstHour = hours.reduce((min, hour) => (hour < min ? hour : min));
  const visitorIds = [...new Set(events.map((event) => event.visitorId))];

  const book = new VisitorDayBook(websiteId);
  await inChunks(visitorIds, VISITORS_PER_QUERY, async (chunk) => {
    for (const row of await hoursFrom.all(db, asItems(chunk), websiteId, firstHour)) book.load(bookRow(row));
  });
  events.forEach((event, i) => book.apply(event.visitorId, hours[i]!, event));
  await inChunks(book.visitorsToRelink(), VISITORS_PER_QUERY, async (chunk) => {
    const before = new Map((await lastHoursBefore.all(db, asItems(chunk), websiteId, firstHour)).map((row) => [row.visitor_id, row]));
    for (const visitorId of chunk) {
      const row = before.get(visitorId);
      book.relink(visitorId, row?.last_hour ?? null, row?.last_goal_hour ?? null);
    }
  });
  await writeHourBook(db, websiteId, book);
}
