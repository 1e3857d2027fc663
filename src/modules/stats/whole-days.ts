import { DateTime } from 'luxon';
import type { InstantRange } from '../goals/tracked-goals.range.ts';

// When a read's range is whole local days of the website's own time zone, the relational store
// can answer unfiltered counts from its rollups (days of visitor_days, daily_totals and
// visitor_recency; 15-minute slots of session_buckets) instead of the raw events.

/** Local days of the website, both included, or every day. */
export type DaySpan = { first: string; last: string } | 'all';

const QUARTER_HOUR_MS = 15 * 60 * 1000;

/**
 * `range` as whole local days of `timezone` (null range: all time), or null when a bound falls
 * inside a day or off a 15-minute boundary of UTC (a historical offset such as +00:19:32).
 */
export function wholeDaysOf(range: InstantRange | null, timezone: string): DaySpan | null {
  if (range === null) return 'all';
  const from = DateTime.fromISO(range.from, { zone: timezone });
  const to = DateTime.fromISO(range.to, { zone: timezone });
  if (!from.isValid || !to.isValid) return null;
  if (from.toMillis() !== from.startOf('day').toMillis() || to.toMillis() !== to.startOf('day').toMillis()) return null;
  if (from.toMillis() % QUARTER_HOUR_MS !== 0 || to.toMillis() % QUARTER_HOUR_MS !== 0) return null;
  return { first: from.toISODate()!, last: to.minus({ days: 1 }).toISODate()! };
}
