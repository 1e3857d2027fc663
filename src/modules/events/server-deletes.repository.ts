import { type Kysely, sql } from 'kysely';
import { lockWebsite } from '../../db/locks.ts';
import type { Database } from '../../db/schema.ts';
import { chunks } from '../../lib/chunks.ts';
import { uncountPayments } from '../analytics/maintainer.ts';
import type { InstantRange } from '../goals/tracked-goals.range.ts';

const IDS_PER_STATEMENT = 500;

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
 * The website's time zone, read under the website's lock on PostgreSQL (src/db/locks.ts: its
 * derived data's, which every fold and time-zone move takes, then its row), so no batch changes
 * the rollups and no zone change lands in between. SQLite runs one transaction at a time.
 */
export async function lockWebsiteTimezone(db: Kysely<Database>, websiteId: string): Promise<string | undefined> {
  await lockWebsite(db, websiteId);
  return (await db.selectFrom('websites').select('timezone').where('id', '=', websiteId).executeTakeFirst())?.timezone;
}

/** The server-recorded goal completions (source api) that match: their ids, instants and visitors. */
export async function findServerGoals(db: Kysely<Database>, websiteId: string, filters: GoalFilters): Promise<{ id: string; occurredAt: string; visitorId: string }[]> {
  let query = db
    .selectFrom('events')
    .select(['id', 'occurred_at', 'visitor_id'])
    .where('website_id', '=', websiteId)
    .where('type', '=', 'custom')
    .where('name', 'is not', null)
    .where('source', '=', 'api');
  if (filters.name !== undefined) query = query.where('name', '=', filters.name);
  if (filters.visitorId !== undefined) query = query.where('visitor_id', '=', filters.visitorId);
  if (filters.range) query = query.where('occurred_at', '>=', filters.range.from).where('occurred_at', '<', filters.range.to);
  const rows = await query.execute();
  // PostgreSQL answers timestamps as Dates, SQLite as the stored ISO text.
  return rows.map((row) => ({ id: row.id, occurredAt: new Date(row.occurred_at as unknown as string).toISOString(), visitorId: row.visitor_id }));
}

/** Deletes these events of the website (ids from findServerGoals); answers what went. */
export async function deleteEvents(db: Kysely<Database>, websiteId: string, ids: string[]) {
  const deleted: { name: string | null; visitor_id: string }[] = [];
  for (const chunk of chunks(ids, IDS_PER_STATEMENT)) {
    deleted.push(...(await db.deleteFrom('events').where('website_id', '=', websiteId).where('id', 'in', chunk).returning(['name', 'visitor_id']).execute()));
  }
  return deleted;
}

/** The ids of the website's payments that match. */
function matchingPayments(db: Kysely<Database>, websiteId: string, filters: PaymentFilters) {
  let query = db.selectFrom('payments').select('id').where('website_id', '=', websiteId);
  if (filters.transactionId !== undefined) query = query.where('transaction_id', '=', filters.transactionId);
  if (filters.visitorId !== undefined) query = query.where('visitor_id', '=', filters.visitorId);
  if (filters.range) query = query.where('occurred_at', '>=', filters.range.from).where('occurred_at', '<', filters.range.to);
  return query;
}

/**
 * Deletes the website's payments that match, their amounts taken out of the breakdowns' revenue
 * first; in a transaction holding the website's lock. Answers how many went.
 */
export async function deletePayments(db: Kysely<Database>, websiteId: string, filters: PaymentFilters): Promise<number> {
  const matching = matchingPayments(db, websiteId, filters);
  await uncountPayments(db, sql`p.website_id = ${websiteId} and p.id in (${matching})`);
  const result = await db.deleteFrom('payments').where('website_id', '=', websiteId).where('id', 'in', matching).executeTakeFirst();
  return Number(result.numDeletedRows);
}
