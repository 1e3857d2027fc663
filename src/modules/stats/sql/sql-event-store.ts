import type { Kysely } from 'kysely';
import type { Database } from '../../../db/schema.ts';
import type { EventStore } from '../event-store.ts';
import { breakdown } from './breakdowns-sql.ts';
import { funnel } from './funnel-sql.ts';
import { liveMap, liveVisitors } from './live-sql.ts';
import { overview } from './overview-sql.ts';
import { goalProperties } from './properties-sql.ts';
import { visitor, visitors } from './visitors-sql.ts';

/** The event store on the relational database (SQLite or PostgreSQL), beside every other record. */
export function sqlEventStore(db: Kysely<Database>): EventStore {
  return {
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
