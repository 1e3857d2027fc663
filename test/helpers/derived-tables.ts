import type { Kysely } from 'kysely';
import type { Database } from '../../src/db/schema.ts';
import { rebuildBreakdownRollups } from '../../src/modules/analytics/breakdown-rollups.ts';
import { rebuildDailyRollups } from '../../src/modules/analytics/rollup-rebuild.ts';
import { rebuildSessions } from '../../src/modules/analytics/session-rebuild.ts';
import { rebuildVisitorTotals } from '../../src/modules/analytics/visitor-totals.ts';

// Every table ingestion derives from the raw events, read in a stable order, and the same tables
// as a rebuild from the stored raw events gives them: what "the rollups equal the raw events"
// means in the crash and backlog tests.

/** Rows of one website's table, in a stable order, for comparing two states. */
export async function rowsOf(db: Kysely<Database>, table: (typeof DERIVED)[number] | 'goal_stats' | 'goal_visitors', websiteId: string) {
  let query = db.selectFrom(table).selectAll().where('website_id', '=', websiteId);
  // A bucket emptied by a session that moved to an earlier one stays at zero; the rebuild drops it.
  if (table === 'session_buckets') query = query.where((eb) => eb.or([eb('sessions', '<>', 0), eb('bounces', '<>', 0), eb('millis', '<>', 0)]));
  // Likewise a key's day whose visitors all came back on a later day.
  if (table === 'breakdown_last_days') query = query.where('visitors', '<>', 0);
  // And a key's revenue whose paying visitors left it.
  if (table === 'breakdown_revenue' || table === 'breakdown_profile_revenue') query = query.where('minor', '<>', 0);
  const rows = await query.execute();
  const normal = rows.map((row) => JSON.stringify(Object.entries(row).map(([k, v]) => [k, typeof v === 'bigint' ? Number(v) : (v as unknown) instanceof Date ? (v as unknown as Date).toISOString() : v])));
  return normal.sort();
}

export const DERIVED = ['visitor_days', 'daily_totals', 'visitor_recency', 'sessions', 'session_buckets', 'breakdown_visitors', 'breakdown_totals', 'breakdown_profiles', 'breakdown_days', 'breakdown_last_days', 'breakdown_revenue', 'breakdown_profile_revenue', 'visitor_totals'] as const;

/** The derived tables rebuilt from the raw events, read inside a transaction that is rolled back. */
export async function rebuilt(db: Kysely<Database>, websiteId: string, timezone: string) {
  const rolledBack = new Error('rolled back on purpose');
  const tables: Record<string, string[]> = {};
  await db
    .transaction()
    .execute(async (trx) => {
      await rebuildDailyRollups(trx, websiteId, timezone);
      await rebuildSessions(trx, websiteId);
      await rebuildVisitorTotals(trx, websiteId);
      await rebuildBreakdownRollups(trx, websiteId);
      for (const table of DERIVED) tables[table] = await rowsOf(trx, table, websiteId);
      throw rolledBack;
    })
    .catch((error) => {
      if (error !== rolledBack) throw error;
    });
  return tables;
}

