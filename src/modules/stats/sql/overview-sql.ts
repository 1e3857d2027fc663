import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { Database } from '../../../db/schema.ts';
import type { MoneyRules, OverviewCounts } from '../event-store.ts';
import type { StatsScope } from '../stats.params.ts';
import type { DaySpan } from '../whole-days.ts';
import { num, rangeCondition, scopeCondition } from './scope-sql.ts';
import { BOUNCE, millisBetween } from '../../analytics/session-terms.ts';
import { dailyTotals, distinctVisitors } from './series-sql.ts';
import { engineOf, isPostgres } from '../../../db/engine.ts';
import { profileFilters, steadyAndPassing, variedVisitors } from './steady-split-sql.ts';
import { countedPayment, paidMinor } from './money-sql.ts';
import { answerRead, shapeOf } from '../read-planner.ts';
import { profileDaysOverview } from './overview-profile-days-sql.ts';

// Overview counts: visitors, pageviews and converted visitors from the events in scope; sessions,
// bounces and duration from the sessions that started in the range (and, when filtered, hold an
// event in scope); revenue from the payments in the range (when filtered, of the visitors in scope).
// The planner (../read-planner.ts) picks the source: unfiltered, over whole local days of the
// website or all time, the same numbers come from the rollups: visitor_recency and daily_totals
// for the traffic, session_buckets for the sessions (a few thousand rows for a month instead of
// every event and session). All time and filtered on visitor attributes alone, they come from
// profile_totals and the varied visitors' raw rows.

/**
 * `s.<...>` restricted to the sessions in scope; with `visitors` (a subquery of visitor ids), to
 * theirs, tested on the events too, so that the filters' events are read for them alone.
 */
export function sessionScope(scope: StatsScope, options: { byVisitor?: boolean; visitors?: RawBuilder<unknown> } = {}): RawBuilder<unknown> {
  // See ScopeOptions.byVisitor: a unary + keeps SQLite on the visitor index when probing.
  const inRange = rangeCondition(scope, options.byVisitor ? sql`+s.started_at` : sql.ref('s.started_at'));
  const only = (column: string) => (options.visitors ? sql` and ${sql.ref(column)} in (${options.visitors})` : sql``);
  if (scope.filters.length === 0) return sql`s.website_id = ${scope.websiteId} and ${inRange}${only('s.visitor_id')}`;
  // Probing a few visitors' events, the inner read keeps to the visitor index too.
  const inner = scopeCondition(scope, { byVisitor: options.byVisitor === true && options.visitors !== undefined });
  return sql`s.website_id = ${scope.websiteId} and ${inRange}${only('s.visitor_id')}
    and s.session_id in (select e.session_id from events e where ${inner}${only('e.visitor_id')})`;
}

export function paymentScope(scope: StatsScope, money: MoneyRules): RawBuilder<unknown> {
  const renewals = money.includeRenewals ? sql`` : sql`and p.renewal = ${false}`;
  const visitors = scope.filters.length === 0 ? sql`` : sql`and p.visitor_id in (select e.visitor_id from events e where ${scopeCondition(scope)})`;
  return sql`p.website_id = ${scope.websiteId} and ${rangeCondition(scope, sql.ref('p.occurred_at'))} and ${countedPayment(money)} and p.refunded = ${false} ${renewals} ${visitors}`;
}

export type Row = Record<string, unknown>;

export async function eventTraffic(db: Kysely<Database>, scope: StatsScope, visitors?: RawBuilder<unknown>): Promise<Row> {
  // A few visitors' events (the varied ones): SQLite is kept on the visitor index, not the range's.
  const byVisitor = visitors !== undefined && !isPostgres(db);
  const { rows } = await sql<Row>`
    select count(distinct e.visitor_id) as visitors,
      sum(case when e.type = 'pageview' then 1 else 0 end) as pageviews,
      count(distinct case when e.type = 'custom' and e.name is not null then e.visitor_id end) as converted
    from events e where ${scopeCondition(scope, { byVisitor })}${visitors ? sql` and e.visitor_id in (${visitors})` : sql``}`.execute(db);
  return rows[0] ?? {};
}

/** The same counts from the day rollups: distinct visitors by recency, pageviews per day. */
async function rollupTraffic(db: Kysely<Database>, websiteId: string, days: DaySpan): Promise<Row> {
  const { first, last } = days === 'all' ? { first: '0001-01-01', last: '9999-12-31' } : days;
  const [distinct, totals] = await Promise.all([
    distinctVisitors(db, websiteId, [{ id: 0, from: first, to: last }]),
    dailyTotals(db, websiteId, first, last),
  ]);
  const found = distinct.get(0);
  const pageviews = totals.reduce((sum, day) => sum + Number(day.pageviews), 0);
  return { visitors: found?.visitors, converted: found?.converted, pageviews };
}

export async function sessionTotals(db: Kysely<Database>, scope: StatsScope, fromBuckets: boolean, visitors?: RawBuilder<unknown>): Promise<Row> {
  const { rows } = fromBuckets
    ? await sql<Row>`select sum(b.sessions) as sessions, sum(b.bounces) as bounces, sum(b.millis) as millis
        from session_buckets b where b.website_id = ${scope.websiteId} and ${rangeCondition(scope, sql.ref('b.bucket'))}`.execute(db)
    : await sql<Row>`select count(*) as sessions, sum(case when ${BOUNCE} then 1 else 0 end) as bounces,
        sum(${millisBetween(db, 's.started_at', 's.ended_at')}) as millis
        from sessions s where ${sessionScope(scope, { visitors, byVisitor: visitors !== undefined && !isPostgres(db) })}`.execute(db);
  return rows[0] ?? {};
}

export async function overview(db: Kysely<Database>, scope: StatsScope, money: MoneyRules): Promise<OverviewCounts> {
  return answerRead('overview', shapeOf(scope), scope.derivedState ?? 'ready', {
    daily_totals: () => plainOverview(db, scope, money, scope.wholeDays ?? 'all'),
    profile_totals: () => profiledOverview(db, scope, money),
    breakdown_profile_last_days: () => profileDaysOverview(db, scope, money),
    events: () => plainOverview(db, scope, money, null),
  });
}

/** The counts from the raw events and sessions, or over whole `days` from the day rollups and session_buckets. */
async function plainOverview(db: Kysely<Database>, scope: StatsScope, money: MoneyRules, days: DaySpan | null): Promise<OverviewCounts> {
  const [t, s, payments] = await Promise.all([
    days ? rollupTraffic(db, scope.websiteId, days) : eventTraffic(db, scope),
    sessionTotals(db, scope, days !== null),
    sql<Row>`
      select sum(${paidMinor(money)}) as minor, count(*) as payments from payments p where ${paymentScope(scope, money)}`.execute(db),
  ]);
  const p = payments.rows[0] ?? {};
  return {
    visitors: num(t.visitors),
    pageviews: num(t.pageviews),
    convertedVisitors: num(t.converted),
    sessions: num(s.sessions),
    bounces: num(s.bounces),
    sessionMillis: num(s.millis),
    revenueMinor: num(p.minor),
    payments: num(p.payments),
  };
}

/**
 * All time, filtered on visitor attributes alone: the steady visitors' counts from the matching
 * profiles of profile_totals (src/modules/analytics/profile-totals.ts), the varied visitors'
 * from their raw events, sessions and payments; the two parts count disjoint visitors (the split
 * of breakdown-profile-reads.ts).
 */
async function profiledOverview(db: Kysely<Database>, scope: StatsScope, money: MoneyRules): Promise<OverviewCounts> {
  const engine = engineOf(db);
  const varied = (column: string) => sql`${sql.ref(column)} in (${variedVisitors(scope.websiteId)})`;
  const unfiltered = paymentScope({ ...scope, filters: [] }, money);
  const [steady, t, s, steadyPaid, variedPaid] = await Promise.all([
    sql<Row>`select sum(p.visitors) as visitors, sum(p.pageviews) as pageviews, sum(p.converted) as converted,
        sum(p.sessions) as sessions, sum(p.bounces) as bounces, sum(p.millis) as millis
      from profile_totals p
      where p.website_id = ${scope.websiteId} and ${profileFilters(engine, scope, sql.ref('p.profile'))}`.execute(db),
    eventTraffic(db, scope, variedVisitors(scope.websiteId)),
    sessionTotals(db, scope, false, variedVisitors(scope.websiteId)),
    sql<Row>`select sum(${paidMinor(money)}) as minor, count(*) as payments
      from payments p cross join visitor_totals v
      where ${unfiltered} and v.website_id = p.website_id and v.visitor_id = p.visitor_id and ${steadyAndPassing(scope, 'v')}`.execute(db),
    sql<Row>`select sum(${paidMinor(money)}) as minor, count(*) as payments
      from payments p
      where ${unfiltered} and ${varied('p.visitor_id')}
        and p.visitor_id in (select e.visitor_id from events e where ${scopeCondition(scope)} and ${varied('e.visitor_id')})`.execute(db),
  ]);
  const sum = (row: Row | undefined, other: Row | undefined, name: string) => num(row?.[name]) + num(other?.[name]);
  const p = steady.rows[0];
  return {
    visitors: num(p?.visitors) + num(t.visitors),
    pageviews: num(p?.pageviews) + num(t.pageviews),
    convertedVisitors: num(p?.converted) + num(t.converted),
    sessions: num(p?.sessions) + num(s.sessions),
    bounces: num(p?.bounces) + num(s.bounces),
    sessionMillis: num(p?.millis) + num(s.millis),
    revenueMinor: sum(steadyPaid.rows[0], variedPaid.rows[0], 'minor'),
    payments: sum(steadyPaid.rows[0], variedPaid.rows[0], 'payments'),
  };
}
