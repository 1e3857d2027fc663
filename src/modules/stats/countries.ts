import { normaliseCountry } from '../../lib/formats.ts';

// Country names for the countries breakdown and the country filter, from ICU (Intl.DisplayNames),
// the same source normaliseCountry checks codes against: no table of our own to keep current.

const NAMES = new Intl.DisplayNames(['en'], { type: 'region', fallback: 'none' });
const LETTERS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';

let byName: Map<string, string> | null = null;

function codesByName(): Map<string, string> {
  if (byName) return byName;
  byName = new Map();
  for (const a of LETTERS) {
    for (const b of LETTERS) {
      const code = normaliseCountry(a + b);
      const name = code ? NAMES.of(code) : undefined;
      if (code && name) byName.set(name.toLowerCase(), code);
    }
  }
  return byName;
}

/** An alpha-2 code (any case) or an English country name, as its upper-case code; null when neither. */
export function countryCodeOf(value: string): string | null {
  return normaliseCountry(value) ?? codesByName().get(value.trim().toLowerCase()) ?? null;
}

export function countryName(code: string | null): string | null {
  return code ? (NAMES.of(code) ?? null) : null;
}
