import { type Kysely, sql } from 'kysely';
import type { Engine } from '../database.ts';
import { markBuilds } from './derived-builds.ts';

/**
 * The funnel per stored funnel (issue 33; src/modules/analytics/funnel-crossings.ts), so a funnel
 * report over whole local days reads sums bounded by days and steps instead of every step event
 * of its range:
 *
 * - funnel_visitor_days: per funnel, visitor and local day of the website's zone on which the
 *   visitor's step events change anything, the day's transition (for each depth entered with,
 *   the depth left with, as "k0,k1,...").
 * - funnel_crossings: per funnel, visitors summed by the interval of range starts (after_day,
 *   exclusive, '' for none; start_day, inclusive) for which they first reach `depth` on `day`.
 *   A range of whole days [a, b] counts at step n: sum(visitors) where after_day < a <= start_day
 *   and day <= b and depth = n.
 *
 * - funnel_crossings_kept: the funnels whose rows the two tables hold. A build's clear phase
 *   keeps every funnel of the website then; a funnel created or given new steps on a website that
 *   has events is not kept (its report reads the raw events, as before) until the website's next
 *   build, rather than starting one (a build of a large website takes minutes, its reads raw).
 *
 * Both are derived data: created empty, a background build (./derived-builds.ts) fills them.
 */
export function funnelCrossings(engine: Engine) {
  const website = (c: any) => c.notNull().references('websites.id'); // eslint-disable-line @typescript-eslint/no-explicit-any
  const text = (c: any) => c.notNull(); // eslint-disable-line @typescript-eslint/no-explicit-any
  const withoutRowid = <T extends { modifyEnd(end: ReturnType<typeof sql>): T }>(table: T) => (engine === 'sqlite' ? table.modifyEnd(sql`without rowid`) : table);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await withoutRowid(
        db.schema
          .createTable('funnel_visitor_days')
          .addColumn('website_id', 'text', website)
          .addColumn('funnel_id', 'text', text)
          .addColumn('visitor_id', 'text', text)
          .addColumn('day', 'text', text)
          .addColumn('transition', 'text', text)
          .addPrimaryKeyConstraint('funnel_visitor_days_pk', ['website_id', 'funnel_id', 'visitor_id', 'day']),
      ).execute();
      await withoutRowid(
        db.schema
          .createTable('funnel_crossings')
          .addColumn('website_id', 'text', website)
          .addColumn('funnel_id', 'text', text)
          .addColumn('start_day', 'text', text)
          .addColumn('after_day', 'text', text)
          .addColumn('day', 'text', text)
          .addColumn('depth', 'integer', text)
          .addColumn('visitors', 'integer', (c) => c.notNull().defaultTo(0))
          .addPrimaryKeyConstraint('funnel_crossings_pk', ['website_id', 'funnel_id', 'start_day', 'after_day', 'day', 'depth']),
      ).execute();
      await db.schema
        .createTable('funnel_crossings_kept')
        .addColumn('website_id', 'text', website)
        .addColumn('funnel_id', 'text', text)
        .addPrimaryKeyConstraint('funnel_crossings_kept_pk', ['website_id', 'funnel_id'])
        .execute();
      await markBuilds(db, 'migration 0039: funnel_visitor_days, funnel_crossings');
    },
    async down(db: Kysely<unknown>): Promise<void> {
      for (const table of ['funnel_crossings_kept', 'funnel_crossings', 'funnel_visitor_days']) await db.schema.dropTable(table).execute();
    },
  };
}
