import { type Kysely, sql } from 'kysely';
import { engineOf, isPostgres } from '../../../db/engine.ts';
import type { Database } from '../../../db/schema.ts';
import type { MoneyRules, OverviewCounts } from '../event-store.ts';
import type { StatsScope } from '../stats.params.ts';
import { daysReach } from './breakdown-rollup-reads.ts';
import { EVERY_EVENT, amongProfiles, matchingProfiles } from './breakdown-profile-day-reads.ts';
import { type Row, eventTraffic, paymentScope, sessionTotals } from './overview-sql.ts';
import { num, scopeCondition } from './scope-sql.ts';
import { paidMinor } from './money-sql.ts';
import { steadyAndPassing, variedVisitors } from './steady-split-sql.ts';

/** The session breakdown whose rows by profile count every session once: one entry page per session. */
const EVERY_SESSION = 'entry-pages';

// The overview filtered on visitor attributes alone over whole local days of the website up to
// its latest data (issue 39 item 2), split as the all-time profile reads split it: steady visitors
// (whose attributes never varied) from rows kept per profile or per visitor, varied visitors from
// their raw events, sessions and payments (few). The steady part:
// - visitors: the countries breakdown's breakdown_profile_last_days over the range's days: every
//   event has one countries key and a steady visitor one country, so the rows of a profile by
//   last day count each steady visitor of the range once;
// - pageviews: breakdown_profile_days of the countries breakdown (the events' own profiles: exact
//   for every visitor, varied ones included, so theirs are not read again);
// - converted visitors: the steady passing visitors with a goal whose last day under a goal key
//   is in the range (visitor_totals and breakdown_visitors);
// - sessions, bounces and duration: the entry pages' rows of breakdown_profile_days (the steady
//   visitors' sessions by start day and visitor profile, one entry page each; each such session's
//   first event is in scope);
// - revenue: the payments in the range of the steady passing visitors seen in it.
// A range that ends before the latest data, or all time: undefined (the next source answers).


export async function profileDaysOverview(db: Kysely<Database>, scope: StatsScope, money: MoneyRules): Promise<OverviewCounts | undefined> {
  const days = scope.wholeDays;
  if (!days || days === 'all' || !scope.range) return undefined;
  if (!(await daysReach(db, EVERY_EVENT, scope.websiteId, days.last))) return undefined;
  const engine = engineOf(db);
  const websiteId = scope.websiteId;
  const profiled = amongProfiles(db, matchingProfiles(engine, scope, days));
  const varied = variedVisitors(websiteId);
  const unfiltered = paymentScope({ ...scope, filters: [] }, money);
  const [visitors, pageviews, converted, steadySessions, variedTraffic, variedSessions, steadyPaid, variedPaid] = await Promise.all([
    sql<Row>`select sum(p.visitors) as n from breakdown_profile_last_days p
      where p.website_id = ${websiteId} and p.breakdown = ${EVERY_EVENT} and p.day >= ${days.first} and ${profiled}`.execute(db),
    sql<Row>`select sum(p.pageviews) as n from breakdown_profile_days p
      where p.website_id = ${websiteId} and p.breakdown = ${EVERY_EVENT} and p.day >= ${days.first} and p.day <= ${days.last} and ${profiled}`.execute(db),
    sql<Row>`select count(*) as n from visitor_totals v
      where v.website_id = ${websiteId} and v.goals > 0 and ${steadyAndPassing(scope, 'v')}
        and exists (select 1 from breakdown_visitors b where b.website_id = v.website_id and b.visitor_id = v.visitor_id
          and b.breakdown = 'goals' and b.last_day >= ${days.first})`.execute(db),
    sql<Row>`select sum(p.events) as sessions, sum(p.bounces) as bounces, sum(p.millis) as millis from breakdown_profile_days p
      where p.website_id = ${websiteId} and p.breakdown = ${EVERY_SESSION} and p.day >= ${days.first} and p.day <= ${days.last} and ${profiled}`.execute(db),
    eventTraffic(db, scope, varied),
    sessionTotals(db, scope, false, varied),
    sql<Row>`select sum(${paidMinor(money)}) as minor, count(*) as payments
      from payments p cross join visitor_totals v
      where ${unfiltered} and v.website_id = p.website_id and v.visitor_id = p.visitor_id and ${steadyAndPassing(scope, 'v')}
        and v.last_at >= ${scope.range.from}`.execute(db),
    sql<Row>`select sum(${paidMinor(money)}) as minor, count(*) as payments
      from payments p
      where ${unfiltered} and p.visitor_id in (${varied})
        and p.visitor_id in (select e.visitor_id from events e where ${scopeCondition(scope, { byVisitor: !isPostgres(db) })} and e.visitor_id in (${varied}))`.execute(db),
  ]);
  const first = (rows: { rows: Row[] }) => rows.rows[0] ?? {};
  const s = first(steadySessions);
  return {
    visitors: num(first(visitors).n) + num(variedTraffic.visitors),
    pageviews: num(first(pageviews).n),
    convertedVisitors: num(first(converted).n) + num(variedTraffic.converted),
    sessions: num(s.sessions) + num(variedSessions.sessions),
    bounces: num(s.bounces) + num(variedSessions.bounces),
    sessionMillis: num(s.millis) + num(variedSessions.millis),
    revenueMinor: num(first(steadyPaid).minor) + num(first(variedPaid).minor),
    payments: num(first(steadyPaid).payments) + num(first(variedPaid).payments),
  };
}
