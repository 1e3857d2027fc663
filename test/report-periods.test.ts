import { describe, expect, it } from 'vitest';
import { changeText } from '../src/modules/reports/report-mail.ts';
import { latestEndedPeriod, lastEndedHour } from '../src/modules/reports/report-periods.ts';
import { metric } from '../src/modules/reports/report-summary.ts';

// The periods a report covers, in the website's time zone, across a change of daylight-saving
// time; and the percentage change as the mail writes it.

describe('report periods', () => {
  it("takes the week that ended last, Monday to Monday in the website's zone, across a daylight-saving change", () => {
    // Paris moved to summer time on Sunday 29 March 2026: that week has 167 hours.
    const period = latestEndedPeriod('weekly', 'Europe/Paris', new Date('2026-03-30T06:00:00Z'))!;
    expect(period).toMatchObject({
      from: '2026-03-22T23:00:00.000Z',
      to: '2026-03-29T22:00:00.000Z',
      days: { startAt: '2026-03-23', endAt: '2026-03-29' },
      previous: { startAt: '2026-03-16', endAt: '2026-03-22' },
      label: 'week of 23 March 2026',
    });
    // Sunday 23:30 in Paris is still that week's last day: the week before ended 6 days ago, past the catch-up.
    expect(latestEndedPeriod('weekly', 'Europe/Paris', new Date('2026-03-29T21:30:00Z'))).toBeNull();
    // New York's Monday comes 6 hours after Paris's: at Paris's Monday 04:00 nothing is due there yet.
    expect(latestEndedPeriod('weekly', 'America/New_York', new Date('2026-03-30T02:00:00Z'))).toBeNull();
    expect(latestEndedPeriod('weekly', 'America/New_York', new Date('2026-03-30T04:00:00Z'))!.days.startAt).toBe('2026-03-23');
  });

  it('takes the month that ended last, and mails no period that ended more than 3 days ago', () => {
    expect(latestEndedPeriod('monthly', 'Asia/Tokyo', new Date('2026-03-01T00:00:00Z'))).toMatchObject({
      from: '2026-01-31T15:00:00.000Z',
      to: '2026-02-28T15:00:00.000Z',
      days: { startAt: '2026-02-01', endAt: '2026-02-28' },
      previous: { startAt: '2026-01-01', endAt: '2026-01-31' },
      label: 'February 2026',
    });
    expect(latestEndedPeriod('monthly', 'UTC', new Date('2026-03-04T00:00:00Z'))).not.toBeNull();
    expect(latestEndedPeriod('monthly', 'UTC', new Date('2026-03-04T00:00:01Z'))).toBeNull();
    expect(latestEndedPeriod('weekly', 'UTC', new Date('2026-03-12T00:00:01Z'))).toBeNull();
  });

  it('takes the UTC hour that ended last', () => {
    expect(lastEndedHour(new Date('2026-03-10T11:59:59Z'))).toEqual({ from: new Date('2026-03-10T10:00:00Z'), to: new Date('2026-03-10T11:00:00Z') });
  });

  it('writes the change against the previous period as a rounded percentage', () => {
    expect(changeText(metric(3, 2))).toBe('+50%');
    expect(changeText(metric(1, 3))).toBe('-67%');
    expect(changeText(metric(2, 2))).toBe('0%');
    expect(changeText(metric(5, 0))).toBe('new');
    expect(changeText(metric(0, 0))).toBe('0%');
  });
});
