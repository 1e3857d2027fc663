import type { Kysely } from 'kysely';
import { isPostgres } from '../../db/engine.ts';
import type { Database } from '../../db/schema.ts';
import type { InstantRange } from '../goals/tracked-goals.range.ts';

export interface GoalFilters {
  visitorId?: string;
  name?: string;
  range: InstantRange | null;
}

export interface PaymentFilters {
  transactionId?: string;
  visitorId?: string;
  range: InstantRange | null;
}

/**
 * The website's time zone, read under the website row lock on PostgreSQL: ingestion's rollup
 * update takes the same row (FOR NO KEY UPDATE), so no batch changes the rollups in between.
 * SQLite runs one transaction at a time.
 */
export async function lockWebsiteTimezone(db: Kysely<Database>, websiteId: string): Promise<string | undefined> {
  let query = db.selectFrom('websites').select('timezone').where('id', '=', websiteId);
  if (isPostgres(db)) query = query.forUpdate();
  return (await query.executeTakeFirst())?.timezone;
}

/** Deletes the server-recorded goal completions (source api) that match; answers what went. */
export async function deleteServerGoals(db: Kysely<Database>, websiteId: string, filters: GoalFilters) {
  let query = db
    .deleteFrom('events')
    .where('website_id', '=', websiteId)
    .where('type', '=', 'custom')
    .where('name', 'is not', null)
    .where('source', '=', 'api');
  if (filters.name !== undefined) query = query.where('name', '=', filters.name);
  if (filters.visitorId !== undefined) query = query.where('visitor_id', '=', filters.visitorId);
  if (filters.range) query = query.where('occurred_at', '>=', filters.range.from).where('occurred_at', '<', filters.range.to);
  return query.returning(['name', 'visitor_id']).execute();
}

export async function deletePayments(db: Kysely<Database>, websiteId: string, filters: PaymentFilters): Promise<number> {
  let query = db.deleteFrom('payments').where('website_id', '=', websiteId);
  if (filters.transactionId !== undefined) query = query.where('transaction_id', '=', filters.transactionId);
  if (filters.visitorId !== undefined) query = query.where('visitor_id', '=', filters.visitorId);
  if (filters.range) query = query.where('occurred_at', '>=', filters.range.from).where('occurred_at', '<', filters.range.to);
  const result = await query.executeTakeFirst();
  return Number(result.numDeletedRows);
}
