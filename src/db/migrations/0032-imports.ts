import type { Kysely } from 'kysely';
import type { Engine } from '../database.ts';
import { columnTypes } from './column-types.ts';

/**
 * Imports of another analytics tool's history (issue 37 item 1): Plausible's CSV export first.
 * `imports` is one upload and its progress and report; `import_uploads` holds the zip until its
 * job has read it; each `imported_*` table holds one of Plausible's tables' daily aggregates, per
 * website, import and local day of the website, with the columns the export has (keys are text,
 * '' when the export left them empty; metrics are counts, durations in seconds).
 */
export const IMPORTED_TABLE_COLUMNS: Record<string, { keys: string[]; metrics: string[] }> = {
  imported_visitors: { keys: [], metrics: ['visitors', 'pageviews', 'bounces', 'visits', 'visit_duration'] },
  imported_sources: {
    keys: ['source', 'referrer', 'utm_source', 'utm_medium', 'utm_campaign', 'utm_content', 'utm_term'],
    metrics: ['visitors', 'visits', 'visit_duration', 'bounces', 'pageviews'],
  },
  imported_pages: { keys: ['hostname', 'page'], metrics: ['visitors', 'visits', 'pageviews', 'exits', 'time_on_page'] },
  imported_entry_pages: { keys: ['entry_page'], metrics: ['visitors', 'entrances', 'visit_duration', 'bounces', 'pageviews'] },
  imported_exit_pages: { keys: ['exit_page'], metrics: ['visitors', 'visit_duration', 'exits', 'bounces', 'pageviews'] },
  imported_custom_events: { keys: ['name', 'link_url', 'path'], metrics: ['visitors', 'events'] },
  imported_locations: { keys: ['country', 'region', 'city'], metrics: ['visitors', 'visits', 'visit_duration', 'bounces', 'pageviews'] },
  imported_devices: { keys: ['device'], metrics: ['visitors', 'visits', 'visit_duration', 'bounces', 'pageviews'] },
  imported_browsers: { keys: ['browser', 'browser_version'], metrics: ['visitors', 'visits', 'visit_duration', 'bounces', 'pageviews'] },
  imported_operating_systems: {
    keys: ['operating_system', 'operating_system_version'],
    metrics: ['visitors', 'visits', 'visit_duration', 'bounces', 'pageviews'],
  },
};

export function imports(engine: Engine) {
  const { timestamp } = columnTypes(engine);
  const blob = engine === 'postgres' ? 'bytea' : 'blob';
  const websiteRef = (c: any) => c.notNull().references('websites.id').onDelete('cascade'); // eslint-disable-line @typescript-eslint/no-explicit-any
  const importRef = (c: any) => c.notNull().references('imports.id').onDelete('cascade'); // eslint-disable-line @typescript-eslint/no-explicit-any
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('imports')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('website_id', 'text', websiteRef)
        .addColumn('source', 'text', (c) => c.notNull())
        .addColumn('label', 'text', (c) => c.notNull())
        .addColumn('content_digest', 'text', (c) => c.notNull())
        .addColumn('upload_bytes', 'integer', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('job_id', 'text')
        .addColumn('first_day', 'text')
        .addColumn('last_day', 'text')
        .addColumn('files_total', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('files_done', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('rows_read', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('rows_kept', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('rows_skipped', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('report', 'text', (c) => c.notNull())
        .addColumn('error', 'text')
        .addColumn('created_by', 'text')
        .addColumn('created_at', timestamp, (c) => c.notNull())
        .addColumn('updated_at', timestamp, (c) => c.notNull())
        .addColumn('finished_at', timestamp)
        .execute();
      await db.schema.createIndex('imports_website_idx').on('imports').columns(['website_id', 'created_at']).execute();
      await db.schema.createIndex('imports_digest_idx').on('imports').columns(['website_id', 'content_digest']).execute();

      await db.schema
        .createTable('import_uploads')
        .addColumn('import_id', 'text', (c) => c.primaryKey().references('imports.id').onDelete('cascade'))
        .addColumn('website_id', 'text', websiteRef)
        .addColumn('data', blob, (c) => c.notNull())
        .execute();

      for (const [table, { keys, metrics }] of Object.entries(IMPORTED_TABLE_COLUMNS)) {
        let create = db.schema
          .createTable(table)
          .addColumn('website_id', 'text', websiteRef)
          .addColumn('import_id', 'text', importRef)
          .addColumn('day', 'text', (c) => c.notNull());
        for (const key of keys) create = create.addColumn(key, 'text', (c) => c.notNull().defaultTo(''));
        for (const metric of metrics) create = create.addColumn(metric, 'bigint', (c) => c.notNull().defaultTo(0));
        await create.execute();
        await db.schema.createIndex(`${table}_website_day_idx`).on(table).columns(['website_id', 'day']).execute();
        await db.schema.createIndex(`${table}_import_day_idx`).on(table).columns(['import_id', 'day']).execute();
      }
    },
    async down(db: Kysely<unknown>): Promise<void> {
      for (const table of Object.keys(IMPORTED_TABLE_COLUMNS)) await db.schema.dropTable(table).execute();
      await db.schema.dropTable('import_uploads').execute();
      await db.schema.dropTable('imports').execute();
    },
  };
}
