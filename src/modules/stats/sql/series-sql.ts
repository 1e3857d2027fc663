import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { Database } from '../../../db/schema.ts';
import { isPostgres } from '../../../db/engine.ts';
import { countedPayment, paidMinor } from './money-sql.ts';
import type { MoneyRules } from '../event-store.ts';

// The time series' reads, behind the SQL event store's span methods. A series asks for many spans
// (its buckets, plus the whole range for the totals) in one statement: the spans travel as one parameter (a JSON array on SQLite, arrays
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
  /** Revenue by kind, in minor units of the currency: first payments, renewals, refunded amounts. */
  newMinor: number;
  renewalMinor: number;
  refundMinor: number;
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
export async function eventTraffic(
  db: Kysely<Database>,
  websiteId: string,
  spans: Span[],
  /** Filters over `e` (the website API's), or none. */
  filtered: RawBuilder<unknown> = sql`1 = 1`,
): Promise<Map<number, TrafficCounts>> {
  const { rows } = await sql<TrafficCounts & { i: number }>`
    with b(i, s, t) as (${spansTable(db, spans, 'instant')})
    select b.i as i,
      count(distinct e.visitor_id) as visitors,
      count(distinct e.session_id) as sessions,
      sum(case when e.type = 'pageview' then 1 else 0 end) as pageviews,
      count(distinct case when e.type = 'custom' and e.name is not null then e.visitor_id end) as converted
    from b cross join events e
    where e.website_id = ${websiteId} and e.occurred_at >= b.s and e.occurred_at < b.t and ${filtered}
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

export type PaymentRules = MoneyRules;

/**
 * Payments per span [from, to) in the currency: revenue and count not refunded (renewals only
 * when included), and the revenue by kind. `visitors`, when given, keeps the payments of the
 * visitors it selects (a filtered series).
 */
export async function paymentTotals(
  db: Kysely<Database>,
  websiteId: string,
  spans: Span[],
  rules: PaymentRules,
  visitors: RawBuilder<unknown> | null = null,
): Promise<Map<number, MoneyCounts>> {
  const counted = rules.includeRenewals ? sql`p.refunded = ${false}` : sql`p.refunded = ${false} and p.renewal = ${false}`;
  const ofVisitors = visitors ? sql`and p.visitor_id in (${visitors})` : sql``;
  const paid = paidMinor(rules);
  type Row = Record<'minor' | 'payments' | 'new_minor' | 'renewal_minor' | 'refund_minor', unknown> & { i: number };
  const { rows } = await sql<Row>`
    with b(i, s, e) as (${spansTable(db, spans, 'instant')})
    select b.i as i,
      sum(case when ${counted} then ${paid} else 0 end) as minor,
      sum(case when ${counted} then 1 else 0 end) as payments,
      sum(case when p.refunded = ${false} and p.renewal = ${false} then ${paid} else 0 end) as new_minor,
      sum(case when p.refunded = ${false} and p.renewal = ${true} then ${paid} else 0 end) as renewal_minor,
      sum(case when p.refunded = ${true} then ${paid} else 0 end) as refund_minor
    from b cross join payments p
    where p.website_id = ${websiteId} and p.occurred_at >= b.s and p.occurred_at < b.e and ${countedPayment(rules)} ${ofVisitors}
    group by b.i`.execute(db);
  return byId(
    rows.map((row) => {
      const n = numbers(row, ['minor', 'payments', 'new_minor', 'renewal_minor', 'refund_minor']);
      return { i: row.i, minor: n.minor, payments: n.payments, newMinor: n.new_minor, renewalMinor: n.renewal_minor, refundMinor: n.refund_minor };
    }),
  );
}

/** Aggregates come back as bigint text on some drivers and as null over no rows. */
function numbers<K extends string>(row: Record<K, unknown>, keys: K[]): Record<K, number> {
  const out = {} as Record<K, number>;
  for (const key of keys) out[key] = Number(row[key] ?? 0);
  return out;
}
