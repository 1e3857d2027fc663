import { sql } from 'kysely';
import type { ClickHouse } from '../../../db/clickhouse/clickhouse.ts';
import { SPANS } from '../../events/clickhouse-event-rollups.ts';
import { sampledTablesReady } from '../../events/clickhouse-sampling-upgrade.ts';
import type { StatsScope } from '../stats.params.ts';
import { eventRollupsReady } from './event-rollups-ch.ts';
import { DAY_MS, floorTo } from './rollup-spans.ts';
import { msOf, num, rangeCondition } from './scope-ch.ts';

// Sampled reads, as Plausible answers large ones (its extra/lib/plausible/stats/sampling.ex): a
// read whose range holds more than CLICKHOUSE_SAMPLE_THRESHOLD events (10 million by default) reads
// `SAMPLE k` of the events and sessions, k sized to keep about the threshold, and its counts are
// scaled back up by 1/k. Both tables are sampled by a hash of the visitor (SAMPLE BY in their
// declarations), so a sample keeps whole visitors: their events and their sessions, counts of
// visitors scale like counts of events, and rates (bounce, conversion) stay ratios of one sample.
// Only the reads that scan raw rows are sampled (filtered overviews and breakdowns, and the
// breakdowns the rollups cannot answer); what the rollups answer stays exact. `exact=true` on the
// request, or the threshold 0, turns sampling off; an installation whose tables predate the
// sampling key reads exactly until its upgrade (clickhouse-sampling-upgrade.ts) switches them.

export const DEFAULT_SAMPLE_THRESHOLD = 10_000_000;
/** Below this rate a sample is too thin to show: reads never sample less (Plausible's floor is 0.013). */
const MIN_RATE = 0.01;
/** Above this rate sampling saves too little to be worth an approximate answer (as Plausible). */
const MAX_RATE = 0.4;

/** Once both tables have the sampling key they keep it: asked until then, remembered after. */
const readyOnce = new WeakSet<ClickHouse>();

async function samplingReady(ch: ClickHouse): Promise<boolean> {
  if (readyOnce.has(ch)) return true;
  if (!(await sampledTablesReady(ch))) return false;
  readyOnce.add(ch);
  return true;
}

/**
 * The website's events in the scope's range, about: from the daily event rollup (every UTC day
 * the range touches) once it is built, else counted over the events' sorting key.
 */
async function eventsInRange(ch: ClickHouse, scope: StatsScope): Promise<number> {
  if (await eventRollupsReady(ch)) {
    const within = scope.range
      ? sql`and bucket >= toDateTime(${floorTo(msOf(scope.range.from), DAY_MS) / 1000}) and bucket < toDateTime(${Math.ceil(msOf(scope.range.to) / 1000)})`
      : sql``;
    const [row] = await ch.rows<{ n: unknown }>(
      sql`select countMerge(events) as n from ${sql.table(SPANS.day.table)} where website_id = ${scope.websiteId} and breakdown = 'devices' ${within}`,
    );
    return num(row?.n);
  }
  const [row] = await ch.rows<{ n: unknown }>(sql`select count() as n from events where website_id = ${scope.websiteId} and ${rangeCondition(scope.range)}`);
  return num(row?.n);
}

/** A rate k of SAMPLE k: two decimals, rounded down, within [MIN_RATE, 1]. */
export function rateFor(events: number, threshold: number): number | null {
  if (events <= threshold) return null;
  const rate = Math.max(MIN_RATE, Math.floor((threshold / events) * 100) / 100);
  return rate > MAX_RATE ? null : rate;
}

/**
 * The sample rate for a read of this scope: null (read every row) when sampling is off
 * (threshold null or 0, `exact`), the tables are not sampled yet, or the range is small.
 */
export async function sampleRateFor(ch: ClickHouse, scope: StatsScope, threshold: number | null): Promise<number | null> {
  if (!threshold || scope.exact === true) return null;
  if (!(await samplingReady(ch))) return null;
  return rateFor(await eventsInRange(ch, scope), threshold);
}

/** A count of a sample scaled back up to the whole. */
export function scaled(count: number, rate: number | null | undefined): number {
  return rate ? Math.round(count / rate) : count;
}
