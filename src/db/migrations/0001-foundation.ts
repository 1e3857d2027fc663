import { type Kysely, sql } from 'kysely';
import type { Engine } from '../database.ts';
import { columnTypes } from './column-types.ts';

export function foundation(engine: Engine) {
  const t = columnTypes(engine);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('accounts')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('email', 'text', (c) => c.notNull().unique())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('plan', 'text', (c) => c.notNull())
        .addColumn('created_at', t.timestamp, (c) => c.notNull())
        .addColumn('updated_at', t.timestamp, (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('access_tokens')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('digest', 'text', (c) => c.notNull().unique())
        .addColumn('display_key', 'text', (c) => c.notNull())
        .addColumn('permissions', 'text', (c) => c.notNull())
        .addColumn('website_ids', 'text', (c) => c.notNull())
        .addColumn('expires_at', t.timestamp)
        .addColumn('last_used_at', t.timestamp)
        .addColumn('revoked_at', t.timestamp)
        .addColumn('created_at', t.timestamp, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('access_tokens_account_idx').on('access_tokens').columns(['account_id']).execute();

      await db.schema
        .createTable('websites')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('domain', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('tracking_id', 'text', (c) => c.notNull().unique())
        .addColumn('timezone', 'text', (c) => c.notNull())
        .addColumn('currency', 'text', (c) => c.notNull())
        .addColumn('kpi', 'text')
        .addColumn('kpi_color_scheme', 'text')
        .addColumn('revenue_metric', 'text', (c) => c.notNull())
        .addColumn('is_cookieless', t.boolean, (c) => c.notNull())
        .addColumn('include_renewal_revenue', t.boolean, (c) => c.notNull())
        .addColumn('allowed_hostnames', 'text', (c) => c.notNull())
        .addColumn('excluded_ips', 'text', (c) => c.notNull())
        .addColumn('excluded_paths', 'text', (c) => c.notNull())
        .addColumn('excluded_countries', 'text', (c) => c.notNull())
        .addColumn('excluded_hostnames', 'text', (c) => c.notNull())
        .addColumn('created_at', t.timestamp, (c) => c.notNull())
        .addColumn('updated_at', t.timestamp, (c) => c.notNull())
        .execute();

      // Roles live here only, the owner's included: one row per (website, account).
      await db.schema
        .createTable('website_members')
        .addColumn('website_id', 'text', (c) => c.notNull().references('websites.id').onDelete('cascade'))
        .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('role', 'text', (c) => c.notNull())
        .addColumn('created_at', t.timestamp, (c) => c.notNull())
        .addPrimaryKeyConstraint('website_members_pk', ['website_id', 'account_id'])
        .execute();
      await db.schema.createIndex('website_members_account_idx').on('website_members').columns(['account_id']).execute();
      // One owner per website, enforced by the database.
      await sql`create unique index website_members_one_owner on website_members (website_id) where role = 'owner'`.execute(db);

      await db.schema
        .createTable('api_keys')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('website_id', 'text', (c) => c.notNull().references('websites.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('digest', 'text', (c) => c.notNull().unique())
        .addColumn('display_key', 'text', (c) => c.notNull())
        .addColumn('last_used_at', t.timestamp)
        .addColumn('revoked_at', t.timestamp)
        .addColumn('created_at', t.timestamp, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('api_keys_website_idx').on('api_keys').columns(['website_id']).execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      for (const table of ['api_keys', 'website_members', 'websites', 'access_tokens', 'accounts']) {
        await db.schema.dropTable(table).execute();
      }
    },
  };
}
