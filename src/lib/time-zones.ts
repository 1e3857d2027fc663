import { getTimezone } from 'countries-and-timezones';

// Why this is not just Intl: Node's ICU answers CLDR's canonical ids, which keep the spellings of
// long ago (`Asia/Kolkata` comes back as `Asia/Calcutta`, `Europe/Kyiv` as `Europe/Kiev`). The
// tzdb link table (its `backward` file, shipped by countries-and-timezones) knows the current
// spellings, but it also links zones that were merged across countries (`Europe/Amsterdam` ->
// `Europe/Brussels`), which no user would call a new spelling. So ICU says which zone a name
// belongs to, and a tzdb link is followed only when it leads to another name of that same zone:
// a renaming, never a merge. This is the rule ECMA-402 (Temporal) uses for primary identifiers.

const NAME = /^[A-Za-z][A-Za-z0-9_+\-/]*$/;
const canonicalCache = new Map<string, string | null>();

/** The zone ICU files a name under (its CLDR canonical id), or null when ICU does not know it. */
function icuZoneOf(name: string): string | null {
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return null;
  }
}

/** Follows tzdb links from `name` to the Zone they end at. */
function tzdbTargetOf(name: string): string {
  let current = name;
  for (let hops = 0; hops < 5; hops++) {
    const next = getTimezone(current)?.aliasOf;
    if (!next) break;
    current = next;
  }
  return current;
}

function computeCanonical(name: string): string | null {
  if (!NAME.test(name)) return null;
  const zone = icuZoneOf(name);
  if (zone === null) return null;
  // ECMA-402 and every analytics product call the UTC family (Etc/UTC, GMT, Zulu...) "UTC".
  if (zone === 'UTC') return 'UTC';
  const target = tzdbTargetOf(zone);
  return target !== zone && icuZoneOf(target) === zone ? target : zone;
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
