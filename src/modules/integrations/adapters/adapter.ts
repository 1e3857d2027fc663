import { normaliseEmail } from '../../../lib/formats.ts';
import type { PaymentInput } from '../../events/server-events.schemas.ts';
import type { Provider } from '../providers.ts';

// One interface for every payment provider. Nothing outside this folder knows a provider's wire
// format: callers get provider-neutral payments and errors, and hand payments to recordPayment
// through toPaymentInput.

/** A payment, renewal or refund as a provider reported it, in the terms of PaymentInput. */
export interface ProviderPayment {
  /** The provider's id for the money movement; a refund carries the id of the payment it undoes. */
  transactionId: string;
  /** In major units (29.99), converted from the provider's minor units with the currency's digits. */
  amount: number;
  /** ISO-4217, upper case. */
  currency: string;
  occurredAt: Date;
  /** From the checkout's metadata (datafast_visitor_id), when the site passed it. */
  visitorId: string | null;
  /** From the checkout's metadata (datafast_session_id). PaymentInput has no field for it yet. */
  sessionId: string | null;
  email: string | null;
  customerId: string | null;
  customerName: string | null;
  renewal: boolean;
  refunded: boolean;
  isFreeTrial: boolean;
  /**
   * The provider's own conversion of the amount, from its documented field (Lemon Squeezy's
   * total_usd, Shopify's shop money, Paddle's payout totals, Stripe's balance transaction), in
   * minor units of `currency` (ISO-4217, upper case); absent where the provider sends none or the
   * same currency. Kept beside the payment (migration 0028), not part of PaymentInput.
   */
  converted?: { amountMinor: number; currency: string } | null;
}

export interface VerifiedAccount {
  /** The account, store or organisation name the provider gives; null where its API has none. */
  accountName: string | null;
  currency: string | null;
}

export interface PaymentPage {
  payments: ProviderPayment[];
  /** Opaque; null when this was the last page. The caller persists it so a crash resumes here. */
  nextCursor: string | null;
}

export interface ParsedWebhook {
  /** The provider's id of the delivery or event, for recording each event once. */
  eventId: string;
  /** The provider's name for the event (checkout.session.completed, orders/paid); "unknown" when it names none. */
  eventType: string;
  /** Empty for an event type that carries no payment. */
  payments: ProviderPayment[];
}

export type WebhookHeaders = Record<string, string | string[] | undefined>;

/** Every adapter can read its provider's webhooks. */
interface WebhookCapable {
  readonly provider: Provider;
  /** Throws WebhookSignatureError when the signature is missing, wrong or too old. */
  parseWebhook(rawBody: Buffer, headers: WebhookHeaders, secret: string, now?: Date): ParsedWebhook;
  /**
   * Whether the delivery is the provider's unsigned check that the URL answers (WooCommerce posts
   * `webhook_id=<id>` when a webhook is saved and keeps it pending until it gets a 200). Nothing in
   * it is trusted or stored.
   */
  isPing?(rawBody: Buffer, headers: WebhookHeaders): boolean;
}

/** A provider connected with an API credential: it can be verified and its history read. */
export interface ApiAdapter extends WebhookCapable {
  readonly connection: 'api-credential';
  verifyCredential(credentials: Record<string, string>): Promise<VerifiedAccount>;
  listPayments(credentials: Record<string, string>, since: Date, cursor: string | null): Promise<PaymentPage>;
}

/** A provider connected by its webhook and secret alone (Shopify, WooCommerce): no API calls. */
export interface WebhookOnlyAdapter extends WebhookCapable {
  readonly connection: 'webhook-only';
}

export type ProviderAdapter = ApiAdapter | WebhookOnlyAdapter;

export interface AdapterOptions {
  /** The provider's API root; defaults to its real API. Tests point it at a local server. */
  baseUrl?: string;
}

export type ProviderErrorKind = 'revoked' | 'forbidden' | 'unreachable' | 'invalid';

/**
 * What went wrong talking to a provider, in words an owner can act on. The message says what the
 * provider answered and never holds the credential: build it with providerError (scrub.ts).
 */
export class ProviderError extends Error {
  override readonly name = 'ProviderError';
  constructor(
    readonly kind: ProviderErrorKind,
    message: string,
    readonly status: number | null = null,
  ) {
    super(message);
  }
}

/** The webhook's signature is missing, forged or stale: answer 400 and store nothing. */
export class WebhookSignatureError extends Error {
  override readonly name = 'WebhookSignatureError';
}

export function toPaymentInput(payment: ProviderPayment): PaymentInput {
  return {
    amount: payment.amount,
    currency: payment.currency,
    transaction_id: payment.transactionId,
    datafast_visitor_id: payment.visitorId,
    // The e-mail only serves attribution: one the payment writer would refuse (its rule is the
    // API's; a provider accepts more, internationalised addresses among them) is left out, not
    // the payment with it.
    email: payment.email !== null && normaliseEmail(payment.email) !== null ? payment.email : null,
    customer_id: payment.customerId,
    customer_name: payment.customerName,
    renewal: payment.renewal,
    refunded: payment.refunded,
    is_free_trial: payment.isFreeTrial,
    timestamp: payment.occurredAt.toISOString(),
  };
}
