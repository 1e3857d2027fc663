import { type RawBuilder, sql } from 'kysely';
import type { ClickHouse } from '../../db/clickhouse/clickhouse.ts';
import { deleteAndWait } from '../../db/clickhouse/mutations.ts';
import { BOUNCE, SESSION_REACH_MS, type SessionColumn, isoOf, msRange, sessionsTable } from '../stats/clickhouse/scope-ch.ts';
import { BREAKDOWN_SPECS } from '../analytics/breakdown-specs.ts';
import type { Breakdown } from '../analytics/breakdowns.ts';
import { type DaysByWebsite, keyColumnsOf, keysOf, rollupTableOf } from './clickhouse-event-rollups.ts';

// Rollups of the sessions on ClickHouse, for the overview's session counts (sessions, bounces,
// duration) and the session breakdowns (entry and exit pages, referrers, campaigns):
// per website, breakdown ('overview' for the counts), key and UTC hour (`session_hours`) or day
// (`session_days`) of the sessions' start, the states of what those reads aggregate.
//
// A session grows with its events, so no view can keep these: the relay writes an hour once every
// session that starts in it is complete, that is once a session's reach (a day: reads look that
// far for a session's events, so a longer one is cut there as they cut it) and an hour more have
// passed (`CLOSE_AFTER_MS`). A record in sightline_state (`CLOSED`) says how far that is.
// Reads take the sessions that started before it from the rollups and the later ones from the
// events (src/modules/stats/clickhouse/session-rollups-ch.ts), so an answer is the one the events
// give. What could change a closed hour is handled under the relay's `exclusive`:
// - an event shipped after its session's hour was closed (accepted events are shipped within
//   seconds, so only an event written with a past instant, or a relay stalled longer than an
//   hour): the days its session may have started in are computed again;
// - deleted server goals: the same, for the deleted events;
// - a deleted website: its rows go with its events;
// - a closing cut by a crash: what it wrote beyond the record is deleted before the next one.

export const SESSION_ROLLED_UP = ['entry-pages', 'exit-pages', 'referrers', 'campaigns'] as const satisfies readonly Breakdown[];
export type SessionRollup = 'overview' | (typeof SESSION_ROLLED_UP)[number];

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
/** How long after an hour ends its sessions are complete. */
export const CLOSE_AFTER_MS = SESSION_REACH_MS + HOUR_MS;

export const SESSION_SPANS = {
  hour: { table: 'session_hours', ms: HOUR_MS },
  day: { table: 'session_days', ms: DAY_MS },
} as const;

const KEY_ORDER = sql`key1_null, key1, key2_null, key2`;

function sessionRollupTable(table: string): RawBuilder<unknown> {
  return rollupTableOf(table, [
    'visitors AggregateFunction(uniqCombined, String)',
    'pageviews AggregateFunction(sum, UInt64)',
    'sessions AggregateFunction(count)',
    'bounces AggregateFunction(sum, UInt64)',
    'millis AggregateFunction(sum, UInt64)',
  ]);
}

export const SESSION_ROLLUPS_SCHEMA = [sessionRollupTable(SESSION_SPANS.hour.table), sessionRollupTable(SESSION_SPANS.day.table)];

/**
 * The states of a set of sessions (rows of `statedSessions`), in the rollups' column order. The
 * states take the names of the session columns they sum, so they read copies made beforehand (an
 * alias would otherwise stand for its column inside another aggregate).
 */
export const SESSION_STATES = sql`uniqCombinedState(visitor_id) as visitors, sumState(session_pageviews) as pageviews, countState() as sessions,
  sumState(session_bounce) as bounces, sumState(toUInt64(ended_ms - started_ms)) as millis`;

/** Rows of `sessionsTable` with what SESSION_STATES reads. */
export function statedSessions(sessions: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`(select *, toUInt64(pageviews) as session_pageviews, toUInt64(${BOUNCE}) as session_bounce from ${sessions})`;
}

/** The session columns a rollup reads: what the states count, and its keys. */
export function sessionColumnsOf(kind: SessionRollup): SessionColumn[] {
  const keys = kind === 'overview' ? [] : (Object.values(BREAKDOWN_SPECS[kind].keys) as SessionColumn[]);
  return ['visitor_id', 'pageviews', 'goals', ...keys];
}

/** The session columns every rollup reads. */
const SESSION_ROLLUP_COLUMNS = [...new Set(SESSION_ROLLED_UP.flatMap(sessionColumnsOf))];

const NO_KEY = sql`CAST(NULL AS Nullable(String))`;

/** A rollup's key columns over a table of sessions (none for the overview). */
export function sessionKeyColumns(kind: SessionRollup): [RawBuilder<unknown>, RawBuilder<unknown>] {
  return kind === 'overview' ? [NO_KEY, NO_KEY] : keyColumnsOf(kind);
}

/** Epoch ms of `ms` rounded down to a multiple of `step`. */
const floorTo = (ms: number, step: number) => Math.floor(ms / step) * step;

/** The hourly rows of the website's sessions that started in [from, to): one per breakdown, hour and key. */
export function sessionHourRows(websiteId: string, from: number, to: number): RawBuilder<unknown> {
  const rows = (['overview', ...SESSION_ROLLED_UP] as SessionRollup[]).map((kind) => {
    const [key1, key2] = sessionKeyColumns(kind);
    return sql`tuple(${kind}, ${key1}, ${key2})`;
  });
  const part = (i: number) => sql.raw(`tupleElement(breakdown_row, ${i})`);
  const sessions = sessionsTable(websiteId, { from: isoOf(from), to: isoOf(to) }, 'started', SESSION_ROLLUP_COLUMNS);
  return sql`select ${websiteId} as website_id, ${part(1)} as breakdown, toStartOfHour(toDateTime(intDiv(started_ms, 1000)), 'UTC') as bucket,
      ${keysOf(part(2), part(3))}, ${SESSION_STATES}
    from ${statedSessions(sessions)} array join [${sql.join(rows)}] as breakdown_row
    group by breakdown, bucket, ${KEY_ORDER}`;
}

/** The daily rows of one UTC day, merged from its hours. */
function dayRows(websiteId: string, day: number): RawBuilder<unknown> {
  return sql`select website_id, breakdown, toStartOfDay(bucket, 'UTC') as day, key1, key1_null, key2, key2_null,
      uniqCombinedMergeState(visitors), sumMergeState(pageviews), countMergeState(sessions), sumMergeState(bounces), sumMergeState(millis)
    from ${sql.table(SESSION_SPANS.hour.table)}
    where website_id = ${websiteId} and bucket >= toDateTime(${day / 1000}) and bucket < toDateTime(${(day + DAY_MS) / 1000})
    group by website_id, breakdown, day, ${KEY_ORDER}`;
}

/** Writes the website's sessions that started in [from, to), inside one UTC day, and the day's row once `to` ends it. */
async function writeSessions(ch: ClickHouse, websiteId: string, from: number, to: number): Promise<void> {
  // Both selects give the tables' columns in order.
  await ch.command(sql`insert into ${sql.table(SESSION_SPANS.hour.table)} ${sessionHourRows(websiteId, from, to)}`);
  if (to % DAY_MS === 0) await ch.command(sql`insert into ${sql.table(SESSION_SPANS.day.table)} ${dayRows(websiteId, to - DAY_MS)}`);
}

/**
 * The record's name; a new one whenever what the rollups keep changes, so that an upgrade builds
 * them again ('sessions closed until' before the campaigns were kept).
 */
const CLOSED = 'sessions closed until, with campaigns';

/** Epoch ms before which every session start is in the rollups, or null before the first closing. */
export async function sessionsClosedUntil(ch: ClickHouse): Promise<number | null> {
  const [row] = await ch.rows<{ until: string; n: string }>(
    sql`select toString(max(toUInt64(value))) as until, count() as n from sightline_state where name = ${CLOSED}`,
  );
  return Number(row?.n ?? 0) === 0 ? null : Number(row!.until);
}

async function recordClosedUntil(ch: ClickHouse, until: number): Promise<void> {
  await ch.command(sql`insert into sightline_state (name, value) values (${CLOSED}, ${String(until)})`);
}

/** Deletes rows a closing cut by a crash wrote beyond the record (none, usually: asked first). */
async function deleteBeyond(ch: ClickHouse, until: number): Promise<void> {
  const beyond = {
    [SESSION_SPANS.hour.table]: sql`bucket >= toDateTime(${until / 1000})`,
    [SESSION_SPANS.day.table]: sql`bucket >= toDateTime(${floorTo(until, DAY_MS) / 1000})`,
  };
  for (const [table, condition] of Object.entries(beyond)) {
    const [row] = await ch.rows<{ n: string }>(sql`select count() as n from ${sql.table(table)} where ${condition}`);
    if (Number(row?.n ?? 0) > 0) await deleteAndWait(ch, table, condition);
  }
}

/**
 * Writes the sessions of every hour that `now` closes (at most up to `now - CLOSE_AFTER_MS`),
 * then records how far that is. The first call covers every stored event (an upgrade). The caller
 * makes sure nothing is inserted meanwhile and that every event accepted so far is shipped.
 */
export async function closeSessions(ch: ClickHouse, now: number): Promise<void> {
  const target = floorTo(now - CLOSE_AFTER_MS, HOUR_MS);
  let until = await sessionsClosedUntil(ch);
  if (until !== null && until >= target) return;
  if (until === null) {
    // Nothing recorded: a first build from the first event's day, after which deleteBeyond takes
    // every row (of a build cut by a crash, or of an older release under another record).
    const [first] = await ch.rows<{ first: string; n: string }>(sql`select toString(min(occurred_ms)) as first, count() as n from events`);
    until = Number(first?.n ?? 0) === 0 ? target : Math.min(floorTo(Number(first!.first), DAY_MS), target);
  }
  await deleteBeyond(ch, until);
  // The website and UTC day of every session start to write: a session starts with an event.
  const starts = await ch.rows<{ website_id: string; day: string }>(sql`select distinct website_id, toString(toUInt32(toStartOfDay(occurred_at, 'UTC'))) as day
    from events where ${msRange(until, target)} order by day`);
  for (const { website_id: websiteId, day } of starts) {
    const dayMs = Number(day) * 1000;
    await writeSessions(ch, websiteId, Math.max(dayMs, until), Math.min(dayMs + DAY_MS, target));
  }
  await recordClosedUntil(ch, target);
}

/**
 * The UTC days whose sessions these events may change: a session starts at most its reach before
 * any of its events, and an event earlier than a session's start moves the session to its own day.
 */
export function sessionDaysOf(events: { website_id: unknown; occurred_ms: unknown }[]): DaysByWebsite {
  const days: DaysByWebsite = new Map();
  for (const event of events) {
    const websiteId = String(event.website_id);
    const at = Number(event.occurred_ms);
    let set = days.get(websiteId);
    if (!set) days.set(websiteId, (set = new Set()));
    for (let day = floorTo(at - SESSION_REACH_MS, DAY_MS); day <= at + SESSION_REACH_MS; day += DAY_MS) set.add(day / 1000);
  }
  return days;
}

/** Whether any of these events may belong to a session whose hour is closed. */
export function touchesClosedSessions(events: { occurred_ms: unknown }[], closedUntil: number | null): boolean {
  return closedUntil !== null && events.some((event) => Number(event.occurred_ms) - SESSION_REACH_MS < closedUntil);
}

/**
 * Computes the closed hours of these days (UTC, epoch seconds) again from the events, after a
 * delete or an event that arrived after its session's hour was closed. The caller makes sure
 * nothing is inserted meanwhile.
 */
export async function rebuildSessionRollups(ch: ClickHouse, days: DaysByWebsite): Promise<void> {
  const until = await sessionsClosedUntil(ch);
  if (until === null) return;
  for (const [websiteId, set] of days) {
    const closed = [...set].map((day) => day * 1000).filter((day) => day < until).sort((a, b) => a - b);
    if (closed.length === 0) continue;
    const within = sql`website_id = ${websiteId} and toStartOfDay(bucket, 'UTC') in (${sql.join(closed.map((day) => sql`toDateTime(${day / 1000})`))})`;
    for (const { table } of Object.values(SESSION_SPANS)) {
      const [row] = await ch.rows<{ n: string }>(sql`select count() as n from ${sql.table(table)} where ${within}`);
      if (Number(row?.n ?? 0) > 0) await deleteAndWait(ch, table, within);
    }
    for (const day of closed) await writeSessions(ch, websiteId, day, Math.min(day + DAY_MS, until));
  }
}

/**
 * After a shipment: computes again the closed days these events' sessions may have started in,
 * if any could have. Events accepted within the last hour cannot reach a closed session, so a
 * shipment of fresh events costs no query.
 */
export async function rebuildTouchedSessions(ch: ClickHouse, events: { website_id: unknown; occurred_ms: unknown }[], now: number): Promise<void> {
  if (events.every((event) => Number(event.occurred_ms) >= now - HOUR_MS)) return;
  if (touchesClosedSessions(events, await sessionsClosedUntil(ch))) await rebuildSessionRollups(ch, sessionDaysOf(events));
}
