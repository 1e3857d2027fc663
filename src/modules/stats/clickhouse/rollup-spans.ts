// How a range is read from rollups kept per UTC hour and day (the events' and the sessions'):
// its whole UTC days from the daily table, the whole hours around them from the hourly one, and
// the partial hours at its edges from the raw rows. Any range in any zone, half-hour zones
// included, splits this way.

export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;

/** The first multiple of `step` at or after `ms`, and the last at or before it. */
export const ceilTo = (ms: number, step: number) => Math.ceil(ms / step) * step;
export const floorTo = (ms: number, step: number) => Math.floor(ms / step) * step;

/** [from, to) in epoch ms. */
export type Span = [from: number, to: number];

export interface RangeParts {
  days: Span | null;
  hours: Span[];
  raw: Span[];
}

export function splitRange(from: number, to: number): RangeParts {
  const firstHour = ceilTo(from, HOUR_MS);
  const lastHour = floorTo(to, HOUR_MS);
  if (firstHour >= lastHour) return { days: null, hours: [], raw: [[from, to]] };
  const parts: RangeParts = { days: null, hours: [], raw: [] };
  if (from < firstHour) parts.raw.push([from, firstHour]);
  if (lastHour < to) parts.raw.push([lastHour, to]);
  const firstDay = ceilTo(firstHour, DAY_MS);
  const lastDay = floorTo(lastHour, DAY_MS);
  if (firstDay >= lastDay) {
    parts.hours.push([firstHour, lastHour]);
  } else {
    parts.days = [firstDay, lastDay];
    if (firstHour < firstDay) parts.hours.push([firstHour, firstDay]);
    if (lastDay < lastHour) parts.hours.push([lastDay, lastHour]);
  }
  return parts;
}
