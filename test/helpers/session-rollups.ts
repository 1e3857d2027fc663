import { sql } from 'kysely';
import type { ClickHouse } from '../../src/db/clickhouse/clickhouse.ts';
import { SESSION_SPANS, sessionHourRows, sessionsClosedUntil } from '../../src/modules/events/clickhouse-session-rollups.ts';

// The session rollups on ClickHouse (src/modules/events/clickhouse-session-rollups.ts) as plain
// rows, and what they would hold if the closed hours were computed from the events now: equal
// when the rollups are exact.

type Held = { hour: Record<string, unknown>[]; day: Record<string, unknown>[] };

const KEYS = sql`key1, key1_null, key2, key2_null`;
const COUNTS = sql`uniqCombinedMerge(visitors) as visitors, sumMerge(pageviews) as pageviews, countMerge(sessions) as sessions,
  sumMerge(bounces) as bounces, sumMerge(millis) as millis`;
const ORDER = sql`breakdown, b, key1_null, key1, key2_null, key2`;
const DAY_MS = 86_400_000;

export async function sessionRollupsHeld(ch: ClickHouse, websiteId: string): Promise<Held> {
  const held = (table: string) =>
    ch.rows<Record<string, unknown>>(sql`select breakdown, toUInt32(bucket) as b, ${KEYS}, ${COUNTS} from ${sql.table(table)}
      where website_id = ${websiteId} group by ${ORDER} order by ${ORDER}`);
  return { hour: await held(SESSION_SPANS.hour.table), day: await held(SESSION_SPANS.day.table) };
}

export async function sessionRollupsRebuilt(ch: ClickHouse, websiteId: string): Promise<Held> {
  const until = await sessionsClosedUntil(ch);
  const [first] = await ch.rows<{ first: string; n: string }>(
    sql`select toString(min(occurred_ms)) as first, count() as n from events where website_id = ${websiteId}`,
  );
  if (until === null || Number(first?.n ?? 0) === 0) return { hour: [], day: [] };
  const from = Math.floor(Number(first!.first) / DAY_MS) * DAY_MS;
  const rebuilt = (bucket: ReturnType<typeof sql>, to: number) =>
    ch.rows<Record<string, unknown>>(sql`select breakdown, ${bucket} as b, ${KEYS}, ${COUNTS} from (${sessionHourRows(websiteId, from, to)})
      group by ${ORDER} order by ${ORDER}`);
  return {
    hour: from < until ? await rebuilt(sql`toUInt32(bucket)`, until) : [],
    day: from < Math.floor(until / DAY_MS) * DAY_MS ? await rebuilt(sql`toUInt32(toStartOfDay(bucket, 'UTC'))`, Math.floor(until / DAY_MS) * DAY_MS) : [],
  };
}
