import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { Database } from '../../db/schema.ts';
import type { Breakdown } from '../stats/event-store.ts';

// breakdown_revenue: per breakdown key, currency and renewal flag, what the visitors with a row
// under the key (breakdown_visitors) paid, refunds left out. An all-time breakdown's revenue is
// then one row per key instead of every payment of the website joined to its visitor's rows
// (20-40 ms at a million events, 33 k payments and 0.1-0.2 s at ten million). It is the join
// kept as a sum, so it moves with both of its sides, in the transactions that move them:
// - a visitor's row that appears brings what the visitor paid (addKeyed), one that goes takes it
//   away (subtractKeyed, a goal delete's repair); a rebuild derives a website's rows again;
// - a payment recorded brings its amount to every row of its visitor; refunded or deleted, it
//   takes it away. Payment writes take the website's row lock, as ingestion does, so on
//   PostgreSQL a payment and its visitor's new rows cannot miss each other.
// A row whose sum falls to zero stays (a few per key and currency): the read sums them.

/** `breakdown in (...)` (literals from code; breakdown-rollup-tables.ts calls this module, so it is not imported from there). */
const breakdownOf = (kinds: readonly Breakdown[]) => sql`breakdown in (${sql.join(kinds.map((kind) => sql.lit(kind)))})`;

/** Adds to a row's sum when it has one. */
const ADD_TO_REVENUE = sql`on conflict (website_id, breakdown, key, currency, renewal) do update set minor = breakdown_revenue.minor + excluded.minor`;

/** `p` joins the payments that count (not refunded) of the visitor of a row aliased `v`. */
const PAID = sql`payments p on p.website_id = v.website_id and p.visitor_id = v.visitor_id and p.refunded = ${false}`;

/**
 * Before addKeyed inserts `keyed` (a `with ... keyed as (...)` of website, visitor, breakdown and
 * key): the rows it will create bring what their visitors paid.
 */
export async function addRevenueOfNewRows(db: Kysely<Database>, keyed: RawBuilder<unknown>): Promise<void> {
  await sql`${keyed}
    insert into breakdown_revenue (website_id, breakdown, key, currency, renewal, minor)
    select v.website_id, v.breakdown, v.key, p.currency, p.renewal, sum(p.amount_minor)
    from keyed v join ${PAID}
    where not exists (select 1 from breakdown_visitors b where b.website_id = v.website_id
      and b.visitor_id = v.visitor_id and b.breakdown = v.breakdown and b.key = v.key)
    group by v.website_id, v.breakdown, v.key, p.currency, p.renewal
    ${ADD_TO_REVENUE}`.execute(db);
}

/**
 * Before rows of breakdown_visitors are deleted: they take what their visitors paid away.
 * `rows` is a condition over the table's own columns, unqualified, which may read the CTEs of `ctes`.
 */
export async function subtractRevenueOfRows(db: Kysely<Database>, rows: RawBuilder<unknown>, ctes: RawBuilder<unknown> = sql``): Promise<void> {
  await sql`${ctes}
    insert into breakdown_revenue (website_id, breakdown, key, currency, renewal, minor)
    select v.website_id, v.breakdown, v.key, p.currency, p.renewal, -sum(p.amount_minor)
    from (select website_id, visitor_id, breakdown, key from breakdown_visitors where ${rows}) v join ${PAID}
    where true group by v.website_id, v.breakdown, v.key, p.currency, p.renewal
    ${ADD_TO_REVENUE}`.execute(db);
}

/**
 * Payments that start to count (sign 1: recorded, after the insert) or stop (sign -1: before a
 * refund or a delete) move their amounts on every row of their visitors. `payments` is a
 * condition over the payments aliased `p`; refunded ones never count.
 */
export async function movePaymentRevenue(db: Kysely<Database>, payments: RawBuilder<unknown>, sign: 1 | -1): Promise<void> {
  await sql`insert into breakdown_revenue (website_id, breakdown, key, currency, renewal, minor)
    select v.website_id, v.breakdown, v.key, p.currency, p.renewal, ${sql.lit(sign)} * sum(p.amount_minor)
    from breakdown_visitors v join ${PAID}
    where ${payments} group by v.website_id, v.breakdown, v.key, p.currency, p.renewal
    ${ADD_TO_REVENUE}`.execute(db);
}

/** Replaces a website's rows of these breakdowns with ones derived from breakdown_visitors and the payments (the rebuilds). */
export async function rebuildBreakdownRevenue(db: Kysely<Database>, websiteId: string, kinds: readonly Breakdown[]): Promise<void> {
  await sql`delete from breakdown_revenue where website_id = ${websiteId} and ${breakdownOf(kinds)}`.execute(db);
  await sql`insert into breakdown_revenue (website_id, breakdown, key, currency, renewal, minor)
    select v.website_id, v.breakdown, v.key, p.currency, p.renewal, sum(p.amount_minor)
    from breakdown_visitors v join ${PAID}
    where v.website_id = ${websiteId} and ${breakdownOf(kinds)}
    group by v.website_id, v.breakdown, v.key, p.currency, p.renewal`.execute(db);
}
