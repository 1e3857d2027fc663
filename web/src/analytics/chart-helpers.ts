// Labels and positions for the time-series chart: bucket names, tick labels, values, note buckets.
import { formatMoney, formatNumber, formatPercent } from './format.ts';
import type { Interval } from './range.ts';
import type { ChartMetric } from './view-state.ts';

export interface Note {
  id: string;
  text: string;
  timestamp: string;
  author: { id: string; name: string } | null;
}

/** Y-axis steps of counts: whole numbers only. */
export const COUNT_STEPS = [1, 2, 5].flatMap((step) => [1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8].map((scale) => step * scale)).sort((a, b) => a - b);

export function bucketLabel(seconds: number, interval: Interval, timeZone: string): string {
  const options: Intl.DateTimeFormatOptions =
    interval === 'hour'
      ? { day: 'numeric', month: 'short', hour: 'numeric', minute: '2-digit' }
      : interval === 'month'
        ? { month: 'long', year: 'numeric' }
        : { day: 'numeric', month: 'short', year: 'numeric' };
  try {
    const text = new Intl.DateTimeFormat(undefined, { ...options, timeZone }).format(new Date(seconds * 1000));
    return interval === 'week' ? `Week of ${text}` : text;
  } catch {
    return new Date(seconds * 1000).toISOString();
  }
}

export function valueText(metric: ChartMetric, value: number | null | undefined, currency: string): string {
  if (value === null || value === undefined) return '–';
  if (metric === 'revenue') return formatMoney(value, currency);
  if (metric === 'conversion_rate') return formatPercent(value);
  return formatNumber(value);
}

/**
 * Tick labels of the time axis, in the website's zone and the browser's language. Months are
 * named with their year on the first label and where the year changes ("Jan 2026", "Feb", ...):
 * "Jan 26" read like a day.
 */
export function tickLabels(seconds: number[], interval: Interval, timeZone: string): string[] {
  const options: Intl.DateTimeFormatOptions =
    interval === 'hour' ? { hour: 'numeric' } : interval === 'month' ? { month: 'short' } : { day: 'numeric', month: 'short' };
  const make = (extra: Intl.DateTimeFormatOptions) => {
    try {
      return new Intl.DateTimeFormat(undefined, { ...extra, timeZone });
    } catch {
      return new Intl.DateTimeFormat(undefined, extra);
    }
  };
  const format = make(options);
  if (interval === 'month') {
    const withYear = make({ month: 'short', year: 'numeric' });
    const year = make({ year: 'numeric' });
    let previous = '';
    return seconds.map((value) => {
      const date = new Date(value * 1000);
      const thisYear = year.format(date);
      const label = thisYear === previous ? format.format(date) : withYear.format(date);
      previous = thisYear;
      return label;
    });
  }
  if (interval !== 'hour') return seconds.map((value) => format.format(new Date(value * 1000)));
  // Hours over several days: midnight is labelled with its day.
  const day = make({ day: 'numeric', month: 'short' });
  const days = new Set(seconds.map((value) => day.format(new Date(value * 1000))));
  const hour = make({ hour: '2-digit', hourCycle: 'h23' });
  return seconds.map((value) => {
    const date = new Date(value * 1000);
    return days.size > 1 && hour.format(date) === '00' ? day.format(date) : format.format(date);
  });
}

/** Each note sits on the bucket it falls in. */
export function noteBucket(xs: number[], note: Note): number | null {
  const at = Date.parse(note.timestamp) / 1000;
  if (!xs.length || Number.isNaN(at) || at < xs[0]!) return null;
  let found = xs[0]!;
  for (const x of xs) if (x <= at) found = x;
  return found;
}
