import { type Kysely, type RawBuilder, sql } from 'kysely';
import { engineOf } from '../../db/engine.ts';
import type { Database } from '../../db/schema.ts';
import { EVENT_BREAKDOWNS } from './breakdown-keys.ts';
import { breakdownIn } from './breakdown-rollup-tables.ts';
import type { Breakdown } from './breakdowns.ts';
import { profileJson } from './profile-json.ts';

// The event breakdowns by local day and visitor profile (issue 39 item 2), so that a breakdown or
// the overview filtered on visitor attributes over whole days up to the latest data reads a few
// sums per key, day and profile instead of every event in range
// (../stats/sql/breakdown-profile-day-reads.ts):
// - breakdown_profile_days: per key, day and profile *of the events themselves* (their six
//   attribute values), their pageviews and events. A filter on visitor attributes tests the
//   events' own columns, so these sums are exact for every visitor, varied or steady, and no
//   visitor ever has to leave or join them: they follow breakdown_days, event for event
//   (ingestion, a server-goal delete, a time-zone move, the rebuild).
// - breakdown_profile_last_days: per key, day and visitor profile, the *steady* visitors
//   (visitor_totals.varied = 0) whose last day under the key it is: breakdown_last_days split
//   by profile. Distinct visitors do not add up over days, but a steady visitor is in a range that
//   reaches the latest day exactly when their last day is in it, and under one profile only. The
//   varied visitors are counted from their raw events by the readers. These rows follow the
//   steady visitors' rows of breakdown_visitors: ingestion moves each row's last day
//   (moveProfileLastDays, beside moveLastDays), a visitor who starts to vary or is repaired leaves
//   and joins with every row (breakdown-profiles.ts moveVisitors), a move resets them
//   (setLastDays), a rebuild derives them.
// Session breakdowns (entry and exit pages, referrers, campaigns) have no rows here: a session's
// events may disagree on an attribute, so their filtered whole-day reads stay raw.

/** An insert into breakdown_profile_days adds to the row it meets. */
const ADD_TO_DAYS = sql`on conflict (website_id, breakdown, day, key, profile) do update set
  pageviews = breakdown_profile_days.pageviews + excluded.pageviews,
  events = breakdown_profile_days.events + excluded.events`;

const ADD_TO_LAST_DAYS = sql`on conflict (website_id, breakdown, day, key, profile) do update set
  visitors = breakdown_profile_last_days.visitors + excluded.visitors`;

/**
 * Adds (sign 1) or takes out (sign -1) `profileDayRows` (a `with ... profile_day_rows as (...)` of
 * website, breakdown, day, key, profile, pageviews and events) to breakdown_profile_days.
 */
export async function addProfileDayRows(db: Kysely<Database>, profileDayRows: RawBuilder<unknown>, sign: 1 | -1): Promise<void> {
  await sql`${profileDayRows}
    insert into breakdown_profile_days (website_id, breakdown, day, key, profile, pageviews, events)
    select website_id, breakdown, day, key, profile, ${sql.lit(sign)} * pageviews, ${sql.lit(sign)} * events from profile_day_rows where true
    ${ADD_TO_DAYS}`.execute(db);
  if (sign < 0) {
    await sql`${profileDayRows}
      delete from breakdown_profile_days where events <= 0
        and (website_id, breakdown, day, key, profile) in (select website_id, breakdown, day, key, profile from profile_day_rows)`.execute(db);
  }
}

/** `alias`'s visitor_totals row `vt`, when the visitor is steady. */
const steadyVisitor = (alias: string) =>
  sql`join visitor_totals vt on vt.website_id = ${sql.ref(`${alias}.website_id`)} and vt.visitor_id = ${sql.ref(`${alias}.visitor_id`)} and vt.varied = 0`;

/**
 * Mirrors moveLastDays (breakdown-days.ts) for the steady visitors: before `keyed` (with last_day)
 * is added to breakdown_visitors, each steady visitor whose last day under a key moves (or who is
 * new to it) leaves the old day's count of their profile and joins the new one's. Ingestion only,
 * after visitor_totals took the batch (a visitor who starts to vary has left already).
 */
export async function moveProfileLastDays(db: Kysely<Database>, keyed: RawBuilder<unknown>): Promise<void> {
  const profile = profileJson(engineOf(db), 'vt');
  const stored = sql`v.website_id = g.website_id and v.visitor_id = g.visitor_id and v.breakdown = g.breakdown and v.key = g.key`;
  await sql`${keyed}
    insert into breakdown_profile_last_days (website_id, breakdown, day, key, profile, visitors)
    select website_id, breakdown, day, key, profile, sum(n) from (
      select g.website_id, g.breakdown, g.last_day as day, g.key, ${profile} as profile, 1 as n
      from keyed g ${steadyVisitor('g')} left join breakdown_visitors v on ${stored}
      where g.last_day is not null and (v.last_day is null or g.last_day > v.last_day)
      union all
      select g.website_id, g.breakdown, v.last_day as day, g.key, ${profile} as profile, -1 as n
      from keyed g ${steadyVisitor('g')} join breakdown_visitors v on ${stored}
      where g.last_day > v.last_day
    ) m where true group by website_id, breakdown, day, key, profile
    ${ADD_TO_LAST_DAYS}`.execute(db);
}

/**
 * The steady visitors' rows of breakdown_visitors that `rows` keeps (a condition over the table's
 * columns) leave (sign -1) or join (sign 1) their last days' counts: a move's reset of last days,
 * and a visitor leaving or joining their profile.
 */
export async function countProfileLastDays(db: Kysely<Database>, rows: RawBuilder<unknown>, sign: 1 | -1): Promise<void> {
  await sql`insert into breakdown_profile_last_days (website_id, breakdown, day, key, profile, visitors)
    select b.website_id, b.breakdown, b.last_day, b.key, ${profileJson(engineOf(db), 'vt')}, ${sql.lit(sign)} * count(*)
    from (select website_id, visitor_id, breakdown, key, last_day from breakdown_visitors where ${rows}) b ${steadyVisitor('b')}
    where b.last_day is not null and b.breakdown in (${sql.join(EVENT_BREAKDOWNS.map((kind) => sql.lit(kind)))})
    group by b.website_id, b.breakdown, b.last_day, b.key, ${profileJson(engineOf(db), 'vt')}
    ${ADD_TO_LAST_DAYS}`.execute(db);
}

/** The event breakdowns among `kinds`. */
const eventKinds = (kinds: readonly Breakdown[]) => kinds.filter((kind) => EVENT_BREAKDOWNS.includes(kind));

/** Replaces a website's breakdown_profile_last_days rows of these breakdowns with ones derived from breakdown_visitors and visitor_totals. */
export async function rebuildProfileLastDays(db: Kysely<Database>, websiteId: string, kinds: readonly Breakdown[]): Promise<void> {
  const kept = eventKinds(kinds);
  if (kept.length === 0) return;
  await sql`delete from breakdown_profile_last_days where website_id = ${websiteId} and ${breakdownIn(kept)}`.execute(db);
  await countProfileLastDays(db, sql`website_id = ${websiteId} and ${breakdownIn(kept)}`, 1);
}

/** Deletes a website's rows of both tables for these breakdowns. */
export async function deleteProfileDayRows(db: Kysely<Database>, websiteId: string, kinds: readonly Breakdown[]): Promise<void> {
  const kept = eventKinds(kinds);
  if (kept.length === 0) return;
  await sql`delete from breakdown_profile_days where website_id = ${websiteId} and ${breakdownIn(kept)}`.execute(db);
  await sql`delete from breakdown_profile_last_days where website_id = ${websiteId} and ${breakdownIn(kept)}`.execute(db);
}
