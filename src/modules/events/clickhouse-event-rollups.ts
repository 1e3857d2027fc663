import { type RawBuilder, sql } from 'kysely';
import type { ClickHouse } from '../../db/clickhouse/clickhouse.ts';
import { deleteAndWait } from '../../db/clickhouse/mutations.ts';
import { BREAKDOWN_SPECS, type EventKind } from '../analytics/breakdown-specs.ts';
import type { Breakdown } from '../analytics/breakdowns.ts';

// Rollups of the events on ClickHouse for the breakdowns over events (pages, places, devices,
// browsers, hostnames, goals, outbound links): per website, breakdown, key and UTC hour
// (`event_hours`) or UTC day (`event_days`), the states of the three aggregates those breakdowns
// read (distinct visitors, pageviews, events). A read merges a few rows per day and hour instead
// of scanning every event; the partial hours at a range's edges still come from the raw events
// (src/modules/stats/clickhouse/event-rollups-ch.ts). UTC buckets serve every time zone, whole-hour
// or not, with no rebuild when a website's zone changes.
//
// Visitors are counted with `uniqCombined`: its states of many visitors are HyperLogLog sketches,
// merged by taking maxima. `uniq`'s states keep up to 65,536 hashes each, and merging 217 of them
// (a 31-day pages breakdown) took 0.97 s at 100 million events, against 0.10 s for uniqCombined.
//
// Materialized views fill both tables at every INSERT into `events`, in the same INSERT. What a
// view cannot follow is kept exact here, always while the relay ships nothing (its `exclusive`):
// - a first start over existing events (an upgrade): `buildEventRollupsOnce` fills them from the
//   events and writes a marker; reads use the rollups only once the marker is there;
// - deletes (mutations, which views do not see): the hours and days of the deleted events are
//   computed again;
// - an INSERT cut by a crash, which may have written its events without the views' rows: the
//   relay computes again the hours and days of every batch it ships a second time.

/** The events each kind keeps (as the breakdowns over raw events select them). */
export const ONLY: Record<EventKind, RawBuilder<unknown>> = {
  pageviews: sql`type = 'pageview'`,
  goals: sql`type = 'custom' and isNotNull(name)`,
  'link-clicks': sql`type = 'external_link' and isNotNull(link_url)`,
};

/** The breakdowns kept in the rollups: those over events (each has one or two keys). */
export const ROLLED_UP_BREAKDOWNS = (Object.keys(BREAKDOWN_SPECS) as Breakdown[]).filter((kind) => BREAKDOWN_SPECS[kind].from === 'events');

/**
 * A breakdown's key columns, as the rollups' key1 and key2 (NULL when it has one key). More than
 * two keys are packed into key1: each one 'N' when null, else 'K' and its bytes in hex, joined by
 * commas. The packing is one-to-one and sorts as the keys do one after another (nulls last), so
 * the rollups' rows come in the order of the events' (see `rolledUpKey`).
 */
export function keyColumnsOf(kind: Breakdown): [RawBuilder<unknown>, RawBuilder<unknown>] {
  const columns = Object.values(BREAKDOWN_SPECS[kind].keys);
  if (columns.length > 2) {
    const packed = columns.map((column) => sql`if(isNull(${sql.ref(column)}), 'N', concat('K', hex(ifNull(${sql.ref(column)}, ''))))`);
    return [sql`arrayStringConcat([${sql.join(packed)}], ',')`, sql`CAST(NULL AS Nullable(String))`];
  }
  return [sql.ref(columns[0]!), columns[1] ? sql.ref(columns[1]) : sql`CAST(NULL AS Nullable(String))`];
}

/** The breakdown's key number `index` (from 0) of a rollup row, null kept: what `keyColumnsOf` stored. */
export function rolledUpKey(kind: Breakdown, index: number): RawBuilder<unknown> {
  if (Object.keys(BREAKDOWN_SPECS[kind].keys).length > 2) {
    const part = sql`splitByChar(',', key1)[${sql.lit(index + 1)}]`;
    return sql`if(${part} = 'N', NULL, unhex(substring(${part}, 2)))`;
  }
  return sql`if(${sql.ref(`key${index + 1}_null`)} = 1, NULL, ${sql.ref(`key${index + 1}`)})`;
}

/** The aggregate states of a set of events, in the rollups' column order. */
export const STATES = sql`uniqCombinedState(visitor_id) as visitors, sumState(toUInt64(type = 'pageview')) as pageviews, countState() as events`;

/** The rollups' key columns from two (nullable) values; a sorting key cannot hold NULL in 18.16. */
export function keysOf(key1: RawBuilder<unknown>, key2: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`ifNull(${key1}, '') as key1, isNull(${key1}) as key1_null, ifNull(${key2}, '') as key2, isNull(${key2}) as key2_null`;
}

const KEY_ORDER = sql`key1_null, key1, key2_null, key2`;

/** The two rollups: the table, and how an event's instant falls into its bucket (in UTC, whatever the server's zone). */
export const SPANS = {
  hour: { table: 'event_hours', bucket: sql`toStartOfHour(occurred_at, 'UTC')`, ms: 3_600_000 },
  day: { table: 'event_days', bucket: sql`toStartOfDay(occurred_at, 'UTC')`, ms: 86_400_000 },
} as const;
export type Span = keyof typeof SPANS;
export type RollupTable = (typeof SPANS)[Span]['table'];

/**
 * A rollup table: one row per website, breakdown, bucket and key, with `states` (the aggregate
 * state columns). A state of many visitors takes tens of kilobytes to a megabyte, so a granule is
 * 64 rows (the default 8,192 made a breakdown of 721 rows read most of the table).
 */
export function rollupTableOf(table: string, states: string[]): RawBuilder<unknown> {
  return sql`CREATE TABLE IF NOT EXISTS ${sql.table(table)} (
  website_id String,
  breakdown String,
  bucket DateTime,
  key1 String,
  key1_null UInt8,
  key2 String,
  key2_null UInt8,
  ${sql.raw(states.join(',\n  '))}
) ENGINE = AggregatingMergeTree()
PARTITION BY toYYYYMM(bucket)
ORDER BY (website_id, breakdown, bucket, ${KEY_ORDER})
SETTINGS index_granularity = 64`;
}

function rollupTable(span: Span): RawBuilder<unknown> {
  return rollupTableOf(SPANS[span].table, [
    'visitors AggregateFunction(uniqCombined, String)',
    'pageviews AggregateFunction(sum, UInt64)',
    'events AggregateFunction(count)',
  ]);
}

/**
 * The rollup rows of the events that pass `where`: each event becomes one row per breakdown that
 * keeps it (ARRAY JOIN over one tuple per breakdown, '' for those that do not), grouped per bucket.
 */
export function rollupSelect(span: Span, where: RawBuilder<unknown>): RawBuilder<unknown> {
  const rows = ROLLED_UP_BREAKDOWNS.map((kind) => {
    const only = BREAKDOWN_SPECS[kind].only;
    const [key1, key2] = keyColumnsOf(kind);
    const name = only ? sql`if(${ONLY[only]}, ${kind}, '')` : sql`${kind}`;
    return sql`tuple(${name}, ${key1}, ${key2})`;
  });
  const part = (i: number) => sql.raw(`tupleElement(breakdown_row, ${i})`);
  return sql`select website_id, ${part(1)} as breakdown, ${SPANS[span].bucket} as bucket, ${keysOf(part(2), part(3))}, ${STATES}
    from events array join [${sql.join(rows)}] as breakdown_row
    where ${where} and breakdown != ''
    group by website_id, breakdown, bucket, ${KEY_ORDER}`;
}

function rollupView(span: Span): RawBuilder<unknown> {
  return sql`CREATE MATERIALIZED VIEW IF NOT EXISTS ${sql.table(`${SPANS[span].table}_view`)} TO ${sql.table(SPANS[span].table)} AS ${rollupSelect(span, sql`1 = 1`)}`;
}

/** Marks what has been built once; one row per name. */
export const STATE_TABLE = sql`CREATE TABLE IF NOT EXISTS sightline_state (name String, value String) ENGINE = MergeTree() ORDER BY name`;

/** The rollups' tables and views, after the events table. */
export const EVENT_ROLLUPS_SCHEMA = [STATE_TABLE, rollupTable('hour'), rollupTable('day'), rollupView('hour'), rollupView('day')];

const BUILT = 'event rollups built';

/** Whether the rollups hold every event (built once, then kept by the views). */
export async function eventRollupsBuilt(ch: ClickHouse): Promise<boolean> {
  const rows = await ch.rows(sql`select 1 as built from sightline_state where name = ${BUILT} limit 1`);
  return rows.length > 0;
}

/**
 * Fills the rollups from the events already stored, once. The caller makes sure nothing is
 * inserted meanwhile (the relay's `exclusive`); a crash before the marker means doing it again.
 */
export async function buildEventRollupsOnce(ch: ClickHouse): Promise<void> {
  if (await eventRollupsBuilt(ch)) return;
  for (const span of Object.keys(SPANS) as Span[]) await deleteAndWait(ch, SPANS[span].table, sql`1 = 1`);
  // A day at a time: each INSERT well within the client's request timeout (at 100 million events,
  // about 3.3 million a day, 6.5 s each on the 2-core machine).
  const days = await ch.rows<{ day: string }>(sql`select distinct toString(toDate(occurred_at)) as day from events order by day`);
  for (const { day } of days) {
    for (const span of Object.keys(SPANS) as Span[]) {
      await ch.command(sql`insert into ${sql.table(SPANS[span].table)} ${rollupSelect(span, sql`toDate(occurred_at) = toDate(${day})`)}`);
    }
  }
  await ch.command(sql`insert into sightline_state (name, value) values (${BUILT}, ${new Date().toISOString()})`);
}

/** UTC days (epoch seconds) per website whose events changed. */
export type DaysByWebsite = Map<string, Set<number>>;

/** The UTC days of these events (their website and instant, as ClickHouse rows hold them). */
export function daysOf(events: { website_id: unknown; occurred_ms: unknown }[]): DaysByWebsite {
  const days: DaysByWebsite = new Map();
  for (const event of events) {
    const websiteId = String(event.website_id);
    const day = Math.floor(Number(event.occurred_ms) / SPANS.day.ms) * (SPANS.day.ms / 1000);
    let set = days.get(websiteId);
    if (!set) days.set(websiteId, (set = new Set()));
    set.add(day);
  }
  return days;
}

/** Days per statement, well within ClickHouse's 256 KiB query limit. */
const DAYS_PER_STATEMENT = 500;

/**
 * Computes the rollups of these days (their hours and the days themselves) again from the events,
 * after a delete or an INSERT that a crash may have cut. The caller makes sure nothing is inserted
 * meanwhile.
 */
export async function rebuildEventRollups(ch: ClickHouse, days: DaysByWebsite): Promise<void> {
  for (const [websiteId, set] of days) {
    const all = [...set].sort((a, b) => a - b);
    for (let i = 0; i < all.length; i += DAYS_PER_STATEMENT) {
      const chunk = sql.join(all.slice(i, i + DAYS_PER_STATEMENT).map((day) => sql`toDateTime(${day})`));
      for (const span of Object.keys(SPANS) as Span[]) {
        const { table } = SPANS[span];
        await deleteAndWait(ch, table, sql`website_id = ${websiteId} and toStartOfDay(bucket, 'UTC') in (${chunk})`);
        await ch.command(sql`insert into ${sql.table(table)} ${rollupSelect(span, sql`website_id = ${websiteId} and toStartOfDay(occurred_at, 'UTC') in (${chunk})`)}`);
      }
    }
  }
}
