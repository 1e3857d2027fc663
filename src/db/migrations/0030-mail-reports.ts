import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import type { Engine } from '../database.ts';
import { columnTypes } from './column-types.ts';

/**
 * Reports by mail and the traffic-spike alert (issue 37 item 4; src/modules/reports):
 * - websites.send_weekly_reports / send_viral_traffic_alerts: the website's switches (the hosted
 *   service's sendWeeklyReports / sendViralTrafficAlerts), off until an owner turns them on.
 * - mail_report_subscriptions: a member's own choice per website and kind (weekly, monthly,
 *   spike); no row means the default (docs/decisions.md, "Reports by mail").
 * - mail_report_deliveries: one row per (website, member, kind, period) mailed, written in the
 *   transaction that queues the mail, so a period is mailed once whatever the number of instances
 *   and restarts; it holds the digest of the mail's unsubscribe token, never the token.
 * - mail_spike_checks: the last hour checked for a spike (claimed by one instance) and the last
 *   spike mailed, per website.
 * - mail_outbox.html / list_unsubscribe: the HTML part and the List-Unsubscribe URL of a mail
 *   (sealed like its text while it waits; removed once sent).
 */
export function mailReports(engine: Engine) {
  const { timestamp, boolean } = columnTypes(engine);
  const no = engine === 'postgres' ? sql`false` : sql`0`;
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('websites').addColumn('send_weekly_reports', boolean, (c) => c.notNull().defaultTo(no)).execute();
      await db.schema.alterTable('websites').addColumn('send_viral_traffic_alerts', boolean, (c) => c.notNull().defaultTo(no)).execute();
      await db.schema.alterTable('mail_outbox').addColumn('html', 'text').execute();
      await db.schema.alterTable('mail_outbox').addColumn('list_unsubscribe', 'text').execute();
      await db.schema
        .createTable('mail_report_subscriptions')
        .addColumn('website_id', 'text', (c) => c.notNull().references('websites.id').onDelete('cascade'))
        .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('enabled', boolean, (c) => c.notNull())
        .addColumn('updated_at', timestamp, (c) => c.notNull())
        .addPrimaryKeyConstraint('mail_report_subscriptions_pk', ['website_id', 'account_id', 'kind'])
        .execute();
      await db.schema
        .createTable('mail_report_deliveries')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('website_id', 'text', (c) => c.notNull().references('websites.id').onDelete('cascade'))
        .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('period_start', 'text', (c) => c.notNull())
        .addColumn('unsubscribe_digest', 'text', (c) => c.notNull().unique())
        .addColumn('created_at', timestamp, (c) => c.notNull())
        .addUniqueConstraint('mail_report_deliveries_period', ['website_id', 'account_id', 'kind', 'period_start'])
        .execute();
      await db.schema.createIndex('mail_report_deliveries_account').on('mail_report_deliveries').columns(['account_id']).execute();
      await db.schema
        .createTable('mail_spike_checks')
        .addColumn('website_id', 'text', (c) => c.primaryKey().references('websites.id').onDelete('cascade'))
        .addColumn('checked_hour', 'text', (c) => c.notNull())
        .addColumn('last_spike_at', 'text')
        .execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropTable('mail_spike_checks').execute();
      await db.schema.dropTable('mail_report_deliveries').execute();
      await db.schema.dropTable('mail_report_subscriptions').execute();
      await db.schema.alterTable('mail_outbox').dropColumn('list_unsubscribe').execute();
      await db.schema.alterTable('mail_outbox').dropColumn('html').execute();
      await db.schema.alterTable('websites').dropColumn('send_viral_traffic_alerts').execute();
      await db.schema.alterTable('websites').dropColumn('send_weekly_reports').execute();
    },
  };
}
