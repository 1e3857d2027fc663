import { getAllTimezones, getTimezone } from 'countries-and-timezones';

// Why not just Intl: Node 20's ICU answers CLDR's canonical ids, which keep the spellings of long
// ago (`Asia/Kolkata` comes back as `Asia/Calcutta`, `Europe/Kyiv` as `Europe/Kiev`), and newer
// engines answer the name as given. The tzdb link table (its `backward` file, shipped and kept
// current by countries-and-timezones) knows the current names, but it also links zones merged
// across countries because their clocks agree since 1970 (`Europe/Amsterdam` -> `Europe/Brussels`,
// `Atlantic/Reykjavik` -> `Africa/Abidjan`), which nobody in Amsterdam would call a new spelling.
// So a link is followed only while it stays in its country, as ECMA-402 (Temporal) does for its
// primary identifiers: `US/Eastern` -> `America/New_York`, `Europe/Uzhgorod` -> `Europe/Kyiv`.
// Intl still has the last word on validity, so Luxon can compute with every name answered.

const NAME = /^[A-Za-z][A-Za-z0-9_+\-/]*$/;
// ECMA-402 and every analytics product call the UTC family (Etc/UTC, GMT, Zulu...) "UTC".
const UTC_ZONES = new Set(['Etc/UTC', 'Etc/GMT']);
const MAX_LINK_HOPS = 5;

/** tzdb names by their lower-case form, for case-insensitive input. */
const tzdbNames = new Map(Object.keys(getAllTimezones({ deprecated: true })).map((name) => [name.toLowerCase(), name]));
const canonicalCache = new Map<string, string | null>();

function intlAccepts(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

/** Follows tzdb links from `name` while they stay in the name's country. */
function followRenames(name: string): string {
  let current = name;
  for (let hops = 0; hops < MAX_LINK_HOPS; hops++) {
    const zone = getTimezone(current);
    if (!zone?.aliasOf) break;
    const target = getTimezone(zone.aliasOf);
    if (!target) break;
    if (UTC_ZONES.has(target.name)) return target.name;
    // The first country of a zone is its own (zone1970.tab order); a link without a country
    // (`EST5EDT`, `US/Eastern` has one) is an old spelling and is followed.
    const country = zone.countries[0];
    if (country !== undefined && target.countries[0] !== country) break;
    current = target.name;
  }
  return current;
}

function computeCanonical(input: string): string | null {
  if (!NAME.test(input) || !intlAccepts(input)) return null;
  const name = tzdbNames.get(input.toLowerCase());
  // A name Intl knows and the table does not (newer than the package): Intl's spelling.
  if (name === undefined) return new Intl.DateTimeFormat('en-US', { timeZone: input }).resolvedOptions().timeZone;
  const canonical = followRenames(name);
  if (UTC_ZONES.has(canonical)) return 'UTC';
  // The engine's ICU may be older than the table: never answer a name Luxon cannot use.
  return intlAccepts(canonical) ? canonical : name;
}

/**
 * An IANA time-zone name in its canonical, current spelling: a deprecated alias (`Asia/Calcutta`,
 * `US/Eastern`, `Europe/Kiev`) becomes the name of its zone (`Asia/Kolkata`, `America/New_York`,
 * `Europe/Kyiv`), a canonical name stays as it is, letter case is corrected. Null for a name that
 * is not a time zone (UTC offsets included).
 */
export function canonicalTimeZone(name: string): string | null {
  let canonical = canonicalCache.get(name);
  if (canonical === undefined) {
    canonical = computeCanonical(name);
    // Bounded: a client could otherwise grow the cache with made-up names.
    if (canonicalCache.size < 2000) canonicalCache.set(name, canonical);
  }
  return canonical;
}
