import type { ColumnType, Generated } from 'kysely';
import type { Bool, JsonText } from './values.ts';

// What ingestion keeps: raw events and payments, sessions, visitor profiles, notes, and the
// rollups the reads use.

/** Every accepted event, as ingested (browser SDK or server-side API). */
export interface EventsTable {
  id: string;
  website_id: string;
  /** pageview | custom | identify | payment | external_link */
  type: string;
  /** The goal name for custom events; null otherwise. */
  name: string | null;
  visitor_id: string;
  session_id: string | null;
  hostname: string | null;
  path: string | null;
  referrer: string | null;
  country: string | null;
  browser: string | null;
  os: string | null;
  device: string | null;
  /** JSON object of string properties (custom events, server goals), or null. */
  metadata: JsonText | null;
  /** browser | api */
  source: string;
  occurred_at: string;
  // Since migration 0007 (null on older events: they read as unknown).
  region: string | null;
  city: string | null;
  browser_version: string | null;
  os_version: string | null;
  viewport_width: number | null;
  viewport_height: number | null;
  /** The referring host without www., null for direct traffic. */
  referrer_host: string | null;
  /** A known source name ("Google"), else the host; "Direct/None" for direct traffic. */
  referrer_source: string | null;
  utm_source: string | null;
  utm_medium: string | null;
  utm_campaign: string | null;
  utm_term: string | null;
  utm_content: string | null;
  /** The page URL's ref, source and via parameters. */
  ref_param: string | null;
  source_param: string | null;
  via_param: string | null;
  /** external_link: the link's target (scheme, host and path). */
  link_url: string | null;
  /** Server goals: the optional description sent with them. */
  description: string | null;
}

/** Rollup: one row per SDK session, kept current by ingestion. */
export interface SessionsTable {
  website_id: string;
  session_id: string;
  visitor_id: string;
  started_at: string;
  ended_at: string;
  pageviews: number;
  events: number;
  goals: number;
  entry_hostname: string | null;
  entry_path: string | null;
  exit_path: string | null;
  /** Where the session came from: its first event's referrer and campaign parameters. */
  referrer_host: string | null;
  referrer_source: string | null;
  utm_source: string | null;
  utm_medium: string | null;
  utm_campaign: string | null;
  utm_term: string | null;
  utm_content: string | null;
  ref_param: string | null;
  source_param: string | null;
  via_param: string | null;
}

/**
 * Rollup kept by triggers on sessions (migration 0012): per 15-minute slot of UTC time in which
 * sessions started, their count, bounces and summed whole-millisecond durations.
 */
export interface SessionBucketsTable {
  website_id: string;
  bucket: string;
  sessions: number;
  bounces: number;
  millis: number;
}

/** Per visitor, all time: first and last event, pageviews and events (the unfiltered visitor list). */
export interface VisitorTotalsTable {
  website_id: string;
  visitor_id: string;
  first_at: string;
  last_at: string;
  pageviews: number;
  events: number;
  /** Custom events with a name (goal completions): the visitor converted when above zero. */
  goals: number;
  /** The visitor's sessions, those of them that bounced, and their summed duration. */
  sessions: Generated<number>;
  bounces: Generated<number>;
  millis: Generated<number>;
  /** The latest event with a page (occurred_at desc, id desc), null when none has one. */
  latest_at: string | null;
  latest_event_id: string | null;
  /** Bits (analytics/visitor-attributes.ts) of the attributes on which the visitor's events disagree. */
  varied: number;
  country: string | null;
  region: string | null;
  city: string | null;
  device: string | null;
  browser: string | null;
  os: string | null;
}

/** What POST /identify said about a visitor. */
export interface VisitorProfilesTable {
  website_id: string;
  visitor_id: string;
  user_id: string;
  name: string | null;
  image: string | null;
  /** JSON object of string properties, or null. */
  metadata: JsonText | null;
  identified_at: string;
  /** The address the profile names (user_id or metadata.email), lower case, for attributing payments by e-mail (0026). */
  email: string | null;
}

/** Annotations on a website's charts. */
export interface NotesTable {
  id: string;
  website_id: string;
  author_id: string | null;
  text: string;
  timestamp: string;
  idempotency_key: string | null;
  /** Digest of the creating request's content, to tell a replay from a reuse of the key. */
  request_digest: string | null;
  created_at: string;
  updated_at: string;
}

export interface PaymentsTable {
  id: string;
  website_id: string;
  transaction_id: string;
  /** In the currency's minor unit (cents), so sums are exact. */
  amount_minor: number;
  currency: string;
  visitor_id: string | null;
  email: string | null;
  renewal: Bool;
  refunded: Bool;
  occurred_at: string;
  created_at: string;
  customer_id: string | null;
  customer_name: string | null;
  is_free_trial: ColumnType<boolean | number, boolean | undefined, boolean>;
  /** The provider's own conversion (migration 0028): minor units of converted_currency; both null when it sent none. */
  converted_minor: ColumnType<number | null, number | null | undefined, number | null>;
  converted_currency: ColumnType<string | null, string | null | undefined, string | null>;
  /**
   * How the derived tables hold the payment (migration 0038, src/modules/analytics/payment-counts.ts):
   * 0 not at all, 1 without its conversion, 2 with it. Only the fold and lock holders change it.
   */
  counted: ColumnType<number, number | undefined, number>;
}

/** Rollup: one row per visitor per local day of the website (time-series speed). */
export interface VisitorDaysTable {
  website_id: string;
  day: string;
  visitor_id: string;
  pageviews: number;
  sessions: number;
  last_session_id: string | null;
  goals: number;
  /** The visitor's previous active day, null for a first visit. */
  prev_day: string | null;
  /** The visitor's previous day with a goal, set on days with a goal only. */
  prev_goal_day: string | null;
}

/**
 * Rollup: visitor_days rows counted per (day, previous active day), so distinct visitors over a
 * range of days is a sum over a few hundred rows instead of a distinct count over all of them.
 */
export interface VisitorRecencyTable {
  website_id: string;
  day: string;
  /** '' for a first visit (or first conversion): it sorts before every day. */
  prev_day: string;
  visitors: number;
  converted: number;
}

/** Rollup (migration 0036): one row per visitor per UTC hour, as visitor_days per day (hour-rollups.ts). Hours are 'YYYY-MM-DDTHH'. */
export interface VisitorHoursTable {
  website_id: string;
  visitor_id: string;
  hour: string;
  pageviews: number;
  sessions: number;
  last_session_id: string | null;
  goals: number;
  /** The visitor's previous active hour, null for a first visit. */
  prev_hour: string | null;
  /** The visitor's previous hour with a goal, set on hours with a goal only. */
  prev_goal_hour: string | null;
}

/** Rollup: visitor_hours rows counted per (hour, previous active hour), as visitor_recency per day. */
export interface HourRecencyTable {
  website_id: string;
  hour: string;
  /** '' for a first visit (or first conversion). */
  prev_hour: string;
  visitors: number;
  converted: number;
}

/** Rollup: totals per UTC hour (the hourly series). */
export interface HourTotalsTable {
  website_id: string;
  hour: string;
  visitors: number;
  sessions: number;
  pageviews: number;
  converted_visitors: number;
}

/** Rollup: totals per local day of the website. */
export interface DailyTotalsTable {
  website_id: string;
  day: string;
  visitors: number;
  sessions: number;
  pageviews: number;
  converted_visitors: number;
}

/** Rollup behind the tracked-goals list: completions and distinct visitors per goal. */
export interface GoalStatsTable {
  website_id: string;
  goal_name: string;
  completions: number;
  visitors: number;
  last_completed_at: string;
}

export interface GoalVisitorsTable {
  website_id: string;
  goal_name: string;
  visitor_id: string;
}

/** Daily-rotating salt for cookieless visitor ids; old days are deleted. */
export interface DailySaltsTable {
  day: string;
  salt: string;
}

/** With ClickHouse: accepted events waiting to be shipped there (migration 0010). */
export interface EventRelayTable {
  seq: ColumnType<number, never, never>;
  website_id: string;
  /** The shipment the row was claimed for; null until claimed. */
  batch: string | null;
  /** The ClickHouse row, as JSON (src/db/clickhouse/clickhouse-schema.ts). */
  row: string;
}

/** Accepted events whose rollups are not derived yet (migration 0021, src/modules/analytics/rollup-backlog.ts). */
export interface RollupBacklogTable {
  seq: ColumnType<number, never, never>;
  website_id: string;
  /** The event to fold in; null on a payment's row (migration 0038). */
  event_id: ColumnType<string | null, string | null | undefined, string | null>;
  /** A payment whose counting may have changed (migration 0038); null on an event's row. */
  payment_id: ColumnType<string | null, string | null | undefined, string | null>;
}

/** A website whose day rollups move to another time zone (migration 0022, src/modules/analytics/day-relocation.ts). */
/** A website whose derived tables are being built again in the background (src/modules/analytics/derived-build.ts). */
export interface DerivedBuildsTable {
  website_id: string;
  /** Who asked: a migration, or an operator's rebuild. */
  reason: string;
  /** 'clear-all', 'clear': its old rows are being deleted (derived-build.ts says which); 'derive': its visitors are being derived. */
  phase: 'clear-all' | 'clear' | 'derive';
  /** The last event derived, in the order (visitor id, instant, event id) of the database: its visitor, instant and id; null before the first. */
  cursor: string | null;
  cursor_at: string | null;
  cursor_event_id: string | null;
  visitors_done: ColumnType<number | string, number | undefined, number>;
  events_done: ColumnType<number | string, number | undefined, number>;
  /** The website's events when the derive phase began; null before. */
  events_total: ColumnType<number | string | null, number | null | undefined, number | null>;
  started_at: string;
}

export interface RollupRelocationsTable {
  website_id: string;
  from_timezone: string;
  to_timezone: string;
  next_timezone: string | null;
  /** The last visitor id (byte order) whose days are in to_timezone; null before the first chunk. */
  cursor: string | null;
  visitors_done: ColumnType<number | string, number | undefined, number>;
  /** The website's visitors when the move started; null until the first chunk counts them. */
  visitors_total: ColumnType<number | string | null, number | null | undefined, number | null>;
  started_at: string;
}

/** Rollup: per stored funnel, visitor and local day, the day's transition where it changes anything (analytics/funnel-crossings.ts). */
export interface FunnelVisitorDaysTable {
  website_id: string;
  funnel_id: string;
  visitor_id: string;
  day: string;
  /** For each depth entered with (0 .. steps - 1), the depth left with: "k0,k1,...". */
  transition: string;
}

/** Rollup: per stored funnel, visitors first reaching `depth` on `day` for the range starts after after_day up to start_day. */
export interface FunnelCrossingsTable {
  website_id: string;
  funnel_id: string;
  start_day: string;
  /** Exclusive; '' for every start up to start_day. */
  after_day: string;
  day: string;
  depth: number;
  visitors: number;
}

/** The funnels whose rows funnel_visitor_days and funnel_crossings hold (kept from a build's clear phase, or from creation on a website without events). */
export interface FunnelCrossingsKeptTable {
  website_id: string;
  funnel_id: string;
}

/** A stored funnel whose rows are being derived in the background (migration 0040, src/modules/analytics/funnel-build.ts). */
export interface FunnelBuildsTable {
  website_id: string;
  funnel_id: string;
  /** The last visitor derived, in the database's order of text; null before the first chunk. */
  cursor: string | null;
  /** The website's visitors up to the cursor (visitor_totals), passed by the build. */
  visitors_done: ColumnType<number | string, number | undefined, number>;
  /** The website's visitors when the first chunk counted them; null before. */
  visitors_total: ColumnType<number | string | null, number | null | undefined, number | null>;
  started_at: string;
}
