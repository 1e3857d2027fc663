import { type Kysely, sql } from 'kysely';
import type { Engine } from '../database.ts';
import { columnTypes } from './column-types.ts';
import { markBuilds } from './derived-builds.ts';

/** The visitor attributes as they stood at this migration. */
const VISITOR_ATTRIBUTES = ['country', 'region', 'city', 'device', 'browser', 'os'];

/** The visitor's goal completions, sessions, bounces and session milliseconds (the overview's counts). */
const COUNTS = ['goals', 'sessions', 'bounces', 'millis'];

/**
 * visitor_totals gains each visitor's latest event with a page, their visitor attributes with
 * the bits of those that varied (src/modules/analytics/visitor-attributes.ts) and the counts the
 * overview sums; a background build (./derived-builds.ts) derives the rows again from the events
 * and sessions already stored. The
 * partial index finds the few visitors whose attributes varied, which filtered reads take from
 * the raw events.
 */
export function visitorAttributes(engine: Engine) {
  const t = columnTypes(engine);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('visitor_totals').addColumn('latest_at', t.timestamp).execute();
      await db.schema.alterTable('visitor_totals').addColumn('latest_event_id', 'text').execute();
      await db.schema.alterTable('visitor_totals').addColumn('varied', 'integer', (c) => c.notNull().defaultTo(0)).execute();
      for (const attribute of VISITOR_ATTRIBUTES) await db.schema.alterTable('visitor_totals').addColumn(attribute, 'text').execute();
      for (const count of COUNTS) await db.schema.alterTable('visitor_totals').addColumn(count, 'bigint', (c) => c.notNull().defaultTo(0)).execute();
      await db.schema.createIndex('visitor_totals_varied_idx').on('visitor_totals').column('website_id').where(sql<boolean>`varied <> 0`).execute();
      await markBuilds(db, 'migration 0016: the attributes of visitor_totals', true);
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropIndex('visitor_totals_varied_idx').execute();
      for (const column of ['latest_at', 'latest_event_id', 'varied', ...VISITOR_ATTRIBUTES, ...COUNTS]) {
        await db.schema.alterTable('visitor_totals').dropColumn(column).execute();
      }
    },
  };
}
