import { type Kysely, sql } from 'kysely';
import type { Engine } from '../database.ts';
import { columnTypes } from './column-types.ts';

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
      // The fill as it stood at this migration (0016 adds columns and derives them all again).
      await sql`insert into visitor_totals (website_id, visitor_id, first_at, last_at, pageviews, events)
        select website_id, visitor_id, min(occurred_at), max(occurred_at), sum(case when type = 'pageview' then 1 else 0 end), count(*)
        from events group by website_id, visitor_id`.execute(db);
      if (engine === 'postgres') await sql`analyze visitor_totals`.execute(db);
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropTable('visitor_totals').execute();
    },
  };
}
