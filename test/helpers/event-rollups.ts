import { sql } from 'kysely';
import type { ClickHouse } from '../../src/db/clickhouse/clickhouse.ts';
import { SPANS, type Span, rollupSelect } from '../../src/modules/events/clickhouse-event-rollups.ts';

// The event rollups on ClickHouse (src/modules/events/clickhouse-event-rollups.ts) as plain rows,
// and what they would hold if computed from the events now: equal when the rollups are exact.

const KEYS = sql`breakdown, toUInt32(bucket) as bucket, key1, key1_null, key2, key2_null`;
const COUNTS = sql`uniqCombinedMerge(visitors) as visitors, sumMerge(pageviews) as pageviews, countMerge(events) as events`;
const ORDER = sql`breakdown, bucket, key1_null, key1, key2_null, key2`;

export async function rollupsHeld(ch: ClickHouse, websiteId: string): Promise<Record<Span, Record<string, unknown>[]>> {
  const held = (span: Span) =>
    ch.rows<Record<string, unknown>>(sql`select ${KEYS}, ${COUNTS} from ${sql.table(SPANS[span].table)} where website_id = ${websiteId} group by ${ORDER} order by ${ORDER}`);
  return { hour: await held('hour'), day: await held('day') };
}

export async function rollupsRebuilt(ch: ClickHouse, websiteId: string): Promise<Record<Span, Record<string, unknown>[]>> {
  const rebuilt = (span: Span) =>
    ch.rows<Record<string, unknown>>(sql`select ${KEYS}, ${COUNTS} from (${rollupSelect(span, sql`website_id = ${websiteId}`)}) group by ${ORDER} order by ${ORDER}`);
  return { hour: await rebuilt('hour'), day: await rebuilt('day') };
}
