import type { Kysely } from 'kysely';
import { lockWebsiteForDeletion } from '../../db/locks.ts';
import type { Database } from '../../db/schema.ts';

// Deleting a website with everything it owns, in one transaction: the operator's
// `sightline admin delete-website` today, the dashboard's delete action later.

/** Every table with a website_id column: the type below refuses to compile until a new one is listed. */
type TableWithWebsiteId = { [T in keyof Database]: 'website_id' extends keyof Database[T] ? T : never }[keyof Database];

/**
 * The order rows are deleted in: dependants before what they point at (outbox mail before the
 * history row it reports on, history before alerts), the rollups and events last because they
 * are the bulk. Every table must appear exactly once (a Record over the union enforces it).
 */
const DELETION_ORDER: Record<TableWithWebsiteId, number> = {
  mail_outbox: 1,
  alert_history: 2,
  alerts: 3,
  funnels: 4,
  goal_customizations: 5,
  invitations: 6,
  api_keys: 7,
  shared_links: 7.5,
  integration_jobs: 8,
  integration_webhook_events: 9,
  currency_rates: 10,
  integrations: 11,
  notes: 12,
  imported_visitors: 12.1,
  imported_sources: 12.1,
  imported_pages: 12.1,
  imported_entry_pages: 12.1,
  imported_exit_pages: 12.1,
  imported_custom_events: 12.1,
  imported_locations: 12.1,
  imported_devices: 12.1,
  imported_browsers: 12.1,
  imported_operating_systems: 12.1,
  import_uploads: 12.2,
  import_connections: 12.2,
  imports: 12.3,
  segments: 13,
  visitor_profiles: 14,
  payments: 15,
  goal_visitors: 16,
  goal_stats: 17,
  visitor_recency: 18,
  visitor_hours: 18,
  hour_totals: 18,
  hour_recency: 18,
  funnel_builds: 18,
  funnel_crossings_kept: 18,
  funnel_crossings: 18,
  funnel_visitor_days: 18,
  visitor_days: 19,
  daily_totals: 20,
  profile_totals: 21,
  breakdown_profile_revenue: 22,
  breakdown_revenue: 23,
  breakdown_profile_last_days: 23.8,
  breakdown_profile_days: 23.9,
  breakdown_last_days: 24,
  breakdown_days: 25,
  breakdown_profiles: 26,
  breakdown_totals: 27,
  breakdown_visitors: 28,
  visitor_totals: 29,
  session_buckets: 30,
  sessions: 31,
  rollup_backlog: 32,
  rollup_relocations: 33,
  derived_builds: 34,
  event_relay: 35,
  events: 36,
  website_members: 37,
  mail_report_deliveries: 38,
  mail_report_subscriptions: 39,
  mail_spike_checks: 40,
};

export const TABLES_OWNED_BY_A_WEBSITE = (Object.keys(DELETION_ORDER) as TableWithWebsiteId[]).sort(
  (a, b) => DELETION_ORDER[a] - DELETION_ORDER[b],
);

export interface WebsiteDeletion {
  websiteId: string;
  domain: string;
  /** Rows deleted per table (tables with none are left out). */
  deletedRows: Partial<Record<TableWithWebsiteId, number>>;
  /** Access tokens that were limited to this website alone, now deleted. */
  deletedTokens: number;
  /** Access tokens limited to several websites, which lost this one from their list. */
  narrowedTokens: number;
}

/**
 * Deletes the website and every row that belongs to it, or returns null when it does not exist.
 * Access tokens name websites in a JSON list rather than a column: a token limited to several
 * websites loses this one from its list; a token limited to this website alone is deleted, since
 * an empty list would mean "every website" and widen it.
 */
export async function deleteWebsite(db: Kysely<Database>, websiteId: string): Promise<WebsiteDeletion | null> {
  return db.transaction().execute(async (trx) => {
    // On PostgreSQL the row lock makes concurrent writes for this website wait, then fail their
    // foreign-key check, so none can slip in between the deletes below.
    await lockWebsiteForDeletion(trx, websiteId);
    const website = await trx.selectFrom('websites').select(['id', 'domain']).where('id', '=', websiteId).executeTakeFirst();
    if (!website) return null;

    const deletedRows: WebsiteDeletion['deletedRows'] = {};
    for (const table of TABLES_OWNED_BY_A_WEBSITE) {
      // The union of table names is too wide for Kysely's column inference; every one of them has website_id.
      const result = await (trx as unknown as Kysely<Record<string, { website_id: string }>>)
        .deleteFrom(table)
        .where('website_id', '=', websiteId)
        .executeTakeFirst();
      const count = Number(result.numDeletedRows);
      if (count > 0) deletedRows[table] = count;
    }
    const tokens = await removeFromTokenLists(trx, websiteId);
    await trx.deleteFrom('websites').where('id', '=', websiteId).execute();
    return { websiteId, domain: website.domain, deletedRows, ...tokens };
  });
}

async function removeFromTokenLists(trx: Kysely<Database>, websiteId: string) {
  // The ids are 24 hex characters, so a substring match finds exactly the lists that hold it.
  const rows = await trx
    .selectFrom('access_tokens')
    .select(['id', 'website_ids'])
    .where('website_ids', 'like', `%"${websiteId}"%`)
    .execute();
  let deletedTokens = 0;
  let narrowedTokens = 0;
  for (const row of rows) {
    const remaining = (JSON.parse(row.website_ids) as string[]).filter((id) => id !== websiteId);
    if (remaining.length === 0) {
      await trx.deleteFrom('access_tokens').where('id', '=', row.id).execute();
      deletedTokens++;
    } else {
      await trx.updateTable('access_tokens').set({ website_ids: JSON.stringify(remaining) }).where('id', '=', row.id).execute();
      narrowedTokens++;
    }
  }
  return { deletedTokens, narrowedTokens };
}
