import { type Kysely, type Selectable, sql } from 'kysely';
import type { ClickHouse } from '../../db/clickhouse/clickhouse.ts';
import { EVENT_COLUMNS } from '../../db/clickhouse/clickhouse-schema.ts';
import type { Database, EventsTable } from '../../db/schema.ts';
import { isoOf } from '../stats/clickhouse/scope-ch.ts';

// Pages of a website's raw events for the raw export (src/modules/export): every stored column,
// in (occurred_at, id) order after a cursor, so each page is one short query on the time index
// and no row is read twice or skipped however the pages fall.

export type StoredEvent = Selectable<EventsTable>;

/** Where the last page ended. */
export interface EventCursor {
  occurredAt: string;
  id: string;
}

export async function sqlEventPage(db: Kysely<Database>, websiteId: string, after: EventCursor | null, limit: number): Promise<StoredEvent[]> {
  let query = db.selectFrom('events').selectAll().where('website_id', '=', websiteId);
  if (after) {
    query = query.where((eb) =>
      eb.or([eb('occurred_at', '>', after.occurredAt), eb.and([eb('occurred_at', '=', after.occurredAt), eb('id', '>', after.id)])]),
    );
  }
  return query.orderBy('occurred_at').orderBy('id').limit(limit).execute();
}

const STORED_COLUMNS = EVENT_COLUMNS.map(([name]) => name).filter((name) => name !== 'occurred_ms' && name !== 'occurred_at');

/** The same page from ClickHouse, whose instant in milliseconds is `occurred_ms`. */
export async function clickhouseEventPage(ch: ClickHouse, websiteId: string, after: EventCursor | null, limit: number): Promise<StoredEvent[]> {
  const columns = sql.raw(STORED_COLUMNS.join(', '));
  const afterMs = after ? Date.parse(after.occurredAt) : -1;
  const afterId = after?.id ?? '';
  const rows = await ch.rows<Record<string, string | number | null>>(sql`select ${columns}, occurred_ms from events
    where website_id = ${websiteId} and (occurred_ms > ${afterMs} or (occurred_ms = ${afterMs} and id > ${afterId}))
    order by occurred_ms, id limit ${limit}`);
  return rows.map((row) => {
    const { occurred_ms: ms, viewport_width: width, viewport_height: height, ...rest } = row;
    return {
      ...rest,
      occurred_at: isoOf(ms),
      viewport_width: width === null ? null : Number(width),
      viewport_height: height === null ? null : Number(height),
    } as unknown as StoredEvent;
  });
}
