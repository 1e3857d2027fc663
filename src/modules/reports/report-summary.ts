import * as stats from '../stats/stats.service.ts';
import type { StatsDeps } from '../stats/stats.service.ts';
import type { LocalDays, ReportPeriod } from './report-periods.ts';

// What a report says, read with the website API's own services for the period's days, so the
// numbers are the ones GET /api/v1/analytics/overview, /referrers and /pages answer for the same
// startAt/endAt, set against the period before.

export const TOP_ROWS = 5;

export interface Metric {
  current: number;
  previous: number;
  /** Percentage change against the previous period, rounded; null when the previous was 0. */
  change: number | null;
}

export interface TopRow {
  label: string;
  visitors: number;
}

export interface ReportSummary {
  period: ReportPeriod;
  currency: string;
  visitors: Metric;
  pageviews: Metric;
  revenue: Metric;
  sources: TopRow[];
  pages: TopRow[];
}

export function metric(current: number, previous: number): Metric {
  const change = previous === 0 ? null : Math.round(((current - previous) / previous) * 100);
  return { current, previous, change };
}

async function overviewOf(deps: StatsDeps, websiteId: string, days: LocalDays) {
  const { body } = await stats.overview(deps, websiteId, { ...days });
  return body.data[0] as { visitors: number; pageviews: number; revenue: number; currency: string };
}

async function topOf(deps: StatsDeps, websiteId: string, kind: 'referrers' | 'pages', days: LocalDays, key: string): Promise<TopRow[]> {
  const { body } = await stats.breakdown(deps, kind, websiteId, { ...days, limit: String(TOP_ROWS) });
  return body.data.map((row) => ({ label: String(row[key] ?? (kind === 'referrers' ? 'Direct/None' : '(unknown)')), visitors: Number(row.visitors) }));
}

export async function readReportSummary(deps: StatsDeps, websiteId: string, period: ReportPeriod): Promise<ReportSummary> {
  const current = await overviewOf(deps, websiteId, period.days);
  const previous = await overviewOf(deps, websiteId, period.previous);
  return {
    period,
    currency: current.currency,
    visitors: metric(current.visitors, previous.visitors),
    pageviews: metric(current.pageviews, previous.pageviews),
    revenue: metric(current.revenue, previous.revenue),
    sources: await topOf(deps, websiteId, 'referrers', period.days, 'referrer'),
    pages: await topOf(deps, websiteId, 'pages', period.days, 'path'),
  };
}
