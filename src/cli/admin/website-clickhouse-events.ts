import { sql } from 'kysely';
import { type ClickHouse, openClickHouse } from '../../db/clickhouse/clickhouse.ts';
import { migrateClickHouse } from '../../db/clickhouse/clickhouse-schema.ts';
import { deleteAndWait } from '../../modules/events/clickhouse-event-log.ts';
import { configOrFail } from '../settings.ts';

// A website's events in ClickHouse, for `sightline admin delete-website` (loaded only by it).

/** With CLICKHOUSE_URL set, the website's events live in ClickHouse: `use` it; otherwise null. */
export async function withClickHouse<T>(use: (ch: ClickHouse) => Promise<T>): Promise<T | null> {
  const url = configOrFail().clickhouseUrl;
  if (url === undefined) return null;
  const ch = openClickHouse(url, migrateClickHouse);
  try {
    return await use(ch);
  } finally {
    await ch.close();
  }
}

export async function countClickHouseEvents(ch: ClickHouse, websiteId: string): Promise<number> {
  const [row] = await ch.rows<{ n: string }>(sql`select count() as n from events where website_id = ${websiteId}`);
  return Number(row?.n ?? 0);
}

/** Deleted once the website's rows are (the relay's waiting events went with them): how many. */
export async function deleteClickHouseEvents(ch: ClickHouse, websiteId: string): Promise<number> {
  const events = await countClickHouseEvents(ch, websiteId);
  await deleteAndWait(ch, sql`website_id = ${websiteId}`);
  return events;
}
