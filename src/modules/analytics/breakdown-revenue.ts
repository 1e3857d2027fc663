import { type Kysely, type RawBuilder, sql } from 'kysely';
import { engineOf } from '../../db/engine.ts';
import { sqlList } from '../../db/prepared.ts';
import type { Database } from '../../db/schema.ts';
import type { Breakdown } from './breakdowns.ts';
import { jsonArray } from './breakdown-keys.ts';
import { VISITOR_ATTRIBUTES } from './visitor-attributes.ts';

// breakdown_revenue: per breakdown key, currency, provider's converted currency and renewal flag, what the visitors with a row
// under the key (breakdown_visitors) paid, refunds left out. An all-time breakdown's revenue is
// then one row per key instead of every payment of the website joined to its visitor's rows
// (30-40 ms on SQLite at a million events and 3.3 k payments, growing with the payments). It is the join
// kept as a sum, so it moves with both of its sides, in the transactions that move them:
// - a visitor's row that appears brings what the visitor paid (addKeyed), one that goes takes it
//   away (subtractKeyed, a goal delete's repair); a rebuild derives a website's rows again;
// - a payment counted brings its amount to every row of its visitor; uncounted (refunded, deleted)
//   it takes it away. The sums read a payment as its `counted` says (payment-counts.ts: not at
//   all, without or with its provider's conversion), which only the fold and writers holding the
//   website's derived-data lock change, so a payment and its visitor's new rows cannot miss each
//   other nor count twice, although payments are written without that lock.
// breakdown_profile_revenue holds the same sums per key and visitor profile, for the visitors
// whose attributes never varied (the revenue of breakdown_profiles, breakdown-profiles.ts, whose
// writers call the ones here as they move their own rows), so a breakdown filtered on visitor
// attributes reads its steady visitors' revenue from the matching profiles too.
// A row whose sum falls to zero stays (a few per key and currency): the read sums them.

/** Adds to a row's sum when it has one. */
const ADD_TO_REVENUE = sql`on conflict (website_id, breakdown, key, currency, converted_currency, renewal)
  do update set minor = breakdown_revenue.minor + excluded.minor, converted_minor = breakdown_revenue.converted_minor + excluded.converted_minor`;

/**
 * The provider's converted currency a sum is kept under ('' for payments without one) and the
 * converted sum (migration 0028): a read converts each kept sum as it would its payments. A
 * payment counted without its conversion (`counted` 1: recorded before it, not yet folded since)
 * is kept as one without.
 */
const CONVERTED_CURRENCY = sql`coalesce(case when p.counted = 2 then p.converted_currency end, '')`;
const convertedSum = (sign: 1 | -1) => sql`${sql.lit(sign)} * sum(case when p.counted = 2 then coalesce(p.converted_minor, 0) else 0 end)`;
/** The payments the sums hold (payment-counts.ts). */
const COUNTED = sql`p.counted > 0`;

/**
 * Adds (sign 1) or takes away (sign -1) what the visitors of `rows` paid, per key: `rows` is a
 * table or subquery of website, visitor, breakdown and key (aliased `v`, after the CTEs of
 * `ctes`), joined to their visitors' payments that count (`p`, counted: payment-counts.ts) and kept by `where`.
 */
async function movePaid(db: Kysely<Database>, rows: RawBuilder<unknown>, where: RawBuilder<unknown>, sign: 1 | -1, ctes: RawBuilder<unknown> = sql``): Promise<void> {
  await sql`${ctes}
    insert into breakdown_revenue (website_id, breakdown, key, currency, converted_currency, renewal, minor, converted_minor)
    select v.website_id, v.breakdown, v.key, p.currency, ${CONVERTED_CURRENCY}, p.renewal, ${sql.lit(sign)} * sum(p.amount_minor), ${convertedSum(sign)}
    from ${rows} v join payments p on p.website_id = v.website_id and p.visitor_id = v.visitor_id and ${COUNTED}
    where ${where} group by v.website_id, v.breakdown, v.key, p.currency, ${CONVERTED_CURRENCY}, p.renewal
    ${ADD_TO_REVENUE}`.execute(db);
}

/**
 * Before addKeyed inserts `keyed` (a `with ... keyed as (...)` of website, visitor, breakdown and
 * key): the rows it will create bring what their visitors paid.
 */
export async function addRevenueOfNewRows(db: Kysely<Database>, keyed: RawBuilder<unknown>): Promise<void> {
  const isNew = sql`not exists (select 1 from breakdown_visitors b where b.website_id = v.website_id
    and b.visitor_id = v.visitor_id and b.breakdown = v.breakdown and b.key = v.key)`;
  await movePaid(db, sql`keyed`, isNew, 1, keyed);
}

/**
 * Before rows of breakdown_visitors are deleted: they take what their visitors paid away.
 * `rows` is a condition over the table's own columns, unqualified, which may read the CTEs of `ctes`.
 */
export async function subtractRevenueOfRows(db: Kysely<Database>, rows: RawBuilder<unknown>, ctes: RawBuilder<unknown> = sql``): Promise<void> {
  await movePaid(db, sql`(select website_id, visitor_id, breakdown, key from breakdown_visitors where ${rows})`, sql`true`, -1, ctes);
}

/**
 * Payments that start to count (sign 1: after their `counted` is set) or stop (sign -1: before it
 * changes, or before a delete) move their amounts on every row of their visitors, and on their
 * profiles'. `payments` is a condition over the payments aliased `p`; those held at `counted` 0
 * move nothing.
 */
export async function movePaymentRevenue(db: Kysely<Database>, payments: RawBuilder<unknown>, sign: 1 | -1): Promise<void> {
  await movePaid(db, sql`breakdown_visitors`, payments, sign);
  await moveProfilePaid(db, sql`breakdown_visitors`, payments, sign);
}

/**
 * As movePaid, into breakdown_profile_revenue per key and profile, for the visitors of `rows`
 * (aliased `b`) that are steady (their visitor_totals row `v`, profile spelled as
 * breakdown-profiles.ts spells it).
 */
async function moveProfilePaid(db: Kysely<Database>, rows: RawBuilder<unknown>, where: RawBuilder<unknown>, sign: 1 | -1, ctes: RawBuilder<unknown> = sql``): Promise<void> {
  const profile = jsonArray(engineOf(db), VISITOR_ATTRIBUTES.map((a) => sql.ref(`v.${a}`)));
  const attributes = sql.join(VISITOR_ATTRIBUTES.map((a) => sql.ref(`v.${a}`)));
  await sql`${ctes}
    insert into breakdown_profile_revenue (website_id, breakdown, key, profile, currency, converted_currency, renewal, minor, converted_minor)
    select b.website_id, b.breakdown, b.key, ${profile}, p.currency, ${CONVERTED_CURRENCY}, p.renewal, ${sql.lit(sign)} * sum(p.amount_minor), ${convertedSum(sign)}
    from ${rows} b join visitor_totals v on v.website_id = b.website_id and v.visitor_id = b.visitor_id
      join payments p on p.website_id = b.website_id and p.visitor_id = b.visitor_id and ${COUNTED}
    where v.varied = 0 and ${where}
    group by b.website_id, b.breakdown, b.key, ${attributes}, p.currency, ${CONVERTED_CURRENCY}, p.renewal
    on conflict (website_id, breakdown, key, profile, currency, converted_currency, renewal)
    do update set minor = breakdown_profile_revenue.minor + excluded.minor, converted_minor = breakdown_profile_revenue.converted_minor + excluded.converted_minor`.execute(db);
}

/** Mirrors addRevenueOfNewRows for addKeyedToProfiles: the new rows of steady visitors bring what they paid to their profiles. */
export async function addProfileRevenueOfNewRows(db: Kysely<Database>, keyed: RawBuilder<unknown>): Promise<void> {
  const isNew = sql`not exists (select 1 from breakdown_visitors x where x.website_id = b.website_id
    and x.visitor_id = b.visitor_id and x.breakdown = b.breakdown and x.key = b.key)`;
  await moveProfilePaid(db, sql`keyed`, isNew, 1, keyed);
}

/**
 * For subtractKeyedFromProfiles, before breakdown_visitors is updated: the rows of steady
 * visitors that `keyed` empties (their every event under the key) take what they paid away.
 */
export async function subtractProfileRevenueOfEmptiedRows(db: Kysely<Database>, keyed: RawBuilder<unknown>): Promise<void> {
  const emptied = sql`(select g.website_id, g.visitor_id, g.breakdown, g.key from keyed g join breakdown_visitors x
    on x.website_id = g.website_id and x.visitor_id = g.visitor_id and x.breakdown = g.breakdown and x.key = g.key where x.events <= g.events)`;
  await moveProfilePaid(db, emptied, sql`true`, -1, keyed);
}

/** For the profiles' moves of whole visitors (leave, join): every row of these steady visitors moves what they paid. */
export async function moveProfileRevenueOfVisitors(db: Kysely<Database>, websiteId: string, visitorIds: string[], sign: 1 | -1): Promise<void> {
  await moveProfilePaid(db, sql`breakdown_visitors`, sql`b.website_id = ${websiteId} and b.visitor_id in (${sqlList(visitorIds)})`, sign);
}

/** Replaces a website's profile revenue of these breakdowns with one derived from breakdown_visitors, visitor_totals and the payments. */
export async function rebuildProfileRevenue(db: Kysely<Database>, websiteId: string, kinds: readonly Breakdown[]): Promise<void> {
  const breakdowns = sql.join(kinds.map((kind) => sql.lit(kind)));
  await sql`delete from breakdown_profile_revenue where website_id = ${websiteId} and breakdown in (${breakdowns})`.execute(db);
  await moveProfilePaid(db, sql`breakdown_visitors`, sql`b.website_id = ${websiteId} and b.breakdown in (${breakdowns})`, 1);
}

/** Replaces a website's rows of these breakdowns with ones derived from breakdown_visitors and the payments (the rebuilds). */
export async function rebuildBreakdownRevenue(db: Kysely<Database>, websiteId: string, kinds: readonly Breakdown[]): Promise<void> {
  const breakdowns = sql.join(kinds.map((kind) => sql.lit(kind)));
  await sql`delete from breakdown_revenue where website_id = ${websiteId} and breakdown in (${breakdowns})`.execute(db);
  await movePaid(db, sql`breakdown_visitors`, sql`v.website_id = ${websiteId} and v.breakdown in (${breakdowns})`, 1);
}
