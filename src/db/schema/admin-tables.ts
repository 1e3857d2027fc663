import type { ColumnType, Generated } from 'kysely';
import type { Bool, JsonText } from './values.ts';

// What the administration API manages: accounts, tokens, websites and what each website owns.

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
  /** Shared dashboards: while false, no shared link of the website opens (migration 0029). */
  is_public_dashboard_enabled: ColumnType<boolean | number, boolean | undefined, boolean>;
  /** The website's switches for reports by mail and the traffic-spike alert (src/modules/reports). */
  send_weekly_reports: ColumnType<boolean | number, boolean | undefined, boolean>;
  send_viral_traffic_alerts: ColumnType<boolean | number, boolean | undefined, boolean>;
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

/** A public, read-only link to a website's analytics page (migration 0029). */
export interface SharedLinksTable {
  id: string;
  website_id: string;
  name: string;
  /** SHA-256 of the link's secret (the URL's last part); the secret itself is never stored. */
  digest: string;
  /** The masked secret shown in lists, e.g. shr_Ab3d...x9Kz (prefix and 4, then the last 4). */
  display_slug: string;
  password_hash: string | null;
  created_at: string;
  updated_at: string;
  revoked_at: string | null;
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
  /** What the provider answered when the credential was last checked (0025); all null while it is being checked. */
  account_name: string | null;
  account_currency: string | null;
  verified_at: string | null;
  /** The provider's refusal (revoked, missing permission), scrubbed of the credential. */
  verification_error: string | null;
  /** The webhook signing secret the owner pasted, sealed like the credentials (0026); null until set. */
  webhook_key_id: string | null;
  webhook_ciphertext: string | null;
  webhook_secret_set_at: string | null;
  /** The last verified delivery, and how many were received (each event once). */
  last_webhook_at: string | null;
  last_webhook_type: string | null;
  webhooks_received: Generated<number>;
}

/** Verified webhook deliveries by the provider's event id (0026): a redelivery is recognised and records nothing. */
export interface IntegrationWebhookEventsTable {
  website_id: string;
  provider: string;
  event_id: string;
  event_type: string;
  /** Payments, renewals and refunds the event carried. */
  payments: number;
  received_at: string;
}

/**
 * Persisted background jobs: a provider's payment history import (kind `resync`, on connect and on
 * a re-sync), run by the integration job worker, which leases a row to one instance at a time.
 */
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
  /** The worker that holds the job while it runs, until `locked_until` (0025). */
  lease_owner: string | null;
  locked_until: string | null;
  /** A failed attempt waits until then before the next one. */
  run_after: string | null;
  /** The adapter's opaque cursor of the next page to import; null: from the start. */
  cursor: string | null;
  pages_done: number;
  payments_imported: number;
}

/** An owner's exchange rate (0027): one `currency` counts `rate` of `to_currency` (the website's currency when set). */
export interface CurrencyRatesTable {
  website_id: string;
  currency: string;
  to_currency: string;
  rate: number;
  updated_at: string;
}

/** A saved filter set of one website (0031): its author's alone, or shared with the website's team. */
export interface SegmentsTable {
  id: string;
  website_id: string;
  owner_id: string;
  name: string;
  /** JSON object of the URL's filter parameters: {"filter_country": "is:US,DE", ...}. */
  filters: string;
  shared: Bool;
  created_at: string;
  updated_at: string;
}
