import type { Kysely } from 'kysely';
import type { Keyring } from '../../crypto/keyring.ts';
import { lockWebsite } from '../../db/locks.ts';
import type { Database } from '../../db/schema.ts';
import { AppError, badRequest } from '../../errors.ts';
import { type PaymentFold, recordPayment } from '../events/server-events.service.ts';
import { type ProviderAdapter, type WebhookHeaders, WebhookSignatureError, toPaymentInput } from './adapters/index.ts';
import { openWebhookSecret, sealWebhookSecret } from './credentials.ts';
import { newConnection } from './integrations.service.ts';
import * as repo from './integrations.repository.ts';
import { type Provider, isApiProvider } from './providers.ts';
import * as webhooks from './webhooks.repository.ts';

// Payment providers' webhooks: the owner pastes the provider's signing secret (PUT
// .../integrations/{provider}/webhook), and the provider posts its events to the receiver
// (POST /api/webhooks/{provider}/{websiteId}). Each delivery is verified with the provider's own
// scheme (the adapters), its payments, renewals and refunds go through the one payment writer, and
// its event id is remembered so a redelivery records nothing. Shopify and WooCommerce connect this
// way only: storing their secret is their connection.

/** Deliveries are remembered this long: longer than any provider retries one (Stripe: 3 days). */
export const DELIVERY_MEMORY_DAYS = 30;

/**
 * Stores the signing secret, sealed. An API provider must be connected first (its credential is
 * the connection); for Shopify and WooCommerce this is the connection, made here when there is none.
 */
export async function setWebhookSecret(db: Kysely<Database>, keyring: Keyring, websiteId: string, provider: Provider, secret: string): Promise<{ created: boolean }> {
  const sealed = sealWebhookSecret(keyring, websiteId, provider, secret);
  const now = new Date().toISOString();
  return db.transaction().execute(async (trx) => {
    // Serialised with connect and disconnect of the same website.
    await lockWebsite(trx, websiteId);
    const integration = await repo.findIntegration(trx, websiteId, provider);
    let created = false;
    if (!integration) {
      if (isApiProvider(provider)) {
        throw badRequest(`${provider} is not connected; connect it with its API credential before setting its webhook secret`);
      }
      // Nothing else to keep: the sealed (empty) credentials only mark the connection.
      await repo.upsertIntegration(trx, newConnection(keyring, websiteId, provider, {}, now));
      created = true;
    }
    await webhooks.storeWebhookSecret(trx, websiteId, provider, sealed, now);
    return { created };
  });
}

export interface WebhookDeps {
  db: Kysely<Database>;
  keyring: Keyring;
  adapterOf(provider: Provider): ProviderAdapter;
  /** Where the payments are counted (the rollup deriver; null: at once, under the website's lock). */
  paymentFold?: PaymentFold | null;
}

export type WebhookOutcome = 'recorded' | 'duplicate' | 'ping';

export interface WebhookReceipt {
  received: true;
  duplicate: boolean;
  /** Payments, renewals and refunds of the event the payment writer took (each transaction once). */
  payments: number;
  /** Those it refused (an unknown currency): left out, the rest of the event still counts. */
  skipped: number;
  outcome: WebhookOutcome;
}

/** 410: the provider should stop sending (or the owner has a step left). */
const gone = (message: string) => new AppError(410, message);

export async function receiveWebhook(deps: WebhookDeps, provider: Provider, websiteId: string, rawBody: Buffer, headers: WebhookHeaders): Promise<WebhookReceipt> {
  const adapter = deps.adapterOf(provider);
  if (adapter.isPing?.(rawBody, headers)) return { received: true, duplicate: false, payments: 0, skipped: 0, outcome: 'ping' };
  const target = await webhooks.findWebhookTarget(deps.db, websiteId, provider);
  if (!target) throw gone(`${provider} is not connected to this website`);
  if (!webhooks.hasSecret(target)) throw gone(`${provider} has no webhook signing secret on this website: paste it in the website's integration settings`);

  let parsed;
  try {
    parsed = adapter.parseWebhook(rawBody, headers, openWebhookSecret(deps.keyring, target));
  } catch (error) {
    if (!(error instanceof WebhookSignatureError)) throw error;
    throw badRequest(`The webhook's signature does not verify with the stored signing secret: ${error.message}`, [{ path: 'headers', message: error.message }]);
  }
  if (await webhooks.deliveryWasReceived(deps.db, websiteId, provider, parsed.eventId)) {
    return { received: true, duplicate: true, payments: 0, skipped: 0, outcome: 'duplicate' };
  }
  // Payments before the delivery is remembered: a crash between the two leaves the event to be
  // delivered again, and the writer keeps each transaction once.
  let payments = 0;
  let skipped = 0;
  for (const payment of parsed.payments) {
    try {
      await recordPayment(deps.db, websiteId, toPaymentInput(payment), payment.converted, deps.paymentFold ?? null);
      payments += 1;
    } catch (error) {
      if (!(error instanceof AppError && error.statusCode === 400)) throw error;
      skipped += 1;
    }
  }
  const at = new Date();
  const fresh = await webhooks.rememberDelivery(deps.db, { websiteId, provider, eventId: parsed.eventId, eventType: parsed.eventType, payments, at: at.toISOString() });
  await webhooks.forgetDeliveriesBefore(deps.db, websiteId, provider, new Date(at.getTime() - DELIVERY_MEMORY_DAYS * 86_400_000).toISOString());
  return fresh ? { received: true, duplicate: false, payments, skipped, outcome: 'recorded' } : { received: true, duplicate: true, payments: 0, skipped: 0, outcome: 'duplicate' };
}
