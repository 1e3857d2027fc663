import { type RawBuilder, sql } from 'kysely';
import type { MoneyRules } from '../event-store.ts';

// Revenue in the website's currency, over payments (or kept sums of them) in any currency: the
// website's own counts as it is; another one converted by the provider into the website's (the
// payment's converted_minor and converted_currency, migration 0028) counts the provider's amount;
// any other at the owner's rate (money-rules.ts), rounded to a whole minor unit per payment (or
// per kept sum); and a currency without a rate not at all.
// The rates are bound parameters: currency codes are checked ISO-4217 codes, factors numbers.

/** The provider's conversion of a payment or kept sum: its amount in minor units of its currency. */
export interface ProviderConversion {
  amount: RawBuilder<unknown>;
  currency: RawBuilder<unknown>;
}

/** `column` is a currency that counts (the website's, or one with a rate), or `converted` is into the website's. */
export function countedCurrency(money: MoneyRules, column: RawBuilder<unknown>, converted?: ProviderConversion): RawBuilder<unknown> {
  const rated = money.rates ?? [];
  const own = rated.length === 0 ? sql`${column} = ${money.currency}` : sql`${column} in (${sql.join([money.currency, ...rated.map((rate) => rate.currency)])})`;
  return converted ? sql`(${own} or ${converted.currency} = ${money.currency})` : own;
}

/**
 * `amount` (minor units of `currency`) in minor units of the website's currency: as it is in the
 * website's currency, else the provider's `converted` amount when that is in the website's
 * currency, else at the owner's rate. Use where countedCurrency holds.
 */
export function convertedMinor(money: MoneyRules, amount: RawBuilder<unknown>, currency: RawBuilder<unknown>, converted?: ProviderConversion): RawBuilder<unknown> {
  const rated = money.rates ?? [];
  if (rated.length === 0 && !converted) return amount;
  const cases = [
    sql`when ${currency} = ${money.currency} then ${amount}`,
    ...(converted ? [sql`when ${converted.currency} = ${money.currency} then ${converted.amount}`] : []),
    ...rated.map((rate) => sql`when ${currency} = ${rate.currency} then round(${amount} * cast(${rate.factor} as double precision))`),
  ];
  return sql`(case ${sql.join(cases, sql` `)} else ${amount} end)`;
}

/** The payments table's (`p`) conversion by the provider. */
const providerConversion: ProviderConversion = { amount: sql.ref('p.converted_minor'), currency: sql.ref('p.converted_currency') };

/** A payment of the payments table (`p`) counts: in a currency that counts, or converted by the provider into the website's. */
export const countedPayment = (money: MoneyRules) => countedCurrency(money, sql.ref('p.currency'), providerConversion);

/** The payments table's amount (`p`) in the website's currency. */
export const paidMinor = (money: MoneyRules) => convertedMinor(money, sql.ref('p.amount_minor'), sql.ref('p.currency'), providerConversion);
