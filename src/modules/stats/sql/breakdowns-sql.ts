import { type Kysely, type RawBuilder, sql } from 'kysely';
import { isPostgres } from '../../../db/engine.ts';
import type { Database } from '../../../db/schema.ts';
import type { BreakdownRow, MoneyRules, RowsPage } from '../event-store.ts';
import type { Breakdown } from '../../analytics/breakdowns.ts';
import { type BreakdownSpec, BREAKDOWN_SPECS } from '../../analytics/breakdown-specs.ts';
import { type KeyedRow, keyNames, keyOf } from './breakdown-keys-sql.ts';
import { EVENT_KIND_CONDITION } from '../../analytics/breakdown-keys.ts';
import { profiledRevenue, profiledRows } from './breakdown-profile-reads.ts';
import { profileDayRows, steadyProfileDayRevenue } from './breakdown-profile-day-reads.ts';
import { dayRolledUpRevenue, dayRolledUpRows, rolledUpRevenue, rolledUpRows } from './breakdown-rollup-reads.ts';
import type { PageRequest, StatsScope } from '../stats.params.ts';
import { answerRead, shapeOf } from '../read-planner.ts';
import { paymentScope, sessionScope } from './overview-sql.ts';
import { num, pageTotal, scopeCondition } from './scope-sql.ts';
import { variedVisitors } from './steady-split-sql.ts';
import { paidMinor } from './money-sql.ts';

// Breakdowns: rows of distinct visitors per key, sorted by visitors. Event breakdowns group the
// events in scope; session breakdowns (entry and exit pages, referrers, campaigns) group the
// sessions in scope, since where a session came from is its first event's. Each row's revenue
// is what its visitors paid in the range, each payment counted once per row. All time, every
// breakdown reads its rollup instead: without filters the whole (breakdown-rollup-reads.ts), with
// filters on visitor attributes alone the matching profiles (breakdown-profile-reads.ts). Over
// whole days of the website up to its latest data, a breakdown without filters reads its day
// rollups (breakdown-rollup-reads.ts), and an event breakdown filtered on visitor attributes alone its
// day rollups by profile (breakdown-profile-day-reads.ts).


const alias = (spec: BreakdownSpec) => (spec.from === 'events' ? 'e' : 's');
const keyColumns = (spec: BreakdownSpec) => keyNames(spec).map((name) => sql.ref(`${alias(spec)}.${spec.keys[name]}`));

/** The events or sessions in scope; with `visitors` (a subquery of visitor ids), theirs alone. */
function whereOf(spec: BreakdownSpec, scope: StatsScope, byVisitor = false, visitors?: RawBuilder<unknown>): RawBuilder<unknown> {
  if (spec.from === 'sessions') return sessionScope(scope, { byVisitor, visitors });
  const parts = [scopeCondition(scope, { byVisitor })];
  if (spec.only) parts.push(EVENT_KIND_CONDITION[spec.only]);
  if (visitors) parts.push(sql`e.visitor_id in (${visitors})`);
  return sql.join(parts, sql` and `);
}

export async function breakdown(
  db: Kysely<Database>,
  kind: Breakdown,
  scope: StatsScope,
  page: PageRequest,
  money: MoneyRules,
): Promise<RowsPage<BreakdownRow>> {
  const spec = BREAKDOWN_SPECS[kind];
  const names = keyNames(spec);
  const { rows, total, revenue } = await keyedRows(db, kind, scope, page, money);
  return {
    rows: rows.map((row) => ({
      keys: Object.fromEntries(names.map((name) => [name, (row[`k_${name}`] as string | null) ?? null])),
      visitors: num(row.visitors),
      pageviews: num(row.pageviews),
      count: spec.counts ? num(row.n) : 0,
      revenueMinor: revenue.get(keyOf(row, names)) ?? 0,
    })),
    total,
  };
}

/**
 * The page of rows and each row's revenue, from the source the planner (../read-planner.ts) picks:
 * all time, the whole rollup without filters, or by visitor profile for filters on visitor
 * attributes alone (the varied visitors' share read raw); over whole days up to the latest data,
 * the day rollups; anything else the raw events or sessions.
 */
async function keyedRows(db: Kysely<Database>, kind: Breakdown, scope: StatsScope, page: PageRequest, money: MoneyRules) {
  const spec = BREAKDOWN_SPECS[kind];
  const noRevenue = new Map<string, number>();
  return answerRead('breakdown', shapeOf(scope), scope.derivedState ?? 'ready', {
    breakdown_totals: async () => {
      const { rows, total } = await rolledUpRows(db, kind, scope, page);
      return { rows, total, revenue: rows.length > 0 ? await rolledUpRevenue(db, kind, scope, money) : noRevenue };
    },
    breakdown_days: async () => {
      const days = scope.wholeDays;
      if (!days || days === 'all') return undefined;
      const found = await dayRolledUpRows(db, kind, scope, days, page);
      if (!found) return undefined;
      return { ...found, revenue: found.rows.length > 0 ? await dayRolledUpRevenue(db, kind, scope, days.first, money) : noRevenue };
    },
    breakdown_profile_days: async () => {
      const days = scope.wholeDays;
      if (!days || days === 'all') return undefined;
      const varied = variedVisitors(scope.websiteId);
      const found = await profileDayRows(db, kind, scope, days, page, whereOf(spec, scope, !isPostgres(db), varied));
      if (!found) return undefined;
      if (found.rows.length === 0) return { ...found, revenue: noRevenue };
      const revenue = sumMaps(await steadyProfileDayRevenue(db, kind, scope, days, money), await revenueByKey(db, spec, scope, money, varied));
      return { ...found, revenue };
    },
    breakdown_profiles: async () => {
      const varied = variedVisitors(scope.websiteId);
      const { rows, total } = await profiledRows(db, kind, scope, page, whereOf(spec, scope, false, varied));
      if (rows.length === 0) return { rows, total, revenue: noRevenue };
      const revenue = sumMaps(await profiledRevenue(db, kind, scope, money), await revenueByKey(db, spec, scope, money, varied));
      return { rows, total, revenue };
    },
    events: async () => {
      const { rows, total } = await rawRows(db, spec, scope, page);
      return { rows, total, revenue: rows.length > 0 ? await revenueByKey(db, spec, scope, money) : noRevenue };
    },
  });
}

/** Groups the events (or sessions) in scope: a key's `k_<name>` columns, visitors, pageviews and rows. */
async function rawRows(db: Kysely<Database>, spec: BreakdownSpec, scope: StatsScope, page: PageRequest) {
  const names = keyNames(spec);
  const columns = keyColumns(spec);
  const selected = sql.join(columns.map((column, i) => sql`${column} as ${sql.ref(`k_${names[i]}`)}`));
  const groupBy = sql.join(columns);
  // Unknown (null) keys sort after known ones on both engines.
  const tieBreak = sql.join(columns.map((column) => sql`case when ${column} is null then 1 else 0 end, ${column}`));
  const table = sql.raw(spec.from === 'events' ? 'events e' : 'sessions s');
  const visitors = sql.raw(spec.from === 'events' ? 'count(distinct e.visitor_id)' : 'count(distinct s.visitor_id)');
  const pageviews = sql.raw(spec.from === 'events' ? "sum(case when e.type = 'pageview' then 1 else 0 end)" : 'sum(s.pageviews)');
  const where = whereOf(spec, scope);

  const found = await sql<KeyedRow>`
    select ${selected}, ${visitors} as visitors, ${pageviews} as pageviews, count(*) as n, count(*) over () as total_rows
    from ${table} where ${where}
    group by ${groupBy}
    order by visitors desc, n desc, ${tieBreak}
    limit ${page.limit} offset ${page.offset}`.execute(db);
  const total = await pageTotal(found.rows, page, async () => {
    const { rows } = await sql<{ n: unknown }>`select count(*) as n from (select 1 as one from ${table} where ${where} group by ${groupBy}) g`.execute(db);
    return rows[0]?.n;
  });
  return { rows: found.rows, total };
}

/**
 * What each key's visitors paid: the rows in scope joined to their visitors' payments. Payments
 * are few beside events, so they lead the join (CROSS JOIN fixes that order on SQLite, whose
 * planner otherwise walks the events and probes payments per event); the visitor indexes of
 * events and sessions serve the probe. `visitors` (a subquery of visitor ids) narrows both to theirs.
 */
async function revenueByKey(db: Kysely<Database>, spec: BreakdownSpec, scope: StatsScope, money: MoneyRules, visitors?: RawBuilder<unknown>): Promise<Map<string, number>> {
  const names = keyNames(spec);
  const columns = keyColumns(spec);
  const selected = sql.join(columns.map((column, i) => sql`${column} as ${sql.ref(`k_${names[i]}`)}`));
  const outer = sql.join(names.map((name) => sql.ref(`x.k_${name}`)));
  const table = sql.raw(spec.from === 'events' ? 'events e' : 'sessions s');
  const visitor = sql.raw(spec.from === 'events' ? 'e.visitor_id' : 's.visitor_id');
  const { rows } = await sql<Record<string, unknown>>`
    select ${outer}, sum(x.amount_minor) as minor from (
      select distinct ${selected}, p.id, ${paidMinor(money)} as amount_minor
      from payments p cross join ${table}
      where ${paymentScope({ ...scope, filters: [] }, money)} and ${visitors ? sql`p.visitor_id in (${visitors})` : sql`true`}
        and ${visitor} = p.visitor_id and ${whereOf(spec, scope, !isPostgres(db), visitors)}
    ) x group by ${outer}`.execute(db);
  return new Map(rows.map((row) => [keyOf(row, names), num(row.minor)]));
}

/** Two revenue maps added up (they count disjoint visitors). */
function sumMaps(a: Map<string, number>, b: Map<string, number>): Map<string, number> {
  const sum = new Map(a);
  for (const [key, minor] of b) sum.set(key, (sum.get(key) ?? 0) + minor);
  return sum;
}
