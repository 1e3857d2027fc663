import { type RawBuilder, sql } from 'kysely';
import type { MoneyRules } from '../event-store.ts';

// Revenue in the website's currency, over payments (or kept sums of them) in any currency: the
// website's own counts as it is, another one at the owner's rate (money-rules.ts), rounded to a
// whole minor unit per payment (or per kept sum), and a currency without a rate not at all.
// The rates are bound parameters: currency codes are checked ISO-4217 codes, factors numbers.

/** `column` is a currency that counts: the website's, or one with a rate. */
export function countedCurrency(money: MoneyRules, column: RawBuilder<unknown>): RawBuilder<unknown> {
  const rated = money.rates ?? [];
  if (rated.length === 0) return sql`${column} = ${money.currency}`;
  return sql`${column} in (${sql.join([money.currency, ...rated.map((rate) => rate.currency)])})`;
}

/** `amount` (minor units of `currency`) in minor units of the website's currency; use where countedCurrency holds. */
export function convertedMinor(money: MoneyRules, amount: RawBuilder<unknown>, currency: RawBuilder<unknown>): RawBuilder<unknown> {
  const rated = money.rates ?? [];
  if (rated.length === 0) return amount;
  const cases = rated.map((rate) => sql`when ${rate.currency} then round(${amount} * cast(${rate.factor} as double precision))`);
  return sql`(case ${currency} ${sql.join(cases, sql` `)} else ${amount} end)`;
}

/** The payments table's amount (`p`) in the website's currency. */
export const paidMinor = (money: MoneyRules) => convertedMinor(money, sql.ref('p.amount_minor'), sql.ref('p.currency'));
