import { type Kysely, type RawBuilder, sql } from 'kysely';
import { isPostgres } from '../../db/engine.ts';
import type { Database } from '../../db/schema.ts';
import type { Breakdown } from './breakdowns.ts';
import { addRevenueOfNewRows, subtractRevenueOfRows } from './breakdown-revenue.ts';
import { runTogether } from './statement-groups.ts';

// What the writers of both kinds of breakdown rollups share (breakdown-rollups.ts for the
// breakdowns over events, session-breakdown-rollups.ts for those over sessions): the two tables
// hold the rows of every breakdown, told apart by their `breakdown` column.

/** An insert into breakdown_totals adds to the key's row when it has one. */
export const ADD_TO_TOTALS = sql`on conflict (website_id, breakdown, key) do update set
  visitors = breakdown_totals.visitors + excluded.visitors,
  pageviews = breakdown_totals.pageviews + excluded.pageviews,
  events = breakdown_totals.events + excluded.events`;

/** `breakdown in (...)`: the rows of these breakdowns (literals from code). */
export const breakdownIn = (kinds: readonly Breakdown[]) => sql`breakdown in (${sql.join(kinds.map((kind) => sql.lit(kind)))})`;

/**
 * `with scoped as (...), keyed as (...)`: per website, visitor, breakdown and key, the summed
 * `pageviews`, the rows (`events`) of `branches`, each a select over `scoped` of website,
 * visitor, breakdown, key and pageviews (and `day` with `lastDay`), and the latest such `day` as
 * `last_day` (null without). The source rows are read once, so `scoped`'s values are bound once;
 * MATERIALIZED keeps it so: flattened into each branch, SQLite took the goals branch's covering
 * index over every goal of the website (24 ms a visitor at a million events) instead of the few
 * rows `scoped` names.
 */
export function keyedRows(scoped: RawBuilder<unknown>, branches: RawBuilder<unknown>[], lastDay = false): RawBuilder<unknown> {
  return sql`with scoped as materialized (${scoped}),
    keyed as (
      select website_id, visitor_id, breakdown, key, sum(pageviews) as pageviews, count(*) as events, ${lastDay ? sql`max(day)` : sql`null`} as last_day
      from (${sql.join(branches, sql` union all `)}) k
      group by website_id, visitor_id, breakdown, key)`;
}

/**
 * `with scoped as (...), day_rows as (...)`: per website, breakdown, day and key, the summed
 * `pageviews` and the rows (`events`) of `branches` (selects over `scoped` as for keyedRows, with
 * `day`), for breakdown_days.
 */
export function dayRows(scoped: RawBuilder<unknown>, branches: RawBuilder<unknown>[]): RawBuilder<unknown> {
  return sql`with scoped as materialized (${scoped}),
    day_rows as (
      select website_id, breakdown, day, key, sum(pageviews) as pageviews, count(*) as events
      from (${sql.join(branches, sql` union all `)}) k
      group by website_id, breakdown, day, key)`;
}

/**
 * `with scoped as (...), profile_day_rows as (...)`: as dayRows, per profile too (branches that
 * select a `profile`, `bounces` and `millis` besides), for breakdown_profile_days.
 */
export function profileDayRows(scoped: RawBuilder<unknown>, branches: RawBuilder<unknown>[]): RawBuilder<unknown> {
  return sql`with scoped as materialized (${scoped}),
    profile_day_rows as (
      select website_id, breakdown, day, key, profile, sum(pageviews) as pageviews, count(*) as events, sum(bounces) as bounces, sum(millis) as millis
      from (${sql.join(branches, sql` union all `)}) k
      group by website_id, breakdown, day, key, profile)`;
}

/**
 * `keyed` (a `with ... keyed as (...)`) as a snapshot a batch's statements can read several times:
 * on SQLite the rows are computed once into a temporary table of the connection (each statement
 * would otherwise compute the CTE again: three to four times per batch and kind), and the
 * snapshot reads that table; PostgreSQL, where each statement is a round trip, keeps the CTE.
 * A snapshot holds until the next one is taken, so take it just before its statements.
 */
export async function snapshotKeyed(db: Kysely<Database>, keyed: RawBuilder<unknown>): Promise<RawBuilder<unknown>> {
  if (isPostgres(db)) return keyed;
  await sql`create temp table if not exists keyed_batch (website_id text, visitor_id text, breakdown text, key text, pageviews integer, events integer, last_day text)`.execute(db);
  await sql`delete from temp.keyed_batch`.execute(db);
  await sql`${keyed} insert into temp.keyed_batch select website_id, visitor_id, breakdown, key, pageviews, events, last_day from keyed`.execute(db);
  return sql`with keyed as (select * from temp.keyed_batch)`;
}

/** Deletes both tables' rows of these breakdowns, of one website or of every website. */
export async function deleteRows<DB>(db: Kysely<DB>, websiteId: string | null, kinds: readonly Breakdown[]): Promise<void> {
  const website = websiteId === null ? sql`true` : sql`website_id = ${websiteId}`;
  await sql`delete from breakdown_visitors where ${website} and ${breakdownIn(kinds)}`.execute(db);
  await sql`delete from breakdown_totals where ${website} and ${breakdownIn(kinds)}`.execute(db);
}

/**
 * Fills both tables with `keyed` (a `with ... keyed as (...)` of website, visitor, breakdown, key,
 * pageviews and events, over one website or every website) where they hold none of those
 * breakdowns' rows yet: the rebuilds and the migrations' fills.
 */
export async function deriveKeyed<DB>(db: Kysely<DB>, keyed: RawBuilder<unknown>, websiteId: string | null, kinds: readonly Breakdown[], lastDay = false): Promise<void> {
  // Migrations 0013 and 0014 fill the table before migration 0019 adds last_day.
  const day = lastDay ? sql`, last_day` : sql``;
  await sql`${keyed}
    insert into breakdown_visitors (website_id, visitor_id, breakdown, key, pageviews, events${day})
    select website_id, visitor_id, breakdown, key, pageviews, events${day} from keyed`.execute(db);
  const website = websiteId === null ? sql`true` : sql`website_id = ${websiteId}`;
  await sql`insert into breakdown_totals (website_id, breakdown, key, visitors, pageviews, events)
    select website_id, breakdown, key, count(*), sum(pageviews), sum(events)
    from breakdown_visitors where ${website} and ${breakdownIn(kinds)} group by website_id, breakdown, key`.execute(db);
}

/**
 * `keyed` (website, visitor, breakdown, key, pageviews, events, last_day) into breakdown_totals, a
 * visitor counting as new to a key while breakdown_visitors has no row for them yet (so it reads
 * that table as it was before KEYED_INTO_VISITORS). (Every INSERT ... SELECT here has a WHERE:
 * SQLite's parser needs one before ON CONFLICT.)
 */
export const KEYED_INTO_TOTALS = sql`insert into breakdown_totals (website_id, breakdown, key, visitors, pageviews, events)
    select g.website_id, g.breakdown, g.key,
      sum(case when exists (select 1 from breakdown_visitors v where v.website_id = g.website_id
        and v.visitor_id = g.visitor_id and v.breakdown = g.breakdown and v.key = g.key) then 0 else 1 end),
      sum(g.pageviews), sum(g.events)
    from keyed g where true group by g.website_id, g.breakdown, g.key
    ${ADD_TO_TOTALS}`;

/** `keyed` added to breakdown_visitors (a row's last day only moves later). */
export const KEYED_INTO_VISITORS = sql`insert into breakdown_visitors (website_id, visitor_id, breakdown, key, pageviews, events, last_day)
    select website_id, visitor_id, breakdown, key, pageviews, events, last_day from keyed where true
    on conflict (website_id, visitor_id, breakdown, key) do update set
      pageviews = breakdown_visitors.pageviews + excluded.pageviews,
      events = breakdown_visitors.events + excluded.events,
      last_day = case when excluded.last_day > coalesce(breakdown_visitors.last_day, '') then excluded.last_day else breakdown_visitors.last_day end`;

/**
 * Adds `keyed` (a `with ... keyed as (...)` of website, visitor, breakdown, key, pageviews,
 * events and last_day) to both tables: what its new rows' visitors paid, the totals, then the rows.
 */
export async function addKeyed(db: Kysely<Database>, keyed: RawBuilder<unknown>): Promise<void> {
  await addRevenueOfNewRows(db, keyed);
  await runTogether(db, keyed, [KEYED_INTO_TOTALS, KEYED_INTO_VISITORS]);
}

/**
 * `keyed` (as for addKeyed, and already counted in both tables) out of breakdown_totals: a visitor
 * leaves a key's totals with the last of their counts under it (reading breakdown_visitors as it
 * was before KEYED_OUT_OF_VISITORS).
 */
export const KEYED_OUT_OF_TOTALS = sql`insert into breakdown_totals (website_id, breakdown, key, visitors, pageviews, events)
    select g.website_id, g.breakdown, g.key, -sum(case when v.events <= g.events then 1 else 0 end), -sum(g.pageviews), -sum(g.events)
    from keyed g join breakdown_visitors v on v.website_id = g.website_id and v.visitor_id = g.visitor_id
      and v.breakdown = g.breakdown and v.key = g.key
    where true group by g.website_id, g.breakdown, g.key
    ${ADD_TO_TOTALS}`;

/** `keyed` taken out of breakdown_visitors' counts (the rows it empties stay, with no event: VISITORS_EMPTIED deletes them). */
export const KEYED_OUT_OF_VISITORS = sql`insert into breakdown_visitors (website_id, visitor_id, breakdown, key, pageviews, events)
    select website_id, visitor_id, breakdown, key, -pageviews, -events from keyed where true
    on conflict (website_id, visitor_id, breakdown, key) do update set
      pageviews = breakdown_visitors.pageviews + excluded.pageviews,
      events = breakdown_visitors.events + excluded.events`;

/** The rows of breakdown_visitors that `keyed` emptied, as a condition over the table's columns. */
export const EMPTIED_VISITOR_ROWS = sql`events <= 0 and (website_id, visitor_id, breakdown, key) in (select website_id, visitor_id, breakdown, key from keyed)`;

/** After KEYED_OUT_OF_VISITORS: the rows it emptied go. */
export const VISITORS_EMPTIED = sql`delete from breakdown_visitors where ${EMPTIED_VISITOR_ROWS}`;

/** After KEYED_OUT_OF_TOTALS: the keys left with no event go. */
export const TOTALS_EMPTIED = sql`delete from breakdown_totals where events <= 0
      and (website_id, breakdown, key) in (select website_id, breakdown, key from keyed)`;

/**
 * Takes `keyed` (as for addKeyed, and already counted in both tables) out of them: a visitor
 * leaves a key's totals with the last of their counts under it, and rows left with no event go,
 * with what their visitors paid.
 */
export async function subtractKeyed(db: Kysely<Database>, keyed: RawBuilder<unknown>): Promise<void> {
  await runTogether(db, keyed, [KEYED_OUT_OF_TOTALS, KEYED_OUT_OF_VISITORS]);
  await subtractRevenueOfRows(db, EMPTIED_VISITOR_ROWS, keyed);
  await runTogether(db, keyed, [VISITORS_EMPTIED, TOTALS_EMPTIED]);
}
