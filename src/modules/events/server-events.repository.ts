import type { Insertable, Kysely, Selectable } from 'kysely';
import type { Database, EventsTable, PaymentsTable } from '../../db/schema.ts';

export type PageviewContext = Pick<Selectable<EventsTable>, 'hostname' | 'country' | 'region' | 'city' | 'browser' | 'os' | 'device'>;

/** The visitor's latest pageview on the website (events_website_visitor_idx), or undefined. */
export async function findLatestPageview(db: Kysely<Database>, websiteId: string, visitorId: string): Promise<PageviewContext | undefined> {
  return db
    .selectFrom('events')
    .select(['hostname', 'country', 'region', 'city', 'browser', 'os', 'device'])
    .where('website_id', '=', websiteId)
    .where('visitor_id', '=', visitorId)
    .where('type', '=', 'pageview')
    .orderBy('occurred_at', 'desc')
    .limit(1)
    .executeTakeFirst();
}

export type NewPaymentRow = Insertable<PaymentsTable>;

/** Inserts the payment unless the website already has its transaction id; true when inserted. */
export async function insertPaymentOnce(db: Kysely<Database>, row: NewPaymentRow): Promise<boolean> {
  const inserted = await db
    .insertInto('payments')
    .values(row)
    .onConflict((oc) => oc.columns(['website_id', 'transaction_id']).doNothing())
    .returning('id')
    .execute();
  return inserted.length > 0;
}

/** Marks a recorded payment refunded; true when it was not refunded before. */
export async function markRefunded(db: Kysely<Database>, websiteId: string, transactionId: string): Promise<boolean> {
  const result = await db
    .updateTable('payments')
    .set({ refunded: true })
    .where('website_id', '=', websiteId)
    .where('transaction_id', '=', transactionId)
    .where('refunded', '=', false)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}
