import { type Kysely, sql } from 'kysely';
import type { Engine } from '../database.ts';
import { columnTypes } from './column-types.ts';
import { markBuilds } from './derived-builds.ts';

/**
 * breakdown_revenue: per breakdown key, currency and renewal flag, what the visitors with a row
 * under the key paid, refunds left out, and breakdown_profile_revenue, the same per visitor
 * profile for the steady visitors (src/modules/analytics/breakdown-revenue.ts), derived from
 * the rows and payments already stored by a background build (./derived-builds.ts). Payments gain an index by visitor: ingestion
 * looks up what a visitor paid when they gain a key, and a recorded payment finds its visitor's rows.
 */
export function breakdownRevenue(engine: Engine) {
  const t = columnTypes(engine);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      for (const [name, profiled] of [
        ['breakdown_revenue', false],
        ['breakdown_profile_revenue', true],
      ] as const) {
        let table = db.schema
          .createTable(name)
          .addColumn('website_id', 'text', (c) => c.notNull().references('websites.id'))
          .addColumn('breakdown', 'text', (c) => c.notNull())
          .addColumn('key', 'text', (c) => c.notNull());
        if (profiled) table = table.addColumn('profile', 'text', (c) => c.notNull());
        table = table
          .addColumn('currency', 'text', (c) => c.notNull())
          .addColumn('renewal', t.boolean, (c) => c.notNull())
          .addColumn('minor', 'bigint', (c) => c.notNull())
          .addPrimaryKeyConstraint(`${name}_pk`, ['website_id', 'breakdown', 'key', ...(profiled ? ['profile'] : []), 'currency', 'renewal'] as never);
        if (engine === 'sqlite') table = table.modifyEnd(sql`without rowid`);
        await table.execute();
      }
      await db.schema.createIndex('payments_website_visitor_idx').on('payments').columns(['website_id', 'visitor_id']).execute();
      await markBuilds(db, 'migration 0020: breakdown_revenue, breakdown_profile_revenue');
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropIndex('payments_website_visitor_idx').execute();
      await db.schema.dropTable('breakdown_profile_revenue').execute();
      await db.schema.dropTable('breakdown_revenue').execute();
    },
  };
}
