import { type Kysely, sql } from 'kysely';
import type { Engine } from '../database.ts';
import { markBuilds } from './derived-builds.ts';

/**
 * The breakdowns by local day and visitor profile (src/modules/analytics/breakdown-profile-days.ts),
 * so that a breakdown or the overview filtered on visitor attributes over whole days reads sums
 * instead of every event or session in range (issue 39 item 2): breakdown_profile_days (per key,
 * day and profile: the events' pageviews and count by their own profile; the steady visitors'
 * sessions, their pageviews, bounces and milliseconds by the visitor's profile) and
 * breakdown_profile_last_days (the steady visitors per key and profile by their last day under the key). A background build
 * (./derived-builds.ts) derives them from the events already stored, in the website's zone.
 */
export function breakdownProfileDays(engine: Engine) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      for (const [name, counts] of [
        ['breakdown_profile_days', ['pageviews', 'events', 'bounces', 'millis']],
        ['breakdown_profile_last_days', ['visitors']],
      ] as const) {
        let table = db.schema
          .createTable(name)
          .addColumn('website_id', 'text', (c) => c.notNull().references('websites.id'))
          .addColumn('breakdown', 'text', (c) => c.notNull())
          .addColumn('day', 'text', (c) => c.notNull())
          .addColumn('key', 'text', (c) => c.notNull())
          .addColumn('profile', 'text', (c) => c.notNull());
        for (const count of counts) table = table.addColumn(count, 'bigint', (c) => c.notNull());
        // Days lead the key, so the days of a range are one stretch of the index.
        table = table.addPrimaryKeyConstraint(`${name}_pk`, ['website_id', 'breakdown', 'day', 'key', 'profile']);
        if (engine === 'sqlite') table = table.modifyEnd(sql`without rowid`);
        await table.execute();
      }
      // The filtered overview counts the converted visitors among those with a goal: a few of the
      // website's visitors, which this index finds without walking them all (98 to 21 ms at a
      // million events on SQLite).
      await db.schema.createIndex('visitor_totals_converted_idx').on('visitor_totals').column('website_id').where(sql.ref('goals'), '>', 0).execute();
      await markBuilds(db, 'migration 0033: breakdown_profile_days, breakdown_profile_last_days');
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropIndex('visitor_totals_converted_idx').execute();
      await db.schema.dropTable('breakdown_profile_last_days').execute();
      await db.schema.dropTable('breakdown_profile_days').execute();
    },
  };
}
