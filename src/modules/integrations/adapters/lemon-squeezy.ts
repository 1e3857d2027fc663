import { createHash } from 'node:crypto';
import { type AdapterOptions, type ApiAdapter, type ProviderPayment, WebhookSignatureError } from './adapter.ts';
import { asObject, attributionFrom, conversionFromMinor, withConversion, headerValue, instant, majorFromMinor, requireCredential, text, upperCurrency, type Json } from './fields.ts';
import { getJson } from './http.ts';
import { providerError } from './scrub.ts';
import { digestMatches, hmacSha256, requireSecret } from './signatures.ts';

// Lemon Squeezy (provider-two): an API key and the store's id.
//
// Its official SDK (@lemonsqueezy/lemonsqueezy.js) is not used: its API root is a constant
// (https://api.lemonsqueezy.com, no option), and its API key is process-wide state set by
// lemonSqueezySetup, so two websites importing at once would send each other's keys. The few
// JSON:API reads are done with fetch instead; the SDK has no webhook verification either.
//
// What is a payment:
// - order_created with status paid (transaction "order:<id>"); a total of 0 starts a free trial.
// - subscription_payment_success with billing_reason renewal ("subscription-invoice:<id>",
//   renewal) or updated (a plan change's charge). initial is the order_created payment again.
// - order_refunded / subscription_payment_refunded once the status is refunded (a partial refund
//   leaves the payment counted).
// The amount converted by Lemon Squeezy is the object's total_usd (its total in USD cents).
// The visitor comes from meta.custom_data, where checkout[custom][...] values arrive. The orders
// API does not return custom data, so imported history carries no visitor (email may match).

const DEFAULT_BASE_URL = 'https://api.lemonsqueezy.com';
const PAGE_SIZE = 100;
const JSON_API = 'application/vnd.api+json';

export function lemonSqueezyAdapter(options: AdapterOptions = {}): ApiAdapter {
  const base = options.baseUrl ?? DEFAULT_BASE_URL;

  return {
    provider: 'provider-two',
    connection: 'api-credential',

    async verifyCredential(credentials) {
      const key = requireCredential(credentials, 'providerTwoApiKey');
      const storeId = requireCredential(credentials, 'providerTwoStoreId');
      const body = asObject(await getJson(new URL(`/v1/stores/${encodeURIComponent(storeId)}`, base), key, credentials, JSON_API));
      const attributes = asObject(asObject(body?.data)?.attributes);
      if (!attributes) throw providerError('invalid', null, 'the store answer has no attributes', credentials);
      return { accountName: text(attributes.name) ?? storeId, currency: upperCurrency(attributes.currency) };
    },

    async listPayments(credentials, since, cursor) {
      const key = requireCredential(credentials, 'providerTwoApiKey');
      const storeId = requireCredential(credentials, 'providerTwoStoreId');
      const pageNumber = cursor === null ? 1 : Math.max(1, Number.parseInt(cursor, 10) || 1);
      const url = new URL('/v1/orders', base);
      url.searchParams.set('filter[store_id]', storeId);
      url.searchParams.set('page[number]', String(pageNumber));
      url.searchParams.set('page[size]', String(PAGE_SIZE));
      const body = asObject(await getJson(url, key, credentials, JSON_API));
      const orders = Array.isArray(body?.data) ? body.data.map(asObject).filter((order) => order !== null) : [];
      // The orders API takes no date filter and documents no order to rely on, so every page is
      // read and orders before `since` are left out. Orders placed meanwhile may shift some onto
      // the next page: read twice, recorded once.
      const payments = orders
        .map((order) => paymentOfOrder(order, {}))
        .filter((payment) => payment !== null && payment.occurredAt >= since) as ProviderPayment[];
      const lastPage = Number(asObject(asObject(body?.meta)?.page)?.lastPage ?? pageNumber);
      const more = orders.length > 0 && pageNumber < lastPage;
      return { payments, nextCursor: more ? String(pageNumber + 1) : null };
    },

    parseWebhook(rawBody, headers, secret) {
      const signature = headerValue(headers, 'x-signature');
      if (signature === null) throw new WebhookSignatureError('the X-Signature header is missing');
      if (!digestMatches(hmacSha256(requireSecret(secret), rawBody), signature, 'hex')) {
        throw new WebhookSignatureError('the X-Signature does not match the body');
      }
      // Lemon Squeezy's events carry no id and its signature no timestamp: the body's digest
      // names the event, so a redelivery of the same event is recognised.
      const eventId = `sha256:${createHash('sha256').update(rawBody).digest('hex')}`;
      const body = parseJson(rawBody);
      const meta = asObject(body?.meta);
      const data = asObject(body?.data);
      const eventType = text(meta?.event_name) ?? 'unknown';
      if (!meta || !data) return { eventId, eventType, payments: [] };
      const customData = asObject(meta.custom_data) ?? {};
      const payment = paymentOfEvent(eventType, data, customData);
      return { eventId, eventType, payments: payment ? [payment] : [] };
    },
  };
}

function parseJson(rawBody: Buffer): Json | null {
  try {
    return asObject(JSON.parse(rawBody.toString('utf8')));
  } catch {
    return null;
  }
}

function paymentOfEvent(eventName: string, data: Json, customData: Json): ProviderPayment | null {
  const status = text(asObject(data.attributes)?.status);
  switch (eventName) {
    case 'order_created':
      return status === 'paid' ? paymentOfOrder(data, customData) : null;
    case 'order_refunded':
      return status === 'refunded' ? paymentOfOrder(data, customData) : null;
    case 'subscription_payment_success':
    case 'subscription_payment_refunded':
      return paymentOfSubscriptionInvoice(data, customData, eventName === 'subscription_payment_refunded');
    default:
      return null;
  }
}

function paymentOfOrder(order: Json, customData: Json): ProviderPayment | null {
  const attributes = asObject(order.attributes);
  const id = text(order.id);
  const status = text(attributes?.status);
  if (!attributes || id === null || (status !== 'paid' && status !== 'refunded' && status !== 'partial_refund')) return null;
  const base = common(attributes, customData);
  if (base === null) return null;
  return { transactionId: `order:${id}`, ...base, renewal: false, refunded: status === 'refunded', isFreeTrial: base.amount === 0 };
}

function paymentOfSubscriptionInvoice(invoice: Json, customData: Json, refundEvent: boolean): ProviderPayment | null {
  const attributes = asObject(invoice.attributes);
  const id = text(invoice.id);
  const reason = text(attributes?.billing_reason);
  if (!attributes || id === null || (reason !== 'renewal' && reason !== 'updated')) return null;
  const status = text(attributes.status);
  if (refundEvent ? status !== 'refunded' : status !== 'paid') return null;
  const base = common(attributes, customData);
  if (base === null) return null;
  return { transactionId: `subscription-invoice:${id}`, ...base, renewal: reason === 'renewal', refunded: refundEvent, isFreeTrial: false };
}

function common(attributes: Json, customData: Json) {
  const currency = upperCurrency(attributes.currency);
  if (currency === null) return null;
  const amount = majorFromMinor(attributes.total, currency);
  const occurredAt = instant(attributes.created_at);
  if (amount === null || occurredAt === null) return null;
  return {
    amount,
    currency,
    occurredAt,
    ...attributionFrom(customData),
    email: text(attributes.user_email),
    customerId: text(attributes.customer_id),
    customerName: text(attributes.user_name),
    // Orders and subscription invoices carry their total in USD (total_usd, cents) beside the
    // total in their own currency.
    ...withConversion(conversionFromMinor(attributes.total_usd, 'USD', currency)),
  };
}
