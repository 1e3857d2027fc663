import { type Kysely, sql } from 'kysely';
import type { Database } from '../../db/schema.ts';
import type { SealedWebhookSecret } from './credentials.ts';

/** The connection a delivery is for, with its sealed signing secret; undefined when not connected. */
export async function findWebhookTarget(db: Kysely<Database>, websiteId: string, provider: string) {
  return db
    .selectFrom('integrations')
    .select(['website_id', 'provider', 'webhook_key_id', 'webhook_ciphertext'])
    .where('website_id', '=', websiteId)
    .where('provider', '=', provider)
    .executeTakeFirst();
}

export const hasSecret = (target: Awaited<ReturnType<typeof findWebhookTarget>>): target is SealedWebhookSecret =>
  target?.webhook_key_id != null && target.webhook_ciphertext != null;

export async function storeWebhookSecret(
  db: Kysely<Database>,
  websiteId: string,
  provider: string,
  sealed: { keyId: string; ciphertext: string },
  at: string,
): Promise<void> {
  await db
    .updateTable('integrations')
    .set({ webhook_key_id: sealed.keyId, webhook_ciphertext: sealed.ciphertext, webhook_secret_set_at: at, updated_at: at })
    .where('website_id', '=', websiteId)
    .where('provider', '=', provider)
    .execute();
}

export async function deliveryWasReceived(db: Kysely<Database>, websiteId: string, provider: string, eventId: string): Promise<boolean> {
  const row = await db
    .selectFrom('integration_webhook_events')
    .select('event_id')
    .where('website_id', '=', websiteId)
    .where('provider', '=', provider)
    .where('event_id', '=', eventId)
    .executeTakeFirst();
  return row !== undefined;
}

export interface Delivery {
  websiteId: string;
  provider: string;
  eventId: string;
  eventType: string;
  payments: number;
  at: string;
}

/**
 * Remembers a verified delivery and counts it on the connection; false when the same event was
 * remembered first (a redelivery racing this one), which then counts nothing.
 */
export async function rememberDelivery(db: Kysely<Database>, delivery: Delivery): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const inserted = await trx
      .insertInto('integration_webhook_events')
      .values({
        website_id: delivery.websiteId,
        provider: delivery.provider,
        event_id: delivery.eventId,
        event_type: delivery.eventType,
        payments: delivery.payments,
        received_at: delivery.at,
      })
      .onConflict((oc) => oc.columns(['website_id', 'provider', 'event_id']).doNothing())
      .returning('event_id')
      .execute();
    if (inserted.length === 0) return false;
    await trx
      .updateTable('integrations')
      .set({ last_webhook_at: delivery.at, last_webhook_type: delivery.eventType, webhooks_received: sql`webhooks_received + 1` })
      .where('website_id', '=', delivery.websiteId)
      .where('provider', '=', delivery.provider)
      .execute();
    return true;
  });
}

/** Deliveries older than the providers retry for are forgotten: a payment is kept once by its transaction id anyway. */
export async function forgetDeliveriesBefore(db: Kysely<Database>, websiteId: string, provider: string, before: string): Promise<void> {
  await db
    .deleteFrom('integration_webhook_events')
    .where('website_id', '=', websiteId)
    .where('provider', '=', provider)
    .where('received_at', '<', before)
    .execute();
}
