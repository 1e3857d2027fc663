import { type Kysely, type RawBuilder, sql } from 'kysely';
import { isPostgres } from '../../db/engine.ts';
import { sqlList } from '../../db/prepared.ts';
import type { Database } from '../../db/schema.ts';
import type { Breakdown } from './breakdowns.ts';
import { breakdownIn } from './breakdown-rollup-tables.ts';
import { type WebsiteOffsets, offsetPeriods } from './local-day-sql.ts';
import { countProfileLastDays } from './breakdown-profile-days.ts';

// The breakdowns by local day of the website's zone (an event's day; a session's, its start's), so
// a breakdown over whole days that reach the last day with data reads a few rows per key and day
// instead of every event or session in range:
// - breakdown_days: per key and day, the pageviews and events (sessions) of that day (a sum over days);
// - breakdown_last_days: per key and day, the visitors whose last day under the key it is (the
//   rows of breakdown_visitors by their last_day). Over days F..L, where L is at or after every
//   last day, a visitor had the key in range exactly when their last day is F or later, so the
//   key's distinct visitors are the sum of its rows from F on.
// breakdown_visitors.last_day moves with the events (breakdown-rollup-tables.ts addKeyed); the
// writers here move the two tables with it: ingestion adds a batch, a goal delete takes its
// events out before they go and its visitors' rows are re-derived, a time-zone change moves
// them a chunk of visitors at a time (day-relocation.ts, setLastDays). A session's key can
// change as it grows, so the session breakdowns' last days are recomputed for the batch's
// visitors (session-breakdown-rollups.ts).

const STORED_ROW = sql`v.website_id = g.website_id and v.visitor_id = g.visitor_id and v.breakdown = g.breakdown and v.key = g.key`;

/**
 * Before `keyed` (with last_day) is added to breakdown_visitors (reading that table as it was):
 * each visitor whose last day under a key moves (or who is new to it) leaves the old day's count
 * and joins the new one's.
 */
export const LAST_DAYS_MOVE = sql`insert into breakdown_last_days (website_id, breakdown, day, key, visitors)
    select website_id, breakdown, day, key, sum(n) from (
      select g.website_id, g.breakdown, g.last_day as day, g.key, 1 as n
      from keyed g left join breakdown_visitors v on ${STORED_ROW}
      where g.last_day is not null and (v.last_day is null or g.last_day > v.last_day)
      union all
      select g.website_id, g.breakdown, v.last_day as day, g.key, -1 as n
      from keyed g join breakdown_visitors v on ${STORED_ROW}
      where g.last_day > v.last_day
    ) m where true group by website_id, breakdown, day, key
    on conflict (website_id, breakdown, day, key) do update set visitors = breakdown_last_days.visitors + excluded.visitors`;

/** LAST_DAYS_MOVE after `keyed` (a `with ... keyed as (...)`). */
export async function moveLastDays(db: Kysely<Database>, keyed: RawBuilder<unknown>): Promise<void> {
  await sql`${keyed} ${LAST_DAYS_MOVE}`.execute(db);
}

/**
 * These rows of breakdown_visitors (`rows`, a condition over the table's columns) leave their
 * last days' counts (sign -1: before they are deleted or their last days recomputed) or join them
 * (sign 1: after the recompute).
 */
export const lastDaysCount = (rows: RawBuilder<unknown>, sign: 1 | -1) => sql`insert into breakdown_last_days (website_id, breakdown, day, key, visitors)
    select website_id, breakdown, last_day, key, ${sql.lit(sign)} * count(*)
    from breakdown_visitors where ${rows} and last_day is not null
    group by website_id, breakdown, last_day, key
    on conflict (website_id, breakdown, day, key) do update set visitors = breakdown_last_days.visitors + excluded.visitors`;

export async function countLastDays(db: Kysely<Database>, rows: RawBuilder<unknown>, sign: 1 | -1): Promise<void> {
  await lastDaysCount(rows, sign).execute(db);
}

/**
 * The rows `day_rows` (a CTE of website, breakdown, day, key, pageviews and events) groups, added
 * to (sign 1) or taken out of (sign -1) breakdown_days.
 */
export const dayRowsInto = (sign: 1 | -1) => sql`insert into breakdown_days (website_id, breakdown, day, key, pageviews, events)
    select website_id, breakdown, day, key, ${sql.lit(sign)} * pageviews, ${sql.lit(sign)} * events from day_rows where true
    on conflict (website_id, breakdown, day, key) do update set
      pageviews = breakdown_days.pageviews + excluded.pageviews,
      events = breakdown_days.events + excluded.events`;

/** After dayRowsInto(-1): the rows of `day_rows`' keys left with no event go. */
export const DAY_ROWS_EMPTIED = sql`delete from breakdown_days where events <= 0
        and (website_id, breakdown, day, key) in (select website_id, breakdown, day, key from day_rows)`;

/**
 * Adds (sign 1) or takes out (sign -1) the events or sessions `dayRows` groups (a `with ... day_rows as (...)`
 * of website, breakdown, day, key, pageviews and events) to breakdown_days.
 */
export async function addDayRows(db: Kysely<Database>, dayRows: RawBuilder<unknown>, sign: 1 | -1): Promise<void> {
  await sql`${dayRows} ${dayRowsInto(sign)}`.execute(db);
  if (sign < 0) await sql`${dayRows} ${DAY_ROWS_EMPTIED}`.execute(db);
}

/** Fills breakdown_last_days from a website's breakdown_visitors rows of these breakdowns (the rebuild, after deriving them). */
export async function deriveLastDays(db: Kysely<Database>, websiteId: string, kinds: readonly Breakdown[]): Promise<void> {
  await sql`insert into breakdown_last_days (website_id, breakdown, day, key, visitors)
    select website_id, breakdown, last_day, key, count(*)
    from breakdown_visitors where website_id = ${websiteId} and ${breakdownIn(kinds)} and last_day is not null
    group by website_id, breakdown, last_day, key`.execute(db);
}

/** Deletes a website's rows of both tables for these breakdowns. */
export async function deleteDayRows(db: Kysely<Database>, websiteId: string, kinds: readonly Breakdown[]): Promise<void> {
  await sql`delete from breakdown_days where website_id = ${websiteId} and ${breakdownIn(kinds)}`.execute(db);
  await sql`delete from breakdown_last_days where website_id = ${websiteId} and ${breakdownIn(kinds)}`.execute(db);
}

/** The zone's offsets over every stored event of the website (none: no events). */
export async function websiteOffsets(db: Kysely<Database>, websiteId: string, timezone: string): Promise<WebsiteOffsets> {
  // Two subqueries, so that each is one step of the (website, time) index on SQLite.
  const { rows } = await sql<{ first: unknown; last: unknown }>`select
    (select min(occurred_at) from events where website_id = ${websiteId}) as first,
    (select max(occurred_at) from events where website_id = ${websiteId}) as last`.execute(db);
  return offsetsBetween(websiteId, timezone, rows[0]);
}

/** The zones' offsets over the stored events of these visitors of the website (none: no events). */
export async function visitorsOffsets(db: Kysely<Database>, websiteId: string, visitorIds: string[], timezones: string[]): Promise<WebsiteOffsets[]> {
  // SQLite, without statistics, would walk a covering index over every event of the website.
  const events = isPostgres(db) ? sql`events` : sql`events indexed by events_website_visitor_idx`;
  const { rows } = await sql<{ first: unknown; last: unknown }>`select min(occurred_at) as first, max(occurred_at) as last
    from ${events} where website_id = ${websiteId} and visitor_id in (${sqlList(visitorIds)})`.execute(db);
  return timezones.map((timezone) => offsetsBetween(websiteId, timezone, rows[0]));
}

function offsetsBetween(websiteId: string, timezone: string, row: { first: unknown; last: unknown } | undefined): WebsiteOffsets {
  if (!row || row.first === null || row.last === null) return new Map();
  const ms = (value: unknown) => (value instanceof Date ? value.getTime() : Date.parse(String(value)));
  return new Map([[websiteId, offsetPeriods(timezone, ms(row.first), ms(row.last))]]);
}

/** The website's time zone, or undefined for no such website. */
export async function timezoneOf(db: Kysely<Database>, websiteId: string): Promise<string | undefined> {
  return (await db.selectFrom('websites').select('timezone').where('id', '=', websiteId).executeTakeFirst())?.timezone;
}

/**
 * Sets the last days of the breakdown_visitors rows `rows` (a condition over the table's qualified
 * columns) to those of `keyed` (a `with ... keyed as (...)` of the same visitors' keys, with
 * last_day), moving breakdown_last_days with them: a time-zone move of these visitors.
 */
export async function setLastDays(db: Kysely<Database>, keyed: RawBuilder<unknown>, rows: RawBuilder<unknown>): Promise<void> {
  await countLastDays(db, rows, -1);
  await countProfileLastDays(db, rows, -1);
  await sql`${keyed}
    update breakdown_visitors set last_day = k.last_day from keyed k
    where ${rows} and k.website_id = breakdown_visitors.website_id and k.visitor_id = breakdown_visitors.visitor_id
      and k.breakdown = breakdown_visitors.breakdown and k.key = breakdown_visitors.key`.execute(db);
  await countLastDays(db, rows, 1);
  await countProfileLastDays(db, rows, 1);
}

/** These visitors' rows of breakdown_visitors for these breakdowns, as a condition over the table's qualified columns. */
export const visitorRowsOf = (websiteId: string, visitorIds: string[], kinds: readonly Breakdown[]) =>
  sql`breakdown_visitors.website_id = ${websiteId} and breakdown_visitors.visitor_id in (${sqlList(visitorIds)})
    and breakdown_visitors.breakdown in (${sql.join(kinds.map((kind) => sql.lit(kind)))})`;
