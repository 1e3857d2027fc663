import { type RawBuilder, sql } from 'kysely';
import type { ClickHouse } from '../../../db/clickhouse/clickhouse.ts';
import { ONLY, ROLLED_UP_BREAKDOWNS, SPANS, STATES, eventRollupsBuilt, keyColumnsOf, keysOf } from '../../events/clickhouse-event-rollups.ts';
import { BREAKDOWN_SPECS } from '../../analytics/breakdown-specs.ts';
import type { Breakdown } from '../../analytics/breakdowns.ts';
import type { StatsScope } from '../stats.params.ts';
import { splitRange } from './rollup-spans.ts';
import { msOf, msRange } from './scope-ch.ts';

// Reads of the event rollups (src/modules/events/clickhouse-event-rollups.ts): the states of a
// breakdown over a range, from the daily rollup for the range's whole UTC days, the hourly one for
// the whole hours around them, and the raw events for the partial hours at its edges, merged as
// one. Merged states count what the events would, so the answer is the one the events give.

/** Whether a breakdown can be read from the rollups: over events, unfiltered, once they are built. */
export async function rollupReadable(ch: ClickHouse, kind: Breakdown, scope: StatsScope): Promise<boolean> {
  if (!ROLLED_UP_BREAKDOWNS.includes(kind) || scope.filters.length > 0) return false;
  return eventRollupsReady(ch);
}

/** Once built, the rollups stay built (the views keep them): asked until then, remembered after. */
const builtOnce = new WeakSet<ClickHouse>();

/** Whether the event rollups hold every event (asked once they are, remembered after). */
export async function eventRollupsReady(ch: ClickHouse): Promise<boolean> {
  if (builtOnce.has(ch)) return true;
  if (!(await eventRollupsBuilt(ch))) return false;
  builtOnce.add(ch);
  return true;
}

const COLUMNS = sql`key1, key1_null, key2, key2_null, visitors, pageviews, events`;

/**
 * `(select key1, key1_null, key2, key2_null, visitors, pageviews, events ...)`: the breakdown's
 * states over the scope's range, one row per bucket and key from the rollups, one per key from the
 * partial hours' events. Merge them per key (uniqCombinedMerge, sumMerge, countMerge).
 */
export function rollupStates(kind: Breakdown, scope: StatsScope): RawBuilder<unknown> {
  const rollup = (table: string, from: number | null, to: number | null) => {
    const within = from === null || to === null ? sql`1 = 1` : sql`bucket >= toDateTime(${from / 1000}) and bucket < toDateTime(${to / 1000})`;
    return sql`select ${COLUMNS} from ${sql.table(table)} where website_id = ${scope.websiteId} and breakdown = ${kind} and ${within}`;
  };
  // All time: every day holds every event.
  if (!scope.range) return sql`(${rollup(SPANS.day.table, null, null)})`;
  const { days, hours, raw } = splitRange(msOf(scope.range.from), msOf(scope.range.to));
  const parts: RawBuilder<unknown>[] = [];
  if (days) parts.push(rollup(SPANS.day.table, ...days));
  for (const hour of hours) parts.push(rollup(SPANS.hour.table, ...hour));
  if (raw.length > 0) parts.push(rawStates(kind, scope, raw.map(([from, to]) => msRange(from, to))));
  return sql`(${sql.join(parts, sql` union all `)})`;
}

/** The states of the breakdown's events in any of `ranges`, from the raw events. */
function rawStates(kind: Breakdown, scope: StatsScope, ranges: RawBuilder<unknown>[]): RawBuilder<unknown> {
  const only = BREAKDOWN_SPECS[kind].only;
  const [key1, key2] = keyColumnsOf(kind);
  const within = sql.join(
    ranges.map((range) => sql`(${range})`),
    sql` or `,
  );
  return sql`select ${keysOf(key1, key2)}, ${STATES} from events
    where website_id = ${scope.websiteId} and (${within})${only ? sql` and ${ONLY[only]}` : sql``}
    group by key1_null, key1, key2_null, key2`;
}
