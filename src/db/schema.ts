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

export interface Database {
  accounts: AccountsTable;
  access_tokens: AccessTokensTable;
  websites: WebsitesTable;
  website_members: WebsiteMembersTable;
  api_keys: ApiKeysTable;
}
