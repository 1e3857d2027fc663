import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { Engine } from '../../db/database.ts';
import { engineOf, isPostgres } from '../../db/engine.ts';
import type { Database } from '../../db/schema.ts';
import { chunks } from '../../lib/chunks.ts';
import { sqlList } from '../../db/prepared.ts';
import { BREAKDOWN_SPECS } from './breakdown-specs.ts';
import { BREAKDOWNS } from './breakdowns.ts';
import { EVENT_KIND_CONDITION, EVENT_BREAKDOWNS, keyJson } from './breakdown-keys.ts';
import {
  ADD_TO_TOTALS,
  KEYED_INTO_TOTALS,
  KEYED_INTO_VISITORS,
  addKeyed,
  breakdownIn,
  dayRows,
  deleteRows,
  deriveKeyed,
  keyedRows,
  profileDayRows,
  snapshotKeyed,
} from './breakdown-rollup-tables.ts';
import { addProfileDayRows, deleteProfileDayRows, moveProfileLastDays, profileDayRowsInto, profileLastDaysMove } from './breakdown-profile-days.ts';
import { profileJson } from './profile-json.ts';
import { addKeyedToProfiles, keyedIntoProfiles, rebuildBreakdownProfiles } from './breakdown-profiles.ts';
import {
  LAST_DAYS_MOVE,
  addDayRows,
  countLastDays,
  dayRowsInto,
  deleteDayRows,
  deriveLastDays,
  moveLastDays,
  setLastDays,
  timezoneOf,
  visitorRowsOf,
  websiteOffsets,
} from './breakdown-days.ts';
import { type WebsiteOffsets, rowDaySql, offsetsOf } from './local-day-sql.ts';
import type { RecordedEvent } from '../../db/event-records.ts';
import { deriveWebsiteSessionRollups } from './session-breakdown-rollups.ts';
import { addProfileRevenueOfNewRows, addRevenueOfNewRows, rebuildBreakdownRevenue, subtractRevenueOfRows } from './breakdown-revenue.ts';
import { runTogether } from './statement-groups.ts';

// Keeps the all-time event breakdowns (pages, countries, regions, cities, devices, browsers,
// operating systems, hostnames, goals, exit clicks) as rollups, so an unfiltered all-time
// breakdown reads one row per key instead of counting distinct visitors over every event:
// - breakdown_visitors: per visitor and key, that visitor's events and pageviews under it;
// - breakdown_totals: per key, its visitors (rows of breakdown_visitors), pageviews and events.
// Every write derives them from the raw events with set-based SQL: the rollup deriver adds a
// batch of accepted events (rollup-backlog.ts; two statements per batch, whatever its size), a
// goal delete re-derives the touched visitors, and a rebuild derives a
// whole website (migration 0013, the bench's bulk load). All-time counts do not depend on the
// time zone, so a time-zone change leaves them alone. The session breakdowns' rows share both
// tables (session-breakdown-rollups.ts); what both writers share is in breakdown-rollup-tables.ts.

/** What every rollup row and the event kinds' tests read, besides the keys' columns. */
const ROW_COLUMNS = ['website_id', 'visitor_id', 'type', 'name', 'link_url'];
/** The events' columns the rollups read (the CTE below is aliased `e`, as the key SQL expects). */
const READ_COLUMNS = [...new Set([...ROW_COLUMNS, ...EVENT_BREAKDOWNS.flatMap((kind) => Object.values(BREAKDOWN_SPECS[kind].keys))])];

/**
 * Per event breakdown, a select over `scoped` (events as `e`) of website, visitor, breakdown, key,
 * pageviews and, with `day`, day, and with `profile`, the event's own profile.
 */
function eventBranches(engine: Engine, withDay: boolean, withProfile = false): RawBuilder<unknown>[] {
  return EVENT_BREAKDOWNS.map((kind) => {
    const only = BREAKDOWN_SPECS[kind].only;
    return sql`select e.website_id, e.visitor_id, ${sql.lit(kind)} as breakdown, ${keyJson(engine, kind)} as key,
        case when e.type = 'pageview' then 1 else 0 end as pageviews${withDay ? sql`, e.day` : sql``}${withProfile ? sql`, ${profileJson(engine, 'e')} as profile, 0 as bounces, 0 as millis` : sql``}
      from scoped e${only ? sql` where ${EVENT_KIND_CONDITION[only]}` : sql``}`;
  });
}

/** The events `where` keeps, with their local `day` when given (an expression over `e`). */
function scopedEvents(where: RawBuilder<unknown>, day?: RawBuilder<string>): RawBuilder<unknown> {
  const columns = sql.join(READ_COLUMNS.map((column) => sql.ref(column)));
  return sql`select ${columns}${day ? sql`, ${day} as day` : sql``} from events e where ${where}`;
}

/**
 * `with keyed as (...)`: per website, visitor, breakdown and key, the pageviews and events among
 * the events that `where` keeps (over the events table `e`), and with `day` (the local day of an
 * event `e`) their latest day as last_day.
 */
export function keyedEvents(engine: Engine, where: RawBuilder<unknown>, day?: RawBuilder<string>): RawBuilder<unknown> {
  return keyedRows(scopedEvents(where, day), eventBranches(engine, day !== undefined), day !== undefined);
}

/** `with ... day_rows as (...)`: per website, breakdown, local day and key, the pageviews and events `where` keeps. */
function eventDayRows(engine: Engine, where: RawBuilder<unknown>, day: RawBuilder<string>): RawBuilder<unknown> {
  return dayRows(scopedEvents(where, day), eventBranches(engine, true));
}

/** `with ... profile_day_rows as (...)`: as eventDayRows, per the events' own profile too. */
function eventProfileDayRows(engine: Engine, where: RawBuilder<unknown>, day: RawBuilder<string>): RawBuilder<unknown> {
  return profileDayRows(scopedEvents(where, day), eventBranches(engine, true, true));
}

/** The events `where` keeps added to (1) or taken out of (-1) both day tables on their local days. */
async function addEventDays(db: Kysely<Database>, where: RawBuilder<unknown>, day: RawBuilder<string>, sign: 1 | -1): Promise<void> {
  const engine = engineOf(db);
  await addDayRows(db, eventDayRows(engine, where, day), sign);
  await addProfileDayRows(db, eventProfileDayRows(engine, where, day), sign);
}

interface AddOptions {
  /** Ingestion: breakdown_profiles follows (a delete's repair moves its visitors there itself). */
  profiles: boolean;
  /** The websites' zone offsets over the events, for their local days. */
  offsets: WebsiteOffsets;
  /** Ingestion: the events are new, so breakdown_days counts them (a repair re-derives visitors' rows only). */
  newEvents: boolean;
}

/**
 * PostgreSQL, after the new events' `scoped` CTE: a CTE named `visitor_totals` holding the batch's
 * visitors' rows of that table, each read by its key (inside, the name is still the table's). The
 * statements that follow join visitor_totals once per keyed row, and PostgreSQL, which cannot tell
 * from a CTE how few visitors a batch holds, hashed the website's whole table for each such join
 * (three to six a statement, three statements a fold, growing with the website's visitors; issue
 * 38). Every visitor those statements read is one of the batch's. Not for the sessions' batches:
 * their last-day moves read visitors beyond the stored sessions' (decisions.md).
 */
const BATCH_VISITOR_TOTALS = sql`visitor_totals as materialized (select v.* from (select distinct website_id, visitor_id from scoped) s
  cross join lateral (select * from visitor_totals x where x.website_id = s.website_id and x.visitor_id = s.visitor_id) v)`;

/**
 * `with keyed as (...), day_rows as (...), profile_day_rows as (...)`: the rows of every event
 * breakdown of the new events `where` keeps, each with its day and its event's profile, grouped
 * three ways: by visitor (`keyed`, with last_day), by day, and by day and profile. Computed once:
 * on SQLite into temporary tables of the connection (the branch rows, then `keyed`, which seven
 * statements read), on PostgreSQL as materialized CTEs of the one statement that writes them all
 * (addNewEvents). Each grouping computed from the events instead read them again and built every
 * key again: three times per batch on SQLite (a fifth of the fold of returning-visitor events),
 * nine on PostgreSQL.
 */
async function newEventRows(db: Kysely<Database>, where: RawBuilder<unknown>, day: RawBuilder<string>): Promise<RawBuilder<unknown>> {
  const engine = engineOf(db);
  const branches = sql.join(eventBranches(engine, true, true), sql` union all `);
  const groupings = (rows: RawBuilder<unknown>) => sql`
    day_rows as (
      select website_id, breakdown, day, key, sum(pageviews) as pageviews, count(*) as events
      from ${rows} group by website_id, breakdown, day, key),
    profile_day_rows as (
      select website_id, breakdown, day, key, profile, sum(pageviews) as pageviews, count(*) as events, 0 as bounces, 0 as millis
      from ${rows} group by website_id, breakdown, day, key, profile)`;
  const keyedOf = (rows: RawBuilder<unknown>) =>
    sql`select website_id, visitor_id, breakdown, key, sum(pageviews) as pageviews, count(*) as events, max(day) as last_day
      from ${rows} group by website_id, visitor_id, breakdown, key`;
  if (isPostgres(db)) {
    return sql`with scoped as materialized (${scopedEvents(where, day)}),
      ${BATCH_VISITOR_TOTALS},
      branch_rows as materialized (${branches}),
      keyed as materialized (${keyedOf(sql`branch_rows`)}), ${groupings(sql`branch_rows`)}`;
  }
  await sql`create temp table if not exists event_branch_rows (website_id text, visitor_id text, breakdown text, key text, pageviews integer, day text, profile text)`.execute(db);
  await sql`delete from temp.event_branch_rows`.execute(db);
  await sql`with scoped as materialized (${scopedEvents(where, day)})
    insert into temp.event_branch_rows select website_id, visitor_id, breakdown, key, pageviews, day, profile from (${branches}) k`.execute(db);
  const rows = sql`temp.event_branch_rows`;
  await snapshotKeyed(db, sql`with keyed as (${keyedOf(rows)})`);
  return sql`with keyed as (select * from temp.keyed_batch), ${groupings(rows)}`;
}

/**
 * The fold's new events added to every event breakdown table: what the new rows' visitors paid
 * (breakdown-revenue.ts), then the profiles, both last-day tables, the totals, the visitors' rows
 * and both day tables, which read breakdown_visitors as it was before the batch and write one
 * table each: one statement on PostgreSQL (statement-groups.ts).
 */
async function addNewEvents(db: Kysely<Database>, where: RawBuilder<unknown>, day: RawBuilder<string>): Promise<void> {
  const engine = engineOf(db);
  const rows = await newEventRows(db, where, day);
  await addProfileRevenueOfNewRows(db, rows);
  await addRevenueOfNewRows(db, rows);
  await runTogether(db, rows, [
    keyedIntoProfiles(engine),
    LAST_DAYS_MOVE,
    profileLastDaysMove(engine),
    KEYED_INTO_TOTALS,
    KEYED_INTO_VISITORS,
    dayRowsInto(1),
    profileDayRowsInto(1),
  ]);
}

/** Adds the events `where` keeps to both tables (new visitor rows count as visitors of their key) and to their days. */
async function addEvents(db: Kysely<Database>, where: RawBuilder<unknown>, options: AddOptions): Promise<void> {
  const engine = engineOf(db);
  const day = options.offsets.size > 0 ? rowDaySql(engine, options.offsets) : undefined;
  if (day && options.newEvents && options.profiles) return addNewEvents(db, where, day);
  const keyed = await snapshotKeyed(db, keyedEvents(engine, where, day));
  if (options.profiles) await addKeyedToProfiles(db, keyed);
  if (day) await moveLastDays(db, keyed);
  if (day && options.profiles) await moveProfileLastDays(db, keyed);
  await addKeyed(db, keyed);
  if (day && options.newEvents) await addEventDays(db, where, day, 1);
}

/** Events per statement: the id list is bound once (a CTE), well under both engines' parameter limits. */
const EVENTS_PER_STATEMENT = 500;
const VISITORS_PER_STATEMENT = 500;

/**
 * After a batch of events is inserted and visitor_totals updated, in its transaction (which holds
 * the websites' derived-data locks); `timezones` holds each website's zone.
 */
export async function updateBreakdownRollups(trx: Kysely<Database>, events: RecordedEvent[], timezones: Map<string, string>): Promise<void> {
  for (const batch of chunks(events, EVENTS_PER_STATEMENT)) {
    const where = sql`e.id in (${sqlList(batch.map((e) => e.id))})`;
    await addEvents(trx, where, { profiles: true, offsets: offsetsOf(batch, timezones), newEvents: true });
  }
}

/**
 * Before events are deleted (a server-goal delete, under the website's lock): takes them out
 * of breakdown_days. `events` are their ids and instants; the repair re-derives the rest after.
 */
export async function subtractDeletedEvents(trx: Kysely<Database>, websiteId: string, timezone: string, events: { id: string; occurredAt: string }[]): Promise<void> {
  const engine = engineOf(trx);
  for (const batch of chunks(events, EVENTS_PER_STATEMENT)) {
    const offsets = offsetsOf(batch.map((e) => ({ ...e, websiteId })), new Map([[websiteId, timezone]]));
    const where = sql`e.website_id = ${websiteId} and e.id in (${sqlList(batch.map((e) => e.id))})`;
    await addEventDays(trx, where, rowDaySql(engine, offsets), -1);
  }
}

/**
 * A time-zone move of these visitors (day-relocation.ts): their events leave breakdown_days on
 * their local days in `from` and join them in `to`, and their rows' last days follow `to`.
 */
export async function moveVisitorEventDays(db: Kysely<Database>, websiteId: string, visitorIds: string[], from: WebsiteOffsets, to: WebsiteOffsets): Promise<void> {
  if (to.size === 0) return; // no event: nothing to move
  const engine = engineOf(db);
  const where = sql`e.website_id = ${websiteId} and e.visitor_id in (${sqlList(visitorIds)})`;
  await addEventDays(db, where, rowDaySql(engine, from), -1);
  await addEventDays(db, where, rowDaySql(engine, to), 1);
  await setLastDays(db, keyedEvents(engine, where, rowDaySql(engine, to)), visitorRowsOf(websiteId, visitorIds, EVENT_BREAKDOWNS));
}

/** These visitors' rows of the event breakdowns (the session breakdowns follow the sessions). */
const eventRowsOf = (websiteId: string, visitorIds: string[]) =>
  sql`website_id = ${websiteId} and visitor_id in (${sqlList(visitorIds)}) and ${breakdownIn(EVENT_BREAKDOWNS)}`;

/** Takes these rows of breakdown_visitors out of the totals of their keys. */
async function subtractVisitorRows(db: Kysely<Database>, rows: RawBuilder<unknown>): Promise<void> {
  await sql`insert into breakdown_totals (website_id, breakdown, key, visitors, pageviews, events)
    select website_id, breakdown, key, -count(*), -sum(pageviews), -sum(events)
    from breakdown_visitors where ${rows}
    group by website_id, breakdown, key
    ${ADD_TO_TOTALS}`.execute(db);
}

/**
 * Re-derives these visitors' rows from their remaining events, after events of theirs were
 * deleted: their old rows leave the totals, new ones are derived and added back, and keys left
 * with no event go. Run it in the deleting transaction, under the website's lock.
 */
export async function repairBreakdownRollups(db: Kysely<Database>, websiteId: string, timezone: string, visitorIds: string[]): Promise<void> {
  const offsets = await websiteOffsets(db, websiteId, timezone);
  for (const chunk of chunks([...new Set(visitorIds)], VISITORS_PER_STATEMENT)) {
    const rows = eventRowsOf(websiteId, chunk);
    await subtractVisitorRows(db, rows);
    await countLastDays(db, rows, -1);
    await subtractRevenueOfRows(db, rows);
    await sql`delete from breakdown_visitors where ${rows}`.execute(db);
    // With their rows gone, every key of theirs counts them as new visitors again.
    await addEvents(db, sql`e.website_id = ${websiteId} and e.visitor_id in (${sqlList(chunk)})`, { profiles: false, offsets, newEvents: false });
  }
  await sql`delete from breakdown_totals where website_id = ${websiteId} and events <= 0`.execute(db);
}

/**
 * Derives the event breakdowns' rows of both tables from every stored event of all websites, into
 * tables holding none of those rows (one pass over the events): migration 0013's fill, from
 * before the rows had days.
 */
export async function deriveBreakdownRollups<DB>(db: Kysely<DB>, engine: Engine): Promise<void> {
  await deriveKeyed(db, keyedEvents(engine, sql`true`), null, EVENT_BREAKDOWNS);
}

/**
 * Derives a website's breakdown rows, with their days in `timezone`, from all its events and
 * sessions, into tables holding none of them (breakdown_visitors, breakdown_totals,
 * breakdown_days, breakdown_last_days): the rebuilds and migration 0019's fill.
 */
export async function deriveWebsiteBreakdownRollups(db: Kysely<Database>, websiteId: string, timezone: string): Promise<void> {
  const engine = engineOf(db);
  const where = sql`e.website_id = ${websiteId}`;
  const offsets = await websiteOffsets(db, websiteId, timezone);
  if (offsets.size === 0) return;
  const day = rowDaySql(engine, offsets);
  await deriveKeyed(db, keyedEvents(engine, where, day), websiteId, EVENT_BREAKDOWNS, true);
  await deriveLastDays(db, websiteId, EVENT_BREAKDOWNS);
  await addEventDays(db, where, day, 1);
  await deriveWebsiteSessionRollups(db, websiteId, offsets);
}

/**
 * Replaces a website's rows with ones derived from all its events and sessions, and its
 * breakdown_profiles with ones derived from those rows (so rebuild visitor_totals first).
 */
export async function rebuildBreakdownRollups(db: Kysely<Database>, websiteId: string): Promise<void> {
  const timezone = await timezoneOf(db, websiteId);
  if (timezone === undefined) return;
  await deleteRows(db, websiteId, BREAKDOWNS);
  await deleteDayRows(db, websiteId, BREAKDOWNS);
  await deleteProfileDayRows(db, websiteId, BREAKDOWNS);
  await deriveWebsiteBreakdownRollups(db, websiteId, timezone);
  await rebuildBreakdownProfiles(db, websiteId, BREAKDOWNS);
  await rebuildBreakdownRevenue(db, websiteId, BREAKDOWNS);
}
