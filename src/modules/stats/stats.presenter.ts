import { flagUrl } from '../../lib/country-flags.ts';
import { fromMinorUnits } from '../../lib/money.ts';
import { percentOf as percent } from '../../lib/percent.ts';
import type { VisitorProfile } from '../identify/identify.repository.ts';
import type {
  BreakdownRow,
  FunnelStepCounts,
  LiveMap,
  OverviewCounts,
  VisitorActivity,
  VisitorListItem,
  VisitorSummary,
} from './event-store.ts';
import type { Breakdown } from '../analytics/breakdowns.ts';
import { countryName } from './countries.ts';
import { shownLabel } from './labels.ts';
import { PARAM_NAMES } from './visitor-shapes.ts';
import { presentPagination } from '../../http/schemas.ts';

// The website API's JSON, shaped in one place. Percentages carry two decimals; money is in the
// website currency's major units.

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

/** A breakdown row: its keys as the hosted service names them, then the counts; links under the public URL. */
export function presentBreakdownRow(kind: Breakdown, row: BreakdownRow, currency: string, publicUrl: string): Record<string, unknown> {
  const revenue = fromMinorUnits(row.revenueMinor, currency);
  const { keys } = row;
  switch (kind) {
    case 'countries':
      return { country: countryName(keys.countryCode ?? null), countryCode: keys.countryCode, image: flagUrl(publicUrl, keys.countryCode), visitors: row.visitors, pageviews: row.pageviews, revenue };
    case 'campaigns':
      return { campaign: campaignOf(keys), visitors: row.visitors, pageviews: row.pageviews, revenue };
    case 'goals':
      return { goal: keys.goal, completions: row.count, visitors: row.visitors, revenue };
    case 'exit-clicks':
      return { url: keys.url, clicks: row.count, visitors: row.visitors };
    case 'referrers':
      return { referrer: shownLabel('referrer', keys.referrer ?? null), visitors: row.visitors, pageviews: row.pageviews, revenue };
    case 'browsers':
      return { browser: shownLabel('browser', keys.browser ?? null), visitors: row.visitors, pageviews: row.pageviews, revenue };
    case 'operating-systems':
      return { operating_system: shownLabel('os', keys.operating_system ?? null), visitors: row.visitors, pageviews: row.pageviews, revenue };
    default:
      return { ...keys, visitors: row.visitors, pageviews: row.pageviews, revenue };
  }
}

/**
 * A campaigns row's key as clients read it (website-api.md section 7): all eight keys, each a
 * string, "" when unset; visitors without any campaign parameter share the all-"" row. Ingestion
 * stores an empty parameter as absent, so null -> "" joins no two stored rows.
 */
function campaignOf(keys: BreakdownRow['keys']): Record<string, string> {
  return Object.fromEntries(Object.entries(keys).map(([name, value]) => [name, value ?? '']));
}

function since(first: string, now: Date): number {
  return Math.max(0, now.getTime() - Date.parse(first));
}

/** The campaign parameters under all their URL names, null when unset (as the hosted service lists them). */
function allParams(params: Record<string, string>): Record<string, string | null> {
  return Object.fromEntries(PARAM_NAMES.map((name) => [name, params[name] ?? null]));
}

export function presentVisitorIdentity(v: VisitorSummary) {
  return {
    country: countryName(v.countryCode),
    countryCode: v.countryCode,
    region: v.region,
    city: v.city,
    browser: { name: shownLabel('browser', v.browser), version: v.browserVersion },
    os: { name: shownLabel('os', v.os), version: v.osVersion },
    device: { type: v.device },
    viewport: { width: v.viewportWidth, height: v.viewportHeight },
    params: v.params,
  };
}

/** A row of the visitor list: the hosted service's light row (identity as plain strings; country as its code, as its docs show). */
export function presentVisitorListItem(v: VisitorListItem) {
  return {
    visitorId: v.visitorId,
    lastSeenAt: v.lastSeenAt,
    currentUrl: v.currentUrl,
    identity: { country: v.countryCode, region: v.region, city: v.city, browser: shownLabel('browser', v.browser), os: shownLabel('os', v.os), device: v.device },
    acquisition: { referrer: shownLabel('referrer', v.acquisition.referrer), ...allParams(v.acquisition.params) },
  };
}

/** The list's pagination; `hasMore` says whether a page lies past this one. */
/** `hasMore` from the store when it knows it (its total may be a sample's estimate), else from the total. */
export function presentVisitorPagination(page: { limit: number; offset: number }, total: number, returned: number, hasMore?: boolean) {
  return { ...presentPagination(page, total), hasMore: hasMore ?? page.offset + returned < total };
}

export function presentVisitor(v: VisitorSummary & VisitorActivity, profile: VisitorProfile | null, now: Date) {
  // One goal timeline under both names: completedGoals (the hosted service's current one, every
  // goal tracked by the website or its server) and completedCustomGoals (its older name).
  const goals = v.completedGoals.map((goal) => ({ name: goal.name, description: goal.description, timestamp: goal.occurredAt, isServer: goal.isServer, origin: 'manual' as const }));
  return {
    visitorId: v.visitorId,
    identity: presentVisitorIdentity(v),
    activity: {
      visitCount: v.visitCount,
      pageViewCount: v.pageViewCount,
      firstVisitAt: v.firstVisitAt,
      lastVisitAt: v.lastVisitAt,
      timeSinceFirstVisit: since(v.firstVisitAt, now),
      // Without a session (server-side events only) the latest activity stands for the visit.
      timeSinceCurrentVisit: since(v.currentVisitAt ?? v.lastVisitAt, now),
      currentUrl: v.currentUrl,
      visitedPages: v.visitedPages.map((page) => ({ url: page.url, timestamp: page.occurredAt })),
      completedGoals: goals,
      completedCustomGoals: goals,
    },
    profile,
    prediction: null,
  };
}

/**
 * The realtime map as the hosted service documents it. Sightline makes no conversion
 * predictions: `hasConversionPredictions` is false, and `conversionLikelihood` and
 * `conversionMetrics` are left out, as the hosted service leaves them out without its model.
 */
export function presentRealtimeMap(live: LiveMap) {
  const person = (visitorId: string | null) => (visitorId === null ? undefined : live.people.get(visitorId));
  return {
    count: live.visitors.length,
    visitors: live.visitors.map((v) => {
      const { customer, profile } = person(v.visitorId) ?? {};
      return {
        visitorId: v.visitorId,
        location: { city: v.city, region: v.region, countryCode: v.countryCode },
        system: { browser: { name: shownLabel('browser', v.browser) }, os: { name: shownLabel('os', v.os) }, device: { type: v.device } },
        currentUrl: v.currentUrl,
        referrer: shownLabel('referrer', v.referrer),
        sessionStartTime: v.sessionStartedAt,
        visitCount: v.visitCount,
        params: allParams(v.params),
        isCustomer: customer !== undefined,
        customerName: customer?.name ?? null,
        customerEmail: customer?.email ?? null,
        // Sightline gives anonymous visitors no made-up names: a display name is always the profile's.
        profileData: { displayName: profile?.name ?? null, userId: profile?.userId ?? null, hasProfile: profile !== undefined, isRandomName: false },
      };
    }),
    hasConversionPredictions: false,
    recentEvents: live.events.map((e) => ({
      id: e.id,
      _id: e.id,
      type: e.type,
      name: e.name,
      visitorId: e.visitorId,
      timestamp: e.occurredAt,
      path: e.path,
      countryCode: e.countryCode,
      extraData: e.metadata,
      referrer: shownLabel('referrer', e.referrer),
      customerName: person(e.visitorId)?.customer?.name ?? null,
      amount: null,
      displayName: person(e.visitorId)?.profile?.name ?? null,
    })),
    recentPayments: live.payments.map((p) => ({
      id: p.id,
      _id: p.id,
      type: 'payment_received' as const,
      timestamp: p.occurredAt,
      amount: fromMinorUnits(p.amountMinor, p.currency),
      currency: p.currency,
      customerName: p.customerName,
      name: p.customerName,
      email: p.email,
      renewal: p.renewal,
      displayName: person(p.visitorId)?.profile?.name ?? null,
    })),
  };
}

interface FunnelShape {
  id: string;
  name: string;
  steps: { id: string; name: string; type: string }[];
}

/** Step n's conversion is of the first step; its drop-off the part of step n-1 lost at it. */
export function presentFunnelReport(funnel: FunnelShape, counts: FunnelStepCounts[], currency: string) {
  const first = counts[0]?.visitors ?? 0;
  const steps = funnel.steps.map((step, i) => {
    const visitors = counts[i]?.visitors ?? 0;
    const previous = i === 0 ? visitors : (counts[i - 1]?.visitors ?? 0);
    return {
      id: step.id,
      name: step.name,
      type: step.type,
      visitors,
      conversionRate: percent(visitors, first),
      dropOff: percent(previous - visitors, previous),
      revenue: fromMinorUnits(counts[i]?.revenueMinor ?? 0, currency),
    };
  });
  const last = steps.at(-1)?.visitors ?? 0;
  return { funnelId: funnel.id, name: funnel.name, steps, visitors: first, conversionRate: percent(last, first) };
}
