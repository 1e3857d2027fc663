import type { WebsiteView } from './websites.schemas.ts';
import type { WebsiteRow } from './websites.repository.ts';

const list = (json: string): string[] => JSON.parse(json) as string[];

/** What the website list shows: identity, locale, and the caller's role. */
export function presentWebsiteSummary(row: WebsiteRow, role: string) {
  return {
    id: row.id,
    _id: row.id,
    domain: row.domain,
    name: row.name,
    trackingId: row.tracking_id,
    timezone: row.timezone,
    currency: row.currency,
    role: role as WebsiteView['role'],
  };
}

export function presentWebsite(row: WebsiteRow, role: string): WebsiteView {
  return {
    ...presentWebsiteSummary(row, role),
    kpi: row.kpi,
    kpiColorScheme: row.kpi_color_scheme,
    revenueMetric: row.revenue_metric,
    isCookieless: Boolean(row.is_cookieless),
    includeRenewalRevenue: Boolean(row.include_renewal_revenue),
    allowedHostnames: list(row.allowed_hostnames),
    excludedIps: list(row.excluded_ips),
    excludedPaths: list(row.excluded_paths),
    excludedCountries: list(row.excluded_countries),
    excludedHostnames: list(row.excluded_hostnames),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
