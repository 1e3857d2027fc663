import type { AccessTokensTable, AccountsTable, AlertHistoryTable, AlertsTable, ApiKeysTable, CurrencyRatesTable, FunnelsTable, GoalCustomizationsTable, IntegrationJobsTable, IntegrationWebhookEventsTable, IntegrationsTable, InvitationsTable, SegmentsTable, SharedLinksTable, WebsiteMembersTable, WebsitesTable } from './schema/admin-tables.ts';
import type { BreakdownDaysTable, BreakdownLastDaysTable, BreakdownProfileDaysTable, BreakdownProfileLastDaysTable, BreakdownProfileRevenueTable, BreakdownProfilesTable, BreakdownRevenueTable, BreakdownTotalsTable, ProfileTotalsTable, BreakdownVisitorsTable, DailySaltsTable, DailyTotalsTable, EventRelayTable, EventsTable, RollupBacklogTable, RollupRelocationsTable, DerivedBuildsTable, GoalStatsTable, GoalVisitorsTable, NotesTable, PaymentsTable, SessionBucketsTable, SessionsTable, VisitorDaysTable, VisitorProfilesTable, VisitorRecencyTable, VisitorTotalsTable } from './schema/event-tables.ts';
import type { ImportedBrowsersTable, ImportedCustomEventsTable, ImportedDevicesTable, ImportedEntryPagesTable, ImportedExitPagesTable, ImportedLocationsTable, ImportedOperatingSystemsTable, ImportedPagesTable, ImportedSourcesTable, ImportedVisitorsTable, ImportsTable, ImportUploadsTable, ImportConnectionsTable, ImportRawRowsTable } from './schema/import-tables.ts';
import type { DashboardSessionsTable, MailOutboxTable, MailReportDeliveriesTable, MailReportSubscriptionsTable, MailSpikeChecksTable, PasswordResetsTable, RateLimitCountersTable } from './schema/service-tables.ts';

// The database as Kysely sees it: one entry per table, the same on both engines. The table types
// live beside this file by concern (src/db/schema/); every module imports them from here.

export type * from './schema/admin-tables.ts';
export type * from './schema/event-tables.ts';
export type * from './schema/service-tables.ts';
export type * from './schema/import-tables.ts';

export interface Database {
  accounts: AccountsTable;
  access_tokens: AccessTokensTable;
  websites: WebsitesTable;
  website_members: WebsiteMembersTable;
  api_keys: ApiKeysTable;
  shared_links: SharedLinksTable;
  goal_customizations: GoalCustomizationsTable;
  funnels: FunnelsTable;
  alerts: AlertsTable;
  alert_history: AlertHistoryTable;
  invitations: InvitationsTable;
  integrations: IntegrationsTable;
  integration_jobs: IntegrationJobsTable;
  integration_webhook_events: IntegrationWebhookEventsTable;
  currency_rates: CurrencyRatesTable;
  segments: SegmentsTable;
  imports: ImportsTable;
  import_uploads: ImportUploadsTable;
  import_connections: ImportConnectionsTable;
  import_raw_rows: ImportRawRowsTable;
  imported_visitors: ImportedVisitorsTable;
  imported_sources: ImportedSourcesTable;
  imported_pages: ImportedPagesTable;
  imported_entry_pages: ImportedEntryPagesTable;
  imported_exit_pages: ImportedExitPagesTable;
  imported_custom_events: ImportedCustomEventsTable;
  imported_locations: ImportedLocationsTable;
  imported_devices: ImportedDevicesTable;
  imported_browsers: ImportedBrowsersTable;
  imported_operating_systems: ImportedOperatingSystemsTable;
  events: EventsTable;
  event_relay: EventRelayTable;
  rollup_backlog: RollupBacklogTable;
  rollup_relocations: RollupRelocationsTable;
  derived_builds: DerivedBuildsTable;
  payments: PaymentsTable;
  visitor_days: VisitorDaysTable;
  visitor_recency: VisitorRecencyTable;
  daily_totals: DailyTotalsTable;
  goal_stats: GoalStatsTable;
  goal_visitors: GoalVisitorsTable;
  daily_salts: DailySaltsTable;
  mail_outbox: MailOutboxTable;
  mail_report_subscriptions: MailReportSubscriptionsTable;
  mail_report_deliveries: MailReportDeliveriesTable;
  mail_spike_checks: MailSpikeChecksTable;
  sessions: SessionsTable;
  session_buckets: SessionBucketsTable;
  breakdown_visitors: BreakdownVisitorsTable;
  visitor_totals: VisitorTotalsTable;
  breakdown_totals: BreakdownTotalsTable;
  breakdown_profiles: BreakdownProfilesTable;
  breakdown_days: BreakdownDaysTable;
  breakdown_last_days: BreakdownLastDaysTable;
  breakdown_profile_days: BreakdownProfileDaysTable;
  breakdown_profile_last_days: BreakdownProfileLastDaysTable;
  breakdown_revenue: BreakdownRevenueTable;
  breakdown_profile_revenue: BreakdownProfileRevenueTable;
  profile_totals: ProfileTotalsTable;
  visitor_profiles: VisitorProfilesTable;
  notes: NotesTable;
  dashboard_sessions: DashboardSessionsTable;
  password_resets: PasswordResetsTable;
  rate_limit_counters: RateLimitCountersTable;
}
