import type { Kysely } from 'kysely';
import type { Engine } from '../database.ts';
import { columnTypes } from './column-types.ts';
import { markBuilds } from './derived-builds.ts';

/**
 * visitor_totals: per website and visitor, all time, first and last event, pageviews and events,
 * kept by src/modules/analytics/visitor-totals.ts and derived here from the events already
 * stored. The index serves the visitor list, newest activity first.
 */
export function visitorTotals(engine: Engine) {
  const t = columnTypes(engine);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('visitor_totals')
        .addColumn('website_id', 'text', (c) => c.notNull().references('websites.id'))
        .addColumn('visitor_id', 'text', (c) => c.notNull())
        .addColumn('first_at', t.timestamp, (c) => c.notNull())
        .addColumn('last_at', t.timestamp, (c) => c.notNull())
        .addColumn('pageviews', 'bigint', (c) => c.notNull())
        .addColumn('events', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('visitor_totals_pk', ['website_id', 'visitor_id'])
        .execute();
      await db.schema.createIndex('visitor_totals_recent_idx').on('visitor_totals').columns(['website_id', 'last_at desc', 'visitor_id']).execute();
      await markBuilds(db, 'migration 0015: visitor_totals', true);
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropTable('visitor_totals').execute();
    },
  };
}
