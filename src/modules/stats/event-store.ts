import type { DayTotals, MoneyCounts, Span, TrafficCounts } from './sql/series-sql.ts';
import type { HourTraffic } from './sql/series-hour-reads.ts';
import type { InstantRange } from '../goals/tracked-goals.range.ts';
import type { PageRequest, StatsScope } from './stats.params.ts';
import type { Breakdown } from '../analytics/breakdowns.ts';
import type { DerivedState } from './read-planner.ts';

// The narrow interface between the website API and where events live: everything the reads ask
// of the event store, in the store's own terms (counts, minor units, ISO instants). The SQL
// implementation (src/modules/stats/sql/) serves SQLite and PostgreSQL; a columnar engine for
// installations beyond one machine implements the same interface.

export interface MoneyRules {
  currency: string;
  includeRenewals: boolean;
  /**
   * Other currencies that count, each at the owner's rate (money-rules.ts): `factor` turns its
   * minor units into the website currency's. A payment in a currency without one counts nothing.
   */
  rates?: readonly CurrencyFactor[];
}

export interface CurrencyFactor {
  currency: string;
  factor: number;
}

export interface OverviewCounts {
  visitors: number;
  pageviews: number;
  convertedVisitors: number;
  sessions: number;
  bounces: number;
  /** Sum of session durations in milliseconds. */
  sessionMillis: number;
  revenueMinor: number;
  payments: number;
  /** The counts come from a sample of this rate, scaled back up (ClickHouse, sampling-ch.ts); absent when exact. */
  sampleRate?: number;
}

/** One breakdown row: its key columns (null when unknown) and counts. */
export interface BreakdownRow {
  keys: Record<string, string | null>;
  visitors: number;
  pageviews: number;
  /** Goal completions or outbound clicks, where the breakdown counts them. */
  count: number;
  revenueMinor: number;
}

export interface RowsPage<T> {
  rows: T[];
  total: number;
  /** The counts come from a sample of this rate, scaled back up (ClickHouse, sampling-ch.ts); absent when exact. */
  sampleRate?: number;
  /** Whether rows lie past this page, where the store knows it apart from `total` (a sampled total is approximate). */
  hasMore?: boolean;
}

export interface PropertyRow {
  property: string;
  value: string | null;
  completions: number;
  visitors: number;
}

export interface FunnelStepSpec {
  type: 'pageview' | 'goal';
  url?: string;
  goalName?: string;
}

export interface FunnelStepCounts {
  visitors: number;
  revenueMinor: number;
}

/** A funnel's steps; `sampleRate` when the visitors were counted from a sample and scaled up (ClickHouse, large ranges). */
export type FunnelCounts = FunnelStepCounts[] & { sampleRate?: number };

/** Who a visitor is, as far as the website knows: what they paid under, and their identify profile. */
export interface VisitorPerson {
  /** Set for a visitor who paid: the name (or else their profile's) and email of their latest payment. */
  customer?: { name: string | null; email: string | null };
  profile?: { userId: string; name: string | null };
}

/** Where a visitor is and what they browse with, from their latest event with a page (null when unknown). */
export interface VisitorPlace {
  countryCode: string | null;
  region: string | null;
  city: string | null;
  browser: string | null;
  os: string | null;
  device: string | null;
}

export interface LiveVisitor extends VisitorPlace {
  visitorId: string;
  currentUrl: string | null;
  referrer: string | null;
  params: Record<string, string>;
  visitCount: number;
  /** When the visitor's current (latest) session started; null without a session. */
  sessionStartedAt: string | null;
}

export interface LiveEvent {
  id: string;
  type: string;
  name: string | null;
  visitorId: string;
  occurredAt: string;
  path: string | null;
  countryCode: string | null;
  referrer: string | null;
  /** The event's properties (a goal's metadata). */
  metadata: Record<string, string>;
}

export interface LivePayment {
  id: string;
  occurredAt: string;
  amountMinor: number;
  currency: string;
  customerName: string | null;
  email: string | null;
  renewal: boolean;
  visitorId: string | null;
}

/** What the realtime map shows: the active visitors, the latest events and payments, and who their visitors are. */
export interface LiveMap {
  visitors: LiveVisitor[];
  events: LiveEvent[];
  payments: LivePayment[];
  /** Who the visitors of the three lists are, by visitor id (none for an anonymous visitor). */
  people: Map<string, VisitorPerson>;
}

export interface VisitorSummary extends VisitorPlace {
  visitorId: string;
  browserVersion: string | null;
  osVersion: string | null;
  viewportWidth: number | null;
  viewportHeight: number | null;
  params: Record<string, string>;
  visitCount: number;
  pageViewCount: number;
  firstVisitAt: string;
  lastVisitAt: string;
  /** When the visitor's current (latest) session started; null without a session. */
  currentVisitAt: string | null;
  currentUrl: string | null;
}

export interface VisitorActivity {
  visitedPages: { url: string; occurredAt: string }[];
  completedGoals: { name: string; description: string | null; occurredAt: string; isServer: boolean }[];
}

/** A row of the visitor list: the light shape, without counts. */
export interface VisitorListItem extends VisitorPlace {
  visitorId: string;
  /** The visitor's latest event in the list's scope. */
  lastSeenAt: string;
  currentUrl: string | null;
  /** Where the visitor came from: the referrer source and campaign parameters of their first session. */
  acquisition: { referrer: string | null; params: Record<string, string> };
}

export interface VisitorListOptions {
  completedGoal?: string;
  /** Paths (* a wildcard), any of which the visitor viewed. */
  visitedPages?: string[];
  /** Part of a path the visitor viewed. */
  visitedPageContains?: string;
  /** true: only visitors with a payment; false: only those without. */
  isCustomer?: boolean;
}

/** Traffic per span id, and the rate of the sample it was counted from (absent when exact). */
export type SpanTraffic = Map<number, TrafficCounts> & { sampleRate?: number };

export interface EventStore {
  // The time series (src/modules/analytics): counts per span of time, from the raw events or the
  // day rollups. `scope.filters` apply to the raw-event counts; the rollups are unfiltered.
  /**
   * Visitors, sessions, pageviews and converted visitors per span [from, to) of instants; with
   * `sampleRate` when they were counted from a sample and scaled up (ClickHouse, filtered, large ranges).
   */
  spanTraffic(scope: StatsScope, spans: Span[]): Promise<SpanTraffic>;
  /** The day rollups of [firstDay, lastDay] (local days of the website). */
  dailyTotals(websiteId: string, firstDay: string, lastDay: string): Promise<DayTotals[]>;
  /** Distinct (and converted) visitors per span of local days [from, to], from the rollups. */
  spanDistinctVisitors(websiteId: string, spans: Span[]): Promise<Map<number, { visitors: number; converted: number }>>;
  /**
   * An unfiltered hourly series from the hour rollups (sql/series-hour-reads.ts), each span a
   * bucket within one UTC hour; undefined when they cannot answer it (the raw events do). `asOf`:
   * events at or after this instant (ms) were recorded after the read began.
   */
  hourTraffic(websiteId: string, buckets: Span[], distinct: boolean, asOf: number): Promise<HourTraffic | undefined>;
  /** Payments per span [from, to); with filters, those of the visitors the scope keeps. */
  spanPayments(scope: StatsScope, spans: Span[], money: MoneyRules): Promise<Map<number, MoneyCounts>>;

  // The website API's reads.
  overview(scope: StatsScope, money: MoneyRules): Promise<OverviewCounts>;
  breakdown(kind: Breakdown, scope: StatsScope, page: PageRequest, money: MoneyRules): Promise<RowsPage<BreakdownRow>>;
  goalProperties(scope: StatsScope, eventName: string, propertyName: string | null, page: PageRequest): Promise<RowsPage<PropertyRow>>;
  funnel(scope: StatsScope, steps: FunnelStepSpec[], money: MoneyRules): Promise<FunnelCounts>;
  /**
   * Waits (a bounded time, as each read does first) for the website's events accepted before the
   * read under way to reach what its reads read: the read-slot gate calls it before taking a slot,
   * so the wait holds no slot, and the read's own calls then find it done.
   */
  settle(websiteId: string): Promise<void>;
  /** Distinct visitors with any event since `since`; `state`: the website's derived data (what may answer). */
  liveVisitors(websiteId: string, since: string, state: DerivedState): Promise<number>;
  liveMap(websiteId: string, since: string, state: DerivedState): Promise<LiveMap>;
  visitor(websiteId: string, visitorId: string): Promise<(VisitorSummary & VisitorActivity) | null>;
  visitors(scope: StatsScope, options: VisitorListOptions, page: PageRequest): Promise<RowsPage<VisitorListItem>>;
}

export type { InstantRange };
