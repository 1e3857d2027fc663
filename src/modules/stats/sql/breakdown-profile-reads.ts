import { type Kysely, type RawBuilder, sql } from 'kysely';
import { engineOf } from '../../../db/engine.ts';
import type { Database } from '../../../db/schema.ts';
import type { MoneyRules } from '../event-store.ts';
import type { Breakdown } from '../../analytics/breakdowns.ts';
import { BREAKDOWN_SPECS } from '../../analytics/breakdown-specs.ts';
import type { PageRequest, StatsScope } from '../stats.params.ts';
import { type KeyedRow, keyNames, storedKeyOrder } from './breakdown-keys-sql.ts';
import { keyJson } from '../../analytics/breakdown-keys.ts';
import { keyedByName, summedRevenue } from './breakdown-rollup-reads.ts';
import { pageTotal } from './scope-sql.ts';
import { profileFilters } from './steady-split-sql.ts';

// An all-time breakdown filtered on visitor attributes alone
// (src/modules/analytics/visitor-attributes.ts), read in two parts that count disjoint visitors:
// the visitors whose attributes never varied, from the sums of the matching profiles in
// breakdown_profiles (kept by src/modules/analytics/breakdown-profiles.ts), and the few whose
// attributes varied, from their raw events or sessions in scope. A steady visitor's events all
// carry the profile's values, so the filter keeps all of them or none, and their rows under a key
// are theirs in the filtered breakdown too. The raw read (breakdowns-sql.ts) gives the same rows,
// much slower.

/**
 * `with matched as (...)`: per key (as stored), the visitors, pageviews and rows of both parts.
 * `variedWhere` keeps the varied visitors' events (`e`) or sessions (`s`) in scope, as the raw
 * read does.
 */
function matchedRows(db: Kysely<Database>, kind: Breakdown, scope: StatsScope, variedWhere: RawBuilder<unknown>): RawBuilder<unknown> {
  const engine = engineOf(db);
  const spec = BREAKDOWN_SPECS[kind];
  const alias = spec.from === 'events' ? 'e' : 's';
  const table = sql.raw(spec.from === 'events' ? 'events e' : 'sessions s');
  const pageviews = sql.raw(spec.from === 'events' ? "sum(case when e.type = 'pageview' then 1 else 0 end)" : 'sum(s.pageviews)');
  const key = keyJson(engine, kind, alias);
  const profiled = profileFilters(engine, scope, sql.ref('p.profile'));
  return sql`with matched as (
      select p.key, sum(p.visitors) as visitors, sum(p.pageviews) as pageviews, sum(p.events) as n
      from breakdown_profiles p
      where p.website_id = ${scope.websiteId} and p.breakdown = ${kind} and ${profiled}
      group by p.key
      union all
      select ${key} as key, count(distinct ${sql.ref(`${alias}.visitor_id`)}) as visitors, ${pageviews} as pageviews, count(*) as n
      from ${table}
      where ${variedWhere}
      group by ${key})`;
}

/** One row per key, sorted as the raw read sorts (visitors, rows, then each key value, unknown last). */
export async function profiledRows(db: Kysely<Database>, kind: Breakdown, scope: StatsScope, page: PageRequest, variedWhere: RawBuilder<unknown>) {
  const names = keyNames(BREAKDOWN_SPECS[kind]);
  const tieBreak = storedKeyOrder(engineOf(db), sql.ref('m.key'), names);
  const matched = matchedRows(db, kind, scope, variedWhere);
  const found = await sql<{ key: string; visitors: unknown; pageviews: unknown; n: unknown; total_rows: unknown }>`${matched}
    select m.key, sum(m.visitors) as visitors, sum(m.pageviews) as pageviews, sum(m.n) as n, count(*) over () as total_rows
    from matched m group by m.key
    order by sum(m.visitors) desc, sum(m.n) desc, ${tieBreak}
    limit ${page.limit} offset ${page.offset}`.execute(db);
  const rows = found.rows.map(({ key, ...counts }): KeyedRow => ({ ...keyedByName(names, key), ...counts }));
  const total = await pageTotal(rows, page, async () => {
    const { rows: counted } = await sql<{ n: unknown }>`${matched} select count(distinct m.key) as n from matched m`.execute(db);
    return counted[0]?.n;
  });
  return { rows, total };
}

/**
 * What each key's steady matching visitors paid, all time: the matching profiles' sums in
 * breakdown_profile_revenue (their payments joined to their rows of breakdown_visitors, kept as a
 * sum: each payment counts once per key). The varied visitors' payments are the raw read's,
 * restricted to them.
 */
export const profiledRevenue = (db: Kysely<Database>, kind: Breakdown, scope: StatsScope, money: MoneyRules) =>
  summedRevenue(db, 'breakdown_profile_revenue', kind, scope, money, profileFilters(engineOf(db), scope, sql.ref('r.profile')));
