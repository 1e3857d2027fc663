import { type Kysely, sql } from 'kysely';
import type { Engine } from '../database.ts';

/**
 * Payments go through the rollup backlog like events (issue 38): a payment's write no longer takes
 * the website's derived-data lock, and the fold brings it into the derived tables.
 *
 * - `payments.counted`: how the derived tables (breakdown_revenue, breakdown_profile_revenue) hold
 *   the payment now: 0 not at all, 1 its paid amount without its provider's conversion, 2 with it.
 *   A writer changes the payment's own columns at once (refunded, converted_*: what raw reads and
 *   answers see) and only the fold (or a writer holding the website's lock) changes `counted`,
 *   taking out what it held and adding the payment as it is now. Existing payments are held as
 *   they are: refunded ones not at all, the others with their conversion when they have one
 *   (the sums were kept that way before).
 * - `rollup_backlog.payment_id`: a row naming a payment whose counting may have changed (inserted,
 *   refunded, given its conversion), in the same order (seq) as the events' rows; `event_id` is
 *   null on such a row. SQLite cannot drop a NOT NULL: the table is made again and its rows
 *   copied with their seq. Going down refuses while rows wait, as 0021 does.
 */
export function paymentBacklog(engine: Engine) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('payments').addColumn('counted', 'smallint', (c) => c.notNull().defaultTo(0)).execute();
      await sql`update payments set counted = case when refunded = ${sql.lit(engine === 'postgres' ? true : 1)} then 0 when converted_currency is null then 1 else 2 end`.execute(db);
      if (engine === 'postgres') {
        await sql`ALTER TABLE rollup_backlog ALTER COLUMN event_id DROP NOT NULL`.execute(db);
        await sql`ALTER TABLE rollup_backlog ADD COLUMN payment_id text`.execute(db);
        return;
      }
      await sql`CREATE TABLE rollup_backlog_next (
        seq integer PRIMARY KEY AUTOINCREMENT,
        website_id text NOT NULL REFERENCES websites(id) ON DELETE CASCADE,
        event_id text,
        payment_id text
      )`.execute(db);
      await sql`INSERT INTO rollup_backlog_next (seq, website_id, event_id) SELECT seq, website_id, event_id FROM rollup_backlog`.execute(db);
      await sql`DROP TABLE rollup_backlog`.execute(db);
      await sql`ALTER TABLE rollup_backlog_next RENAME TO rollup_backlog`.execute(db);
      await db.schema.createIndex('rollup_backlog_website_idx').on('rollup_backlog').columns(['website_id', 'seq']).execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      const waiting = await sql<{ n: number }>`select count(*) as n from rollup_backlog where payment_id is not null`.execute(db);
      const count = Number(waiting.rows[0]?.n ?? 0);
      if (count > 0) throw new Error(`rollup_backlog holds ${count} payment changes not yet counted: start and stop this release's server once (a graceful stop derives them), then migrate down`);
      if (engine === 'postgres') {
        await sql`ALTER TABLE rollup_backlog DROP COLUMN payment_id`.execute(db);
        await sql`ALTER TABLE rollup_backlog ALTER COLUMN event_id SET NOT NULL`.execute(db);
      } else {
        await sql`CREATE TABLE rollup_backlog_next (
          seq integer PRIMARY KEY AUTOINCREMENT,
          website_id text NOT NULL REFERENCES websites(id) ON DELETE CASCADE,
          event_id text NOT NULL
        )`.execute(db);
        await sql`INSERT INTO rollup_backlog_next (seq, website_id, event_id) SELECT seq, website_id, event_id FROM rollup_backlog`.execute(db);
        await sql`DROP TABLE rollup_backlog`.execute(db);
        await sql`ALTER TABLE rollup_backlog_next RENAME TO rollup_backlog`.execute(db);
        await db.schema.createIndex('rollup_backlog_website_idx').on('rollup_backlog').columns(['website_id', 'seq']).execute();
      }
      await db.schema.alterTable('payments').dropColumn('counted').execute();
    },
  };
}
