import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { Engine } from '../../db/database.ts';
import { engineOf, isPostgres } from '../../db/engine.ts';
import { sqlList } from '../../db/prepared.ts';
import type { Database } from '../../db/schema.ts';
import { BREAKDOWN_SPECS } from './breakdown-specs.ts';
import { SESSION_BREAKDOWNS, keyJson } from './breakdown-keys.ts';
import { PROFILES_EMPTIED, keyedIntoProfiles, keyedOutOfProfiles, rebuildBreakdownProfiles } from './breakdown-profiles.ts';
import {
  EMPTIED_VISITOR_ROWS,
  KEYED_INTO_TOTALS,
  KEYED_INTO_VISITORS,
  KEYED_OUT_OF_TOTALS,
  KEYED_OUT_OF_VISITORS,
  TOTALS_EMPTIED,
  VISITORS_EMPTIED,
  breakdownIn,
  dayRows,
  deleteRows,
  deriveKeyed,
  keyedRows,
  snapshotKeyed,
} from './breakdown-rollup-tables.ts';
import { addProfileRevenueOfNewRows, addRevenueOfNewRows, rebuildBreakdownRevenue, subtractProfileRevenueOfEmptiedRows, subtractRevenueOfRows } from './breakdown-revenue.ts';
import { DAY_ROWS_EMPTIED, addDayRows, dayRowsInto, deleteDayRows, deriveLastDays, lastDaysCount, setLastDays, timezoneOf, visitorRowsOf, websiteOffsets } from './breakdown-days.ts';
import { type WebsiteOffsets, offsetsOver, rowDaySql } from './local-day-sql.ts';
import { PROFILE_DAY_ROWS_EMPTIED, addProfileDayRows, deleteProfileDayRows, profileDayRowsInto, profileLastDaysCount, sessionProfileDayRows } from './breakdown-profile-days.ts';
import { profileJson } from './profile-json.ts';
import { BOUNCE, millisBetween } from './session-terms.ts';
import { runTogether } from './statement-groups.ts';

// Keeps the all-time session breakdowns (entry pages, exit pages, referrers, campaigns) in
// breakdown_visitors and breakdown_totals, beside the event breakdowns: per visitor and key, that
// visitor's sessions (in the `events` column, which the raw read counts as `count(*)`) and their
// pageviews; per key, its visitors, sessions and pageviews. A session's exit page and pageviews
// change with nearly every event of it, so ingestion moves the batch's sessions set-based: their
// rows as stored leave the rollups before the sessions' upsert, and their rows as upserted join
// them after it (`followSessionUpsert`), in the events' transaction, and so do their start days
// (breakdown-days.ts). The session rebuild derives a whole website again; a website deletion
// deletes the rows.

/** The sessions' columns the keys read, besides the website, visitor and pageviews. */
const KEY_COLUMNS = [...new Set(SESSION_BREAKDOWNS.flatMap((kind) => Object.values(BREAKDOWN_SPECS[kind].keys)))];

/** The sessions `where` keeps, with the local `day` of their start when given (an expression over `s`). */
function scopedSessions(where: RawBuilder<unknown>, day?: RawBuilder<string>): RawBuilder<unknown> {
  const columns = ['website_id', 'visitor_id', 'pageviews', ...KEY_COLUMNS].map((column) => sql.ref(column));
  return sql`select ${sql.join(columns)}${day ? sql`, ${day} as day` : sql``} from sessions s where ${where}`;
}

/** Per session breakdown, a select over `scoped` of website, visitor, breakdown, key, pageviews and, with `day`, day. */
function sessionBranches(engine: Engine, withDay: boolean): RawBuilder<unknown>[] {
  return SESSION_BREAKDOWNS.map(
    (kind) => sql`select s.website_id, s.visitor_id, ${sql.lit(kind)} as breakdown, ${keyJson(engine, kind, 's')} as key, s.pageviews${withDay ? sql`, s.day` : sql``} from scoped s`,
  );
}

/**
 * `with keyed as (...)`: per website, visitor, session breakdown and key, the sessions (`events`)
 * and pageviews among the sessions that `where` keeps (over the sessions table `s`), and with
 * `day` their latest start day as last_day.
 */
function keyedSessions(engine: Engine, where: RawBuilder<unknown>, day?: RawBuilder<string>): RawBuilder<unknown> {
  return keyedRows(scopedSessions(where, day), sessionBranches(engine, day !== undefined), day !== undefined);
}

/** `with ... day_rows as (...)`: per website, session breakdown, start day and key, the sessions and pageviews `where` keeps. */
function sessionDayRows(engine: Engine, where: RawBuilder<unknown>, day: RawBuilder<string>): RawBuilder<unknown> {
  return dayRows(scopedSessions(where, day), sessionBranches(engine, true));
}

/** A batch's session: its website, id and visitor, and the first and last instants of the batch's events in it. */
export interface BatchSession {
  websiteId: string;
  sessionId: string;
  visitorId: string;
  first: string;
  last: string;
}

/** A website's sessions by id (the ids of one batch). */
export type SessionIds = { websiteId: string; sessionId: string }[];

/** `s.website_id = ? and s.session_id in (...)` per website of these sessions (over `alias` instead of `s` when given). */
export function sessionsWhere(sessions: SessionIds, alias = 's'): RawBuilder<unknown> {
  return perWebsite(
    sessions.map(({ websiteId, sessionId }) => [websiteId, sessionId]),
    (websiteId, ids) => sql`(${sql.ref(`${alias}.website_id`)} = ${websiteId} and ${sql.ref(`${alias}.session_id`)} in (${sqlList(ids)}))`,
  );
}

/** The `or` of `condition` per website of these (website, value) pairs, over each website's values. */
function perWebsite(pairs: [string, string][], condition: (websiteId: string, values: string[]) => RawBuilder<unknown>): RawBuilder<unknown> {
  const byWebsite = new Map<string, Set<string>>();
  for (const [websiteId, value] of pairs) {
    const values = byWebsite.get(websiteId);
    if (values) values.add(value);
    else byWebsite.set(websiteId, new Set([value]));
  }
  return sql`(${sql.join([...byWebsite].map(([websiteId, values]) => condition(websiteId, [...values])), sql` or `)})`;
}

/** `<alias>.website_id = ? and <alias>.visitor_id in (...)` per website of these visitors. */
const visitorsWhere = (visitors: [string, string][], alias?: string) =>
  perWebsite(visitors, (websiteId, ids) => sql`(${sql.ref(alias ? `${alias}.website_id` : 'website_id')} = ${websiteId} and ${sql.ref(alias ? `${alias}.visitor_id` : 'visitor_id')} in (${sqlList(ids)}))`);

/**
 * The batch's visitors (its events' and, should a session's stored visitor differ, the stored
 * one's), the zones' offsets over all their sessions and the batch's events, so every start day
 * the statements compute is covered, and whether any of them has a session stored (`known`) and
 * whether any of the batch's sessions is (`stored`): a batch of new visitors has nothing to take out.
 */
async function batchVisitors(trx: Kysely<Database>, sessions: BatchSession[], timezones: Map<string, string>) {
  const spans = new Map<string, { first: number; last: number }>();
  const widen = (websiteId: string, first: number, last: number) => {
    const span = spans.get(websiteId);
    if (!span) spans.set(websiteId, { first, last });
    else spans.set(websiteId, { first: Math.min(span.first, first), last: Math.max(span.last, last) });
  };
  for (const session of sessions) widen(session.websiteId, Date.parse(session.first), Date.parse(session.last));
  const visitors = new Map<string, [string, string]>(sessions.map((s) => [`${s.websiteId} ${s.visitorId}`, [s.websiteId, s.visitorId]]));
  const { rows } = await sql<{ website_id: string; visitor_id: string; first: unknown; stored: unknown }>`
    select x.website_id, x.visitor_id, min(x.started_at) as first, max(case when ${sessionsWhere(sessions, 'x')} then 1 else 0 end) as stored
    from (select v.website_id, v.visitor_id from sessions v where ${visitorsWhere([...visitors.values()], 'v')}
      union all select s.website_id, s.visitor_id from sessions s where ${sessionsWhere(sessions)}) k
    join sessions x on x.website_id = k.website_id and x.visitor_id = k.visitor_id
    group by x.website_id, x.visitor_id`.execute(trx);
  // The batch's visitors, then their sessions, by index on both engines: PostgreSQL ran
  // "A or (...) in (subquery)" as a scan of every session (82.9 ms at a million events, against
  // 0.97 ms), and SQLite read a website's sessions in visitor order for a UNION's merge (50 to 77
  // ms a chunk: docs/decisions.md). UNION ALL needs no order; a visitor found twice changes
  // neither min nor max.
  for (const row of rows) {
    const first = row.first instanceof Date ? row.first.getTime() : Date.parse(String(row.first));
    widen(row.website_id, first, first);
    visitors.set(`${row.website_id} ${row.visitor_id}`, [row.website_id, row.visitor_id]);
  }
  const stored = rows.some((row) => Number(row.stored) === 1);
  return { visitors: [...visitors.values()], offsets: offsetsOver(spans, timezones), known: rows.length > 0, stored };
}

/**
 * `with keyed as (...), day_rows as (...), profile_day_rows as (...)`: the rows of every session
 * breakdown of the sessions `where` keeps (over sessions `s`), with their start `day`, grouped
 * three ways: by visitor and key (`keyed`, no last day), by day and key, and, for steady visitors
 * (visitor_totals.varied = 0), by day, key and visitor profile. Computed once from the sessions:
 * on SQLite into temporary tables of the connection (the branch rows, then `keyed`), on
 * PostgreSQL as materialized CTEs of each statement (a few per batch, statement-groups.ts). Each
 * grouping was computed from the sessions again, by every statement that read it.
 */
async function batchSessionRows(db: Kysely<Database>, where: RawBuilder<unknown>, day: RawBuilder<string>): Promise<RawBuilder<unknown>> {
  const engine = engineOf(db);
  const columns = ['website_id', 'visitor_id', 'pageviews', ...KEY_COLUMNS].map((column) => sql.ref(`s.${column}`));
  const scoped = sql`select ${sql.join(columns)}, ${day} as day, case when vt.visitor_id is null then 0 else 1 end as steady,
      ${profileJson(engine, 'vt')} as profile, case when ${BOUNCE} then 1 else 0 end as bounces, ${millisBetween(db, 's.started_at', 's.ended_at')} as millis
    from sessions s left join visitor_totals vt on vt.website_id = s.website_id and vt.visitor_id = s.visitor_id and vt.varied = 0
    where ${where}`;
  const branches = sql.join(
    SESSION_BREAKDOWNS.map(
      (kind) => sql`select s.website_id, s.visitor_id, ${sql.lit(kind)} as breakdown, ${keyJson(engine, kind, 's')} as key, s.pageviews, s.day, s.steady, s.profile, s.bounces, s.millis from scoped s`,
    ),
    sql` union all `,
  );
  const groupings = (rows: RawBuilder<unknown>) => sql`
    day_rows as (
      select website_id, breakdown, day, key, sum(pageviews) as pageviews, count(*) as events
      from ${rows} group by website_id, breakdown, day, key),
    profile_day_rows as (
      select website_id, breakdown, day, key, profile, sum(pageviews) as pageviews, count(*) as events, sum(bounces) as bounces, sum(millis) as millis
      from ${rows} where steady = 1 group by website_id, breakdown, day, key, profile)`;
  const keyedOf = (rows: RawBuilder<unknown>) =>
    sql`select website_id, visitor_id, breakdown, key, sum(pageviews) as pageviews, count(*) as events, null as last_day
      from ${rows} group by website_id, visitor_id, breakdown, key`;
  if (isPostgres(db)) {
    return sql`with scoped as materialized (${scoped}),
      branch_rows as materialized (${branches}),
      keyed as materialized (${keyedOf(sql`branch_rows`)}), ${groupings(sql`branch_rows`)}`;
  }
  await sql`create temp table if not exists session_branch_rows
    (website_id text, visitor_id text, breakdown text, key text, pageviews integer, day text, steady integer, profile text, bounces integer, millis)`.execute(db);
  await sql`delete from temp.session_branch_rows`.execute(db);
  await sql`with scoped as materialized (${scoped})
    insert into temp.session_branch_rows select website_id, visitor_id, breakdown, key, pageviews, day, steady, profile, bounces, millis from (${branches}) k`.execute(db);
  const rows = sql`temp.session_branch_rows`;
  await snapshotKeyed(db, sql`with keyed as (${keyedOf(rows)})`);
  return sql`with keyed as (select * from temp.keyed_batch), ${groupings(rows)}`;
}

/**
 * Runs the upsert of these sessions with their rollup rows moved around it: the rows of the
 * sessions as stored go out before it, the rows of the sessions as upserted come in after it.
 * A new session has no rows to take out. breakdown_profiles follows both moves for the visitors
 * steady after the batch (visitor_totals is updated first). breakdown_days follows the same two
 * moves; a session's key can change as it grows, so the last days of the batch's visitors leave
 * breakdown_last_days before, are recomputed from all their sessions after, and join it again.
 * In the events' transaction; `timezones` holds each website's zone. The statements run in
 * groups that read nothing another of the group writes (statement-groups.ts): on PostgreSQL each
 * group is one statement.
 */
export async function followSessionUpsert(trx: Kysely<Database>, sessions: BatchSession[], timezones: Map<string, string>, upsert: () => Promise<unknown>): Promise<void> {
  if (sessions.length === 0) return;
  const engine = engineOf(trx);
  const where = sessionsWhere(sessions);
  const batch = await batchVisitors(trx, sessions, timezones);
  const { visitors } = batch;
  const day = rowDaySql(engine, batch.offsets, 's');
  const visitorRows = sql`${visitorsWhere(visitors)} and ${breakdownIn(SESSION_BREAKDOWNS)}`;
  const lastDays = (sign: 1 | -1) => [lastDaysCount(visitorRows, sign), profileLastDaysCount(engine, visitorRows, sign)];
  if (batch.stored) {
    // The stored sessions' rows out: what their emptied rows' steady visitors paid first, then
    // every table from breakdown_visitors as it is, then the rows left with no event.
    const stored = await batchSessionRows(trx, where, day);
    await subtractProfileRevenueOfEmptiedRows(trx, stored);
    await runTogether(trx, stored, [...lastDays(-1), dayRowsInto(-1), profileDayRowsInto(-1), keyedOutOfProfiles(engine), KEYED_OUT_OF_TOTALS, KEYED_OUT_OF_VISITORS]);
    await subtractRevenueOfRows(trx, EMPTIED_VISITOR_ROWS, stored);
    await runTogether(trx, stored, [DAY_ROWS_EMPTIED, PROFILE_DAY_ROWS_EMPTIED, PROFILES_EMPTIED, VISITORS_EMPTIED, TOTALS_EMPTIED]);
  } else if (batch.known) {
    await runTogether(trx, null, lastDays(-1));
  }
  await upsert();
  // The upserted sessions' rows in: what the new rows' visitors paid, then every table from
  // breakdown_visitors as it was, then the visitors' last days from all their sessions.
  const upserted = await batchSessionRows(trx, where, day);
  await addProfileRevenueOfNewRows(trx, upserted);
  await addRevenueOfNewRows(trx, upserted);
  await runTogether(trx, upserted, [keyedIntoProfiles(engine), KEYED_INTO_TOTALS, KEYED_INTO_VISITORS, dayRowsInto(1), profileDayRowsInto(1)]);
  await sql`${keyedSessions(engine, visitorsWhere(visitors, 's'), day)}
    insert into breakdown_visitors (website_id, visitor_id, breakdown, key, pageviews, events, last_day)
    select website_id, visitor_id, breakdown, key, 0, 0, last_day from keyed where true
    on conflict (website_id, visitor_id, breakdown, key) do update set last_day = excluded.last_day`.execute(trx);
  await runTogether(trx, null, lastDays(1));
}

/**
 * Derives the session breakdowns' rows of both tables from the stored sessions of all websites,
 * into tables holding none of those rows: migration 0014's fill, from before the rows had days.
 */
export async function deriveSessionBreakdownRollups<DB>(db: Kysely<DB>, engine: Engine): Promise<void> {
  await deriveKeyed(db, keyedSessions(engine, sql`true`), null, SESSION_BREAKDOWNS);
}

/** Derives a website's session breakdown rows with their start days (offsets over its events) into tables holding none of them. */
export async function deriveWebsiteSessionRollups(db: Kysely<Database>, websiteId: string, offsets: WebsiteOffsets): Promise<void> {
  const engine = engineOf(db);
  const where = sql`s.website_id = ${websiteId}`;
  const day = rowDaySql(engine, offsets, 's');
  await deriveKeyed(db, keyedSessions(engine, where, day), websiteId, SESSION_BREAKDOWNS, true);
  await deriveLastDays(db, websiteId, SESSION_BREAKDOWNS);
  await addDayRows(db, sessionDayRows(engine, where, day), 1);
  await addProfileDayRows(db, sessionProfileDayRows(db, where, day), 1);
}

/** Replaces a website's session breakdown rows, their days and their profiles with ones derived from its sessions (after a session rebuild). */
export async function rebuildSessionBreakdownRollups(db: Kysely<Database>, websiteId: string): Promise<void> {
  const timezone = await timezoneOf(db, websiteId);
  if (timezone === undefined) return;
  await deleteRows(db, websiteId, SESSION_BREAKDOWNS);
  await deleteDayRows(db, websiteId, SESSION_BREAKDOWNS);
  await deleteProfileDayRows(db, websiteId, SESSION_BREAKDOWNS);
  const offsets = await websiteOffsets(db, websiteId, timezone);
  if (offsets.size > 0) await deriveWebsiteSessionRollups(db, websiteId, offsets);
  await rebuildBreakdownProfiles(db, websiteId, SESSION_BREAKDOWNS);
  await rebuildBreakdownRevenue(db, websiteId, SESSION_BREAKDOWNS);
}

/**
 * A time-zone move of these visitors (day-relocation.ts): their sessions leave breakdown_days on
 * their start days in `from` and join them in `to`, and their rows' last days follow `to`.
 */
export async function moveVisitorSessionDays(db: Kysely<Database>, websiteId: string, visitorIds: string[], from: WebsiteOffsets, to: WebsiteOffsets): Promise<void> {
  if (to.size === 0) return;
  const engine = engineOf(db);
  const where = sql`s.website_id = ${websiteId} and s.visitor_id in (${sqlList(visitorIds)})`;
  await addDayRows(db, sessionDayRows(engine, where, rowDaySql(engine, from, 's')), -1);
  await addDayRows(db, sessionDayRows(engine, where, rowDaySql(engine, to, 's')), 1);
  await addProfileDayRows(db, sessionProfileDayRows(db, where, rowDaySql(engine, from, 's')), -1);
  await addProfileDayRows(db, sessionProfileDayRows(db, where, rowDaySql(engine, to, 's')), 1);
  await setLastDays(db, keyedSessions(engine, where, rowDaySql(engine, to, 's')), visitorRowsOf(websiteId, visitorIds, SESSION_BREAKDOWNS));
}
