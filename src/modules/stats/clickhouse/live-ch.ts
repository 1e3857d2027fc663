import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { ClickHouse } from '../../../db/clickhouse/clickhouse.ts';
import type { Database } from '../../../db/schema.ts';
import type { LiveEvent, LivePayment, LiveVisitor } from '../event-store.ts';
import { iso } from '../sql/visitor-rows.ts';
import { liveVisitor } from '../visitor-shapes.ts';
import { customerNames } from '../sql/live-sql.ts';
import { isoOf, msOf, num } from './scope-ch.ts';
import { type ChEventRow, latestEvents, sessionCounts } from './visitor-rows-ch.ts';

// Realtime over ClickHouse (the meaning of ../sql/live-sql.ts): who has had an event since a
// moment, and what happened. Payments and the names visitors paid or identified under are read
// from the relational engine.

const RECENT_EVENTS = 50;
const MAP_VISITORS = 500;

/** The website's events at or after `since` (the DateTime bound lets the primary key skip the rest). */
function sinceCondition(websiteId: string, since: string): RawBuilder<unknown> {
  const ms = msOf(since);
  return sql`website_id = ${websiteId} and occurred_at >= toDateTime(${Math.floor(ms / 1000)}) and occurred_ms >= ${ms}`;
}

export async function liveVisitors(ch: ClickHouse, websiteId: string, since: string): Promise<number> {
  const rows = await ch.rows<{ n: unknown }>(sql`select uniq(visitor_id) as n from events where ${sinceCondition(websiteId, since)}`);
  return num(rows[0]?.n);
}

export async function liveMap(
  ch: ClickHouse,
  db: Kysely<Database>,
  websiteId: string,
  since: string,
): Promise<{ visitors: LiveVisitor[]; events: LiveEvent[]; payments: LivePayment[] }> {
  const recentOnes = sinceCondition(websiteId, since);
  type Recent = Pick<ChEventRow, 'id' | 'type' | 'name' | 'visitor_id' | 'occurred_ms' | 'path' | 'country'>;
  const [active, recent, payments] = await Promise.all([
    // The SQL store leaves ties of the latest instant unordered; here they go by visitor id.
    ch.rows<{ visitor_id: string }>(sql`
      select visitor_id from events where ${recentOnes}
      group by visitor_id order by max(occurred_ms) desc, visitor_id limit ${MAP_VISITORS}`),
    ch.rows<Recent>(sql`
      select id, type, name, visitor_id, occurred_ms, path, country from events where ${recentOnes}
      order by occurred_ms desc, id desc limit ${RECENT_EVENTS}`),
    db
      .selectFrom('payments')
      .select(['id', 'occurred_at', 'amount_minor', 'currency', 'customer_name', 'visitor_id'])
      .where('website_id', '=', websiteId)
      .where('occurred_at', '>=', since)
      .orderBy('occurred_at', 'desc')
      .limit(RECENT_EVENTS)
      .execute(),
  ]);
  const ids = active.map((row) => row.visitor_id);
  const [latest, visits, customers] = await Promise.all([
    latestEvents(ch, websiteId, ids),
    sessionCounts(ch, websiteId, ids),
    customerNames(db, websiteId, ids),
  ]);
  const visitors = ids.map((visitorId) => liveVisitor(visitorId, latest.get(visitorId), visits.get(visitorId) ?? 0, customers.get(visitorId)));
  const events: LiveEvent[] = recent.map((row) => ({
    id: row.id,
    type: row.type,
    name: row.name,
    visitorId: row.visitor_id,
    occurredAt: isoOf(row.occurred_ms),
    path: row.path,
    countryCode: row.country,
  }));
  const livePayments: LivePayment[] = payments.map((row) => ({
    id: row.id,
    occurredAt: iso(row.occurred_at),
    amountMinor: num(row.amount_minor),
    currency: row.currency,
    customerName: row.customer_name,
  }));
  return { visitors, events, payments: livePayments };
}
