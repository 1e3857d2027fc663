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

/**
 * Inserts the payment unless the website already has its transaction id (the unique index keeps
 * each transaction once, also between writers racing); true when inserted. The derived tables
 * take it in later (server-events.service.ts).
 */
export async function insertPaymentOnce(db: Kysely<Database>, row: NewPaymentRow): Promise<boolean> {
  const inserted = await db
    .insertInto('payments')
    .values(row)
    .onConflict((oc) => oc.columns(['website_id', 'transaction_id']).doNothing())
    .returning('id')
    .execute();
  return inserted.length > 0;
}

/**
 * Gives a recorded payment the provider's conversion it was recorded without (a conversion once
 * kept stays); the payment's id when it changed.
 */
export async function addConversion(db: Kysely<Database>, websiteId: string, transactionId: string, conversion: { amountMinor: number; currency: string }): Promise<string | undefined> {
  const changed = await db
    .updateTable('payments')
    .set({ converted_minor: conversion.amountMinor, converted_currency: conversion.currency })
    .where('website_id', '=', websiteId)
    .where('transaction_id', '=', transactionId)
    .where('converted_currency', 'is', null)
    .where('currency', '<>', conversion.currency)
    .returning('id')
    .executeTakeFirst();
  return changed?.id;
}

/** Marks a recorded payment refunded; its id when it was not refunded before. */
export async function markRefunded(db: Kysely<Database>, websiteId: string, transactionId: string): Promise<string | undefined> {
  const changed = await db
    .updateTable('payments')
    .set({ refunded: true })
    .where('website_id', '=', websiteId)
    .where('transaction_id', '=', transactionId)
    .where('refunded', '=', false)
    .returning('id')
    .executeTakeFirst();
  return changed?.id;
}
