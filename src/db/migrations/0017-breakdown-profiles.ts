import { type Kysely, sql } from 'kysely';
import type { Engine } from '../database.ts';

/**
 * breakdown_profiles: per breakdown key and visitor profile (a steady visitor's six attributes
 * as a JSON array), the sum of those visitors' breakdown_visitors rows, kept by
 * src/modules/analytics/breakdown-profiles.ts; profile_totals: per profile, the sums of those
 * visitors' visitor_totals rows (src/modules/analytics/profile-totals.ts). Both are derived here
 * from the rows already stored, by this migration's own copy of the fill, so that later changes
 * to the live code leave it alone.
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
      const attributes = 'v.country, v.region, v.city, v.device, v.browser, v.os';
      const profile = engine === 'postgres' ? `json_build_array(${attributes})::text` : `json_array(${attributes})`;
      await sql`insert into breakdown_profiles (website_id, breakdown, key, profile, visitors, pageviews, events)
        select b.website_id, b.breakdown, b.key, ${sql.raw(profile)}, count(*), sum(b.pageviews), sum(b.events)
        from breakdown_visitors b join visitor_totals v on v.website_id = b.website_id and v.visitor_id = b.visitor_id
        where v.varied = 0
        group by b.website_id, b.breakdown, b.key, ${sql.raw(attributes)}`.execute(db);
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
      await sql`insert into profile_totals (website_id, profile, visitors, pageviews, converted, sessions, bounces, millis)
        select v.website_id, ${sql.raw(profile)}, count(*), sum(v.pageviews), sum(case when v.goals > 0 then 1 else 0 end),
          sum(v.sessions), sum(v.bounces), sum(v.millis)
        from visitor_totals v where v.varied = 0
        group by v.website_id, ${sql.raw(attributes)}`.execute(db);
      if (engine === 'postgres') await sql`analyze breakdown_profiles, profile_totals`.execute(db);
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropTable('profile_totals').execute();
      await db.schema.dropTable('breakdown_profiles').execute();
    },
  };
}
