import { type TObject, type TSchema, Type } from 'typebox';
import { Id, Nullable, Pagination, WebsiteRef } from '../../http/schemas.ts';
import { BREAKDOWNS, type Breakdown } from '../analytics/breakdowns.ts';
import { DIMENSIONS } from './stats.filters.ts';
import { PARAM_NAMES } from './visitor-shapes.ts';

// Route schemas of the website API's reads. Query objects accept names they do not list: the
// route ignores them and names them in X-Sightline-Ignored-Params (website-api.md section 2),
// except an unknown filter_* name, which is a 400.

const BOUND = 'a YYYY-MM-DD day in the time zone (the whole day) or an ISO-8601 date-time (read in the time zone without an offset)';

/** `filter_<dim>` and its alias `<dim>` for every dimension, as optional query strings. */
export const FILTER_QUERY_PARAMS = Object.fromEntries(
  DIMENSIONS.flatMap((dimension) => [
    [
      `filter_${dimension}`,
      Type.Optional(
        Type.String({
          minLength: 1,
          maxLength: 8000,
          description: `op:value1,value2 (values OR-ed; op is, is_not, contains or does_not_contain (a substring, case ignored${dimension === 'country' ? ', of the ISO code' : ''}); ${dimension.endsWith('page') ? '* is a wildcard; ' : ''}is when left out)`,
        }),
      ),
    ],
    [dimension, Type.Optional(Type.String({ minLength: 1, maxLength: 8000, description: `alias of filter_${dimension}` }))],
  ]),
);

const websiteId = { websiteId: Type.Optional(WebsiteRef) };
const range = {
  startAt: Type.Optional(Type.String({ minLength: 1, maxLength: 40, description: `${BOUND}; with endAt`, examples: ['2026-03-01'] })),
  endAt: Type.Optional(Type.String({ minLength: 1, maxLength: 40, description: `${BOUND}, included; with startAt`, examples: ['2026-03-31'] })),
  timezone: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: "an IANA time zone for days; default the website's" })),
};
const page = {
  limit: Type.Optional(Type.Integer({ minimum: 1, description: 'rows per page, default 100; above 1000 reads as 1000' })),
  offset: Type.Optional(Type.Integer({ minimum: 0, description: 'rows to skip, default 0' })),
};
const open = { additionalProperties: true };
/** `exact`: no sampling (the overview, breakdowns, time series, funnels and the visitor list's total). */
export const EXACT_QUERY = {
  exact: Type.Optional(
    Type.Boolean({
      description: 'true: count every event, even where a large range would be answered from a sample (events on ClickHouse; see X-Sightline-Sample-Rate)',
    }),
  ),
};
/** Beside `data` only when the answer was read from a sample of the events (X-Sightline-Sample-Rate says the same). */
export const SAMPLING_SIBLING = {
  sampling: Type.Optional(
    Type.Object(
      { rate: Type.Number({ exclusiveMinimum: 0, maximum: 1, description: 'the share of visitors read; counts are scaled up by 1/rate, so they are approximate' }) },
      { description: 'present only when the counts were read from a sample (events on ClickHouse, ranges above CLICKHOUSE_SAMPLE_THRESHOLD events); exact=true reads every event' },
    ),
  ),
};

export const PlainQuery = Type.Object(websiteId, open);
export const MetadataQuery = Type.Object({ ...websiteId, fields: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })) }, open);
export const OverviewQuery = Type.Object({ ...websiteId, ...range, fields: Type.Optional(Type.String({ minLength: 1, maxLength: 400 })), ...EXACT_QUERY, ...FILTER_QUERY_PARAMS }, open);
export const BreakdownQuery = Type.Object({ ...websiteId, ...range, ...page, ...EXACT_QUERY, ...FILTER_QUERY_PARAMS }, open);
export const FunnelQuery = Type.Object({ ...websiteId, ...range, ...EXACT_QUERY, ...FILTER_QUERY_PARAMS }, open);
export const PropertiesQuery = Type.Object(
  {
    ...websiteId,
    eventName: Type.String({ minLength: 1, maxLength: 64, pattern: '^[a-z0-9_:-]+$', description: 'the custom goal', examples: ['signup'] }),
    propertyName: Type.Optional(Type.String({ minLength: 1, maxLength: 64, pattern: '^[a-z0-9_-]+$', description: 'one property; all when left out' })),
    ...range,
    ...page,
    ...FILTER_QUERY_PARAMS,
  },
  open,
);
/** The visitor list's query: the hosted service's List visitors (limit at most 250; page and goal are its spellings of visitedPage and completedGoal, not filters). */
const goalOption = Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'only visitors who completed this goal; not with isCustomer' }));
const pagesOption = Type.Optional(Type.String({ minLength: 1, maxLength: 8000, description: 'only visitors who viewed one of these paths (comma-separated, at most 50; * a wildcard)' }));
const containsOption = Type.Optional(Type.String({ minLength: 1, maxLength: 512, description: 'only visitors who viewed a path containing this' }));
const customerOption = Type.Optional(Type.Boolean({ description: 'true: only visitors with a payment; false: only those without; not with completedGoal' }));
export const VisitorsQuery = Type.Object(
  {
    ...websiteId,
    ...range,
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 250, description: 'visitors per page, default 100, at most 250' })),
    offset: page.offset,
    ...EXACT_QUERY,
    ...FILTER_QUERY_PARAMS,
    completedGoal: goalOption,
    goal: goalOption,
    visitedPage: pagesOption,
    page: pagesOption,
    visitedPageContains: containsOption,
    pageContains: containsOption,
    isCustomer: customerOption,
    hasRevenue: customerOption,
  },
  open,
);

export const FunnelParams = Type.Object({ funnelId: Id }, { additionalProperties: false });
export const VisitorParams = Type.Object({ visitorId: Type.String({ minLength: 1, maxLength: 255 }) }, { additionalProperties: false });

const NullableString = Nullable(Type.String());

function success(data: TSchema, siblings: Record<string, TSchema> = {}): TObject {
  return Type.Object({ status: Type.Literal('success'), data, ...siblings });
}

export const OverviewItem = Type.Object({
  visitors: Type.Optional(Type.Integer()),
  sessions: Type.Optional(Type.Integer()),
  pageviews: Type.Optional(Type.Integer()),
  bounce_rate: Type.Optional(Type.Number({ description: 'percent of sessions with one pageview and no goal' })),
  avg_session_duration: Type.Optional(Type.Number({ description: 'milliseconds' })),
  currency: Type.Optional(Type.String()),
  revenue: Type.Optional(Type.Number({ description: "major units of the website's currency" })),
  payments: Type.Optional(Type.Integer()),
  revenue_per_visitor: Type.Optional(Type.Number()),
  conversion_rate: Type.Optional(Type.Number({ description: 'percent of visitors with a goal' })),
});
export const Overview = success(Type.Array(OverviewItem), SAMPLING_SIBLING);

const counts = { visitors: Type.Integer(), pageviews: Type.Integer(), revenue: Type.Number() };
const FlagImage = Nullable(
  Type.String({ description: "the country's flag: an SVG this server serves at {PUBLIC_URL}/flags/{cc}.svg; null for an unknown country" }),
);
const ROW_KEYS: Record<Breakdown, Record<string, TSchema>> = {
  pages: { hostname: NullableString, path: NullableString, ...counts },
  'entry-pages': { hostname: NullableString, path: NullableString, ...counts },
  'exit-pages': { hostname: NullableString, path: NullableString, ...counts },
  referrers: { referrer: NullableString, ...counts },
  campaigns: {
    campaign: Type.Object(
      Object.fromEntries(
        ['utm_source', 'utm_medium', 'utm_campaign', 'utm_term', 'utm_content', 'ref', 'source', 'via'].map((k) => [k, Type.String({ description: '"" when unset' })]),
      ),
      { description: 'all eight keys, always; visitors without any campaign parameter share the row whose keys are all ""' },
    ),
    ...counts,
  },
  countries: { country: NullableString, countryCode: NullableString, image: FlagImage, ...counts },
  regions: { region: NullableString, countryCode: NullableString, ...counts },
  cities: { city: NullableString, countryCode: NullableString, ...counts },
  devices: { device: NullableString, ...counts },
  browsers: { browser: NullableString, ...counts },
  'operating-systems': { operating_system: NullableString, ...counts },
  hostnames: { hostname: NullableString, ...counts },
  goals: { goal: NullableString, completions: Type.Integer(), visitors: Type.Integer(), revenue: Type.Number() },
  'exit-clicks': { url: NullableString, clicks: Type.Integer(), visitors: Type.Integer() },
};

export const BreakdownAnswers = Object.fromEntries(
  BREAKDOWNS.map((kind) => [kind, success(Type.Array(Type.Object(ROW_KEYS[kind])), { pagination: Pagination(), ...SAMPLING_SIBLING })]),
) as Record<Breakdown, TObject>;

export const Properties = success(
  Type.Array(Type.Object({ property: Type.String(), value: NullableString, completions: Type.Integer(), visitors: Type.Integer() })),
  { pagination: Pagination() },
);

export const Realtime = success(Type.Array(Type.Object({ visitors: Type.Integer() })));

const CampaignParams = Type.Object(Object.fromEntries(PARAM_NAMES.map((name) => [name, NullableString])));

export const RealtimeMap = success(
  Type.Object({
    count: Type.Integer(),
    visitors: Type.Array(
      Type.Object({
        visitorId: Type.String(),
        location: Type.Object({ city: NullableString, region: NullableString, countryCode: NullableString }),
        system: Type.Object({
          browser: Type.Object({ name: NullableString }),
          os: Type.Object({ name: NullableString }),
          device: Type.Object({ type: NullableString }),
        }),
        currentUrl: NullableString,
        referrer: NullableString,
        sessionStartTime: Nullable(Type.String({ description: "when the visitor's current session started" })),
        visitCount: Type.Integer(),
        params: CampaignParams,
        isCustomer: Type.Boolean(),
        customerName: NullableString,
        customerEmail: NullableString,
        profileData: Type.Object({
          displayName: NullableString,
          userId: NullableString,
          hasProfile: Type.Boolean(),
          isRandomName: Type.Boolean({ description: 'always false: Sightline makes up no names' }),
        }),
      }),
    ),
    hasConversionPredictions: Type.Boolean({ description: 'always false: Sightline makes no conversion predictions' }),
    recentEvents: Type.Array(
      Type.Object({
        id: Type.String(),
        _id: Type.String(),
        type: Type.String(),
        name: NullableString,
        visitorId: Type.String(),
        timestamp: Type.String(),
        path: NullableString,
        countryCode: NullableString,
        extraData: Type.Record(Type.String(), Type.String()),
        referrer: NullableString,
        customerName: NullableString,
        amount: Type.Null(),
        displayName: NullableString,
      }),
    ),
    recentPayments: Type.Array(
      Type.Object({
        id: Type.String(),
        _id: Type.String(),
        type: Type.Literal('payment_received'),
        timestamp: Type.String(),
        amount: Type.Number(),
        currency: Type.String(),
        customerName: NullableString,
        name: NullableString,
        email: NullableString,
        renewal: Type.Boolean(),
        displayName: NullableString,
      }),
    ),
  }),
);

export const Metadata = success(
  Type.Array(
    Type.Object({
      domain: Type.Optional(Type.String()),
      name: Type.Optional(Type.String()),
      timezone: Type.Optional(Type.String()),
      currency: Type.Optional(Type.String()),
      kpi: Type.Optional(NullableString),
      kpiColorScheme: Type.Optional(NullableString),
      logo: Type.Optional(NullableString),
    }),
  ),
);

export const FunnelReport = success(
  Type.Array(
    Type.Object({
      funnelId: Type.String(),
      name: Type.String(),
      steps: Type.Array(
        Type.Object({
          id: Type.String(),
          name: Type.String(),
          type: Type.String(),
          visitors: Type.Integer(),
          conversionRate: Type.Number({ description: 'percent of the first step' }),
          dropOff: Type.Number({ description: 'percent of the previous step lost at this one' }),
          revenue: Type.Number(),
        }),
      ),
      visitors: Type.Integer(),
      conversionRate: Type.Number(),
    }),
  ),
  SAMPLING_SIBLING,
);

const Identity = Type.Object({
  country: NullableString,
  countryCode: NullableString,
  region: NullableString,
  city: NullableString,
  browser: Type.Object({ name: NullableString, version: NullableString }),
  os: Type.Object({ name: NullableString, version: NullableString }),
  device: Type.Object({ type: NullableString }),
  viewport: Type.Object({ width: Nullable(Type.Integer()), height: Nullable(Type.Integer()) }),
  params: Type.Record(Type.String(), Type.String()),
});
const Goal = Type.Object({
  name: Type.String(),
  description: NullableString,
  timestamp: Type.String(),
  isServer: Type.Boolean(),
  origin: Type.Literal('manual', { description: 'goals tracked by the website or its server (Sightline adds no payment-provider goals)' }),
});

export const VisitorList = success(
  Type.Array(
    Type.Object({
      visitorId: Type.String(),
      lastSeenAt: Type.String({ description: "the visitor's latest event in the range" }),
      currentUrl: NullableString,
      identity: Type.Object({
        country: Nullable(Type.String({ description: 'ISO 3166 alpha-2 code' })),
        region: NullableString,
        city: NullableString,
        browser: NullableString,
        os: NullableString,
        device: NullableString,
      }),
      acquisition: Type.Object(
        { referrer: NullableString, ...CampaignParams.properties },
        { description: "the referrer source and campaign parameters of the visitor's first session" },
      ),
    }),
  ),
  {
    pagination: Type.Object({
      ...Pagination('visitors in the list; an estimate when `sampling` is present (hasMore stays exact)').properties,
      hasMore: Type.Boolean({ description: 'whether visitors lie past this page' }),
    }),
    ...SAMPLING_SIBLING,
  },
);

export const VisitorPage = success(
  Type.Object({
    visitorId: Type.String(),
    identity: Identity,
    activity: Type.Object({
      visitCount: Type.Integer({ description: 'sessions' }),
      pageViewCount: Type.Integer(),
      firstVisitAt: Type.String(),
      lastVisitAt: Type.String(),
      timeSinceFirstVisit: Type.Integer({ description: 'milliseconds' }),
      timeSinceCurrentVisit: Type.Integer({ description: 'milliseconds since the current (latest) session started' }),
      currentUrl: NullableString,
      visitedPages: Type.Array(Type.Object({ url: Type.String(), timestamp: Type.String() })),
      completedGoals: Type.Array(Goal),
      completedCustomGoals: Type.Array(Goal, { description: 'the same list as completedGoals (its older name)' }),
    }),
    profile: Nullable(
      Type.Object({
        userId: Type.String(),
        name: NullableString,
        image: NullableString,
        metadata: Nullable(Type.Record(Type.String(), Type.String())),
        identifiedAt: Type.String(),
      }),
    ),
    prediction: Type.Null(),
  }),
);
