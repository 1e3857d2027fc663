import { type Insertable, type Kysely, type Selectable, sql } from 'kysely';
import type { Database, EventsTable, PaymentsTable } from '../../db/schema.ts';
import { paymentsChanged } from '../analytics/maintainer.ts';

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

/**
 * Inserts the payment unless the website already has its transaction id; true when inserted. In
 * a transaction holding the website's row lock (the breakdowns' revenue moves with it).
 */
/**
 * The visitor a payment with no visitor id belongs to, by its customer's e-mail: the identified
 * profile naming that address (visitor_profiles_email_idx), the latest identified when several do.
 */
export async function findVisitorByEmail(db: Kysely<Database>, websiteId: string, email: string): Promise<string | null> {
  const row = await db
    .selectFrom('visitor_profiles')
    .select('visitor_id')
    .where('website_id', '=', websiteId)
    .where('email', '=', email)
    .orderBy('identified_at', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row?.visitor_id ?? null;
}

export async function insertPaymentOnce(db: Kysely<Database>, row: NewPaymentRow): Promise<boolean> {
  const inserted = await db
    .insertInto('payments')
    .values(row)
    .onConflict((oc) => oc.columns(['website_id', 'transaction_id']).doNothing())
    .returning('id')
    .execute();
  if (inserted.length > 0) await paymentsChanged(db, sql`p.website_id = ${row.website_id} and p.id = ${row.id}`, 1);
  return inserted.length > 0;
}

/**
 * Gives a recorded payment the provider's conversion it was recorded without; the breakdowns'
 * kept sums move with it. In a transaction holding the website's row lock.
 */
export async function addConversion(db: Kysely<Database>, websiteId: string, transactionId: string, conversion: { amountMinor: number; currency: string }): Promise<void> {
  const payment = sql`p.website_id = ${websiteId} and p.transaction_id = ${transactionId} and p.converted_currency is null and p.currency <> ${conversion.currency}`;
  const found = await sql`select 1 as found from payments p where ${payment}`.execute(db);
  if (found.rows.length === 0) return;
  await paymentsChanged(db, payment, -1);
  await db
    .updateTable('payments')
    .set({ converted_minor: conversion.amountMinor, converted_currency: conversion.currency })
    .where('website_id', '=', websiteId)
    .where('transaction_id', '=', transactionId)
    .execute();
  await paymentsChanged(db, sql`p.website_id = ${websiteId} and p.transaction_id = ${transactionId}`, 1);
}

/** Marks a recorded payment refunded; true when it was not refunded before. In a transaction holding the website's row lock. */
export async function markRefunded(db: Kysely<Database>, websiteId: string, transactionId: string): Promise<boolean> {
  await paymentsChanged(db, sql`p.website_id = ${websiteId} and p.transaction_id = ${transactionId}`, -1);
  const result = await db
    .updateTable('payments')
    .set({ refunded: true })
    .where('website_id', '=', websiteId)
    .where('transaction_id', '=', transactionId)
    .where('refunded', '=', false)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}
