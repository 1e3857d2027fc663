// Source, browser and OS names as the hosted service shows them (website-api.md section 7), because
// its clients filter by what it shows: `filter_referrer=is:X`, `filter_os=is:Mac OS`.
//
// Storage keeps the names ingestion has always written (the referrer table's `Twitter`, the
// user-agent parser's `macOS` and `Microsoft Edge`); this file is the one place that turns them
// into the shown names and back. So no stored event and no rollup of any engine is rewritten on
// upgrade (a rename of stored values would have to rewrite every derived table, and ClickHouse's
// rollups keep these names in their sorting keys), events stored before and after read alike, and
// the old spellings keep working in filters. See docs/decisions.md, "Labels as the hosted service
// shows them".

export type LabelledDimension = 'referrer' | 'browser' | 'os';

/** Stored name -> shown name, where they differ. */
const SHOWN: Record<LabelledDimension, ReadonlyMap<string, string>> = {
  referrer: new Map([['Twitter', 'X']]),
  browser: new Map([['Microsoft Edge', 'Edge']]),
  os: new Map([['macOS', 'Mac OS']]),
};

/**
 * Filter values that mean more than their own name: Safari includes Mobile Safari, as the hosted
 * service documents (the user-agent parser names iOS's Safari `Safari` already; a stored `Mobile
 * Safari` is matched all the same).
 */
const ALSO_MATCHES: Record<LabelledDimension, ReadonlyMap<string, readonly string[]>> = {
  referrer: new Map(),
  browser: new Map([['Safari', ['Mobile Safari']]]),
  os: new Map(),
};

/** Shown name -> the stored name it stands for. */
const STORED: Record<LabelledDimension, ReadonlyMap<string, string>> = {
  referrer: invert(SHOWN.referrer),
  browser: invert(SHOWN.browser),
  os: invert(SHOWN.os),
};

function invert(map: ReadonlyMap<string, string>): ReadonlyMap<string, string> {
  return new Map([...map].map(([stored, shown]) => [shown, stored]));
}

export function isLabelled(dimension: string): dimension is LabelledDimension {
  return dimension === 'referrer' || dimension === 'browser' || dimension === 'os';
}

/** The name a client sees for a stored value (null stays null). */
export function shownLabel(dimension: LabelledDimension, stored: string | null): string | null {
  return stored === null ? null : (SHOWN[dimension].get(stored) ?? stored);
}

/**
 * The stored values a filter value matches: a shown name, or an old spelling, or any other value as
 * itself. `X` and `Twitter` both match the stored `Twitter`; `Safari` also matches `Mobile Safari`.
 */
export function storedValuesOf(dimension: LabelledDimension, value: string): string[] {
  const stored = STORED[dimension].get(value) ?? value;
  return [stored, ...(ALSO_MATCHES[dimension].get(value) ?? [])];
}

/**
 * The stored names whose shown name contains `part` (ignoring case) while they do not: a contains
 * filter on `X` or `mac os` matches the stored `Twitter` or `macOS` as the shown name promises.
 */
export function storedNamesShownContaining(dimension: LabelledDimension, part: string): string[] {
  const wanted = part.toLowerCase();
  return [...SHOWN[dimension]].filter(([stored, shown]) => shown.toLowerCase().includes(wanted) && !stored.toLowerCase().includes(wanted)).map(([stored]) => stored);
}
