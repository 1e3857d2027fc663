// The shapes the dashboard reads, from the generated types of the committed openapi.json, and
// the role checks, from the server's own role matrix.

import { type Role, roleAllows } from '../../src/auth/policy.ts';
import type { paths } from '../../sdk/openapi-types.ts';

export type { Role };

/** The items of `data` in a route's 200 answer, as the committed OpenAPI document types them. */
type Items<P extends keyof paths, M extends 'get' | 'post' | 'put'> = paths[P][M] extends {
  responses: { 200: { content: { 'application/json': { data: (infer T)[] } } } };
}
  ? T
  : never;

/** A website as the list shows it, with the caller's role. */
export type WebsiteSummary = Items<'/api/v1/admin/websites', 'get'>;
/** A website with every setting. */
export type Website = Items<'/api/v1/admin/websites/{websiteId}', 'get'>;
/** Whether a website's statistics are ready or being rebuilt for a new time zone, and how far. */
export type DerivedData = Items<'/api/v1/admin/websites/{websiteId}/derived-data', 'get'>;
/** An exchange rate into the website's currency (the list's siblings: the currency and what has no rate). */
export type CurrencyRate = Items<'/api/v1/admin/websites/{websiteId}/currency-rates', 'get'>;
export type Import = Items<'/api/v1/admin/websites/{websiteId}/imports', 'get'>;
type RatesAnswer = paths['/api/v1/admin/websites/{websiteId}/currency-rates']['get']['responses'][200]['content']['application/json'];
/** The caller's own reports by mail on a website, with the website's switches. */
export type MailReports = Items<'/api/v1/admin/websites/{websiteId}/mail-reports', 'get'>;
/** A currency of recorded payments with no rate: they count in no report. */
export type UnconvertedCurrency = RatesAnswer['unconverted'][number];
export type AccessToken = Items<'/api/v1/admin/access-tokens', 'get'> & { token?: string };

/** What a role may do on a website: THE role matrix of the server (src/auth/policy.ts). */
export function canEdit(role: Role | undefined): boolean {
  return role !== undefined && roleAllows(role, 'manage');
}

/** Whether a role may read the website's settings (every role today: viewers read them). */
export function canReadSettings(role: Role | undefined): boolean {
  return role !== undefined && roleAllows(role, 'read');
}

export function canManageTeam(role: Role | undefined): boolean {
  return role !== undefined && roleAllows(role, 'manageTeam');
}

/** The tracking snippet for a website, pointing at this server. */
export function trackingSnippet(website: Pick<WebsiteSummary, 'trackingId' | 'domain'>): string {
  const attribute = (value: string) => value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
  return `<script defer data-website-id="${attribute(website.trackingId)}" data-domain="${attribute(website.domain)}" src="${location.origin}/js/script.js"></script>`;
}

/** Today and 29 days before, as YYYY-MM-DD days in `timeZone`: a 30-day range ending today. */
export function lastDays(timeZone: string, days = 30): { startAt: string; endAt: string } {
  const day = (date: Date) => {
    try {
      return new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(date);
    } catch {
      return date.toISOString().slice(0, 10);
    }
  };
  const endAt = day(new Date());
  const end = new Date(`${endAt}T12:00:00Z`);
  end.setUTCDate(end.getUTCDate() - (days - 1));
  return { startAt: end.toISOString().slice(0, 10), endAt };
}

/** The IANA zones the browser knows, with UTC and the browser's own zone always among them. */
export function timeZones(): string[] {
  let zones: string[];
  try {
    zones = Intl.supportedValuesOf('timeZone');
  } catch {
    zones = [];
  }
  const all = new Set(zones);
  all.add('UTC');
  all.add(browserTimeZone());
  return [...all].sort();
}

export function browserTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}

/** The currencies most payments come in: offered first wherever a code is typed. */
export const COMMON_CURRENCIES = ['USD', 'EUR', 'GBP', 'JPY', 'CAD', 'AUD', 'CHF', 'CNY', 'INR', 'BRL', 'SEK', 'NOK', 'DKK', 'PLN', 'NZD', 'MXN', 'SGD', 'HKD', 'ZAR'];

export function currencies(): string[] {
  try {
    return Intl.supportedValuesOf('currency');
  } catch {
    return [...COMMON_CURRENCIES].sort();
  }
}

/** `[code, "EUR – Euro"]` pairs for a select. */
export function currencyOptions(): Array<[string, string]> {
  let names: Intl.DisplayNames | null = null;
  try {
    names = new Intl.DisplayNames(undefined, { type: 'currency' });
  } catch {
    names = null;
  }
  return currencies().map((code) => [code, names ? `${code} – ${names.of(code) ?? code}` : code]);
}
