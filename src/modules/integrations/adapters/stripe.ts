import Stripe from 'stripe';
import { type AdapterOptions, type ApiAdapter, type PaymentPage, type ProviderPayment, WebhookSignatureError } from './adapter.ts';
import { asObject, attributionFrom, conversionFromMinor, withConversion, headerValue, instant, majorFromMinor, text, upperCurrency, type Json } from './fields.ts';
import { unreachable } from './http.ts';
import { kindOfStatus, providerError } from './scrub.ts';
import { requireSecret } from './signatures.ts';

// Stripe (provider-one), with the official SDK. The owner gives a restricted key that can read
// the account, Checkout Sessions and invoices.
//
// What is a payment:
// - checkout.session.completed with payment_status paid (or no_payment_required: a free trial's
//   start). The visitor is in the session's metadata, where the hosted service's guide puts it.
//   Its transaction id is the payment intent (mode payment) or the first invoice (mode
//   subscription), so a later refund of that payment finds it.
// - invoice.paid with billing_reason subscription_cycle: a renewal, keyed by the invoice. Other
//   reasons are skipped: subscription_create is the checkout's own payment, already recorded with
//   its visitor, and recording it from the invoice could win the race and lose the visitor.
// - charge.refunded once the charge is refunded in full: marks the payment refunded.
// The amount converted by Stripe is the balance transaction of the checkout's charge (its gross
// amount in the settlement currency). The history import expands it on the sessions it lists; a
// webhook carries the payment intent's id alone and is recorded unconverted, and a later re-sync
// adds the conversion. Renewal invoices name their charge only through invoice payments, deeper
// than an expansion reaches: they stay unconverted (the owner's rate applies).

const DEFAULT_BASE_URL = 'https://api.stripe.com';
const PAGE_SIZE = 100;
const WEBHOOK_TOLERANCE_SECONDS = 300; // Stripe's own default

export function stripeAdapter(options: AdapterOptions = {}): ApiAdapter {
  const base = new URL(options.baseUrl ?? DEFAULT_BASE_URL);
  const client = (key: string) =>
    new Stripe(key, {
      host: base.hostname,
      port: base.port || (base.protocol === 'http:' ? 80 : 443),
      protocol: base.protocol === 'http:' ? 'http' : 'https',
      maxNetworkRetries: 1,
      timeout: 20_000,
      telemetry: false,
    });
  const keyOf = (credentials: Record<string, string>) => {
    const key = credentials.providerOneRestrictedKey?.trim();
    if (!key) throw providerError('invalid', null, 'the credential field providerOneRestrictedKey is missing', credentials);
    return key;
  };

  return {
    provider: 'provider-one',
    connection: 'api-credential',

    async verifyCredential(credentials) {
      const stripe = client(keyOf(credentials));
      return callStripe(credentials, base, async () => {
        const account = await currentAccount(stripe);
        // The history import reads these: a key that cannot fails now, with Stripe's words for
        // the missing permission, rather than at the first re-sync.
        await stripe.checkout.sessions.list({ limit: 1 });
        await stripe.invoices.list({ limit: 1 });
        if (account === null) return { accountName: null, currency: null };
        const name = account.settings?.dashboard?.display_name ?? account.business_profile?.name ?? account.email ?? account.id;
        return { accountName: name, currency: upperCurrency(account.default_currency) };
      });
    },

    async listPayments(credentials, since, cursor) {
      const stripe = client(keyOf(credentials));
      const position = readCursor(cursor);
      const created = { gte: Math.floor(since.getTime() / 1000) };
      return callStripe(credentials, base, async (): Promise<PaymentPage> => {
        // Two lists one after the other: completed checkouts, then renewal invoices.
        if (position.phase === 'sessions') {
          const query = { created, status: 'complete' as const, limit: PAGE_SIZE, ...after(position.after) };
          const page = await withoutExpansionIfRefused(
            () => stripe.checkout.sessions.list({ ...query, expand: [SESSION_BALANCE_TRANSACTION] }),
            () => stripe.checkout.sessions.list(query),
          );
          const payments = page.data.flatMap((session) => paymentsOfSession(session as unknown as Json));
          const last = page.data.at(-1);
          return { payments, nextCursor: page.has_more && last ? `sessions:${last.id}` : 'invoices:' };
        }
        const page = await stripe.invoices.list({ created, status: 'paid', limit: PAGE_SIZE, ...after(position.after) });
        const payments = page.data.flatMap((invoice) => renewalOfInvoice(invoice as unknown as Json));
        const last = page.data.at(-1);
        return { payments, nextCursor: page.has_more && last ? `invoices:${last.id}` : null };
      });
    },

    parseWebhook(rawBody, headers, secret, now = new Date()) {
      const signature = headerValue(headers, 'stripe-signature');
      if (signature === null) throw new WebhookSignatureError('the Stripe-Signature header is missing');
      let event: Stripe.Event;
      try {
        // The static webhooks helper needs no key: verification is local.
        event = Stripe.webhooks.constructEvent(rawBody, signature, requireSecret(secret), WEBHOOK_TOLERANCE_SECONDS, undefined, now.getTime());
      } catch (error) {
        if (error instanceof WebhookSignatureError) throw error;
        throw new WebhookSignatureError(`the Stripe signature does not verify: ${error instanceof Error ? error.message : String(error)}`);
      }
      const object = asObject(event.data?.object) ?? {};
      return { eventId: event.id, eventType: event.type, payments: paymentsOfEvent(event.type, object) };
    },
  };
}

/**
 * The balance transaction of a checkout's charge, expanded in the history's session list (four
 * levels, Stripe's most): its amount and currency are Stripe's conversion into the account's
 * settlement currency.
 */
const SESSION_BALANCE_TRANSACTION = 'data.payment_intent.latest_charge.balance_transaction';

/**
 * Runs the list with its expansion; a restricted key that may not read payment intents, charges or
 * balance transactions is refused the expansion (403), and then lists without it: the payments
 * come unconverted rather than not at all.
 */
async function withoutExpansionIfRefused<T>(expanded: () => Promise<T>, plain: () => Promise<T>): Promise<T> {
  try {
    return await expanded();
  } catch (error) {
    if (error instanceof Stripe.errors.StripePermissionError) return plain();
    throw error;
  }
}

type Position = { phase: 'sessions' | 'invoices'; after: string | null };

function readCursor(cursor: string | null): Position {
  if (cursor === null || cursor === '') return { phase: 'sessions', after: null };
  const match = /^(sessions|invoices):(.*)$/.exec(cursor);
  if (!match) return { phase: 'sessions', after: null };
  return { phase: match[1] as Position['phase'], after: match[2] || null };
}

const after = (id: string | null) => (id === null ? {} : { starting_after: id });

/** Runs SDK calls, turning Stripe's errors into ProviderErrors. */
/**
 * The key's account, for its name and currency; null when the restricted key may not read it
 * (GET /v1/account needs a permission the import does not, so it is not asked of owners). A
 * revoked key still fails here, as 401.
 */
async function currentAccount(stripe: Stripe): Promise<Stripe.Account | null> {
  try {
    return await stripe.accounts.retrieveCurrent();
  } catch (error) {
    if (error instanceof Stripe.errors.StripePermissionError) return null;
    throw error;
  }
}

async function callStripe<T>(credentials: Record<string, string>, base: URL, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    // The connection error's own message is generic; its detail is the socket's error.
    if (error instanceof Stripe.errors.StripeConnectionError) throw unreachable(base, error.detail ?? error, credentials);
    if (error instanceof Stripe.errors.StripeError) {
      const status = error.statusCode ?? null;
      throw providerError(status === null ? 'unreachable' : kindOfStatus(status), status, error.message, credentials);
    }
    throw error;
  }
}

function paymentsOfEvent(type: string, object: Json): ProviderPayment[] {
  if (type === 'checkout.session.completed' || type === 'checkout.session.async_payment_succeeded') return paymentsOfSession(object);
  if (type === 'invoice.paid') return renewalOfInvoice(object);
  if (type === 'charge.refunded') return refundOfCharge(object);
  return [];
}

function paymentsOfSession(session: Json): ProviderPayment[] {
  const status = text(session.payment_status);
  if (status !== 'paid' && status !== 'no_payment_required') return [];
  const currency = upperCurrency(session.currency);
  const transactionId = idOf(session.payment_intent) ?? idOf(session.invoice) ?? text(session.id);
  if (currency === null || transactionId === null) return [];
  const amount = majorFromMinor(session.amount_total ?? 0, currency);
  const occurredAt = instant(session.created);
  if (amount === null || occurredAt === null) return [];
  const details = asObject(session.customer_details);
  return [
    {
      transactionId,
      amount,
      currency,
      occurredAt,
      ...attributionFrom(session.metadata),
      email: text(details?.email) ?? text(session.customer_email),
      customerId: idOf(session.customer),
      customerName: text(details?.name),
      renewal: false,
      refunded: false,
      isFreeTrial: status === 'no_payment_required' || amount === 0,
      ...withConversion(conversionOfSession(session, currency)),
    },
  ];
}

/**
 * Stripe's conversion of a checkout's payment: the balance transaction of its payment intent's
 * charge (amount, gross, in the settlement currency), when the history import expanded it. A
 * webhook names the payment intent by id only; it is not fetched (docs/decisions.md).
 */
function conversionOfSession(session: Json, currency: string) {
  const charge = asObject(asObject(session.payment_intent)?.latest_charge);
  const balance = asObject(charge?.balance_transaction);
  return conversionFromMinor(balance?.amount, balance?.currency, currency);
}

function renewalOfInvoice(invoice: Json): ProviderPayment[] {
  if (text(invoice.billing_reason) !== 'subscription_cycle' || text(invoice.status) !== 'paid') return [];
  const currency = upperCurrency(invoice.currency);
  const transactionId = text(invoice.id);
  if (currency === null || transactionId === null) return [];
  const amount = majorFromMinor(invoice.amount_paid, currency);
  const transitions = asObject(invoice.status_transitions);
  const occurredAt = instant(transitions?.paid_at) ?? instant(invoice.created);
  if (amount === null || occurredAt === null) return [];
  // A subscription started at a checkout keeps that checkout's metadata only when the site also
  // set subscription_data.metadata; the invoice shows it under parent.subscription_details
  // (API 2025-03-31 and later) or subscription_details (before).
  const parent = asObject(invoice.parent);
  const subscription = asObject(parent?.subscription_details) ?? asObject(invoice.subscription_details);
  return [
    {
      transactionId,
      amount,
      currency,
      occurredAt,
      ...attributionFrom(subscription?.metadata),
      email: text(invoice.customer_email),
      customerId: idOf(invoice.customer),
      customerName: text(invoice.customer_name),
      renewal: true,
      refunded: false,
      isFreeTrial: false,
    },
  ];
}

function refundOfCharge(charge: Json): ProviderPayment[] {
  if (charge.refunded !== true) return []; // a partial refund leaves the payment counted
  const currency = upperCurrency(charge.currency);
  // The payment was keyed by its invoice (subscriptions) or its payment intent (one-off). The
  // charge names its invoice only in API versions before 2025-03-31; see docs/decisions.md.
  const transactionId = idOf(charge.invoice) ?? idOf(charge.payment_intent) ?? text(charge.id);
  if (currency === null || transactionId === null) return [];
  const amount = majorFromMinor(charge.amount, currency);
  const occurredAt = instant(charge.created);
  if (amount === null || occurredAt === null) return [];
  const billing = asObject(charge.billing_details);
  return [
    {
      transactionId,
      amount,
      currency,
      occurredAt,
      ...attributionFrom(charge.metadata),
      email: text(billing?.email) ?? text(charge.receipt_email),
      customerId: idOf(charge.customer),
      customerName: text(billing?.name),
      renewal: false,
      refunded: true,
      isFreeTrial: false,
    },
  ];
}

/** An expandable Stripe field: an id, or the expanded object with its id. */
function idOf(value: unknown): string | null {
  return text(value) ?? text(asObject(value)?.id);
}
