import { type Kysely, sql } from 'kysely';
import type { Engine } from '../database.ts';
import { markBuilds } from './derived-builds.ts';

/**
 * breakdown_visitors and breakdown_totals: the all-time event breakdowns as rollups, kept by
 * src/modules/analytics/breakdown-rollups.ts in the transactions that write or delete events,
 * and derived from the events already stored by a background build (./derived-builds.ts). A visitor's rows lead with the visitor, so a
 * goal delete re-derives them by key prefix; SQLite keeps them without a rowid (the key is the row).
 */
export function breakdownRollups(engine: Engine) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      let visitors = db.schema
        .createTable('breakdown_visitors')
        .addColumn('website_id', 'text', (c) => c.notNull().references('websites.id'))
        .addColumn('visitor_id', 'text', (c) => c.notNull())
        .addColumn('breakdown', 'text', (c) => c.notNull())
        .addColumn('key', 'text', (c) => c.notNull())
        .addColumn('pageviews', 'bigint', (c) => c.notNull())
        .addColumn('events', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('breakdown_visitors_pk', ['website_id', 'visitor_id', 'breakdown', 'key']);
      if (engine === 'sqlite') visitors = visitors.modifyEnd(sql`without rowid`);
      await visitors.execute();
      await db.schema
        .createTable('breakdown_totals')
        .addColumn('website_id', 'text', (c) => c.notNull().references('websites.id'))
        .addColumn('breakdown', 'text', (c) => c.notNull())
        .addColumn('key', 'text', (c) => c.notNull())
        .addColumn('visitors', 'bigint', (c) => c.notNull())
        .addColumn('pageviews', 'bigint', (c) => c.notNull())
        .addColumn('events', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('breakdown_totals_pk', ['website_id', 'breakdown', 'key'])
        .execute();
      await markBuilds(db, 'migration 0013: breakdown_visitors, breakdown_totals');
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropTable('breakdown_totals').execute();
      await db.schema.dropTable('breakdown_visitors').execute();
    },
  };
}
