import type { ColumnType } from 'kysely';

// Table types shared by both engines. Times are ISO-8601 strings on both (text on SQLite,
// timestamptz parsed back to ISO on PostgreSQL); booleans are 0/1 on SQLite and true/false on
// PostgreSQL when read, so mappers pass them through Boolean(). JSON arrays are stored as text.

type Bool = ColumnType<boolean | number, boolean, boolean>;
type JsonText = string;

export interface AccountsTable {
  id: string;
  email: string;
  name: string;
  plan: string;
  created_at: string;
  updated_at: string;
  /** scrypt$N$r$p$salt$hash; null until the account sets a password (token-only accounts). */
  password_hash: string | null;
}

export interface AccessTokensTable {
  id: string;
  account_id: string;
  name: string;
  digest: string;
  display_key: string;
  permissions: JsonText;
  website_ids: JsonText;
  expires_at: string | null;
  last_used_at: string | null;
  revoked_at: string | null;
  created_at: string;
}

export interface WebsitesTable {
  id: string;
  domain: string;
  name: string;
  tracking_id: string;
  timezone: string;
  currency: string;
  kpi: string | null;
  kpi_color_scheme: string | null;
  revenue_metric: string;
  is_cookieless: Bool;
  include_renewal_revenue: Bool;
  allowed_hostnames: JsonText;
  excluded_ips: JsonText;
  excluded_paths: JsonText;
  excluded_countries: JsonText;
  excluded_hostnames: JsonText;
  created_at: string;
  updated_at: string;
}

export interface WebsiteMembersTable {
  website_id: string;
  account_id: string;
  role: string;
  created_at: string;
}

export interface ApiKeysTable {
  id: string;
  website_id: string;
  name: string;
  digest: string;
  display_key: string;
  last_used_at: string | null;
  revoked_at: string | null;
  created_at: string;
}

export interface GoalCustomizationsTable {
  website_id: string;
  goal_name: string;
  display_name: string | null;
  color: string | null;
  description: string | null;
  updated_at: string;
}

export interface FunnelsTable {
  id: string;
  website_id: string;
  name: string;
  slug: string;
  /** JSON array of {id, name, type, url?, goalName?}; replaced whole on update. */
  steps: JsonText;
  is_active: Bool;
  created_at: string;
  updated_at: string;
}

export interface AlertsTable {
  id: string;
  website_id: string;
  name: string;
  goal_name: string;
  subject: string | null;
  message: string;
  is_enabled: Bool;
  /** The latest firing (its newest history row, whatever its status). */
  last_triggered_at: string | null;
  /** The latest queued e-mail: the reference of the e-mail cooldown. */
  last_mailed_at: string | null;
  created_at: string;
  updated_at: string;
}

/** Kept when its alert is deleted: the alert's name and goal are copied in. */
export interface AlertHistoryTable {
  id: string;
  website_id: string;
  alert_id: string;
  alert_name: string;
  goal_name: string;
  status: string;
  error: string | null;
  visitor_id: string | null;
  triggered_at: string;
}

/** Pending invitations only: accepting one turns it into a website_members row. */
export interface InvitationsTable {
  id: string;
  website_id: string;
  email: string;
  role: string;
  invited_by: string;
  created_at: string;
  /** Digest of the mailed accept link's one-time token (null for invitations made before 0008). */
  link_digest: string | null;
  link_expires_at: string | null;
}

export interface IntegrationsTable {
  website_id: string;
  provider: string;
  /** Which key of the keyring encrypted `ciphertext`. */
  key_id: string;
  /** AES-256-GCM over the JSON credentials, bound to (website_id, provider). */
  ciphertext: string;
  connected_at: string;
  updated_at: string;
}

/** Persisted background jobs (provider-four re-sync first); a worker claims queued rows. */
export interface IntegrationJobsTable {
  id: string;
  website_id: string;
  provider: string;
  kind: string;
  status: string;
  attempts: number;
  error: string | null;
  requested_at: string;
  started_at: string | null;
  finished_at: string | null;
}

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

/** Persisted outgoing mail (alert e-mails): written with the history row, sent afterwards. */
export interface MailOutboxTable {
  id: string;
  /** The website an alert mail or invitation belongs to; null for account mail. */
  website_id: string | null;
  /** The account a password-reset mail belongs to. */
  account_id: string | null;
  alert_history_id: string | null;
  to_address: string;
  subject: string;
  text: string;
  /** pending | sent | failed */
  status: string;
  attempts: number;
  next_attempt_at: string;
  last_error: string | null;
  created_at: string;
  sent_at: string | null;
}

export interface DashboardSessionsTable {
  id: string;
  account_id: string;
  /** Digest of the cookie's value; the value itself is never stored. */
  digest: string;
  user_agent: string | null;
  created_at: string;
  /** When the password was last entered in this session: deleting a website needs a recent one. */
  signed_in_at: string;
  last_seen_at: string;
  expires_at: string;
  revoked_at: string | null;
}

export interface PasswordResetsTable {
  id: string;
  account_id: string;
  digest: string;
  created_at: string;
  expires_at: string;
  used_at: string | null;
}

/** Rate-limit counters shared by the instances on one PostgreSQL; unused on SQLite. */
export interface RateLimitCountersTable {
  /** A keyed digest of the limiter's key (never a client address or an e-mail address). */
  key: string;
  count: number;
  /** When the key's window ends; a hit after it starts a new window. */
  reset_at: string;
}

export interface Database {
  accounts: AccountsTable;
  access_tokens: AccessTokensTable;
  websites: WebsitesTable;
  website_members: WebsiteMembersTable;
  api_keys: ApiKeysTable;
  goal_customizations: GoalCustomizationsTable;
  funnels: FunnelsTable;
  alerts: AlertsTable;
  alert_history: AlertHistoryTable;
  invitations: InvitationsTable;
  integrations: IntegrationsTable;
  integration_jobs: IntegrationJobsTable;
  events: EventsTable;
  payments: PaymentsTable;
  visitor_days: VisitorDaysTable;
  visitor_recency: VisitorRecencyTable;
  daily_totals: DailyTotalsTable;
  goal_stats: GoalStatsTable;
  goal_visitors: GoalVisitorsTable;
  daily_salts: DailySaltsTable;
  mail_outbox: MailOutboxTable;
  sessions: SessionsTable;
  visitor_profiles: VisitorProfilesTable;
  notes: NotesTable;
  dashboard_sessions: DashboardSessionsTable;
  password_resets: PasswordResetsTable;
  rate_limit_counters: RateLimitCountersTable;
}
