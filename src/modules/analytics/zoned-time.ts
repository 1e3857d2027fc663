import { DateTime } from 'luxon';

// Calendar arithmetic in a website's time zone, over luxon (which reads the zone rules from
// Intl): local days, and the buckets of a time series. Days are 23 or 25 hours long on
// daylight-saving changes, and in a few zones a day starts at 01:00 (the clocks skip midnight).

export type Interval = 'hour' | 'day' | 'week' | 'month';

export interface Bucket {
  /** A human label: `2026-03-08 14:00`, `2026-03-08`, `2026-W10` (ISO week) or `2026-03`. */
  name: string;
  /** The calendar start of the bucket, ISO with the zone's offset. */
  timestamp: string;
  /** The part of the bucket inside the range: [start, end) as UTC ISO strings. */
  start: string;
  end: string;
  /** The local days of that part, both included (YYYY-MM-DD). */
  firstDay: string;
  lastDay: string;
}

/** A range as whole local days or exact instants: [start, end). */
export interface ZonedRange {
  start: DateTime;
  end: DateTime;
}

// Formatting is done by hand from luxon's fields: DateTime.toFormat parses its pattern on every
// call, which made a 30-bucket series spend milliseconds on labels alone.
const pad = (n: number, width = 2) => String(n).padStart(width, '0');
const dateOf = (time: DateTime) => `${pad(time.year, 4)}-${pad(time.month)}-${pad(time.day)}`;

function offsetOf(minutes: number): string {
  // Local mean time (before a zone adopted standard time) has offsets with seconds: round them.
  const sign = minutes < 0 ? '-' : '+';
  const abs = Math.round(Math.abs(minutes));
  return `${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}

function nameOf(start: DateTime, interval: Interval): string {
  switch (interval) {
    case 'hour':
      return `${dateOf(start)} ${pad(start.hour)}:${pad(start.minute)}`;
    case 'day':
      return dateOf(start);
    case 'week':
      return `${pad(start.weekYear, 4)}-W${pad(start.weekNumber)}`;
    case 'month':
      return `${pad(start.year, 4)}-${pad(start.month)}`;
  }
}

export function zoned(ms: number, timezone: string): DateTime {
  return DateTime.fromMillis(ms, { zone: timezone });
}

/** The start of the local day `YYYY-MM-DD`, or null when no such day exists. */
export function startOfLocalDay(day: string, timezone: string): DateTime | null {
  const parsed = DateTime.fromISO(day, { zone: timezone });
  return parsed.isValid ? parsed.startOf('day') : null;
}

/** The calendar date before `YYYY-MM-DD`. */
function dayBefore(day: string): string {
  const [year, month, date] = day.split('-').map(Number) as [number, number, number];
  const before = new Date(0);
  before.setUTCFullYear(year, month - 1, date - 1); // setUTCFullYear, unlike Date.UTC, keeps years 0-99
  return `${pad(before.getUTCFullYear(), 4)}-${pad(before.getUTCMonth() + 1)}-${pad(before.getUTCDate())}`;
}

export function isoWithOffset(time: DateTime): string {
  const clock = `${pad(time.hour)}:${pad(time.minute)}:${pad(time.second)}.${pad(time.millisecond, 3)}`;
  return `${dateOf(time)}T${clock}${offsetOf(time.offset)}`;
}

function utcIso(time: DateTime): string {
  return new Date(time.toMillis()).toISOString();
}

/**
 * Local day of an instant, for the rollups. Ingestion asks this for every event, mostly for the
 * same day, so the bounds of the last day seen per zone are kept and reused.
 */
export class LocalDays {
  private readonly last = new Map<string, { start: number; end: number; day: string }>();

  dayOf(occurredAt: string, timezone: string): string {
    const ms = Date.parse(occurredAt);
    const cached = this.last.get(timezone);
    if (cached && ms >= cached.start && ms < cached.end) return cached.day;
    const start = zoned(ms, timezone).startOf('day');
    const entry = { start: start.toMillis(), end: start.plus({ days: 1 }).startOf('day').toMillis(), day: start.toISODate()! };
    this.last.set(timezone, entry);
    return entry.day;
  }
}

function startOfBucket(time: DateTime, interval: Interval): DateTime {
  return time.startOf(interval);
}

function nextBucket(start: DateTime, interval: Interval): DateTime {
  // Hours are exact durations, so a 25-hour day has 25 hour buckets; the others are calendar
  // steps, re-anchored to the start of their unit after a day that started at 01:00 (zones
  // whose clocks skip midnight).
  if (interval === 'hour') return start.plus({ hours: 1 });
  const next = start.plus({ [`${interval}s`]: 1 });
  return next.hour === 0 && next.minute === 0 ? next : next.startOf(interval);
}

const APPROXIMATE_MS: Record<Interval, number> = { hour: 3_600_000, day: 86_400_000, week: 7 * 86_400_000, month: 28 * 86_400_000 };

/** How many buckets the range spans, at most (a cheap bound checked before building them). */
export function bucketCountBound(range: ZonedRange, interval: Interval): number {
  return Math.ceil((range.end.toMillis() - range.start.toMillis()) / APPROXIMATE_MS[interval]) + 2;
}

/** The calendar buckets that meet the range, each clipped to it. */
export function buckets(range: ZonedRange, interval: Interval): Bucket[] {
  const out: Bucket[] = [];
  const rangeStart = range.start.toMillis();
  const rangeEnd = range.end.toMillis();
  let start = startOfBucket(range.start, interval);
  while (start.toMillis() < rangeEnd) {
    const end = nextBucket(start, interval);
    const clippedStart = start.toMillis() < rangeStart ? range.start : start;
    const clippedEnd = end.toMillis() > rangeEnd ? range.end : end;
    out.push({
      name: nameOf(start, interval),
      timestamp: isoWithOffset(start),
      start: utcIso(clippedStart),
      end: utcIso(clippedEnd),
      firstDay: dateOf(clippedStart),
      // Day, week and month ranges end at a local day's start: their last day is the date before.
      lastDay: interval === 'hour' ? dateOf(zoned(clippedEnd.toMillis() - 1, start.zoneName!)) : dayBefore(dateOf(clippedEnd)),
    });
    start = end;
  }
  return out;
}
