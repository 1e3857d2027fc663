import { type RawBuilder, sql } from 'kysely';
import { SESSION_ROW_COLUMNS } from '../../events/clickhouse-sessions.ts';
import type { InstantRange } from '../../goals/tracked-goals.range.ts';

// Reads of the sessions table written at ingestion (src/modules/events/clickhouse-sessions.ts).
// Rows collapse only when parts merge, so no read trusts one row: a condition on a row (its
// start in the range) is tested before anything is counted, since a cancelled row and its cancel
// row share it and drop out together; counts are sums weighted by `sign`; what needs one row per
// session groups the session's rows with `having sum(sign) > 0` and takes the columns of the
// highest version (the live row). No FINAL: it would merge at read time, and 18.16's is slow.

/** As scope-ch.ts's SESSION_REACH_MS (a session is cut after a day): how far before a range an overlapping session may start. */
const REACH_MS = 24 * 60 * 60 * 1000;

const NULLABLE = new Set<string>(SESSION_ROW_COLUMNS.filter(([, type]) => type.startsWith('Nullable')).map(([name]) => name));

/**
 * A column of the session's live row (its highest version). A null is kept: argMax skips nulls,
 * so an entry or source that an earlier event made null would otherwise read as an older state's.
 */
export function latestOf(name: string): RawBuilder<unknown> {
  return NULLABLE.has(name) ? sql`nullIf(argMax(ifNull(${sql.ref(name)}, '\\0'), events), '\\0')` : sql`argMax(${sql.ref(name)}, events)`;
}

/** The sessions table's rows whose start (and, `overlapping`, end) put them in the range. */
export function storedSessionRows(websiteId: string, range: InstantRange | null, which: 'started' | 'overlapping'): RawBuilder<unknown> {
  const website = sql`website_id = ${websiteId}`;
  if (!range) return website;
  const from = Date.parse(range.from);
  const to = Date.parse(range.to);
  const startedBefore = sql`started_at <= toDateTime(${Math.ceil(to / 1000)}) and started_ms < ${to}`;
  if (which === 'started') return sql`${website} and started_at >= toDateTime(${Math.floor(from / 1000)}) and started_ms >= ${from} and ${startedBefore}`;
  return sql`${website} and started_at >= toDateTime(${Math.max(0, Math.floor((from - REACH_MS) / 1000))}) and ${startedBefore} and ended_ms >= ${from}`;
}

/**
 * `sessionsTable` (scope-ch.ts) from the sessions table: one row per live session with
 * session_id, started_ms, ended_ms and the `columns` asked for, which have the same names there.
 */
export function storedSessionsTable(
  websiteId: string,
  range: InstantRange | null,
  which: 'started' | 'overlapping',
  columns: readonly string[],
  only: RawBuilder<unknown>,
  sample: number | null = null,
): RawBuilder<unknown> {
  const names = ['started_ms', 'ended_ms', ...columns.filter((name) => name !== 'events')];
  // Aliases of their own: an alias named as a column would stand for it inside the other aggregates.
  const latest = names.map((name) => sql`${latestOf(name)} as ${sql.ref(`v_${name}`)}`);
  const renamed = names.map((name) => sql`${sql.ref(`v_${name}`)} as ${sql.ref(name)}`);
  if (columns.includes('events')) {
    latest.push(sql`max(events) as v_events`);
    renamed.push(sql`v_events as events`);
  }
  return sql`(select session_id, ${sql.join(renamed)} from (select session_id, ${sql.join(latest)} from ${sample ? sql`sessions sample ${sample}` : sql`sessions`}
    where ${storedSessionRows(websiteId, range, which)} and ${only}
    group by session_id having sum(sign) > 0))`;
}
