import { DateTime } from 'luxon';

// The periods a report covers, in the website's time zone: a week runs from Monday 00:00 to the
// next Monday 00:00, a month from the 1st 00:00 to the next 1st (daylight-saving changes
// included: the bounds are local midnights). A report is due once its period has ended; a period
// that ended more than CATCH_UP_MS ago is not mailed any more (a server that was down for days
// does not mail stale reports, and a website whose switch was just turned on gets only the
// latest one).

export type ReportKind = 'weekly' | 'monthly';
export type MailKind = ReportKind | 'spike';
export const MAIL_KINDS: readonly MailKind[] = ['weekly', 'monthly', 'spike'];

export const CATCH_UP_MS = 3 * 24 * 3600_000;

export interface LocalDays {
  startAt: string;
  endAt: string;
}

export interface ReportPeriod {
  kind: ReportKind;
  /** ISO UTC instants, [from, to). */
  from: string;
  to: string;
  /** The same period as the website API's startAt/endAt (local days, both included). */
  days: LocalDays;
  /** The period before it, for the comparison. */
  previous: LocalDays;
  /** How a person names it, in the website's zone: "week of 2 March 2026", "March 2026". */
  label: string;
}

const iso = (at: DateTime) => at.toUTC().toISO({ suppressMilliseconds: false })!;

/** The latest period of `kind` that has ended at `now` in `timezone`, or null when it ended too long ago. */
export function latestEndedPeriod(kind: ReportKind, timezone: string, now: Date): ReportPeriod | null {
  const unit = kind === 'weekly' ? 'week' : 'month';
  const local = DateTime.fromJSDate(now, { zone: timezone });
  const end = local.startOf(unit);
  if (now.getTime() - end.toMillis() > CATCH_UP_MS) return null;
  const start = end.minus({ [unit + 's']: 1 }).startOf(unit);
  const before = start.minus({ [unit + 's']: 1 }).startOf(unit);
  const label = kind === 'weekly' ? `week of ${start.setLocale('en-GB').toFormat('d LLLL yyyy')}` : start.setLocale('en-GB').toFormat('LLLL yyyy');
  const day = (at: DateTime) => at.toISODate()!;
  return {
    kind,
    from: iso(start),
    to: iso(end),
    days: { startAt: day(start), endAt: day(end.minus({ days: 1 })) },
    previous: { startAt: day(before), endAt: day(start.minus({ days: 1 })) },
    label,
  };
}

/** The hour that ended last at `now` (UTC hours), [from, to). */
export function lastEndedHour(now: Date): { from: Date; to: Date } {
  const to = new Date(Math.floor(now.getTime() / 3600_000) * 3600_000);
  return { from: new Date(to.getTime() - 3600_000), to };
}
