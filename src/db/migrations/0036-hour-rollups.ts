import { type Kysely, sql } from 'kysely';
import type { Engine } from '../database.ts';
import { markBuilds } from './derived-builds.ts';

/**
 * The hour rollups (src/modules/analytics/hour-rollups.ts), so the hourly time series reads sums
 * instead of every event of its range (issue 38): visitor_hours (per visitor and UTC hour, its
 * pageviews, sessions and goals, and the links to its previous active and converting hours),
 * hour_totals (per UTC hour: visitors, sessions, pageviews, converted visitors) and hour_recency
 * (the visitor-hours per (hour, previous hour), so distinct visitors over several hours are a sum).
 * Hours are UTC, so a change of the website's zone moves nothing. A background build
 * (./derived-builds.ts) derives them from the events already stored.
 */
export function hourRollups(engine: Engine) {
  const website = (c: any) => c.notNull().references('websites.id'); // eslint-disable-line @typescript-eslint/no-explicit-any
  const count = (c: any) => c.notNull().defaultTo(0); // eslint-disable-line @typescript-eslint/no-explicit-any
  const withoutRowid = <T extends { modifyEnd(end: ReturnType<typeof sql>): T }>(table: T) => (engine === 'sqlite' ? table.modifyEnd(sql`without rowid`) : table);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      // The visitor leads the key: the fold, the repairs and the edges of a read all look up visitors.
      await withoutRowid(
        db.schema
          .createTable('visitor_hours')
          .addColumn('website_id', 'text', website)
          .addColumn('visitor_id', 'text', (c) => c.notNull())
          .addColumn('hour', 'text', (c) => c.notNull())
          .addColumn('pageviews', 'integer', count)
          .addColumn('sessions', 'integer', count)
          .addColumn('last_session_id', 'text')
          .addColumn('goals', 'integer', count)
          .addColumn('prev_hour', 'text')
          .addColumn('prev_goal_hour', 'text')
          .addPrimaryKeyConstraint('visitor_hours_pk', ['website_id', 'visitor_id', 'hour']),
      ).execute();
      await withoutRowid(
        db.schema
          .createTable('hour_totals')
          .addColumn('website_id', 'text', website)
          .addColumn('hour', 'text', (c) => c.notNull())
          .addColumn('visitors', 'integer', count)
          .addColumn('sessions', 'integer', count)
          .addColumn('pageviews', 'integer', count)
          .addColumn('converted_visitors', 'integer', count)
          .addPrimaryKeyConstraint('hour_totals_pk', ['website_id', 'hour']),
      ).execute();
      await withoutRowid(
        db.schema
          .createTable('hour_recency')
          .addColumn('website_id', 'text', website)
          .addColumn('hour', 'text', (c) => c.notNull())
          .addColumn('prev_hour', 'text', (c) => c.notNull())
          .addColumn('visitors', 'integer', count)
          .addColumn('converted', 'integer', count)
          .addPrimaryKeyConstraint('hour_recency_pk', ['website_id', 'hour', 'prev_hour']),
      ).execute();
      await markBuilds(db, 'migration 0036: visitor_hours, hour_totals, hour_recency');
    },
    async down(db: Kysely<unknown>): Promise<void> {
      for (const table of ['hour_recency', 'hour_totals', 'visitor_hours']) await db.schema.dropTable(table).execute();
    },
  };
}
