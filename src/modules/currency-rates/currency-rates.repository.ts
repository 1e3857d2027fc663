import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.ts';

/** The rates into `toCurrency` (the website's currency): those set while it was another one do not apply. */
export async function listRates(db: Kysely<Database>, websiteId: string, toCurrency: string) {
  return db
    .selectFrom('currency_rates')
    .select(['currency', 'rate', 'updated_at'])
    .where('website_id', '=', websiteId)
    .where('to_currency', '=', toCurrency)
    .orderBy('currency')
    .execute();
}

export async function upsertRate(db: Kysely<Database>, row: { website_id: string; currency: string; to_currency: string; rate: number; updated_at: string }): Promise<void> {
  await db
    .insertInto('currency_rates')
    .values(row)
    .onConflict((oc) => oc.columns(['website_id', 'currency']).doUpdateSet({ to_currency: row.to_currency, rate: row.rate, updated_at: row.updated_at }))
    .execute();
}

export async function deleteRate(db: Kysely<Database>, websiteId: string, currency: string): Promise<boolean> {
  const result = await db.deleteFrom('currency_rates').where('website_id', '=', websiteId).where('currency', '=', currency).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/**
 * Payments counted nowhere: not refunded, in a currency that is neither the website's nor rated,
 * and not converted by the provider into the website's currency (`counted[0]`). Per currency.
 */
export async function unconvertedPayments(db: Kysely<Database>, websiteId: string, counted: [string, ...string[]]) {
  return db
    .selectFrom('payments')
    .select((eb) => ['currency', eb.fn.countAll<string>().as('payments'), eb.fn.sum<string>('amount_minor').as('minor')])
    .where('website_id', '=', websiteId)
    .where('refunded', '=', false)
    .where('currency', 'not in', counted)
    .where((eb) => eb.or([eb('converted_currency', 'is', null), eb('converted_currency', '<>', counted[0])]))
    .groupBy('currency')
    .orderBy('currency')
    .execute();
}
