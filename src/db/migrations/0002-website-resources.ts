import { type Kysely, sql } from 'kysely';
import type { Engine } from '../database.ts';
import { columnTypes } from './column-types.ts';

/** Goal customizations, funnels, alerts and their history, invitations, integrations and jobs. */
export function websiteResources(engine: Engine) {
  const t = columnTypes(engine);
  const isTrue = engine === 'postgres' ? sql.raw('true') : sql.raw('1');
  const websiteRef = (c: any) => c.notNull().references('websites.id').onDelete('cascade'); // eslint-disable-line @typescript-eslint/no-explicit-any
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('goal_customizations')
        .addColumn('website_id', 'text', websiteRef)
        .addColumn('goal_name', 'text', (c) => c.notNull())
        .addColumn('display_name', 'text')
        .addColumn('color', 'text')
        .addColumn('description', 'text')
        .addColumn('updated_at', t.timestamp, (c) => c.notNull())
        .addPrimaryKeyConstraint('goal_customizations_pk', ['website_id', 'goal_name'])
        .execute();

      await db.schema
        .createTable('funnels')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('website_id', 'text', websiteRef)
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('slug', 'text', (c) => c.notNull())
        .addColumn('steps', 'text', (c) => c.notNull())
        .addColumn('is_active', t.boolean, (c) => c.notNull())
        .addColumn('created_at', t.timestamp, (c) => c.notNull())
        .addColumn('updated_at', t.timestamp, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('funnels_website_idx').on('funnels').columns(['website_id', 'created_at']).execute();
      // Names are unique among a website's active funnels (case-insensitively); deleted ones may repeat.
      await sql`create unique index funnels_active_name on funnels (website_id, lower(name)) where is_active = ${isTrue}`.execute(db);

      await db.schema
        .createTable('alerts')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('website_id', 'text', websiteRef)
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('goal_name', 'text', (c) => c.notNull())
        .addColumn('subject', 'text')
        .addColumn('message', 'text', (c) => c.notNull())
        .addColumn('is_enabled', t.boolean, (c) => c.notNull())
        .addColumn('last_triggered_at', t.timestamp)
        .addColumn('created_at', t.timestamp, (c) => c.notNull())
        .addColumn('updated_at', t.timestamp, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('alerts_website_goal_idx').on('alerts').columns(['website_id', 'goal_name']).execute();

      await db.schema
        .createTable('alert_history')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('website_id', 'text', websiteRef)
        .addColumn('alert_id', 'text', (c) => c.notNull())
        .addColumn('alert_name', 'text', (c) => c.notNull())
        .addColumn('goal_name', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('error', 'text')
        .addColumn('visitor_id', 'text')
        .addColumn('triggered_at', t.timestamp, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('alert_history_website_idx').on('alert_history').columns(['website_id', 'triggered_at']).execute();
      await db.schema.createIndex('alert_history_alert_idx').on('alert_history').columns(['alert_id', 'triggered_at']).execute();

      await db.schema
        .createTable('invitations')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('website_id', 'text', websiteRef)
        .addColumn('email', 'text', (c) => c.notNull())
        .addColumn('role', 'text', (c) => c.notNull())
        .addColumn('invited_by', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('created_at', t.timestamp, (c) => c.notNull())
        .addUniqueConstraint('invitations_website_email', ['website_id', 'email'])
        .execute();
      await db.schema.createIndex('invitations_email_idx').on('invitations').columns(['email']).execute();

      await db.schema
        .createTable('integrations')
        .addColumn('website_id', 'text', websiteRef)
        .addColumn('provider', 'text', (c) => c.notNull())
        .addColumn('key_id', 'text', (c) => c.notNull())
        .addColumn('ciphertext', 'text', (c) => c.notNull())
        .addColumn('connected_at', t.timestamp, (c) => c.notNull())
        .addColumn('updated_at', t.timestamp, (c) => c.notNull())
        .addPrimaryKeyConstraint('integrations_pk', ['website_id', 'provider'])
        .execute();

      await db.schema
        .createTable('integration_jobs')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('website_id', 'text', websiteRef)
        .addColumn('provider', 'text', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('error', 'text')
        .addColumn('requested_at', t.timestamp, (c) => c.notNull())
        .addColumn('started_at', t.timestamp)
        .addColumn('finished_at', t.timestamp)
        .execute();
      await db.schema.createIndex('integration_jobs_status_idx').on('integration_jobs').columns(['status', 'requested_at']).execute();
      await db.schema
        .createIndex('integration_jobs_website_idx')
        .on('integration_jobs')
        .columns(['website_id', 'provider', 'requested_at'])
        .execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      for (const table of ['integration_jobs', 'integrations', 'invitations', 'alert_history', 'alerts', 'funnels', 'goal_customizations']) {
        await db.schema.dropTable(table).execute();
      }
    },
  };
}
