import type { Kysely } from 'kysely';

/**
 * What a fast time series needs (src/modules/analytics). Distinct visitors over a range of days:
 * each visitor-day row knows the visitor's previous active day and previous converting day, and
 * visitor_recency counts the rows per (day, previous day). A visitor is counted once in
 * [a, b] by the one row of theirs in that range whose previous day is before a, so a 30-day
 * distinct count reads about days x distinct gaps rows instead of every visitor-day.
 */
export function analytics() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('visitor_days').addColumn('prev_day', 'text').execute();
      await db.schema.alterTable('visitor_days').addColumn('prev_goal_day', 'text').execute();
      await db.schema.createIndex('visitor_days_visitor_idx').on('visitor_days').columns(['website_id', 'visitor_id', 'day']).execute();

      await db.schema
        .createTable('visitor_recency')
        .addColumn('website_id', 'text', (c) => c.notNull().references('websites.id').onDelete('cascade'))
        .addColumn('day', 'text', (c) => c.notNull())
        // '' for a first visit (or first conversion): it sorts before every day.
        .addColumn('prev_day', 'text', (c) => c.notNull())
        .addColumn('visitors', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('converted', 'integer', (c) => c.notNull().defaultTo(0))
        .addPrimaryKeyConstraint('visitor_recency_pk', ['website_id', 'day', 'prev_day'])
        .execute();

      // Revenue per bucket reads this index alone (no table row per payment).
      await db.schema
        .createIndex('payments_revenue_idx')
        .on('payments')
        .columns(['website_id', 'occurred_at', 'currency', 'refunded', 'renewal', 'amount_minor'])
        .execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropIndex('payments_revenue_idx').execute();
      await db.schema.dropTable('visitor_recency').execute();
      await db.schema.dropIndex('visitor_days_visitor_idx').execute();
      await db.schema.alterTable('visitor_days').dropColumn('prev_goal_day').execute();
      await db.schema.alterTable('visitor_days').dropColumn('prev_day').execute();
    },
  };
}
