// From a view's period to the days every read asks for. Days are calendar days in the website's
// time zone (YYYY-MM-DD), which the server reads in that zone; the previous period is the one of
// the same length just before. Interval and bucket limits: contract.md section 5.
import { PERIODS, type Comparison, type Filter, type ViewState, filterQuery } from './view-state.ts';

export type Interval = 'hour' | 'day' | 'week' | 'month';

export interface DayRange {
  startAt: string;
  endAt: string;
}

export interface ResolvedRange {
  /** Absent for "All time" on overview and breakdowns (the server reads all time). */
  range: DayRange | null;
  /** The range the chart (and the funnel report) covers: all time needs a first day. */
  chartRange: DayRange;
  interval: Interval;
  previous: DayRange | null;
  /** "Last 30 days", "3 May – 9 May 2026". */
  label: string;
}

/** Today's date in `timeZone`. */
export function todayIn(timeZone: string, now: Date = new Date()): string {
  try {
    // en-CA formats as YYYY-MM-DD.
    return new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(now);
  } catch {
    return now.toISOString().slice(0, 10);
  }
}

function toDate(day: string): Date {
  return new Date(`${day}T00:00:00Z`);
}

function toDay(date: Date): string {
  return date.toISOString().slice(0, 10);
}

export function addDays(day: string, days: number): string {
  const date = toDate(day);
  date.setUTCDate(date.getUTCDate() + days);
  return toDay(date);
}

/** Days from `from` to `to`, both included. */
export function dayCount(from: string, to: string): number {
  return Math.round((toDate(to).getTime() - toDate(from).getTime()) / 86_400_000) + 1;
}

function startOfMonth(day: string, monthsBack = 0): string {
  const date = toDate(day);
  date.setUTCDate(1);
  date.setUTCMonth(date.getUTCMonth() - monthsBack);
  return toDay(date);
}

function previousOf(range: DayRange): DayRange {
  const length = dayCount(range.startAt, range.endAt);
  return { startAt: addDays(range.startAt, -length), endAt: addDays(range.startAt, -1) };
}

/** The interval a custom range is charted in (the server takes at most 1500 buckets). */
function intervalFor(range: DayRange): Interval {
  const days = dayCount(range.startAt, range.endAt);
  if (days <= 2) return 'hour';
  if (days <= 366) return 'day';
  return 'month';
}

function rangeLabel(range: DayRange): string {
  const sameYear = range.startAt.slice(0, 4) === range.endAt.slice(0, 4);
  const format = (day: string, withYear: boolean) =>
    new Intl.DateTimeFormat(undefined, { day: 'numeric', month: 'short', year: withYear ? 'numeric' : undefined, timeZone: 'UTC' }).format(toDate(day));
  if (range.startAt === range.endAt) return format(range.startAt, true);
  return `${format(range.startAt, !sameYear)} – ${format(range.endAt, true)}`;
}

/**
 * The days of `view` in `timeZone`. `firstDay` is the first day "All time" charts: the earlier of
 * the first day with visitors and the first note's day.
 */
export function resolveRange(view: ViewState, timeZone: string, firstDay: string | null, now: Date = new Date()): ResolvedRange {
  const today = todayIn(timeZone, now);
  const label = PERIODS.find((period) => period.value === view.period)?.label ?? '';
  const fixed = (range: DayRange, interval: Interval, name = label): ResolvedRange => ({
    range,
    chartRange: range,
    interval,
    previous: previousOf(range),
    label: name,
  });
  switch (view.period) {
    case 'today':
      return fixed({ startAt: today, endAt: today }, 'hour');
    case 'yesterday': {
      const day = addDays(today, -1);
      return fixed({ startAt: day, endAt: day }, 'hour');
    }
    case '7d':
      return fixed({ startAt: addDays(today, -6), endAt: today }, 'day');
    case 'mtd':
      return fixed({ startAt: startOfMonth(today), endAt: today }, 'day');
    case 'lastmonth': {
      const start = startOfMonth(today, 1);
      return fixed({ startAt: start, endAt: addDays(startOfMonth(today), -1) }, 'day');
    }
    case '12mo':
      return fixed({ startAt: startOfMonth(today, 11), endAt: today }, 'month');
    case 'all': {
      let start = firstDay && firstDay <= today ? firstDay : startOfMonth(today, 11);
      // A young website is charted by day, or by hour in its first two days: a single monthly
      // bar (or a single daily dot) says little.
      const days = dayCount(start, today);
      if (days > 1500 * 28) start = addDays(today, -1400 * 28);
      const interval: Interval = days <= 2 ? 'hour' : days <= 90 ? 'day' : 'month';
      return { range: null, chartRange: { startAt: start, endAt: today }, interval, previous: null, label };
    }
    case 'custom':
      if (view.from && view.to) {
        const range = { startAt: view.from, endAt: view.to };
        return fixed(range, intervalFor(range), rangeLabel(range));
      }
      break;
    default:
      break;
  }
  return fixed({ startAt: addDays(today, -29), endAt: today }, 'day', 'Last 30 days');
}

/** The same calendar day a year earlier (29 February: the 28th). */
export function yearBefore(day: string): string {
  const [year, month, date] = day.split('-').map(Number) as [number, number, number];
  const earlier = new Date(Date.UTC(year - 1, month - 1, date));
  if (earlier.getUTCMonth() !== month - 1) earlier.setUTCDate(0);
  return toDay(earlier);
}

/**
 * The days the chart's dashed line covers: the previous period of the same length (none for
 * "All time", which has no period before it) or the same days a year before.
 */
export function comparisonRange(resolved: ResolvedRange, compare: Comparison): DayRange | null {
  if (compare === 'previous') return resolved.range ? previousOf(resolved.chartRange) : null;
  if (compare === 'year') return { startAt: yearBefore(resolved.chartRange.startAt), endAt: yearBefore(resolved.chartRange.endAt) };
  return null;
}

type Query = Record<string, string | number | undefined>;

/** The query of an analytics read: the website, the days (none for all time) and the filters. */
export function readQuery(websiteId: string, range: DayRange | null, filters: Filter[], extra: Query = {}): Query {
  return {
    websiteId,
    ...(range ? { startAt: range.startAt, endAt: range.endAt } : {}),
    ...filterQuery(filters),
    ...extra,
  };
}

/** A stable key for effects that refetch when the query changes. */
export function queryKey(query: Query): string {
  return JSON.stringify(Object.entries(query).sort(([a], [b]) => a.localeCompare(b)));
}

export function isDayString(value: string): boolean {
  return /^\d{4}-\d{2}-\d{2}$/.test(value);
}

/** The day (YYYY-MM-DD) in `timeZone` of an instant (an ISO timestamp). */
export function dayIn(timeZone: string, timestamp: string): string | null {
  const at = new Date(timestamp);
  return Number.isNaN(at.getTime()) ? null : todayIn(timeZone, at);
}
