import { type Kysely, sql } from 'kysely';
import * as series from './series-sql.ts';
import { hourTraffic } from './series-hour-reads.ts';
import type { Database } from '../../../db/schema.ts';
import type { EventStore } from '../event-store.ts';
import type { StatsScope } from '../stats.params.ts';
import { breakdown } from './breakdowns-sql.ts';
import { funnel } from './funnel-sql.ts';
import { liveMap, liveVisitors } from './live-sql.ts';
import { overview } from './overview-sql.ts';
import { rangeCondition, scopeCondition } from './scope-sql.ts';
import { goalProperties } from './properties-sql.ts';
import { visitor, visitors } from './visitors-sql.ts';

/**
 * The event store on the relational database (SQLite or PostgreSQL), beside every other record.
 * `settle` resolves once the website's accepted events are in its rollups
 * (../../analytics/rollup-backlog.ts); every read awaits it first.
 */
export function sqlEventStore(db: Kysely<Database>, settle: (websiteId: string) => Promise<void>): EventStore {
  const filtersOf = (scope: StatsScope) => (scope.filters.length > 0 ? scopeCondition(scope, { range: false }) : undefined);
  const settled =
    <A extends unknown[], R>(websiteOf: (...args: NoInfer<A>) => string, read: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      await settle(websiteOf(...args));
      return read(...args);
    };
  const byScope = (scope: StatsScope, ..._rest: unknown[]) => scope.websiteId;
  const byId = (websiteId: string, ..._rest: unknown[]) => websiteId;
  return {
    settle,
    spanTraffic: settled(byScope, (scope, spans) => series.eventTraffic(db, scope.websiteId, spans, filtersOf(scope))),
    dailyTotals: settled(byId, (websiteId, firstDay, lastDay) => series.dailyTotals(db, websiteId, firstDay, lastDay)),
    spanDistinctVisitors: settled(byId, (websiteId, spans) => series.distinctVisitors(db, websiteId, spans)),
    hourTraffic: settled(byId, (websiteId, buckets, distinct, asOf) => hourTraffic(db, websiteId, buckets, distinct, asOf)),
    spanPayments: settled(byScope, (scope, spans, money) => {
      const filtered = filtersOf(scope);
      const visitors = filtered ? sql`select e.visitor_id from events e where ${filtered} and ${rangeCondition(scope)}` : null;
      return series.paymentTotals(db, scope.websiteId, spans, money, visitors);
    }),
    overview: settled(byScope, (scope, money) => overview(db, scope, money)),
    breakdown: settled((_kind: unknown, scope: StatsScope, ..._rest: unknown[]) => scope.websiteId, (kind, scope, page, money) => breakdown(db, kind, scope, page, money)),
    goalProperties: settled(byScope, (scope, eventName, propertyName, page) => goalProperties(db, scope, eventName, propertyName, page)),
    funnel: settled(byScope, (scope, steps, money) => funnel(db, scope, steps, money)),
    liveVisitors: settled(byId, (websiteId, since, state) => liveVisitors(db, websiteId, since, state)),
    liveMap: settled(byId, (websiteId, since, state) => liveMap(db, websiteId, since, state)),
    visitor: settled(byId, (websiteId, visitorId) => visitor(db, websiteId, visitorId)),
    visitors: settled(byScope, (scope, options, page) => visitors(db, scope, options, page)),
  };
}
