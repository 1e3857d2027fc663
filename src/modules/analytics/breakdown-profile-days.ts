import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { Engine } from '../../db/database.ts';
import { engineOf } from '../../db/engine.ts';
import { sqlList } from '../../db/prepared.ts';
import type { Database } from '../../db/schema.ts';
import { BREAKDOWN_SPECS } from './breakdown-specs.ts';
import { SESSION_BREAKDOWNS, keyJson } from './breakdown-keys.ts';
import { breakdownIn, profileDayRows } from './breakdown-rollup-tables.ts';
import type { Breakdown } from './breakdowns.ts';
import { type WebsiteOffsets, rowDaySql } from './local-day-sql.ts';
import { profileJson } from './profile-json.ts';
import { BOUNCE, millisBetween } from './session-terms.ts';

// The breakdowns by local day and visitor profile (issue 39 item 2), so that a breakdown or the
// overview filtered on visitor attributes over whole days up to the latest data reads a few sums
// per key, day and profile instead of every event or session in range
// (../stats/sql/breakdown-profile-day-reads.ts, ../stats/sql/overview-profile-days-sql.ts):
// - breakdown_profile_days, event breakdowns: per key, day and profile *of the events themselves*
//   (their six attribute values), their pageviews and events. A filter on visitor attributes
//   tests the events' own columns, so these sums are exact for every visitor, varied or steady,
//   and no visitor ever leaves or joins them: they follow breakdown_days event for event
//   (ingestion, a server-goal delete, a time-zone move, the rebuild; breakdown-rollups.ts).
// - breakdown_profile_days, session breakdowns: per key, start day and *visitor* profile, the
//   sessions (`events`), pageviews, bounces and milliseconds of the steady visitors
//   (visitor_totals.varied = 0). A session's events may disagree on an attribute only for a
//   varied visitor, whose sessions the readers take raw. They follow breakdown_days' session rows
//   (session-breakdown-rollups.ts: the batch's sessions out before their upsert, in after it; a
//   move), and a visitor who starts to vary or is repaired leaves and joins with every session
//   (moveSessionProfileDays, from breakdown-profiles.ts).
// - breakdown_profile_last_days: per key, day and visitor profile, the steady visitors whose last
//   day under the key it is: breakdown_last_days split by profile. Distinct visitors do not add up
//   over days, but a steady visitor is in a range that reaches the latest day exactly when their
//   last day is in it, and under one profile only; the readers count the varied visitors from
//   their raw rows. These follow the steady visitors' rows of breakdown_visitors: ingestion moves
//   each row's last day (moveProfileLastDays beside moveLastDays; countProfileLastDays beside the
//   sessions' countLastDays), a visitor who starts to vary or is repaired leaves and joins with
//   every row (breakdown-profiles.ts), a move resets them (setLastDays), a rebuild derives them.

/** An insert into breakdown_profile_days adds to the row it meets. */
const ADD_TO_DAYS = sql`on conflict (website_id, breakdown, day, key, profile) do update set
  pageviews = breakdown_profile_days.pageviews + excluded.pageviews,
  events = breakdown_profile_days.events + excluded.events,
  bounces = breakdown_profile_days.bounces + excluded.bounces,
  millis = breakdown_profile_days.millis + excluded.millis`;

const ADD_TO_LAST_DAYS = sql`on conflict (website_id, breakdown, day, key, profile) do update set
  visitors = breakdown_profile_last_days.visitors + excluded.visitors`;

/**
 * The rows `profile_day_rows` (a CTE of website, breakdown, day, key, profile, pageviews, events,
 * bounces and millis) groups, added to (sign 1) or taken out of (sign -1) breakdown_profile_days.
 */
export const profileDayRowsInto = (sign: 1 | -1) => {
  const n = sql.lit(sign);
  return sql`insert into breakdown_profile_days (website_id, breakdown, day, key, profile, pageviews, events, bounces, millis)
    select website_id, breakdown, day, key, profile, ${n} * pageviews, ${n} * events, ${n} * bounces, ${n} * millis from profile_day_rows where true
    ${ADD_TO_DAYS}`;
};

/** After profileDayRowsInto(-1): the rows of `profile_day_rows`' keys left with no event go. */
export const PROFILE_DAY_ROWS_EMPTIED = sql`delete from breakdown_profile_days where events <= 0
        and (website_id, breakdown, day, key, profile) in (select website_id, breakdown, day, key, profile from profile_day_rows)`;

/**
 * Adds (sign 1) or takes out (sign -1) `rows` (a `with ... profile_day_rows as (...)` of website,
 * breakdown, day, key, profile, pageviews, events, bounces and millis) to breakdown_profile_days.
 */
export async function addProfileDayRows(db: Kysely<Database>, rows: RawBuilder<unknown>, sign: 1 | -1): Promise<void> {
  await sql`${rows} ${profileDayRowsInto(sign)}`.execute(db);
  if (sign < 0) await sql`${rows} ${PROFILE_DAY_ROWS_EMPTIED}`.execute(db);
}

/** The sessions' columns the session breakdowns' keys read. */
const KEY_COLUMNS = [...new Set(SESSION_BREAKDOWNS.flatMap((kind) => Object.values(BREAKDOWN_SPECS[kind].keys)))];

/**
 * `with ... profile_day_rows as (...)`: per session breakdown, start day (`day`, over `s`) and key,
 * the sessions `where` keeps (over sessions `s`) of steady visitors, by their visitor's profile.
 */
export function sessionProfileDayRows(db: Kysely<Database>, where: RawBuilder<unknown>, day: RawBuilder<string>): RawBuilder<unknown> {
  const engine = engineOf(db);
  const columns = ['website_id', 'visitor_id', 'pageviews', ...KEY_COLUMNS].map((column) => sql.ref(`s.${column}`));
  const scoped = sql`select ${sql.join(columns)}, ${day} as day, ${profileJson(engine, 'vt')} as profile,
      case when ${BOUNCE} then 1 else 0 end as bounces, ${millisBetween(db, 's.started_at', 's.ended_at')} as millis
    from sessions s ${steadyVisitor('s')} where ${where}`;
  const branches = SESSION_BREAKDOWNS.map(
    (kind) => sql`select s.website_id, ${sql.lit(kind)} as breakdown, s.day, ${keyJson(engine, kind, 's')} as key, s.profile, s.pageviews, s.bounces, s.millis from scoped s`,
  );
  return profileDayRows(scoped, branches);
}

/** `alias`'s visitor_totals row `vt`, when the visitor is steady. */
const steadyVisitor = (alias: string) =>
  sql`join visitor_totals vt on vt.website_id = ${sql.ref(`${alias}.website_id`)} and vt.visitor_id = ${sql.ref(`${alias}.visitor_id`)} and vt.varied = 0`;

/**
 * These visitors' sessions, for those steady now, join (1) or leave (-1) the session rows of
 * breakdown_profile_days on their start days, each visitor in the zone their days are in
 * (`zones`: zone to visitors, offsets over their events): they start to vary, or a repair moves them.
 */
export async function moveSessionProfileDays(db: Kysely<Database>, websiteId: string, zones: { visitorIds: string[]; offsets: WebsiteOffsets }[], sign: 1 | -1): Promise<void> {
  for (const { visitorIds, offsets } of zones) {
    if (offsets.size === 0 || visitorIds.length === 0) continue;
    const where = sql`s.website_id = ${websiteId} and s.visitor_id in (${sqlList(visitorIds)})`;
    await addProfileDayRows(db, sessionProfileDayRows(db, where, rowDaySql(engineOf(db), offsets, 's')), sign);
  }
}

/**
 * Mirrors LAST_DAYS_MOVE (breakdown-days.ts) for the steady visitors: before `keyed` (with
 * last_day) is added to breakdown_visitors (reading that table as it was), each steady visitor
 * whose last day under a key moves (or who is new to it) leaves the old day's count of their
 * profile and joins the new one's. Ingestion only, after visitor_totals took the batch (a visitor
 * who starts to vary has left already).
 */
export const profileLastDaysMove = (engine: Engine) => {
  const profile = profileJson(engine, 'vt');
  const stored = sql`v.website_id = g.website_id and v.visitor_id = g.visitor_id and v.breakdown = g.breakdown and v.key = g.key`;
  return sql`insert into breakdown_profile_last_days (website_id, breakdown, day, key, profile, visitors)
    select website_id, breakdown, day, key, profile, sum(n) from (
      select g.website_id, g.breakdown, g.last_day as day, g.key, ${profile} as profile, 1 as n
      from keyed g ${steadyVisitor('g')} left join breakdown_visitors v on ${stored}
      where g.last_day is not null and (v.last_day is null or g.last_day > v.last_day)
      union all
      select g.website_id, g.breakdown, v.last_day as day, g.key, ${profile} as profile, -1 as n
      from keyed g ${steadyVisitor('g')} join breakdown_visitors v on ${stored}
      where g.last_day > v.last_day
    ) m where true group by website_id, breakdown, day, key, profile
    ${ADD_TO_LAST_DAYS}`;
};

/** profileLastDaysMove after `keyed` (a `with ... keyed as (...)`). */
export async function moveProfileLastDays(db: Kysely<Database>, keyed: RawBuilder<unknown>): Promise<void> {
  await sql`${keyed} ${profileLastDaysMove(engineOf(db))}`.execute(db);
}

/**
 * The steady visitors' rows of breakdown_visitors that `rows` keeps (a condition over the table's
 * columns) leave (sign -1) or join (sign 1) their last days' counts: beside every lastDaysCount,
 * and a visitor leaving or joining their profile.
 */
export const profileLastDaysCount = (engine: Engine, rows: RawBuilder<unknown>, sign: 1 | -1) => {
  const profile = profileJson(engine, 'vt');
  // The rows first, then their visitors: PostgreSQL, its statistics behind a website's growth,
  // read every steady visitor of the website and looked up each one's rows (100 to 140 ms a
  // statement at 20,000 visitors, most of a fold's time: docs/decisions.md). OFFSET 0 keeps the
  // subquery whole.
  const first = engine === 'postgres' ? sql` offset 0` : sql``;
  return sql`insert into breakdown_profile_last_days (website_id, breakdown, day, key, profile, visitors)
    select b.website_id, b.breakdown, b.last_day, b.key, ${profile}, ${sql.lit(sign)} * count(*)
    from (select website_id, visitor_id, breakdown, key, last_day from breakdown_visitors where ${rows}${first}) b ${steadyVisitor('b')}
    where b.last_day is not null
    group by b.website_id, b.breakdown, b.last_day, b.key, ${profile}
    ${ADD_TO_LAST_DAYS}`;
};

export async function countProfileLastDays(db: Kysely<Database>, rows: RawBuilder<unknown>, sign: 1 | -1): Promise<void> {
  await profileLastDaysCount(engineOf(db), rows, sign).execute(db);
}

/** Replaces a website's breakdown_profile_last_days rows of these breakdowns with ones derived from breakdown_visitors and visitor_totals. */
export async function rebuildProfileLastDays(db: Kysely<Database>, websiteId: string, kinds: readonly Breakdown[]): Promise<void> {
  await sql`delete from breakdown_profile_last_days where website_id = ${websiteId} and ${breakdownIn(kinds)}`.execute(db);
  await countProfileLastDays(db, sql`website_id = ${websiteId} and ${breakdownIn(kinds)}`, 1);
}

/** Deletes a website's rows of both tables for these breakdowns. */
export async function deleteProfileDayRows(db: Kysely<Database>, websiteId: string, kinds: readonly Breakdown[]): Promise<void> {
  await sql`delete from breakdown_profile_days where website_id = ${websiteId} and ${breakdownIn(kinds)}`.execute(db);
  await sql`delete from breakdown_profile_last_days where website_id = ${websiteId} and ${breakdownIn(kinds)}`.execute(db);
}
