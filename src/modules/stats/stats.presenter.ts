import { fromMinorUnits } from '../../lib/money.ts';
import type { BreakdownRow, Breakdown, OverviewCounts, VisitorActivity, VisitorSummary } from './event-store.ts';
import { countryName } from './countries.ts';
import type { PageRequest } from './stats.params.ts';

// The website API's JSON, shaped in one place. Percentages carry two decimals; money is in the
// website currency's major units.

const percent = (part: number, whole: number) => (whole === 0 ? 0 : Math.round((part / whole) * 10_000) / 100);

export function presentOverview(counts: OverviewCounts, currency: string) {
  const revenue = fromMinorUnits(counts.revenueMinor, currency);
  return {
    visitors: counts.visitors,
    sessions: counts.sessions,
    pageviews: counts.pageviews,
    bounce_rate: percent(counts.bounces, counts.sessions),
    avg_session_duration: counts.sessions === 0 ? 0 : Math.round(counts.sessionMillis / counts.sessions),
    currency,
    revenue,
    payments: counts.payments,
    revenue_per_visitor: counts.visitors === 0 ? 0 : Math.round((revenue / counts.visitors) * 100) / 100,
    conversion_rate: percent(counts.convertedVisitors, counts.visitors),
  };
}

export function presentPagination(page: PageRequest, total: number) {
  return { limit: page.limit, offset: page.offset, total };
}

/** A breakdown row: its keys as the hosted service names them, then the counts. */
export function presentBreakdownRow(kind: Breakdown, row: BreakdownRow, currency: string): Record<string, unknown> {
  const revenue = fromMinorUnits(row.revenueMinor, currency);
  const { keys } = row;
  switch (kind) {
    case 'countries':
      return { country: countryName(keys.countryCode ?? null), countryCode: keys.countryCode, image: null, visitors: row.visitors, pageviews: row.pageviews, revenue };
    case 'campaigns': {
      const known = Object.values(keys).some((value) => value !== null);
      return { campaign: known ? keys : null, visitors: row.visitors, pageviews: row.pageviews, revenue };
    }
    case 'goals':
      return { goal: keys.goal, completions: row.count, visitors: row.visitors, revenue };
    case 'exit-clicks':
      return { url: keys.url, clicks: row.count, visitors: row.visitors };
    default:
      return { ...keys, visitors: row.visitors, pageviews: row.pageviews, revenue };
  }
}

function since(first: string, now: Date): number {
  return Math.max(0, now.getTime() - Date.parse(first));
}

export function presentVisitorIdentity(v: VisitorSummary) {
  return {
    country: countryName(v.countryCode),
    countryCode: v.countryCode,
    region: v.region,
    city: v.city,
    browser: { name: v.browser, version: v.browserVersion },
    os: { name: v.os, version: v.osVersion },
    device: { type: v.device },
    viewport: { width: v.viewportWidth, height: v.viewportHeight },
    params: v.params,
  };
}

export function presentVisitorListItem(v: VisitorSummary, now: Date) {
  return {
    visitorId: v.visitorId,
    identity: presentVisitorIdentity(v),
    activity: {
      visitCount: v.visitCount,
      pageViewCount: v.pageViewCount,
      firstVisitAt: v.firstVisitAt,
      lastVisitAt: v.lastVisitAt,
      timeSinceFirstVisit: since(v.firstVisitAt, now),
      currentUrl: v.currentUrl,
    },
  };
}

export interface Profile {
  userId: string;
  name: string | null;
  image: string | null;
  metadata: Record<string, string> | null;
  identifiedAt: string;
}

export function presentVisitor(v: VisitorSummary & VisitorActivity, profile: Profile | null, now: Date) {
  const item = presentVisitorListItem(v, now);
  return {
    visitorId: v.visitorId,
    identity: item.identity,
    activity: {
      ...item.activity,
      visitedPages: v.visitedPages.map((page) => ({ url: page.url, timestamp: page.occurredAt })),
      completedCustomGoals: v.completedGoals.map((goal) => ({ name: goal.name, timestamp: goal.occurredAt, isServer: goal.isServer })),
    },
    profile,
    prediction: null,
  };
}
