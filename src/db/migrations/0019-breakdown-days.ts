import { type Kysely, sql } from 'kysely';
import type { Engine } from '../database.ts';
import type { Database } from '../schema.ts';
import { deleteRows } from '../../modules/analytics/breakdown-rollup-tables.ts';
import { deriveWebsiteBreakdownRollups } from '../../modules/analytics/breakdown-rollups.ts';
import { BREAKDOWNS } from '../../modules/stats/event-store.ts';

/**
 * The breakdowns by local day (src/modules/analytics/breakdown-days.ts): breakdown_visitors gains
 * each row's last day, breakdown_days and breakdown_last_days are new. A website's breakdown rows
 * are derived again from its events and sessions, in its zone, by the live derive (as 0013 and
 * 0014 did); their counts do not change, so breakdown_profiles stays as it is.
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
      const live = db as Kysely<Database>;
      const websites = await live.selectFrom('websites').select(['id', 'timezone']).execute();
      for (const website of websites) {
        await deleteRows(live, website.id, BREAKDOWNS);
        await deriveWebsiteBreakdownRollups(live, website.id, website.timezone);
      }
      if (engine === 'postgres') await sql`analyze breakdown_visitors, breakdown_days, breakdown_last_days`.execute(db);
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropTable('breakdown_last_days').execute();
      await db.schema.dropTable('breakdown_days').execute();
      await db.schema.alterTable('breakdown_visitors').dropColumn('last_day').execute();
    },
  };
}
