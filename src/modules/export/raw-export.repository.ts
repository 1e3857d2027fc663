import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.ts';

// The relational rows of the raw export: the website's settings and what its reads depend on,
// read whole (they are few), and the payments and visitor profiles in keyset pages.

export const findWebsiteRow = (db: Kysely<Database>, websiteId: string) => db.selectFrom('websites').selectAll().where('id', '=', websiteId).executeTakeFirst();

export const funnelRows = (db: Kysely<Database>, websiteId: string) => db.selectFrom('funnels').selectAll().where('website_id', '=', websiteId).orderBy('id').execute();

export const goalCustomizationRows = (db: Kysely<Database>, websiteId: string) =>
  db.selectFrom('goal_customizations').selectAll().where('website_id', '=', websiteId).orderBy('goal_name').execute();

export const currencyRateRows = (db: Kysely<Database>, websiteId: string) =>
  db.selectFrom('currency_rates').selectAll().where('website_id', '=', websiteId).orderBy('currency').execute();

export async function notePage(db: Kysely<Database>, websiteId: string, afterId: string | null, limit: number) {
  let query = db.selectFrom('notes').select(['id', 'website_id', 'text', 'timestamp', 'created_at', 'updated_at']).where('website_id', '=', websiteId);
  if (afterId !== null) query = query.where('id', '>', afterId);
  return query.orderBy('id').limit(limit).execute();
}

export async function visitorProfilePage(db: Kysely<Database>, websiteId: string, afterVisitorId: string | null, limit: number) {
  let query = db.selectFrom('visitor_profiles').selectAll().where('website_id', '=', websiteId);
  if (afterVisitorId !== null) query = query.where('visitor_id', '>', afterVisitorId);
  return query.orderBy('visitor_id').limit(limit).execute();
}

/** Payments in (occurred_at, id) order after the cursor, on the website's time index. */
export async function paymentPage(db: Kysely<Database>, websiteId: string, after: { occurredAt: string; id: string } | null, limit: number) {
  let query = db.selectFrom('payments').selectAll().where('website_id', '=', websiteId);
  if (after) {
    query = query.where((eb) =>
      eb.or([eb('occurred_at', '>', after.occurredAt), eb.and([eb('occurred_at', '=', after.occurredAt), eb('id', '>', after.id)])]),
    );
  }
  const rows = await query.orderBy('occurred_at').orderBy('id').limit(limit).execute();
  // How the derived tables hold a payment (payment-counts.ts) is this instance's bookkeeping, not the payment's.
  return rows.map(({ counted: _counted, ...payment }) => payment);
}
