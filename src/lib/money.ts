// Money is stored as an integer count of the currency's minor unit (cents for USD, yen for JPY,
// fils for KWD), so sums are exact on both engines. The number of minor digits is what ICU says
// the currency uses, the same source Intl formats amounts with.

const digitsCache = new Map<string, number>();

/** How many decimal digits the currency's minor unit has (USD 2, JPY 0, KWD 3). */
export function currencyDigits(currency: string): number {
  let digits = digitsCache.get(currency);
  if (digits === undefined) {
    digits = new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
    digitsCache.set(currency, digits);
  }
  return digits;
}

/**
 * The decimal places of a number as JavaScript writes it (the shortest text that reads back as
 * the same number), which is what the client wrote in its JSON: 29.99 has 2, 1e-7 has 7.
 */
export function decimalPlaces(value: number): number {
  const match = /^-?\d+(?:\.(\d+))?(?:e([+-]\d+))?$/i.exec(String(value));
  if (!match) return Number.POSITIVE_INFINITY;
  const fraction = match[1]?.length ?? 0;
  const exponent = Number(match[2] ?? 0);
  return Math.max(0, fraction - exponent);
}

export type MinorUnitsResult = { ok: true; minor: number } | { ok: false; reason: 'precision' | 'range'; digits: number };

/** An amount in major units (29.99) as an exact integer of minor units (2999), or why it cannot be. */
export function toMinorUnits(amount: number, currency: string): MinorUnitsResult {
  const digits = currencyDigits(currency);
  if (!Number.isFinite(amount)) return { ok: false, reason: 'range', digits };
  if (decimalPlaces(amount) > digits) return { ok: false, reason: 'precision', digits };
  // With at most `digits` decimals the product is within a rounding error of an integer.
  const minor = Math.round(amount * 10 ** digits);
  if (!Number.isSafeInteger(minor)) return { ok: false, reason: 'range', digits };
  return { ok: true, minor };
}

/** Minor units back to major units, for display (2999 USD -> 29.99). */
export function fromMinorUnits(minor: number, currency: string): number {
  const digits = currencyDigits(currency);
  return digits === 0 ? Math.round(minor) : Number((minor / 10 ** digits).toFixed(digits));
}

/**
 * What one minor unit of `from` is worth in minor units of `to` at `rate` (units of `to` per unit
 * of `from`): 1.1 USD per EUR is 1.1 cent per cent; 0.0067 USD per JPY is 0.67 cent per yen.
 */
export function minorUnitFactor(rate: number, from: string, to: string): number {
  return rate * 10 ** (currencyDigits(to) - currencyDigits(from));
}
