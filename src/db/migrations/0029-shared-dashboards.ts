import type { Kysely } from 'kysely';
import type { Engine } from '../database.ts';
import { columnTypes } from './column-types.ts';

/**
 * Shared dashboards (issue 37 item 3). A website may have several named public links, as Plausible
 * allows; each link's secret (the part of its URL after /share/) is stored only as a SHA-256
 * digest, and its optional password with the project's scrypt hash. `is_public_dashboard_enabled`
 * is the hosted service's switch: while it is off no link of the website opens, and turning it on
 * again revives the links that were not revoked. Revoking is permanent (revoked_at).
 */
export function sharedDashboards(engine: Engine) {
  const { timestamp, boolean } = columnTypes(engine);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .alterTable('websites')
        .addColumn('is_public_dashboard_enabled', boolean, (c) => c.notNull().defaultTo(engine === 'postgres' ? false : 0))
        .execute();
      await db.schema
        .createTable('shared_links')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('website_id', 'text', (c) => c.notNull().references('websites.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('digest', 'text', (c) => c.notNull().unique())
        .addColumn('display_slug', 'text', (c) => c.notNull())
        .addColumn('password_hash', 'text')
        .addColumn('created_at', timestamp, (c) => c.notNull())
        .addColumn('updated_at', timestamp, (c) => c.notNull())
        .addColumn('revoked_at', timestamp)
        .execute();
      await db.schema.createIndex('shared_links_website_idx').on('shared_links').columns(['website_id', 'created_at']).execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropTable('shared_links').execute();
      await db.schema.alterTable('websites').dropColumn('is_public_dashboard_enabled').execute();
    },
  };
}
