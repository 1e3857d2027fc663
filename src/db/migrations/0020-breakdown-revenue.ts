import { type Kysely, sql } from 'kysely';
import type { Engine } from '../database.ts';
import { columnTypes } from './column-types.ts';

/**
 * breakdown_revenue: per breakdown key, currency and renewal flag, what the visitors with a row
 * under the key paid, refunds left out (src/modules/analytics/breakdown-revenue.ts), derived here
 * from the rows and payments already stored by this migration's own copy of the fill, so that
 * later changes to the live code leave it alone. Payments gain an index by visitor: ingestion
 * looks up what a visitor paid when they gain a key, and a recorded payment finds its visitor's rows.
 */
export function breakdownRevenue(engine: Engine) {
  const t = columnTypes(engine);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      let table = db.schema
        .createTable('breakdown_revenue')
        .addColumn('website_id', 'text', (c) => c.notNull().references('websites.id'))
        .addColumn('breakdown', 'text', (c) => c.notNull())
        .addColumn('key', 'text', (c) => c.notNull())
        .addColumn('currency', 'text', (c) => c.notNull())
        .addColumn('renewal', t.boolean, (c) => c.notNull())
        .addColumn('minor', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('breakdown_revenue_pk', ['website_id', 'breakdown', 'key', 'currency', 'renewal']);
      if (engine === 'sqlite') table = table.modifyEnd(sql`without rowid`);
      await table.execute();
      await db.schema.createIndex('payments_website_visitor_idx').on('payments').columns(['website_id', 'visitor_id']).execute();
      await sql`insert into breakdown_revenue (website_id, breakdown, key, currency, renewal, minor)
        select v.website_id, v.breakdown, v.key, p.currency, p.renewal, sum(p.amount_minor)
        from breakdown_visitors v join payments p on p.website_id = v.website_id and p.visitor_id = v.visitor_id
        where p.refunded = ${sql.lit(engine === 'postgres' ? false : 0)}
        group by v.website_id, v.breakdown, v.key, p.currency, p.renewal`.execute(db);
      if (engine === 'postgres') await sql`analyze breakdown_revenue, payments`.execute(db);
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropIndex('payments_website_visitor_idx').execute();
      await db.schema.dropTable('breakdown_revenue').execute();
    },
  };
}
