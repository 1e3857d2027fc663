import type { Kysely } from 'kysely';
import type { Engine } from '../database.ts';
import { columnTypes } from './column-types.ts';

/**
 * Segments (issue 37 item 5): a saved set of the analytics filters of one website, named by the
 * account that saved it, kept for that account alone or shared with the website's team.
 * `filters` is the URL's filter set as JSON ({"filter_country": "is:US,DE", ...}), exactly the
 * query parameters the stats routes read, so applying a segment is putting them back on the URL.
 */
export function segments(engine: Engine) {
  const { timestamp, boolean } = columnTypes(engine);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('segments')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('website_id', 'text', (c) => c.notNull().references('websites.id').onDelete('cascade'))
        // The account that saved it; a segment leaves with its author (personal ones are useless
        // to anyone else, and a shared one is re-saved in a click).
        .addColumn('owner_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('filters', 'text', (c) => c.notNull())
        .addColumn('shared', boolean, (c) => c.notNull())
        .addColumn('created_at', timestamp, (c) => c.notNull())
        .addColumn('updated_at', timestamp, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('segments_website_idx').on('segments').columns(['website_id', 'owner_id']).execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropTable('segments').execute();
    },
  };
}
