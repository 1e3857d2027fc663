import { type Kysely, sql } from 'kysely';
import * as series from './series-sql.ts';
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

/** The event store on the relational database (SQLite or PostgreSQL), beside every other record. */
export function sqlEventStore(db: Kysely<Database>): EventStore {
  const filtersOf = (scope: StatsScope) => (scope.filters.length > 0 ? scopeCondition(scope, { range: false }) : undefined);
  return {
    spanTraffic: (scope, spans) => series.eventTraffic(db, scope.websiteId, spans, filtersOf(scope)),
    dailyTotals: (websiteId, firstDay, lastDay) => series.dailyTotals(db, websiteId, firstDay, lastDay),
    spanDistinctVisitors: (websiteId, spans) => series.distinctVisitors(db, websiteId, spans),
    spanPayments: (scope, spans, money) => {
      const filtered = filtersOf(scope);
      const visitors = filtered ? sql`select e.visitor_id from events e where ${filtered} and ${rangeCondition(scope)}` : null;
      return series.paymentTotals(db, scope.websiteId, spans, money, visitors);
    },
    overview: (scope, money) => overview(db, scope, money),
    breakdown: (kind, scope, page, money) => breakdown(db, kind, scope, page, money),
    goalProperties: (scope, eventName, propertyName, page) => goalProperties(db, scope, eventName, propertyName, page),
    funnel: (scope, steps, money) => funnel(db, scope, steps, money),
    liveVisitors: (websiteId, since) => liveVisitors(db, websiteId, since),
    liveMap: (websiteId, since) => liveMap(db, websiteId, since),
    visitor: (websiteId, visitorId) => visitor(db, websiteId, visitorId),
    visitors: (scope, options, page) => visitors(db, scope, options, page),
  };
}
