import { type RawBuilder, sql } from 'kysely';
import type { ClickHouse } from '../../../db/clickhouse/clickhouse.ts';
import { keysOf } from '../../events/clickhouse-event-rollups.ts';
import {
  SESSION_ROLLED_UP,
  SESSION_SPANS,
  SESSION_STATES,
  type SessionRollup,
  sessionColumnsOf,
  sessionKeyColumns,
  sessionsClosedUntil,
  statedSessions,
} from '../../events/clickhouse-session-rollups.ts';
import type { Breakdown } from '../../analytics/breakdowns.ts';
import type { StatsScope } from '../stats.params.ts';
import { DAY_MS, floorTo, splitRange } from './rollup-spans.ts';
import { type ClickHouseScope, type SessionSource, isoOf, msOf, sessionsTable } from './scope-ch.ts';

// Reads of the session rollups (src/modules/events/clickhouse-session-rollups.ts): the states of
// the sessions that started in a range, from the rollups for the hours the relay has closed
// (whole UTC days, whole hours, and the partial hours at the range's edges from the events), and
// from the events for the sessions that started later. Merged states count what the sessions
// would, so the answer is the one the events give.

/**
 * When the scope's sessions can be read from the rollups (unfiltered, once the relay has closed
 * hours): how far they are closed. Null otherwise.
 */
export async function sessionRollupsReadable(ch: ClickHouse, kind: SessionRollup | Breakdown, scope: StatsScope): Promise<number | null> {
  if (scope.filters.length > 0) return null;
  if (kind !== 'overview' && !(SESSION_ROLLED_UP as readonly string[]).includes(kind)) return null;
  return sessionsClosedUntil(ch);
}

const COLUMNS = sql`key1, key1_null, key2, key2_null, visitors, pageviews, sessions, bounces, millis`;
const KEY_ORDER = sql`key1_null, key1, key2_null, key2`;
/** The end of an all-time range: within DateTime's reach with a session's reach added. */
const FAR_FUTURE_MS = Date.UTC(2100, 0, 1);

/**
 * `(select key1, key1_null, key2, key2_null, visitors, pageviews, sessions, bounces, millis ...)`:
 * the states of the sessions that started in the scope's range, in rows per bucket and key. Merge
 * them per key (uniqCombinedMerge, sumMerge, countMerge).
 */
export function sessionStates(kind: SessionRollup, scope: ClickHouseScope, closedUntil: number): RawBuilder<unknown> {
  const rollup = (table: string, from: number | null, to: number) => {
    const after = from === null ? sql`1 = 1` : sql`bucket >= toDateTime(${from / 1000})`;
    return sql`select ${COLUMNS} from ${sql.table(table)}
      where website_id = ${scope.websiteId} and breakdown = ${kind} and ${after} and bucket < toDateTime(${to / 1000})`;
  };
  const raw = (from: number, to: number) => rawSessionStates(kind, scope.websiteId, from, to, scope.sessions);
  const from = scope.range ? msOf(scope.range.from) : null;
  const to = scope.range ? msOf(scope.range.to) : FAR_FUTURE_MS;
  const parts: RawBuilder<unknown>[] = [];
  const closedEnd = Math.min(to, closedUntil);
  if (from === null) {
    // All time: every closed day, then the closed hours of the last one.
    const lastDay = floorTo(closedUntil, DAY_MS);
    parts.push(rollup(SESSION_SPANS.day.table, null, lastDay));
    if (lastDay < closedUntil) parts.push(rollup(SESSION_SPANS.hour.table, lastDay, closedUntil));
  } else if (from < closedEnd) {
    const { days, hours, raw: edges } = splitRange(from, closedEnd);
    if (days) parts.push(rollup(SESSION_SPANS.day.table, ...days));
    for (const [a, b] of hours) parts.push(rollup(SESSION_SPANS.hour.table, a, b));
    for (const [a, b] of edges) parts.push(raw(a, b));
  }
  // The sessions that started after the closed hours.
  const openFrom = Math.max(from ?? closedUntil, closedUntil);
  if (openFrom < to || parts.length === 0) parts.push(raw(openFrom, Math.max(openFrom, to)));
  return sql`(${sql.join(parts, sql` union all `)})`;
}

/** The states of the website's sessions that started in [from, to), from the sessions table (or the events until it is filled). */
function rawSessionStates(kind: SessionRollup, websiteId: string, from: number, to: number, source?: SessionSource): RawBuilder<unknown> {
  const [key1, key2] = sessionKeyColumns(kind);
  const sessions = sessionsTable(websiteId, { from: isoOf(from), to: isoOf(to) }, 'started', sessionColumnsOf(kind), undefined, source);
  return sql`select ${keysOf(key1, key2)}, ${SESSION_STATES} from ${statedSessions(sessions)} group by ${KEY_ORDER}`;
}
