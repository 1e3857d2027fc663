import type { Updateable } from 'kysely';
import type { WebsitesTable } from '../../db/schema.ts';
import { invalidField } from '../../errors.ts';
import {
  normaliseCountry,
  normaliseCurrency,
  normaliseHostPattern,
  normaliseHostname,
  normaliseIpOrCidr,
  normalisePathPattern,
  normaliseTimezone,
} from '../../lib/formats.ts';
import type { UpdateWebsiteInput } from './websites.schemas.ts';

// Turns a validated PUT body into column changes, normalising every value and naming the field
// of the first one that is not acceptable.

type Normaliser = (value: string) => string | null;

export function requireValue(field: string, value: string, normalise: Normaliser, rule: string): string {
  const normalised = normalise(value);
  if (normalised === null) throw invalidField(field, rule);
  return normalised;
}

function normaliseList(field: string, values: string[] | null, normalise: Normaliser, rule: string): string {
  const out = (values ?? []).map((value, i) => requireValue(`${field}[${i}]`, value, normalise, rule));
  return JSON.stringify([...new Set(out)]);
}

export const DOMAIN_RULE = 'must be a bare host name such as example.com (no scheme, path or port)';
export const TIMEZONE_RULE = 'must be an IANA time-zone name such as Europe/Paris';

export function settingsChanges(input: UpdateWebsiteInput): Updateable<WebsitesTable> {
  const changes: Updateable<WebsitesTable> = {};
  if (input.domain !== undefined) changes.domain = requireValue('body.domain', input.domain, normaliseHostname, DOMAIN_RULE);
  if (input.name !== undefined) changes.name = input.name;
  if (input.timezone !== undefined) {
    changes.timezone = requireValue('body.timezone', input.timezone, normaliseTimezone, TIMEZONE_RULE);
  }
  if (input.currency !== undefined) {
    changes.currency = requireValue('body.currency', input.currency, normaliseCurrency, 'must be an ISO-4217 currency code such as USD');
  }
  if (input.kpi !== undefined) changes.kpi = input.kpi;
  if (input.kpiColorScheme !== undefined) changes.kpi_color_scheme = input.kpiColorScheme;
  if (input.revenueMetric !== undefined) changes.revenue_metric = input.revenueMetric;
  if (input.isCookieless !== undefined) changes.is_cookieless = input.isCookieless;
  if (input.includeRenewalRevenue !== undefined) changes.include_renewal_revenue = input.includeRenewalRevenue;
  if (input.sendWeeklyReports !== undefined) changes.send_weekly_reports = input.sendWeeklyReports;
  if (input.sendViralTrafficAlerts !== undefined) changes.send_viral_traffic_alerts = input.sendViralTrafficAlerts;
  const hostRule = 'must be a host name, optionally starting with *.';
  if (input.allowedHostnames !== undefined) {
    changes.allowed_hostnames = normaliseList('body.allowedHostnames', input.allowedHostnames, normaliseHostPattern, hostRule);
  }
  if (input.excludedHostnames !== undefined) {
    changes.excluded_hostnames = normaliseList('body.excludedHostnames', input.excludedHostnames, normaliseHostPattern, hostRule);
  }
  if (input.excludedIps !== undefined) {
    changes.excluded_ips = normaliseList('body.excludedIps', input.excludedIps, normaliseIpOrCidr, 'must be an IPv4 or IPv6 address or CIDR range');
  }
  if (input.excludedPaths !== undefined) {
    changes.excluded_paths = normaliseList('body.excludedPaths', input.excludedPaths, normalisePathPattern, 'must be a path starting with / (* is a wildcard)');
  }
  if (input.excludedCountries !== undefined) {
    changes.excluded_countries = normaliseList('body.excludedCountries', input.excludedCountries, normaliseCountry, 'must be an ISO-3166 alpha-2 country code such as DE');
  }
  return changes;
}
