import type { ColumnType } from 'kysely';
import type { Bool } from './values.ts';

// The breakdowns' derived tables (src/modules/analytics/derived-tables.ts declares them): per key,
// per day, per visitor profile. The raw events, sessions and the other rollups are in event-tables.ts.

/**
 * Rollup of the all-time event breakdowns (migration 0013, src/modules/analytics/breakdown-rollups.ts):
 * one row per visitor and breakdown key, with that visitor's events and pageviews under it.
 */
export interface BreakdownVisitorsTable {
  website_id: string;
  visitor_id: string;
  /** The breakdown's route name: pages, countries, ... */
  breakdown: string;
  /** The key columns' values as a JSON array, built by the engine (json_array / json_build_array). */
  key: string;
  pageviews: number;
  events: number;
  /**
   * For the event breakdowns, the last local day (website's zone, YYYY-MM-DD) of the visitor's
   * events under the key (migration 0019); null for the session breakdowns.
   */
  last_day: ColumnType<string | null, string | null | undefined, string | null>;
}

/**
 * Per event breakdown key and local day (migration 0019, src/modules/analytics/breakdown-days.ts):
 * the pageviews and events of that day under the key.
 */
export interface BreakdownDaysTable {
  website_id: string;
  breakdown: string;
  day: string;
  key: string;
  pageviews: number;
  events: number;
}

/**
 * Per event breakdown key and local day: the visitors whose last day under the key it is (rows of
 * breakdown_visitors by last_day), so the visitors of a key over days up to the last one with
 * data are a sum (migration 0019).
 */
export interface BreakdownLastDaysTable {
  website_id: string;
  breakdown: string;
  day: string;
  key: string;
  visitors: number;
}

/**
 * Per breakdown key, local day and profile (the six visitor attributes as a JSON array) (migration
 * 0033, src/modules/analytics/breakdown-profile-days.ts): for an event breakdown, the pageviews
 * and events of that day under the key with those attribute values (the events' own); for a
 * session breakdown, the sessions (`events`) started that day of the steady visitors of that
 * profile, their pageviews, bounces and summed milliseconds.
 */
export interface BreakdownProfileDaysTable {
  website_id: string;
  breakdown: string;
  day: string;
  key: string;
  profile: string;
  pageviews: number;
  events: number;
  bounces: number;
  millis: number;
}

/**
 * Per breakdown key, local day and visitor profile: the steady visitors (visitor_totals.varied = 0)
 * of that profile whose last day under the key it is (migration 0033).
 */
export interface BreakdownProfileLastDaysTable {
  website_id: string;
  breakdown: string;
  day: string;
  key: string;
  profile: string;
  visitors: number;
}

/**
 * Per breakdown key, currency and renewal flag: what the visitors with a row under the key paid,
 * refunds left out, all time (src/modules/analytics/breakdown-revenue.ts, migration 0020).
 */
export interface BreakdownRevenueTable {
  website_id: string;
  breakdown: string;
  key: string;
  currency: string;
  /** The provider's converted currency of the payments summed here; '' for those without one (migration 0028). */
  converted_currency: string;
  renewal: Bool;
  minor: number;
  /** Their converted amounts' sum, in minor units of converted_currency; 0 where it is ''. */
  converted_minor: number;
}

/** BreakdownRevenueTable per visitor profile, for the steady visitors (as breakdown_profiles). */
export interface BreakdownProfileRevenueTable extends BreakdownRevenueTable {
  profile: string;
}

/** Per breakdown key: distinct visitors (rows of breakdown_visitors), pageviews and events, all time. */
export interface BreakdownTotalsTable {
  website_id: string;
  breakdown: string;
  key: string;
  visitors: number;
  pageviews: number;
  events: number;
}

/**
 * Per breakdown key and visitor profile (the six visitor attributes of a visitor whose attributes
 * never varied, as a JSON array): the sum of those visitors' breakdown_visitors rows (migration
 * 0017, src/modules/analytics/breakdown-profiles.ts).
 */
export interface BreakdownProfilesTable {
  website_id: string;
  breakdown: string;
  key: string;
  profile: string;
  visitors: number;
  pageviews: number;
  events: number;
}

/**
 * Per visitor profile (as in breakdown_profiles): the sums of the visitor_totals rows of the
 * visitors whose attributes never varied (migration 0017, src/modules/analytics/profile-totals.ts).
 */
export interface ProfileTotalsTable {
  website_id: string;
  profile: string;
  visitors: number;
  pageviews: number;
  converted: number;
  sessions: number;
  bounces: number;
  millis: number;
}
