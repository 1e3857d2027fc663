import { type Kysely, sql } from 'kysely';
import type { Engine } from '../database.ts';
import { markBuilds } from './derived-builds.ts';

/**
 * breakdown_profiles: per breakdown key and visitor profile (a steady visitor's six attributes
 * as a JSON array), the sum of those visitors' breakdown_visitors rows, kept by
 * src/modules/analytics/breakdown-profiles.ts; profile_totals: per profile, the sums of those
 * visitors' visitor_totals rows (src/modules/analytics/profile-totals.ts). Both are derived from
 * the rows already stored by a background build (./derived-builds.ts).
 */
export function breakdownProfiles(engine: Engine) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      let table = db.schema
        .createTable('breakdown_profiles')
        .addColumn('website_id', 'text', (c) => c.notNull().references('websites.id'))
        .addColumn('breakdown', 'text', (c) => c.notNull())
        .addColumn('key', 'text', (c) => c.notNull())
        .addColumn('profile', 'text', (c) => c.notNull())
        .addColumn('visitors', 'bigint', (c) => c.notNull())
        .addColumn('pageviews', 'bigint', (c) => c.notNull())
        .addColumn('events', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('breakdown_profiles_pk', ['website_id', 'breakdown', 'key', 'profile']);
      if (engine === 'sqlite') table = table.modifyEnd(sql`without rowid`);
      await table.execute();
      await db.schema
        .createTable('profile_totals')
        .addColumn('website_id', 'text', (c) => c.notNull().references('websites.id'))
        .addColumn('profile', 'text', (c) => c.notNull())
        .addColumn('visitors', 'bigint', (c) => c.notNull())
        .addColumn('pageviews', 'bigint', (c) => c.notNull())
        .addColumn('converted', 'bigint', (c) => c.notNull())
        .addColumn('sessions', 'bigint', (c) => c.notNull())
        .addColumn('bounces', 'bigint', (c) => c.notNull())
        .addColumn('millis', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('profile_totals_pk', ['website_id', 'profile'])
        .execute();
      await markBuilds(db, 'migration 0017: breakdown_profiles, profile_totals');
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropTable('profile_totals').execute();
      await db.schema.dropTable('breakdown_profiles').execute();
    },
  };
}
