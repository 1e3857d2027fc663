import { type Kysely, sql } from 'kysely';
import type { Engine } from '../database.ts';
import { markBuilds } from './derived-builds.ts';

/**
 * The breakdowns by local day (src/modules/analytics/breakdown-days.ts): breakdown_visitors gains
 * each row's last day, breakdown_days and breakdown_last_days are new. A background build
 * (./derived-builds.ts) derives them from the events and sessions already stored, in the
 * website's zone.
 */
export function breakdownDays(engine: Engine) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('breakdown_visitors').addColumn('last_day', 'text').execute();
      for (const [name, counts] of [
        ['breakdown_days', ['pageviews', 'events']],
        ['breakdown_last_days', ['visitors']],
      ] as const) {
        let table = db.schema
          .createTable(name)
          .addColumn('website_id', 'text', (c) => c.notNull().references('websites.id'))
          .addColumn('breakdown', 'text', (c) => c.notNull())
          .addColumn('day', 'text', (c) => c.notNull())
          .addColumn('key', 'text', (c) => c.notNull());
        for (const count of counts) table = table.addColumn(count, 'bigint', (c) => c.notNull());
        // Days lead the key, so the days of a range are one stretch of the index.
        table = table.addPrimaryKeyConstraint(`${name}_pk`, ['website_id', 'breakdown', 'day', 'key']);
        if (engine === 'sqlite') table = table.modifyEnd(sql`without rowid`);
        await table.execute();
      }
      await markBuilds(db, 'migration 0019: breakdown_days, breakdown_last_days');
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropTable('breakdown_last_days').execute();
      await db.schema.dropTable('breakdown_days').execute();
      await db.schema.alterTable('breakdown_visitors').dropColumn('last_day').execute();
    },
  };
}
