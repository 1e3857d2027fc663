import { type Kysely, type RawBuilder, sql } from 'kysely';
import { engineOf } from '../../../db/engine.ts';
import type { Database } from '../../../db/schema.ts';
import type { MoneyRules } from '../event-store.ts';
import type { Breakdown } from '../../analytics/breakdowns.ts';
import { BREAKDOWN_SPECS } from '../../analytics/breakdown-specs.ts';
import type { PageRequest, StatsScope } from '../stats.params.ts';
import { type KeyedRow, keyNames, keyOf, storedKeyOrder } from './breakdown-keys-sql.ts';
import { paymentScope } from './overview-sql.ts';
import { num, pageTotal } from './scope-sql.ts';
import { convertedMinor, countedCurrency, paidMinor } from './money-sql.ts';

// An all-time breakdown without filters, read from its rollup (breakdown_totals and
// breakdown_visitors, kept by src/modules/analytics/breakdown-rollups.ts): the rows the raw
// read would give, from one row per key, and each key's revenue from one row per payment.
// A breakdown without filters over whole local days of the website that reach its last day with
// data reads the day rollups instead (breakdown_days, breakdown_last_days, kept by
// src/modules/analytics/breakdown-days.ts): one row per key and day.

/** One row per key, sorted as the raw read sorts (visitors, events, then each key value, unknown last). */
export async function rolledUpRows(db: Kysely<Database>, kind: Breakdown, scope: StatsScope, page: PageRequest) {
  const names = keyNames(BREAKDOWN_SPECS[kind]);
  const tieBreak = storedKeyOrder(engineOf(db), sql.ref('t.key'), names);
  const where = sql`t.website_id = ${scope.websiteId} and t.breakdown = ${kind} and t.events > 0`;
  const found = await sql<{ key: string; visitors: unknown; pageviews: unknown; n: unknown; total_rows: unknown }>`
    select t.key, t.visitors, t.pageviews, t.events as n, count(*) over () as total_rows
    from breakdown_totals t where ${where}
    order by t.visitors desc, t.events desc, ${tieBreak}
    limit ${page.limit} offset ${page.offset}`.execute(db);
  const rows = found.rows.map(({ key, ...counts }): KeyedRow => ({ ...keyedByName(names, key), ...counts }));
  const total = await pageTotal(rows, page, async () => {
    const { rows: counted } = await sql<{ n: unknown }>`select count(*) as n from breakdown_totals t where ${where}`.execute(db);
    return counted[0]?.n;
  });
  return { rows, total };
}

/**
 * What each key's visitors paid, all time, from breakdown_revenue (the payments joined to their
 * visitors' keys, kept as a sum: each payment counts once per key, as in the raw read).
 */
export const rolledUpRevenue = (db: Kysely<Database>, kind: Breakdown, scope: StatsScope, money: MoneyRules) =>
  summedRevenue(db, 'breakdown_revenue', kind, scope, money);

/**
 * Each key's revenue from one of the tables of kept sums (breakdown_revenue, or
 * breakdown_profile_revenue with `rows` keeping the matching profiles of `r`), in the website's
 * currency, renewals counted when the money rules count them.
 */
export async function summedRevenue(
  db: Kysely<Database>,
  table: 'breakdown_revenue' | 'breakdown_profile_revenue',
  kind: Breakdown,
  scope: StatsScope,
  money: MoneyRules,
  rows: RawBuilder<unknown> = sql`true`,
): Promise<Map<string, number>> {
  const names = keyNames(BREAKDOWN_SPECS[kind]);
  const renewals = money.includeRenewals ? sql`` : sql`and r.renewal = ${false}`;
  // Kept per currency and provider's converted currency ('' for none): each sum converts as its payments would.
  const converted = { amount: sql.ref('r.converted_minor'), currency: sql.ref('r.converted_currency') };
  const { rows: found } = await sql<{ key: string; minor: unknown }>`
    select r.key, sum(${convertedMinor(money, sql.ref('r.minor'), sql.ref('r.currency'), converted)}) as minor from ${sql.table(table)} r
    where r.website_id = ${scope.websiteId} and r.breakdown = ${kind} and ${countedCurrency(money, sql.ref('r.currency'), converted)} ${renewals} and ${rows}
    group by r.key`.execute(db);
  return new Map(found.map((row) => [keyOf(keyedByName(names, row.key), names), num(row.minor)]));
}

/** A stored key (a JSON array) as `k_<name>` columns. */
export function keyedByName(names: string[], key: string): KeyedRow {
  const values = JSON.parse(key) as (string | null)[];
  return Object.fromEntries(names.map((name, i) => [`k_${name}`, values[i] ?? null]));
}

/** Whether no visitor's last day under a key of `kind` is after `last`: then the day rollups answer ranges ending on `last`. */
export async function daysReach(db: Kysely<Database>, kind: Breakdown, websiteId: string, last: string): Promise<boolean> {
  const { rows } = await sql`select 1 as later from breakdown_last_days
    where website_id = ${websiteId} and breakdown = ${kind} and day > ${last} and visitors <> 0 limit 1`.execute(db);
  return rows.length === 0;
}

/**
 * One row per key over local days first..last, or null when some visitor's last day is after
 * `last` (a range that ends before the data does: the raw read answers it). A key's visitors are
 * those whose last day under it is `first` or later; its pageviews and events, its days' sums.
 */
export async function dayRolledUpRows(db: Kysely<Database>, kind: Breakdown, scope: StatsScope, days: { first: string; last: string }, page: PageRequest) {
  if (!(await daysReach(db, kind, scope.websiteId, days.last))) return null;
  const names = keyNames(BREAKDOWN_SPECS[kind]);
  const tieBreak = storedKeyOrder(engineOf(db), sql.ref('c.key'), names);
  const keyed = sql`with v as (
      select key, sum(visitors) as visitors from breakdown_last_days
      where website_id = ${scope.websiteId} and breakdown = ${kind} and day >= ${days.first} group by key),
    c as (
      select key, sum(pageviews) as pageviews, sum(events) as events from breakdown_days
      where website_id = ${scope.websiteId} and breakdown = ${kind} and day >= ${days.first} and day <= ${days.last} group by key)`;
  return rankedDayRows(db, keyed, names, tieBreak, page);
}

/**
 * The page of keys ranked as every breakdown is (visitors, then events, then the key), from `keyed`:
 * a WITH naming `v` (key, visitors) and `c` (key, pageviews, events), the day rollups' sums.
 */
export async function rankedDayRows(db: Kysely<Database>, keyed: RawBuilder<unknown>, names: string[], tieBreak: RawBuilder<unknown>, page: PageRequest) {
  const found = await sql<{ key: string; visitors: unknown; pageviews: unknown; n: unknown; total_rows: unknown }>`${keyed}
    select c.key, v.visitors, c.pageviews, c.events as n, count(*) over () as total_rows
    from c join v on v.key = c.key where c.events > 0
    order by v.visitors desc, c.events desc, ${tieBreak}
    limit ${page.limit} offset ${page.offset}`.execute(db);
  const rows = found.rows.map(({ key, ...counts }): KeyedRow => ({ ...keyedByName(names, key), ...counts }));
  const total = await pageTotal(rows, page, async () => {
    const { rows: counted } = await sql<{ n: unknown }>`${keyed} select count(*) as n from c join v on v.key = c.key where c.events > 0`.execute(db);
    return counted[0]?.n;
  });
  return { rows, total };
}

/** What each key's visitors paid in the range (as dayRolledUpRows: those whose last day under it is `first` or later). */
export async function dayRolledUpRevenue(db: Kysely<Database>, kind: Breakdown, scope: StatsScope, first: string, money: MoneyRules): Promise<Map<string, number>> {
  const names = keyNames(BREAKDOWN_SPECS[kind]);
  const { rows } = await sql<{ key: string; minor: unknown }>`
    select t.key, sum(${paidMinor(money)}) as minor
    from payments p cross join breakdown_visitors t
    where ${paymentScope(scope, money)} and t.website_id = p.website_id and t.visitor_id = p.visitor_id and t.breakdown = ${kind}
      and t.last_day >= ${first}
    group by t.key`.execute(db);
  return new Map(rows.map((row) => [keyOf(keyedByName(names, row.key), names), num(row.minor)]));
}
