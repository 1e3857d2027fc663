import type { Dimension, Filter } from './stats.filters.ts';

// Where each filter dimension lives, for every event store: on the event itself, or on the
// session the event belongs to (its first event's source, its entry page). `referrer` and `goal`
// have rules of their own in each store.

/** Dimensions of the event itself. */
export const EVENT_COLUMN: Partial<Record<Dimension, string>> = {
  country: 'country',
  region: 'region',
  city: 'city',
  device: 'device',
  browser: 'browser',
  os: 'os',
  page: 'path',
  hostname: 'hostname',
};

/**
 * Dimensions of the session the event belongs to: where it came from and where it entered. An
 * internal navigation carries the site's own referrer, so these are the session's first event's.
 */
export const SESSION_COLUMN: Partial<Record<Dimension, string>> = {
  entry_page: 'entry_path',
  ref: 'ref_param',
  source: 'source_param',
  via: 'via_param',
  utm_source: 'utm_source',
  utm_medium: 'utm_medium',
  utm_campaign: 'utm_campaign',
  utm_term: 'utm_term',
  utm_content: 'utm_content',
};

/** A negated filter keeps rows whose value is unknown. */
export function isNegated(filter: Filter): boolean {
  return filter.operator === 'is_not' || filter.operator === 'does_not_contain';
}

/**
 * A path pattern or substring as LIKE: `*` is any run of characters, everything else literal
 * (backslash escapes, the default escape character of ClickHouse and the one the relational
 * queries name).
 */
export function likePattern(value: string, contains: boolean): string {
  const escaped = value.replace(/[\\%_]/g, (c) => `\\${c}`).replace(/\*/g, '%');
  return contains ? `%${escaped}%` : escaped;
}
