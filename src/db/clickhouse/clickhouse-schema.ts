import { type RawBuilder, sql } from 'kysely';
import { EVENT_ROLLUPS_SCHEMA, STATE_TABLE } from '../../modules/events/clickhouse-event-rollups.ts';
import { markSessionsTableReady } from '../../modules/events/clickhouse-session-fill.ts';
import { SESSION_ROLLUPS_SCHEMA } from '../../modules/events/clickhouse-session-rollups.ts';
import { finishSampledSwitch } from '../../modules/events/clickhouse-sampling-upgrade.ts';
import { sessionsTableDdl } from '../../modules/events/clickhouse-sessions.ts';
import type { ClickHouse } from './clickhouse.ts';
import { SAMPLING_KEY } from './sampling-key.ts';
import { SESSION_ATTRIBUTES, attributeColumn } from './session-attributes.ts';

// The tables Sightline keeps in ClickHouse: the raw events, one row each, as the relational
// `events` table holds them (src/db/schema/event-tables.ts), with the instant twice: `occurred_at`
// (DateTime, seconds) for the partitions and time zones, and `occurred_ms` (epoch milliseconds)
// for exact order and durations. Sessions, days and visitors are aggregated from these rows at
// read time (the breakdowns over events from hourly and daily rollups of them, kept by
// materialized views; the overview's sessions and the session breakdowns from rollups the relay
// writes once sessions are complete); payments, visitor profiles, notes and goal statistics stay in the relational engine.
//
// Written for the oldest release these machines run (18.16) and the current one alike, so it
// avoids: DateTime64 (20.1), LowCardinality (stable in 19.x), data-skipping indexes, TTL,
// window functions, CTEs over subqueries, {name:Type} parameters, insert deduplication tokens and
// the non-replicated deduplication window (20.x); exactly-once comes from the relay
// (src/modules/events/clickhouse-relay.ts) instead.

/** Every column, in order, with its ClickHouse type. */
export const EVENT_COLUMNS = [
  ['id', 'String'],
  ['website_id', 'String'],
  ['type', 'String'],
  ['name', 'Nullable(String)'],
  ['visitor_id', 'String'],
  ['session_id', 'Nullable(String)'],
  ['hostname', 'Nullable(String)'],
  ['path', 'Nullable(String)'],
  ['referrer', 'Nullable(String)'],
  ['country', 'Nullable(String)'],
  ['browser', 'Nullable(String)'],
  ['os', 'Nullable(String)'],
  ['device', 'Nullable(String)'],
  ['metadata', 'Nullable(String)'],
  ['source', 'String'],
  ['occurred_at', 'DateTime'],
  ['occurred_ms', 'UInt64'],
  ['region', 'Nullable(String)'],
  ['city', 'Nullable(String)'],
  ['browser_version', 'Nullable(String)'],
  ['os_version', 'Nullable(String)'],
  ['viewport_width', 'Nullable(UInt32)'],
  ['viewport_height', 'Nullable(UInt32)'],
  ['referrer_host', 'Nullable(String)'],
  ['referrer_source', 'Nullable(String)'],
  ['utm_source', 'Nullable(String)'],
  ['utm_medium', 'Nullable(String)'],
  ['utm_campaign', 'Nullable(String)'],
  ['utm_term', 'Nullable(String)'],
  ['utm_content', 'Nullable(String)'],
  ['ref_param', 'Nullable(String)'],
  ['source_param', 'Nullable(String)'],
  ['via_param', 'Nullable(String)'],
  ['link_url', 'Nullable(String)'],
  ['description', 'Nullable(String)'],
] as const;

/** Every column of the events table: the relay's rows' and the session attributes. */
export const EVENT_TABLE_COLUMNS: readonly (readonly [string, string])[] = [
  ...EVENT_COLUMNS,
  ...SESSION_ATTRIBUTES.map((name) => [attributeColumn(name), 'Nullable(String)'] as const),
];

export type ClickHouseEventColumn = (typeof EVENT_COLUMNS)[number][0];
export type ClickHouseEventRow = Record<ClickHouseEventColumn, string | number | null>;

/**
 * The events table named `name` (`events`, or the copy an upgrade fills): per website and UTC day,
 * sorted by the visitor's hash (the sampling key, as Plausible sorts its events) then the instant.
 */
export function eventsTableDdl(name: string): RawBuilder<unknown> {
  return sql`CREATE TABLE IF NOT EXISTS ${sql.table(name)} (
  ${sql.raw(EVENT_TABLE_COLUMNS.map(([column, type]) => `${column} ${type}`).join(',\n  '))}
) ENGINE = MergeTree()
PARTITION BY toYYYYMM(occurred_at)
ORDER BY (website_id, toDate(occurred_at), ${sql.raw(SAMPLING_KEY)}, occurred_at)
SAMPLE BY ${sql.raw(SAMPLING_KEY)}`;
}

/**
 * Creates what is missing; safe to run at every start and from several instances at once. The
 * rollups' views come after their tables; the relay fills them from events stored before they
 * existed (src/modules/events/clickhouse-event-rollups.ts).
 */
export async function migrateClickHouse(ch: ClickHouse): Promise<void> {
  // An upgrade to the sampled tables cut between its two renames: its copy is the table now.
  await finishSampledSwitch(ch);
  // A new installation has no sessions to fill: the sessions table is ready from the start, so the
  // relay writes session rows and the events' session attributes from the first event. Recorded
  // before the events table exists, so a crash in between cannot leave events shipped without them.
  await ch.command(STATE_TABLE);
  if (!(await tableExists(ch, 'events'))) await markSessionsTableReady(ch, 'new installation');
  await ch.command(eventsTableDdl('events'));
  // The sessions written at ingestion; an existing installation's are filled by the relay.
  await ch.command(sessionsTableDdl('sessions'));
  for (const statement of [...EVENT_ROLLUPS_SCHEMA, ...SESSION_ROLLUPS_SCHEMA]) await ch.command(statement);
}

async function tableExists(ch: ClickHouse, name: string): Promise<boolean> {
  const rows = await ch.rows(sql`select 1 as found from system.tables where database = currentDatabase() and name = ${name}`);
  return rows.length > 0;
}
