import type { Kysely } from 'kysely';
import type { Engine } from '../database.ts';
import { columnTypes } from './column-types.ts';

/** Events and payments, the rollups that keep reads fast at millions of events, and the mail outbox. */
export function events(engine: Engine) {
  const t = columnTypes(engine);
  const websiteRef = (c: any) => c.notNull().references('websites.id').onDelete('cascade'); // eslint-disable-line @typescript-eslint/no-explicit-any
  const count = (c: any) => c.notNull().defaultTo(0); // eslint-disable-line @typescript-eslint/no-explicit-any
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('events')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('website_id', 'text', websiteRef)
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('name', 'text')
        .addColumn('visitor_id', 'text', (c) => c.notNull())
        .addColumn('session_id', 'text')
        .addColumn('hostname', 'text')
        .addColumn('path', 'text')
        .addColumn('referrer', 'text')
        .addColumn('country', 'text')
        .addColumn('browser', 'text')
        .addColumn('os', 'text')
        .addColumn('device', 'text')
        .addColumn('metadata', 'text')
        .addColumn('source', 'text', (c) => c.notNull())
        .addColumn('occurred_at', t.timestamp, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('events_website_time_idx').on('events').columns(['website_id', 'occurred_at']).execute();
      await db.schema.createIndex('events_website_goal_idx').on('events').columns(['website_id', 'type', 'name', 'occurred_at']).execute();
      await db.schema.createIndex('events_website_visitor_idx').on('events').columns(['website_id', 'visitor_id', 'type']).execute();

      await db.schema
        .createTable('payments')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('website_id', 'text', websiteRef)
        .addColumn('transaction_id', 'text', (c) => c.notNull())
        .addColumn('amount_minor', 'bigint', (c) => c.notNull())
        .addColumn('currency', 'text', (c) => c.notNull())
        .addColumn('visitor_id', 'text')
        .addColumn('email', 'text')
        .addColumn('renewal', t.boolean, (c) => c.notNull())
        .addColumn('refunded', t.boolean, (c) => c.notNull())
        .addColumn('occurred_at', t.timestamp, (c) => c.notNull())
        .addColumn('created_at', t.timestamp, (c) => c.notNull())
        .addUniqueConstraint('payments_website_transaction', ['website_id', 'transaction_id'])
        .execute();
      await db.schema.createIndex('payments_website_time_idx').on('payments').columns(['website_id', 'occurred_at']).execute();

      await db.schema
        .createTable('visitor_days')
        .addColumn('website_id', 'text', websiteRef)
        .addColumn('day', 'text', (c) => c.notNull())
        .addColumn('visitor_id', 'text', (c) => c.notNull())
        .addColumn('pageviews', 'integer', count)
        .addColumn('sessions', 'integer', count)
        .addColumn('last_session_id', 'text')
        .addColumn('goals', 'integer', count)
        .addPrimaryKeyConstraint('visitor_days_pk', ['website_id', 'day', 'visitor_id'])
        .execute();

      await db.schema
        .createTable('daily_totals')
        .addColumn('website_id', 'text', websiteRef)
        .addColumn('day', 'text', (c) => c.notNull())
        .addColumn('visitors', 'integer', count)
        .addColumn('sessions', 'integer', count)
        .addColumn('pageviews', 'integer', count)
        .addColumn('converted_visitors', 'integer', count)
        .addPrimaryKeyConstraint('daily_totals_pk', ['website_id', 'day'])
        .execute();

      await db.schema
        .createTable('goal_stats')
        .addColumn('website_id', 'text', websiteRef)
        .addColumn('goal_name', 'text', (c) => c.notNull())
        .addColumn('completions', 'integer', count)
        .addColumn('visitors', 'integer', count)
        .addColumn('last_completed_at', t.timestamp, (c) => c.notNull())
        .addPrimaryKeyConstraint('goal_stats_pk', ['website_id', 'goal_name'])
        .execute();

      await db.schema
        .createTable('goal_visitors')
        .addColumn('website_id', 'text', websiteRef)
        .addColumn('goal_name', 'text', (c) => c.notNull())
        .addColumn('visitor_id', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('goal_visitors_pk', ['website_id', 'goal_name', 'visitor_id'])
        .execute();

      await db.schema
        .createTable('daily_salts')
        .addColumn('day', 'text', (c) => c.primaryKey())
        .addColumn('salt', 'text', (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('mail_outbox')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('website_id', 'text', websiteRef)
        .addColumn('alert_history_id', 'text')
        .addColumn('to_address', 'text', (c) => c.notNull())
        .addColumn('subject', 'text', (c) => c.notNull())
        .addColumn('text', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('attempts', 'integer', count)
        .addColumn('next_attempt_at', t.timestamp, (c) => c.notNull())
        .addColumn('last_error', 'text')
        .addColumn('created_at', t.timestamp, (c) => c.notNull())
        .addColumn('sent_at', t.timestamp)
        .execute();
      await db.schema.createIndex('mail_outbox_due_idx').on('mail_outbox').columns(['status', 'next_attempt_at']).execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      for (const table of ['mail_outbox', 'daily_salts', 'goal_visitors', 'goal_stats', 'daily_totals', 'visitor_days', 'payments', 'events']) {
        await db.schema.dropTable(table).execute();
      }
    },
  };
}
