import { type Kysely, sql } from 'kysely';
import type { Database } from '../../../db/schema.ts';
import type { LiveEvent, LivePayment } from '../event-store.ts';
import { num } from './scope-sql.ts';
import { type EventRow, liveVisitor } from '../visitor-shapes.ts';
import { iso, latestEvents, sessionCounts } from './visitor-rows.ts';

// Realtime: who has had an event since a moment, and what happened.

const RECENT_EVENTS = 50;
const MAP_VISITORS = 500;

export async function liveVisitors(db: Kysely<Database>, websiteId: string, since: string): Promise<number> {
  const { rows } = await sql<{ n: unknown }>`
    select count(distinct e.visitor_id) as n from events e where e.website_id = ${websiteId} and e.occurred_at >= ${since}`.execute(db);
  return num(rows[0]?.n);
}

export async function liveMap(db: Kysely<Database>, websiteId: string, since: string) {
  const [active, recent, payments] = await Promise.all([
    sql<{ visitor_id: string }>`
      select e.visitor_id from events e where e.website_id = ${websiteId} and e.occurred_at >= ${since}
      group by e.visitor_id order by max(e.occurred_at) desc limit ${MAP_VISITORS}`.execute(db),
    db
      .selectFrom('events')
      .selectAll()
      .where('website_id', '=', websiteId)
      .where('occurred_at', '>=', since)
      .orderBy('occurred_at', 'desc')
      .orderBy('id', 'desc')
      .limit(RECENT_EVENTS)
      .execute(),
    db
      .selectFrom('payments')
      .select(['id', 'occurred_at', 'amount_minor', 'currency', 'customer_name', 'visitor_id'])
      .where('website_id', '=', websiteId)
      .where('occurred_at', '>=', since)
      .orderBy('occurred_at', 'desc')
      .limit(RECENT_EVENTS)
      .execute(),
  ]);
  const ids = active.rows.map((row) => row.visitor_id);
  const [latest, visits, customers] = await Promise.all([latestEvents(db, websiteId, ids), sessionCounts(db, websiteId, ids), customerNames(db, websiteId, ids)]);
  const visitors = ids.map((visitorId) => liveVisitor(visitorId, latest.get(visitorId), visits.get(visitorId) ?? 0, customers.get(visitorId)));
  const events: LiveEvent[] = recent.map((row: EventRow) => ({
    id: row.id,
    type: row.type,
    name: row.name,
    visitorId: row.visitor_id,
    occurredAt: iso(row.occurred_at),
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

/** Visitors who paid, with the name they paid or identified under (null when none is known). */
export async function customerNames(db: Kysely<Database>, websiteId: string, visitorIds: string[]): Promise<Map<string, string | null>> {
  if (visitorIds.length === 0) return new Map();
  const [paid, profiles] = await Promise.all([
    db
      .selectFrom('payments')
      .select(['visitor_id', 'customer_name'])
      .where('website_id', '=', websiteId)
      .where('visitor_id', 'in', visitorIds)
      .orderBy('occurred_at', 'desc')
      .execute(),
    db.selectFrom('visitor_profiles').select(['visitor_id', 'name']).where('website_id', '=', websiteId).where('visitor_id', 'in', visitorIds).execute(),
  ]);
  const names = new Map(profiles.map((row) => [row.visitor_id, row.name]));
  const out = new Map<string, string | null>();
  for (const row of paid) {
    if (row.visitor_id && !out.has(row.visitor_id)) out.set(row.visitor_id, row.customer_name ?? names.get(row.visitor_id) ?? null);
  }
  return out;
}
