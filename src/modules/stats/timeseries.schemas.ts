import { type Static, Type } from 'typebox';
import { Pagination, WebsiteRef } from '../../http/schemas.ts';
import { EXACT_QUERY, FILTER_QUERY_PARAMS, SAMPLING_SIBLING } from './stats.schemas.ts';

export const METRICS = ['visitors', 'sessions', 'pageviews', 'revenue', 'payments', 'conversion_rate'] as const;
export type Metric = (typeof METRICS)[number];
export const INTERVALS = ['hour', 'day', 'week', 'month'] as const;

const BOUND =
  'a YYYY-MM-DD day in the time zone (the whole day) or an ISO-8601 date-time (read in the time zone when it has no offset; ' +
  'day, week and month series count whole days, so an instant stands for its local day)';

export const TimeseriesQuery = Type.Object(
  {
    websiteId: Type.Optional(WebsiteRef),
    fields: Type.String({
      minLength: 1,
      maxLength: 200,
      description: `comma-separated, any of: ${METRICS.join(', ')} (and name, always present)`,
      examples: ['visitors,pageviews,revenue'],
    }),
    interval: Type.Enum([...INTERVALS], { description: 'weeks start on Monday (ISO weeks)', examples: ['day'] }),
    startAt: Type.Optional(Type.String({ minLength: 1, maxLength: 40, description: `${BOUND}; with endAt`, examples: ['2026-03-01'] })),
    endAt: Type.Optional(
      Type.String({ minLength: 1, maxLength: 40, description: `${BOUND}, included; with startAt`, examples: ['2026-03-07'] }),
    ),
    timezone: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description: "an IANA time zone for the buckets; default the website's",
        examples: ['Europe/Paris'],
      }),
    ),
    limit: Type.Optional(Type.Integer({ minimum: 1, description: 'buckets per page in time order, default all (at most 1000 are taken)' })),
    offset: Type.Optional(Type.Integer({ minimum: 0, description: 'buckets to skip' })),
    ...EXACT_QUERY,
    ...FILTER_QUERY_PARAMS,
  },
  // Names the series does not use are ignored and named in X-Sightline-Ignored-Params.
  { additionalProperties: true },
);
export type TimeseriesQueryInput = Static<typeof TimeseriesQuery>;

const metricSchemas = {
  visitors: Type.Optional(Type.Integer({ description: 'distinct visitors (any event counts its visitor)' })),
  sessions: Type.Optional(Type.Integer()),
  pageviews: Type.Optional(Type.Integer()),
  revenue: Type.Optional(Type.Number({ description: "in the website's currency, major units (29.99)" })),
  payments: Type.Optional(Type.Integer()),
  conversion_rate: Type.Optional(Type.Number({ description: 'percent of visitors with a goal, 2 decimals (12.5 = 12.5 %)' })),
};

export type MetricValues = Partial<Record<Metric, number>>;

const RevenueBreakdown = (description: string) =>
  Type.Optional(
    Type.Object(
      { new: Type.Number(), renewal: Type.Number(), refund: Type.Number({ description: 'refunded amounts, as a positive number' }) },
      { description },
    ),
  );

export const TimeseriesPoint = Type.Object({
  name: Type.String({ description: 'hour "2026-03-08 14:00", day "2026-03-08", week "2026-W10", month "2026-03"' }),
  timestamp: Type.String({ description: "the bucket's start, ISO with the zone's offset: 2026-03-08T00:00:00.000-05:00" }),
  ...metricSchemas,
  revenueBreakdown: RevenueBreakdown("with revenue: the bucket's payments by kind, in major units"),
});

export const Timeseries = Type.Object({
  status: Type.Literal('success'),
  fields: Type.Array(Type.String()),
  interval: Type.String(),
  timezone: Type.String(),
  currency: Type.String(),
  totals: Type.Object({ ...metricSchemas, revenueBreakdown: RevenueBreakdown('with revenue: every payment of the range by kind, in major units') }),
  data: Type.Array(TimeseriesPoint),
  pagination: Pagination('buckets in the range'),
  ...SAMPLING_SIBLING,
});
export type TimeseriesView = Static<typeof Timeseries>;
