import { type Static, Type } from 'typebox';
import { GoalName, Id, Nullable, Timestamp } from '../../http/schemas.ts';

export const KPI_COLOR_SCHEMES = ['red', 'orange', 'yellow', 'green', 'purple', 'pink', 'gray', 'blue', 'teal', 'indigo'] as const;
export const REVENUE_METRICS = ['revenue', 'mrr'] as const;
export const MAX_LIST_ITEMS = 100;

const Domain = Type.String({ minLength: 1, maxLength: 253, description: 'a bare host name, e.g. example.com' });
const Timezone = Type.String({ minLength: 1, maxLength: 64, description: 'an IANA time-zone name, e.g. Europe/Paris' });
const WebsiteName = Type.String({ minLength: 1, maxLength: 100 });
const List = (item: ReturnType<typeof Type.String>) => Nullable(Type.Array(item, { maxItems: MAX_LIST_ITEMS }));

export const Role = Type.Enum(['owner', 'member', 'viewer']);

export const Website = Type.Object({
  id: Id,
  _id: Id,
  domain: Type.String(),
  name: Type.String(),
  trackingId: Type.String(),
  timezone: Type.String(),
  currency: Type.String(),
  kpi: Nullable(Type.String()),
  kpiColorScheme: Nullable(Type.String()),
  revenueMetric: Type.String(),
  isCookieless: Type.Boolean(),
  includeRenewalRevenue: Type.Boolean(),
  allowedHostnames: Type.Array(Type.String()),
  excludedIps: Type.Array(Type.String()),
  excludedPaths: Type.Array(Type.String()),
  excludedCountries: Type.Array(Type.String()),
  excludedHostnames: Type.Array(Type.String()),
  sendWeeklyReports: Type.Boolean({ description: "Reports by mail (weekly; monthly for members who opt in) for the website's members who have not opted out" }),
  sendViralTrafficAlerts: Type.Boolean({ description: "Traffic-spike alerts by mail for the website's members who have not opted out" }),
  role: Role,
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type WebsiteView = Static<typeof Website>;

export const WebsiteSummary = Type.Object({
  id: Id,
  _id: Id,
  domain: Type.String(),
  name: Type.String(),
  trackingId: Type.String(),
  timezone: Type.String(),
  currency: Type.String(),
  role: Role,
});

export const CreateWebsiteBody = Type.Object(
  { domain: Domain, timezone: Timezone, name: Type.Optional(WebsiteName) },
  { additionalProperties: false, examples: [{ domain: 'example.com', timezone: 'Europe/Paris', name: 'Example' }] },
);
export type CreateWebsiteInput = Static<typeof CreateWebsiteBody>;

export const UpdateWebsiteBody = Type.Object(
  {
    domain: Type.Optional(Domain),
    name: Type.Optional(WebsiteName),
    timezone: Type.Optional(Timezone),
    currency: Type.Optional(Type.String({ minLength: 3, maxLength: 3, description: 'ISO-4217 code' })),
    kpi: Type.Optional(Nullable(GoalName)),
    kpiColorScheme: Type.Optional(Nullable(Type.Enum([...KPI_COLOR_SCHEMES]))),
    revenueMetric: Type.Optional(Type.Enum([...REVENUE_METRICS])),
    isCookieless: Type.Optional(Type.Boolean()),
    includeRenewalRevenue: Type.Optional(Type.Boolean()),
    allowedHostnames: Type.Optional(List(Type.String({ maxLength: 255 }))),
    excludedHostnames: Type.Optional(List(Type.String({ maxLength: 255 }))),
    excludedIps: Type.Optional(List(Type.String({ maxLength: 64 }))),
    excludedPaths: Type.Optional(List(Type.String({ maxLength: 500 }))),
    excludedCountries: Type.Optional(List(Type.String({ maxLength: 2 }))),
    sendWeeklyReports: Type.Optional(Type.Boolean()),
    sendViralTrafficAlerts: Type.Optional(Type.Boolean()),
  },
  {
    additionalProperties: false,
    minProperties: 1,
    examples: [{ name: 'Example shop', currency: 'EUR', excludedPaths: ['/admin/*'], excludedCountries: null }],
  },
);
export type UpdateWebsiteInput = Static<typeof UpdateWebsiteBody>;
