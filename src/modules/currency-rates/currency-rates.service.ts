import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.ts';
import { invalidField } from '../../errors.ts';
import { normaliseCurrency } from '../../lib/formats.ts';
import { fromMinorUnits } from '../../lib/money.ts';
import { findWebsiteCurrency } from '../integrations/integrations.repository.ts';
import * as repo from './currency-rates.repository.ts';

// The owner's exchange rates, one per currency, into the website's currency. The reads apply them
// when they sum revenue (stats/money-rules.ts), so setting or changing a rate changes every
// report at once, past payments included; nothing is stored converted.

function currencyOf(raw: string, websiteCurrency: string): string {
  const currency = normaliseCurrency(raw);
  if (currency === null) throw invalidField('path.currency', 'must be an ISO-4217 currency code such as EUR');
  if (currency === websiteCurrency) throw invalidField('path.currency', `is the website's own currency (${websiteCurrency}); it needs no rate`);
  return currency;
}

const present = (row: { currency: string; rate: number; updated_at: string }) => ({ currency: row.currency, rate: Number(row.rate), updatedAt: row.updated_at });

export async function listRates(db: Kysely<Database>, websiteId: string) {
  const currency = await findWebsiteCurrency(db, websiteId);
  const rates = await repo.listRates(db, websiteId, currency);
  const unconverted = await repo.unconvertedPayments(db, websiteId, [currency, ...rates.map((row) => row.currency)]);
  return {
    data: rates.map(present),
    currency,
    unconverted: unconverted.map((row) => ({ currency: row.currency, payments: Number(row.payments), amount: fromMinorUnits(Number(row.minor), row.currency) })),
  };
}

export async function setRate(db: Kysely<Database>, websiteId: string, rawCurrency: string, rate: number) {
  const websiteCurrency = await findWebsiteCurrency(db, websiteId);
  const currency = currencyOf(rawCurrency, websiteCurrency);
  const row = { website_id: websiteId, currency, to_currency: websiteCurrency, rate, updated_at: new Date().toISOString() };
  await repo.upsertRate(db, row);
  return present(row);
}

/** Idempotent: deleting a rate that is not set answers deleted: false. */
export async function deleteRate(db: Kysely<Database>, websiteId: string, rawCurrency: string) {
  const currency = normaliseCurrency(rawCurrency);
  if (currency === null) throw invalidField('path.currency', 'must be an ISO-4217 currency code such as EUR');
  const deleted = await repo.deleteRate(db, websiteId, currency);
  return { message: deleted ? `The rate of ${currency} is deleted; its payments count nowhere until one is set` : `${currency} had no rate`, deleted };
}
