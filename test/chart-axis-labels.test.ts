import { describe, expect, it } from 'vitest';
import { tickLabels } from '../web/src/analytics/chart-helpers.ts';

// The time axis of the analytics chart (web/src/analytics/chart-helpers.ts): months are named with
// their year on the first label and where the year changes, never as "Jan 26", which reads like a day.

const monthStarts = (from: string, count: number, timeZone: string) => {
  const [year, month] = from.split('-').map(Number) as [number, number];
  return Array.from({ length: count }, (_unused, index) => {
    const at = new Date(Date.UTC(year, month - 1 + index, 1));
    // Midnight of the 1st in the zone: what the server's month buckets start at (Paris is UTC+1 or +2).
    const offsetHours = timeZone === 'Europe/Paris' ? (at.getUTCMonth() >= 3 && at.getUTCMonth() <= 9 ? 2 : 1) : 0;
    return at.getTime() / 1000 - offsetHours * 3600;
  });
};

describe('the chart axis labels', () => {
  it('names twelve months with the year on the first and on January', () => {
    const labels = tickLabels(monthStarts('2025-12', 12, 'Europe/Paris'), 'month', 'Europe/Paris');
    const english = new Intl.DateTimeFormat(undefined).resolvedOptions().locale.startsWith('en');
    if (english) expect(labels).toEqual(['Dec 2025', 'Jan 2026', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov']);
    expect(labels.filter((label) => /\d{4}/.test(label))).toHaveLength(2);
    for (const label of labels) expect(label).not.toMatch(/^\D+ \d{2}$/);
  });

  it('keeps the year on the first label only within one year', () => {
    const labels = tickLabels(monthStarts('2026-01', 6, 'UTC'), 'month', 'UTC');
    expect(labels.filter((label) => /\d{4}/.test(label))).toEqual([labels[0]]);
  });
});
