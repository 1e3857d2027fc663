import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { Database } from '../../db/schema.ts';
import { isPostgres } from '../../db/engine.ts';

// The time-series reads. A series asks for many spans (its buckets, plus the whole range for
// the totals) in one statement: the spans travel as one parameter (a JSON array on SQLite, arrays
// on PostgreSQL), and each is joined to an index range of the table it counts. CROSS JOIN keeps
// the spans the outer loop on SQLite (its planner otherwise scans the whole website's rows once
// per span); PostgreSQL plans it as any inner join.

/** One span of a query: `id` -1 is the whole range. Instants are UTC ISO, days YYYY-MM-DD. */
export interface Span {
  id: number;
  from: string;
  to: string;
}

export interface TrafficCounts {
  visitors: number;
  sessions: number;
  pageviews: number;
  converted: number;
}

export interface MoneyCounts {
  minor: number;
  payments: number;
}

export interface DayTotals {
  day: string;
  visitors: number;
  sessions: number;
  pageviews: number;
  converted_visitors: number;
}

function spansTable(db: Kysely<Database>, spans: Span[], kind: 'instant' | 'day'): RawBuilder<unknown> {
  if (isPostgres(db)) {
    const type = sql.raw(kind === 'instant' ? 'timestamptz[]' : 'text[]');
    return sql`select * from unnest(${spans.map((s) => s.id)}::int[], ${spans.map((s) => s.from)}::${type}, ${spans.map((s) => s.to)}::${type})`;
  }
  const json = JSON.stringify(spans.map((s) => [s.id, s.from, s.to]));
  return sql`select json_extract(value, '$[0]'), json_extract(value, '$[1]'), json_extract(value, '$[2]') from json_each(${json})`;
}

function byId<T extends { i: number | string }>(rows: T[]): Map<number, T> {
  return new Map(rows.map((row) => [Number(row.i), row]));
}

/**
 * Traffic from the raw events, per span [from, to): distinct visitors, distinct sessions,
 * pageviews and distinct visitors with a goal.
 */
export async function eventTraffic(db: Kysely<Database>, websiteId: string, spans: Span[]): Promise<Map<number, TrafficCounts>> {
  const { rows } = await sql<TrafficCounts & { i: number }>`
    with b(i, s, e) as (${spansTable(db, spans, 'instant')})
    select b.i as i,
      count(distinct ev.visitor_id) as visitors,
      count(distinct ev.session_id) as sessions,
      sum(case when ev.type = 'pageview' then 1 else 0 end) as pageviews,
      count(distinct case when ev.type = 'custom' and ev.name is not null then ev.visitor_id end) as converted
    from b cross join events ev
    where ev.website_id = ${websiteId} and ev.occurred_at >= b.s and ev.occurred_at < b.e
    group by b.i`.execute(db);
  return byId(rows.map((row) => ({ ...row, ...numbers(row, ['visitors', 'sessions', 'pageviews', 'converted']) })));
}

/** The daily_totals rows of [firstDay, lastDay]. */
export async function dailyTotals(db: Kysely<Database>, websiteId: string, firstDay: string, lastDay: string): Promise<DayTotals[]> {
  return db
    .selectFrom('daily_totals')
    .select(['day', 'visitors', 'sessions', 'pageviews', 'converted_visitors'])
    .where('website_id', '=', websiteId)
    .where('day', '>=', firstDay)
    .where('day', '<=', lastDay)
    .execute();
}

/**
 * Distinct visitors and distinct converted visitors per span of days [from, to], both included:
 * the visitor-day rows in the span whose previous (converting) day lies before it.
 */
export async function distinctVisitors(
  db: Kysely<Database>,
  websiteId: string,
  spans: Span[],
): Promise<Map<number, { visitors: number; converted: number }>> {
  const { rows } = await sql<{ i: number; visitors: number; converted: number }>`
    with b(i, s, e) as (${spansTable(db, spans, 'day')})
    select b.i as i, sum(r.visitors) as visitors, sum(r.converted) as converted
    from b cross join visitor_recency r
    where r.website_id = ${websiteId} and r.day >= b.s and r.day <= b.e and r.prev_day < b.s
    group by b.i`.execute(db);
  return byId(rows.map((row) => ({ ...row, ...numbers(row, ['visitors', 'converted']) })));
}

export interface PaymentRules {
  currency: string;
  includeRenewals: boolean;
}

/** Payments per span [from, to): not refunded, in the currency, renewals only when included. */
export async function paymentTotals(
  db: Kysely<Database>,
  websiteId: string,
  spans: Span[],
  rules: PaymentRules,
): Promise<Map<number, MoneyCounts>> {
  const renewals = rules.includeRenewals ? sql`` : sql`and p.renewal = ${false}`;
  const { rows } = await sql<{ i: number; minor: number; payments: number }>`
    with b(i, s, e) as (${spansTable(db, spans, 'instant')})
    select b.i as i, sum(p.amount_minor) as minor, count(*) as payments
    from b cross join payments p
    where p.website_id = ${websiteId} and p.occurred_at >= b.s and p.occurred_at < b.e and p.currency = ${rules.currency} and p.refunded = ${false} ${renewals}
    group by b.i`.execute(db);
  return byId(rows.map((row) => ({ ...row, ...numbers(row, ['minor', 'payments']) })));
}

/** Aggregates come back as bigint text on some drivers and as null over no rows. */
function numbers<K extends string>(row: Record<K, unknown>, keys: K[]): Record<K, number> {
  const out = {} as Record<K, number>;
  for (const key of keys) out[key] = Number(row[key] ?? 0);
  return out;
}

export async function findWebsiteSettings(db: Kysely<Database>, websiteId: string) {
  return db
    .selectFrom('websites')
    .select(['timezone', 'currency', 'include_renewal_revenue'])
    .where('id', '=', websiteId)
    .executeTakeFirst();
}
