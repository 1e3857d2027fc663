import type { Kysely } from 'kysely';
import type { Engine } from '../database.ts';
import { columnTypes } from './column-types.ts';

/**
 * Exchange rates an owner sets per currency (issue 35 item 3): a payment in another currency than
 * the website's counts at `rate` units of `to_currency` per unit of `currency`. A rate applies
 * while `to_currency` is the website's currency, so changing the website's currency leaves the old
 * rates unused rather than wrong.
 */
export function currencyRates(engine: Engine) {
  const { timestamp } = columnTypes(engine);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('currency_rates')
        .addColumn('website_id', 'text', (c) => c.notNull().references('websites.id').onDelete('cascade'))
        .addColumn('currency', 'text', (c) => c.notNull())
        .addColumn('to_currency', 'text', (c) => c.notNull())
        .addColumn('rate', 'double precision', (c) => c.notNull())
        .addColumn('updated_at', timestamp, (c) => c.notNull())
        .addPrimaryKeyConstraint('currency_rates_pk', ['website_id', 'currency'])
        .execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropTable('currency_rates').execute();
    },
  };
}
