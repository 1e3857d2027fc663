import { type Kysely, sql } from 'kysely';
import { engineOf } from '../../../db/engine.ts';
import type { Database } from '../../../db/schema.ts';
import type { Breakdown, MoneyRules } from '../event-store.ts';
import { BREAKDOWN_SPECS } from '../breakdown-specs.ts';
import type { PageRequest, StatsScope } from '../stats.params.ts';
import { type KeyedRow, keyNames, keyOf, storedKeyOrder } from './breakdown-keys-sql.ts';
import { paymentScope } from './overview-sql.ts';
import { num, pageTotal } from './scope-sql.ts';

// An all-time breakdown without filters, read from its rollup (breakdown_totals and
// breakdown_visitors, kept by src/modules/analytics/breakdown-rollups.ts): the rows the raw
// read would give, from one row per key, and each key's revenue from one row per payment.

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
 * What each key's visitors paid, all time: the payments joined to their visitors' keys (a visitor
 * has one row per key, so each payment counts once per key, as in the raw read).
 */
export async function rolledUpRevenue(db: Kysely<Database>, kind: Breakdown, scope: StatsScope, money: MoneyRules): Promise<Map<string, number>> {
  const names = keyNames(BREAKDOWN_SPECS[kind]);
  const { rows } = await sql<{ key: string; minor: unknown }>`
    select t.key, sum(p.amount_minor) as minor
    from payments p cross join breakdown_visitors t
    where ${paymentScope(scope, money)} and t.website_id = p.website_id and t.visitor_id = p.visitor_id and t.breakdown = ${kind}
    group by t.key`.execute(db);
  return new Map(rows.map((row) => [keyOf(keyedByName(names, row.key), names), num(row.minor)]));
}

/** A stored key (a JSON array) as `k_<name>` columns. */
export function keyedByName(names: string[], key: string): KeyedRow {
  const values = JSON.parse(key) as (string | null)[];
  return Object.fromEntries(names.map((name, i) => [`k_${name}`, values[i] ?? null]));
}
