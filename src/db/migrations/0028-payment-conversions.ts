import { type Kysely, sql } from 'kysely';
import type { Engine } from '../database.ts';
import { columnTypes } from './column-types.ts';

/**
 * The provider's own conversion of a payment (issue 35 item 3): `converted_minor` minor units of
 * `converted_currency`, where the provider sends one (Lemon Squeezy's USD total, Shopify's shop
 * money, Paddle's payout total, Stripe's balance transaction), null otherwise. A payment whose
 * converted currency is the website's counts that amount before any owner's rate.
 *
 * breakdown_revenue and breakdown_profile_revenue keep their sums per converted currency too
 * ('' for none) with the converted sum beside the paid one, so the rollup reads as the raw
 * payments do whatever the website's currency is now. Their key gains the column, which SQLite
 * cannot add to a primary key: each table is made again and its rows copied ('' and 0: no payment
 * had a conversion before this migration), so no rebuild is needed. The payments' covering
 * index for revenue reads gains the two columns.
 */
export function paymentConversions(engine: Engine) {
  const t = columnTypes(engine);
  const rollups = [
    ['breakdown_revenue', false],
    ['breakdown_profile_revenue', true],
  ] as const;
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('payments').addColumn('converted_minor', 'bigint').execute();
      await db.schema.alterTable('payments').addColumn('converted_currency', 'text').execute();
      await db.schema.dropIndex('payments_revenue_idx').execute();
      await db.schema
        .createIndex('payments_revenue_idx')
        .on('payments')
        .columns(['website_id', 'occurred_at', 'currency', 'refunded', 'renewal', 'amount_minor', 'converted_currency', 'converted_minor'])
        .execute();
      for (const [name, profiled] of rollups) {
        const next = `${name}_next`;
        let table = db.schema
          .createTable(next)
          .addColumn('website_id', 'text', (c) => c.notNull().references('websites.id'))
          .addColumn('breakdown', 'text', (c) => c.notNull())
          .addColumn('key', 'text', (c) => c.notNull());
        if (profiled) table = table.addColumn('profile', 'text', (c) => c.notNull());
        table = table
          .addColumn('currency', 'text', (c) => c.notNull())
          .addColumn('converted_currency', 'text', (c) => c.notNull())
          .addColumn('renewal', t.boolean, (c) => c.notNull())
          .addColumn('minor', 'bigint', (c) => c.notNull())
          .addColumn('converted_minor', 'bigint', (c) => c.notNull())
          .addPrimaryKeyConstraint(`${next}_pk`, ['website_id', 'breakdown', 'key', ...(profiled ? ['profile'] : []), 'currency', 'converted_currency', 'renewal'] as never);
        if (engine === 'sqlite') table = table.modifyEnd(sql`without rowid`);
        await table.execute();
        const columns = sql.join(['website_id', 'breakdown', 'key', ...(profiled ? ['profile'] : []), 'currency', 'renewal', 'minor'].map((c) => sql.ref(c)));
        await sql`insert into ${sql.table(next)} (${columns}, converted_currency, converted_minor) select ${columns}, '', 0 from ${sql.table(name)}`.execute(db);
        await db.schema.dropTable(name).execute();
        await db.schema.alterTable(next).renameTo(name).execute();
        if (engine === 'postgres') await sql`alter table ${sql.table(name)} rename constraint ${sql.ref(`${next}_pk`)} to ${sql.ref(`${name}_pk`)}`.execute(db);
      }
    },
    async down(db: Kysely<unknown>): Promise<void> {
      for (const [name, profiled] of rollups) {
        const keep = ['website_id', 'breakdown', 'key', ...(profiled ? ['profile'] : []), 'currency', 'renewal'];
        const previous = `${name}_previous`;
        let table = db.schema
          .createTable(previous)
          .addColumn('website_id', 'text', (c) => c.notNull().references('websites.id'))
          .addColumn('breakdown', 'text', (c) => c.notNull())
          .addColumn('key', 'text', (c) => c.notNull());
        if (profiled) table = table.addColumn('profile', 'text', (c) => c.notNull());
        table = table
          .addColumn('currency', 'text', (c) => c.notNull())
          .addColumn('renewal', t.boolean, (c) => c.notNull())
          .addColumn('minor', 'bigint', (c) => c.notNull())
          .addPrimaryKeyConstraint(`${previous}_pk`, keep as never);
        if (engine === 'sqlite') table = table.modifyEnd(sql`without rowid`);
        await table.execute();
        const columns = sql.join(keep.map((c) => sql.ref(c)));
        await sql`insert into ${sql.table(previous)} (${columns}, minor) select ${columns}, sum(minor) from ${sql.table(name)} group by ${columns}`.execute(db);
        await db.schema.dropTable(name).execute();
        await db.schema.alterTable(previous).renameTo(name).execute();
        if (engine === 'postgres') await sql`alter table ${sql.table(name)} rename constraint ${sql.ref(`${previous}_pk`)} to ${sql.ref(`${name}_pk`)}`.execute(db);
      }
      await db.schema.dropIndex('payments_revenue_idx').execute();
      await db.schema.createIndex('payments_revenue_idx').on('payments').columns(['website_id', 'occurred_at', 'currency', 'refunded', 'renewal', 'amount_minor']).execute();
      await db.schema.alterTable('payments').dropColumn('converted_currency').execute();
      await db.schema.alterTable('payments').dropColumn('converted_minor').execute();
    },
  };
}
