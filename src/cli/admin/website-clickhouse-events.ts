import { type Kysely, sql } from 'kysely';
import { type ClickHouse, openClickHouse } from '../../db/clickhouse/clickhouse.ts';
import { migrateClickHouse } from '../../db/clickhouse/clickhouse-schema.ts';
import type { Database } from '../../db/schema.ts';
import { deleteWebsiteRows } from '../../modules/events/clickhouse-event-log.ts';
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

async function countStored(ch: ClickHouse, websiteId: string): Promise<number> {
  const [row] = await ch.rows<{ n: string }>(sql`select count() as n from events where website_id = ${websiteId}`);
  return Number(row?.n ?? 0);
}

/**
 * The website's events in ClickHouse and those still waiting in event_relay. Only rows no
 * shipment has claimed are counted there: a claimed batch may already be in ClickHouse (the relay
 * deletes it after the INSERT), and would be counted twice.
 */
export async function countClickHouseEvents(ch: ClickHouse, db: Kysely<Database>, websiteId: string): Promise<number> {
  const waiting = await db
    .selectFrom('event_relay')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('website_id', '=', websiteId)
    .where('batch', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(waiting.n) + (await countStored(ch, websiteId));
}

/** Deleted once the website's rows (and their hourly rollups) are (the relay's waiting events went with them): how many. */
export async function deleteClickHouseEvents(ch: ClickHouse, websiteId: string): Promise<number> {
  const events = await countStored(ch, websiteId);
  await deleteWebsiteRows(ch, websiteId);
  return events;
}
