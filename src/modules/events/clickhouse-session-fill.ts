import { sql } from 'kysely';
import type { ClickHouse } from '../../db/clickhouse/clickhouse.ts';
import { deleteAndWait } from '../../db/clickhouse/mutations.ts';
import { SESSION_REACH_MS, type SessionColumn, isoOf, msRange, sessionsTable } from '../stats/clickhouse/scope-ch.ts';
import { SESSION_ROW_COLUMNS } from './clickhouse-sessions.ts';
import { sessionDaysOf } from './clickhouse-session-rollups.ts';

// The upgrade of an installation whose events are in ClickHouse without their sessions table:
// the relay fills it from the events, a UTC day of session starts at a time (one INSERT ...
// SELECT per website and day, the aggregation reads ran over the events), after each shipment,
// recording how far it got in sightline_state. Meanwhile the relay ships events without session
// rows, and a batch whose sessions may reach a filled day has those days computed again
// (`refillTouchedDays`). A day is filled once it is closed (its sessions' reach and an hour have
// passed); the open days are filled last, in one turn with the marker that makes the relay write
// collapsing pairs and the reads use the table. Until the marker, reads group the events.
// Everything here runs in the relay's turn, so no INSERT of events lands meanwhile.

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
const FILLED_UNTIL = 'sessions table filled until';
const READY = 'sessions table ready';
/** The end of the last fill: within DateTime's reach with a session's reach added. */
const FAR_FUTURE_MS = Date.UTC(2100, 0, 1);

/** Whether the sessions table holds every session (and the relay keeps it). */
export async function sessionsTableReady(ch: ClickHouse): Promise<boolean> {
  const rows = await ch.rows(sql`select 1 as ready from sightline_state where name = ${READY} limit 1`);
  return rows.length > 0;
}

async function filledUntil(ch: ClickHouse): Promise<number | null> {
  const [row] = await ch.rows<{ until: string; n: string }>(
    sql`select toString(max(toUInt64(value))) as until, count() as n from sightline_state where name = ${FILLED_UNTIL}`,
  );
  return Number(row?.n ?? 0) === 0 ? null : Number(row!.until);
}

const record = (ch: ClickHouse, name: string, value: string) => ch.command(sql`insert into sightline_state (name, value) values (${name}, ${value})`);

/** Records that the sessions table holds every session (`how`: why, for whoever reads the record). */
export async function markSessionsTableReady(ch: ClickHouse, how: string): Promise<void> {
  await record(ch, READY, how);
}


const COLUMNS = SESSION_ROW_COLUMNS.map(([name]) => name);
const FROM_EVENTS = ['visitor_id', 'pageviews', 'events', 'goals', 'entry_ms', 'entry_hostname', 'entry_path', 'exit_ms', 'exit_path',
  'referrer_host', 'referrer_source', 'utm_source', 'utm_medium', 'utm_campaign', 'utm_term', 'utm_content', 'ref_param', 'source_param', 'via_param'] as const satisfies readonly SessionColumn[];

/** Writes the sessions of every website (or of `websites`) that started in [from, to), as grouped from the events. */
export async function fillSpan(ch: ClickHouse, from: number, to: number, websites?: string[]): Promise<void> {
  const ids = websites ?? (await ch.rows<{ website_id: string }>(sql`select distinct website_id from events where ${msRange(from, to)}`)).map((row) => row.website_id);
  for (const websiteId of ids) {
    const sessions = sessionsTable(websiteId, { from: isoOf(from), to: isoOf(to) }, 'started', FROM_EVENTS);
    await ch.command(sql`insert into sessions (${sql.join(COLUMNS.map((name) => sql.ref(name)))})
      select ${websiteId}, session_id, 1, events, 'fill', toDateTime(intDiv(started_ms, 1000)), started_ms, ended_ms, visitor_id, pageviews, goals,
        entry_ms, entry_hostname, entry_path, exit_ms, exit_path,
        referrer_host, referrer_source, utm_source, utm_medium, utm_campaign, utm_term, utm_content, ref_param, source_param, via_param
      from ${sessions}`);
  }
}

/** Deletes the rows of sessions that started at or after `from` (of a fill cut by a crash). */
async function deleteFrom(ch: ClickHouse, from: number): Promise<void> {
  const condition = sql`started_at >= toDateTime(${Math.floor(from / 1000)})`;
  const [row] = await ch.rows<{ n: string }>(sql`select count() as n from sessions where ${condition}`);
  if (Number(row?.n ?? 0) > 0) await deleteAndWait(ch, 'sessions', condition);
}

/**
 * One step of the fill: the next closed day, or the open days and the marker. Returns whether the
 * table is ready. The caller ships every accepted event first and lets nothing be inserted meanwhile.
 */
export async function fillSessionsStep(ch: ClickHouse, now: number): Promise<boolean> {
  if (await sessionsTableReady(ch)) return true;
  let until = await filledUntil(ch);
  if (until === null) {
    const [first] = await ch.rows<{ first: string; n: string }>(sql`select toString(min(occurred_ms)) as first, count() as n from events`);
    until = Number(first?.n ?? 0) === 0 ? now : Math.floor(Number(first!.first) / DAY_MS) * DAY_MS;
    await deleteFrom(ch, 0);
    await record(ch, FILLED_UNTIL, String(until));
  } else {
    await deleteFrom(ch, until);
  }
  if (until + DAY_MS + SESSION_REACH_MS + HOUR_MS <= now) {
    await fillSpan(ch, until, until + DAY_MS);
    await record(ch, FILLED_UNTIL, String(until + DAY_MS));
    return false;
  }
  await fillSpan(ch, until, FAR_FUTURE_MS);
  await record(ch, READY, new Date(now).toISOString());
  return true;
}

/**
 * During the fill: computes again the filled days whose sessions these shipped events may change
 * (an event written with a past instant). Events of the open days need nothing: those are filled last.
 */
export async function refillTouchedDays(ch: ClickHouse, events: { website_id: unknown; occurred_ms: unknown }[]): Promise<void> {
  const until = await filledUntil(ch);
  if (until === null || events.every((event) => Number(event.occurred_ms) - SESSION_REACH_MS >= until)) return;
  for (const [websiteId, days] of sessionDaysOf(events)) {
    for (const day of [...days].map((seconds) => seconds * 1000).filter((day) => day < until)) {
      const condition = sql`website_id = ${websiteId} and started_at >= toDateTime(${day / 1000}) and started_at < toDateTime(${(day + DAY_MS) / 1000})`;
      await deleteAndWait(ch, 'sessions', condition);
      await fillSpan(ch, day, day + DAY_MS, [websiteId]);
    }
  }
}

/**
 * After events were deleted (an import's, docs/decisions.md): the sessions of every day they may
 * have been part of, grouped again from the events left. The caller lets nothing be shipped meanwhile.
 */
export async function refillSessionDays(ch: ClickHouse, events: { website_id: unknown; occurred_ms: unknown }[]): Promise<void> {
  if (!(await sessionsTableReady(ch))) {
    await refillTouchedDays(ch, events);
    return;
  }
  for (const [websiteId, days] of sessionDaysOf(events)) {
    for (const day of [...days].map((seconds) => seconds * 1000).sort((a, b) => a - b)) {
      const condition = sql`website_id = ${websiteId} and started_at >= toDateTime(${day / 1000}) and started_at < toDateTime(${(day + DAY_MS) / 1000})`;
      const [row] = await ch.rows<{ n: string }>(sql`select count() as n from sessions where ${condition}`);
      if (Number(row?.n ?? 0) > 0) await deleteAndWait(ch, 'sessions', condition);
      await fillSpan(ch, day, day + DAY_MS, [websiteId]);
    }
  }
}
