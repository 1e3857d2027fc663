import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.ts';
import { minorUnitFactor } from '../../lib/money.ts';
import { listRates } from '../currency-rates/currency-rates.repository.ts';
import type { MoneyRules } from './event-store.ts';

/** How the reads count money for a website: its currency, renewals or not, and the owner's rates for the others. */
export async function moneyRulesOf(db: Kysely<Database>, websiteId: string, website: { currency: string; include_renewal_revenue: unknown }): Promise<MoneyRules> {
  const rates = await listRates(db, websiteId, website.currency);
  return {
    currency: website.currency,
    includeRenewals: Boolean(website.include_renewal_revenue),
    rates: rates.map((row) => ({ currency: row.currency, factor: minorUnitFactor(Number(row.rate), row.currency, website.currency) })),
  };
}
