import { DateTime } from 'luxon';
import { invalidField } from '../../errors.ts';

// A period given as `startAt`/`endAt`, both or neither. Each bound is either a YYYY-MM-DD day
// in the website's time zone (the whole day is included, daylight-saving days too) or an ISO
// instant with a zone (included). The result is half-open: from <= t < to.

export interface InstantRange {
  /** ISO UTC, included. */
  from: string;
  /** ISO UTC, excluded. */
  to: string;
}

/** A calendar day, YYYY-MM-DD (validity checked when read in a zone). */
export const DAY = /^\d{4}-\d{2}-\d{2}$/;
/** An ISO-8601 instant with its zone (Z or an offset). */
export const INSTANT = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}(?::?\d{2})?)$/i;
const LOCAL_INSTANT = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?$/;
const RULE = 'must be a YYYY-MM-DD day or an ISO-8601 instant with a time zone, e.g. 2026-05-01 or 2026-05-01T00:00:00Z';
const MIN_YEAR = 1970;
const MAX_YEAR = 9999;

type Bound = 'start' | 'end';

export interface RangeOptions {
  /** Read an instant without an offset in the time zone (the website API does) instead of refusing it. */
  localInstants?: boolean;
}

function instantOf(field: string, value: string, timezone: string, bound: Bound, options: RangeOptions): number {
  let at: DateTime;
  if (DAY.test(value)) {
    const day = DateTime.fromISO(value, { zone: timezone });
    // The end day is included: the range stops at the start of the next local day.
    at = bound === 'start' ? day.startOf('day') : day.plus({ days: 1 }).startOf('day');
  } else if (INSTANT.test(value)) {
    at = DateTime.fromISO(value.replace(' ', 'T'), { setZone: true });
    if (bound === 'end') at = at.plus({ milliseconds: 1 });
  } else if (options.localInstants && LOCAL_INSTANT.test(value)) {
    at = DateTime.fromISO(value.replace(' ', 'T'), { zone: timezone });
    if (bound === 'end') at = at.plus({ milliseconds: 1 });
  } else {
    throw invalidField(field, RULE);
  }
  if (!at.isValid || at.year < MIN_YEAR || at.year > MAX_YEAR) throw invalidField(field, RULE);
  return at.toMillis();
}

/** The period asked for, or null for all time. */
export function parseRange(query: { startAt?: string; endAt?: string }, timezone: string, options: RangeOptions = {}): InstantRange | null {
  const { startAt, endAt } = query;
  if (startAt === undefined && endAt === undefined) return null;
  if (startAt === undefined) throw invalidField('query.startAt', 'is required when endAt is given (send both or neither)');
  if (endAt === undefined) throw invalidField('query.endAt', 'is required when startAt is given (send both or neither)');
  const from = instantOf('query.startAt', startAt, timezone, 'start', options);
  const to = instantOf('query.endAt', endAt, timezone, 'end', options);
  if (to <= from) throw invalidField('query.endAt', 'must not be before startAt');
  return { from: new Date(from).toISOString(), to: new Date(to).toISOString() };
}
