import { fromMinorUnits } from '../../lib/money.ts';
import { percentOf } from '../../lib/percent.ts';
import type { MoneyCounts, TrafficCounts } from './sql/series-sql.ts';
import type { Metric, MetricValues, TimeseriesView } from './timeseries.schemas.ts';
import type { Bucket } from '../analytics/zoned-time.ts';

export interface SeriesCounts {
  /** `sampleRate`: counted from a sample of the visitors, scaled up (ClickHouse). */
  traffic: { perBucket: Map<number, TrafficCounts>; totalVisitors: number; totalConverted: number; sampleRate?: number } | null;
  money: Map<number, MoneyCounts> | null;
}

export interface SeriesInput {
  fields: Metric[];
  /** Buckets of the answer, in time order (the totals cover every bucket). */
  page: { limit: number; offset: number };
  interval: string;
  timezone: string;
  currency: string;
  buckets: Bucket[];
  counts: SeriesCounts;
}

const NO_TRAFFIC: TrafficCounts = { visitors: 0, sessions: 0, pageviews: 0, converted: 0 };
const NO_MONEY: MoneyCounts = { minor: 0, payments: 0, newMinor: 0, renewalMinor: 0, refundMinor: 0 };

function values(fields: Metric[], traffic: TrafficCounts, money: MoneyCounts, currency: string): MetricValues {
  const all: Record<Metric, () => number> = {
    visitors: () => traffic.visitors,
    sessions: () => traffic.sessions,
    pageviews: () => traffic.pageviews,
    revenue: () => fromMinorUnits(money.minor, currency),
    payments: () => money.payments,
    conversion_rate: () => percentOf(traffic.converted, traffic.visitors),
  };
  const out: MetricValues = {};
  for (const field of fields) out[field] = all[field]();
  return out;
}

/** With revenue asked for, a bucket's (or the totals') payments by kind, in major units. */
function withRevenueBreakdown<T extends object>(fields: Metric[], point: T, money: MoneyCounts, currency: string) {
  if (!fields.includes('revenue')) return point;
  const revenueBreakdown = {
    new: fromMinorUnits(money.newMinor, currency),
    renewal: fromMinorUnits(money.renewalMinor, currency),
    refund: fromMinorUnits(money.refundMinor, currency),
  };
  return { ...point, revenueBreakdown };
}

export function presentTimeseries(input: SeriesInput): TimeseriesView {
  const { fields, currency, counts } = input;
  const sums: TrafficCounts = { ...NO_TRAFFIC };
  const money: MoneyCounts = { ...NO_MONEY };
  const data = input.buckets.map((bucket, i) => {
    const traffic = counts.traffic?.perBucket.get(i) ?? NO_TRAFFIC;
    const paid = counts.money?.get(i) ?? NO_MONEY;
    sums.sessions += traffic.sessions;
    sums.pageviews += traffic.pageviews;
    money.minor += paid.minor;
    money.payments += paid.payments;
    money.newMinor += paid.newMinor;
    money.renewalMinor += paid.renewalMinor;
    money.refundMinor += paid.refundMinor;
    return withRevenueBreakdown(fields, { name: bucket.name, timestamp: bucket.timestamp, ...values(fields, traffic, paid, currency) }, paid, currency);
  });
  // Visitors (and converted visitors) are distinct over the whole range, not a sum of buckets.
  sums.visitors = counts.traffic?.totalVisitors ?? 0;
  sums.converted = counts.traffic?.totalConverted ?? 0;
  return {
    status: 'success',
    fields,
    interval: input.interval,
    timezone: input.timezone,
    currency,
    totals: withRevenueBreakdown(fields, values(fields, sums, money, currency), money, currency),
    data: data.slice(input.page.offset, input.page.offset + input.page.limit),
    pagination: { limit: input.page.limit, offset: input.page.offset, total: data.length },
  };
}
