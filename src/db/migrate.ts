import { type Migration, type MigrationProvider, Migrator } from 'kysely';
import type { Db } from './database.ts';
import { foundation } from './migrations/0001-foundation.ts';
import { websiteResources } from './migrations/0002-website-resources.ts';
import { events } from './migrations/0003-events.ts';
import { analytics } from './migrations/0004-analytics.ts';
import { canonicalTimeZones } from './migrations/0005-canonical-time-zones.ts';
import { alertMailCooldown } from './migrations/0006-alert-mail-cooldown.ts';
import { websiteApi } from './migrations/0007-website-api.ts';
import { dashboard } from './migrations/0008-dashboard.ts';
import { rateLimitCounters } from './migrations/0009-rate-limit-counters.ts';
import { eventRelay } from './migrations/0010-event-relay.ts';
import { credentialNotifications } from './migrations/0011-credential-notifications.ts';
import { sessionBuckets } from './migrations/0012-session-buckets.ts';
import { breakdownRollups } from './migrations/0013-breakdown-rollups.ts';
import { sessionBreakdownRollups } from './migrations/0014-session-breakdown-rollups.ts';
import { visitorTotals } from './migrations/0015-visitor-totals.ts';
import { visitorAttributes } from './migrations/0016-visitor-attributes.ts';
import { breakdownProfiles } from './migrations/0017-breakdown-profiles.ts';
import { funnelIndexes } from './migrations/0018-funnel-indexes.ts';
import { breakdownDays } from './migrations/0019-breakdown-days.ts';
import { breakdownRevenue } from './migrations/0020-breakdown-revenue.ts';
import { rollupBacklog } from './migrations/0021-rollup-backlog.ts';
import { rollupRelocations } from './migrations/0022-rollup-relocations.ts';
import { derivedBuilds } from './migrations/0023-derived-builds.ts';
import { buildEventCursor } from './migrations/0024-build-event-cursor.ts';
import { integrationJobWorker } from './migrations/0025-integration-job-worker.ts';
import { providerWebhooks } from './migrations/0026-provider-webhooks.ts';
import { currencyRates } from './migrations/0027-currency-rates.ts';
import { paymentConversions } from './migrations/0028-payment-conversions.ts';
import { sharedDashboards } from './migrations/0029-shared-dashboards.ts';
import { mailReports } from './migrations/0030-mail-reports.ts';
import { segments } from './migrations/0031-segments.ts';
import { imports } from './migrations/0032-imports.ts';
import { breakdownProfileDays } from './migrations/0033-breakdown-profile-days.ts';
import { umamiImports } from './migrations/0034-umami-imports.ts';
import { importRawRows } from './migrations/0035-import-raw-rows.ts';
import { hourRollups } from './migrations/0036-hour-rollups.ts';
import { variedVisitorsRecent } from './migrations/0037-varied-visitors-recent.ts';
import { paymentBacklog } from './migrations/0038-payment-backlog.ts';
import { funnelCrossings } from './migrations/0039-funnel-crossings.ts';
import { funnelBuilds } from './migrations/0040-funnel-builds.ts';

function provider(db: Db): MigrationProvider {
  const migrations: Record<string, Migration> = {
    '0001-foundation': foundation(db.engine),
    '0002-website-resources': websiteResources(db.engine),
    '0003-events': events(db.engine),
    '0004-analytics': analytics(),
    '0005-canonical-time-zones': canonicalTimeZones(),
    '0006-alert-mail-cooldown': alertMailCooldown(db.engine),
    '0007-website-api': websiteApi(db.engine),
    '0008-dashboard': dashboard(db.engine),
    '0009-rate-limit-counters': rateLimitCounters(db.engine),
    '0010-event-relay': eventRelay(db.engine),
    '0011-credential-notifications': credentialNotifications(db.engine),
    '0012-session-buckets': sessionBuckets(db.engine),
    '0013-breakdown-rollups': breakdownRollups(db.engine),
    '0014-session-breakdown-rollups': sessionBreakdownRollups(),
    '0015-visitor-totals': visitorTotals(db.engine),
    '0016-visitor-attributes': visitorAttributes(db.engine),
    '0017-breakdown-profiles': breakdownProfiles(db.engine),
    '0018-funnel-indexes': funnelIndexes(),
    '0019-breakdown-days': breakdownDays(db.engine),
    '0020-breakdown-revenue': breakdownRevenue(db.engine),
    '0021-rollup-backlog': rollupBacklog(db.engine),
    '0022-rollup-relocations': rollupRelocations(),
    '0023-derived-builds': derivedBuilds(),
    '0024-build-event-cursor': buildEventCursor(db.engine),
    '0025-integration-job-worker': integrationJobWorker(db.engine),
    '0026-provider-webhooks': providerWebhooks(db.engine),
    '0027-currency-rates': currencyRates(db.engine),
    '0028-payment-conversions': paymentConversions(db.engine),
    '0029-shared-dashboards': sharedDashboards(db.engine),
    '0030-mail-reports': mailReports(db.engine),
    '0031-segments': segments(db.engine),
    '0032-imports': imports(db.engine),
    '0033-breakdown-profile-days': breakdownProfileDays(db.engine),
    '0034-umami-imports': umamiImports(),
    '0035-import-raw-rows': importRawRows(),
    '0036-hour-rollups': hourRollups(db.engine),
    '0037-varied-visitors-recent': variedVisitorsRecent(),
    '0038-payment-backlog': paymentBacklog(db.engine),
    '0039-funnel-crossings': funnelCrossings(db.engine),
    '0040-funnel-builds': funnelBuilds(),
  };
  return { getMigrations: async () => migrations };
}

/** Brings the schema up to date; returns the names of the migrations it applied. */
export async function migrateToLatest(db: Db): Promise<string[]> {
  // Kysely looks for its bookkeeping tables in every schema unless told which one is ours.
  const migrator = new Migrator({
    db: db.kysely,
    provider: provider(db),
    ...(db.pgSchema ? { migrationTableSchema: db.pgSchema } : {}),
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
