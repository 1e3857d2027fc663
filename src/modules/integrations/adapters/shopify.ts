import { type ProviderPayment, WebhookSignatureError, type WebhookOnlyAdapter } from './adapter.ts';
import { asObject, attributionFrom, conversionFromDecimal, withConversion, headerValue, instant, joinName, majorFromDecimal, pairsToObject, text, upperCurrency, type Json } from './fields.ts';
import { digestMatches, hmacSha256, requireSecret } from './signatures.ts';

// Shopify (provider-five) connects by webhook alone: the owner adds the webhook URL in the store's
// notification settings and pastes the signing secret shown there. Signature: X-Shopify-Hmac-Sha256,
// base64 HMAC-SHA256 of the raw body. It has no timestamp, so a replay is caught by the delivery's
// id (X-Shopify-Webhook-Id, the same on every retry of one event) and by the transaction id.
//
// What is a payment: orders/paid (the order's id is the transaction; amounts are decimal strings:
// the payment is what the customer paid, total_price_set.presentment_money, and the shop's
// conversion of it, shop_money, is kept as the provider's converted amount); refunds/create marks that order refunded, whatever part was refunded
// (Shopify's refund does not say whether it was the whole order). The visitor is in the order's
// note_attributes, where a theme's cart attributes (attributes[datafast_visitor_id]) arrive.

export function shopifyAdapter(): WebhookOnlyAdapter {
  return {
    provider: 'provider-five',
    connection: 'webhook-only',

    parseWebhook(rawBody, headers, secret) {
      const signature = headerValue(headers, 'x-shopify-hmac-sha256');
      if (signature === null) throw new WebhookSignatureError('the X-Shopify-Hmac-Sha256 header is missing');
      if (!digestMatches(hmacSha256(requireSecret(secret), rawBody), signature, 'base64')) {
        throw new WebhookSignatureError('the X-Shopify-Hmac-Sha256 signature does not match the body');
      }
      const topic = headerValue(headers, 'x-shopify-topic');
      // Shopify's guide to duplicates: a redelivered event keeps its X-Shopify-Event-Id; the
      // webhook id names one delivery (older shops send only that).
      const eventId = headerValue(headers, 'x-shopify-event-id') ?? headerValue(headers, 'x-shopify-webhook-id');
      if (eventId === null) throw new WebhookSignatureError('the X-Shopify-Event-Id and X-Shopify-Webhook-Id headers are missing');
      let body: Json | null;
      try {
        body = asObject(JSON.parse(rawBody.toString('utf8')));
      } catch {
        body = null;
      }
      const eventType = topic ?? 'unknown';
      if (body === null) return { eventId, eventType, payments: [] };
      const payment = topic === 'orders/paid' ? paymentOfOrder(body) : topic === 'refunds/create' ? refundOf(body) : null;
      return { eventId, eventType, payments: payment ? [payment] : [] };
    },
  };
}

/**
 * What the customer paid (total_price_set.presentment_money) and the shop's conversion of it
 * (shop_money). An order without the money set (older payloads) is read from total_price in the
 * shop's currency, unconverted.
 */
function moneyOfOrder(order: Json) {
  const set = asObject(order.total_price_set);
  const presentment = asObject(set?.presentment_money);
  const shop = asObject(set?.shop_money);
  const paidCurrency = upperCurrency(presentment?.currency_code);
  const paid = paidCurrency === null ? null : majorFromDecimal(presentment?.amount, paidCurrency);
  if (paidCurrency !== null && paid !== null) {
    return { amount: paid, currency: paidCurrency, converted: conversionFromDecimal(shop?.amount, shop?.currency_code, paidCurrency) };
  }
  const currency = upperCurrency(order.currency);
  const amount = currency === null ? null : majorFromDecimal(order.total_price, currency);
  return currency === null || amount === null ? null : { amount, currency, converted: null };
}

function paymentOfOrder(order: Json): ProviderPayment | null {
  const transactionId = text(order.id);
  const money = moneyOfOrder(order);
  if (transactionId === null || money === null) return null;
  const { amount, currency, converted } = money;
  const occurredAt = instant(order.processed_at) ?? instant(order.created_at);
  if (occurredAt === null) return null;
  const customer = asObject(order.customer);
  const billing = asObject(order.billing_address);
  return {
    transactionId,
    amount,
    currency,
    occurredAt,
    ...attributionFrom(pairsToObject(order.note_attributes, 'name', 'value')),
    email: text(order.email) ?? text(order.contact_email) ?? text(customer?.email),
    customerId: text(customer?.id),
    customerName: joinName(customer?.first_name, customer?.last_name) ?? text(billing?.name),
    renewal: false,
    refunded: false,
    isFreeTrial: false,
    ...withConversion(converted),
  };
}

function refundOf(refund: Json): ProviderPayment | null {
  const transactionId = text(refund.order_id);
  const transactions = Array.isArray(refund.transactions) ? refund.transactions.map(asObject) : [];
  const refunds = transactions.filter((entry) => entry !== null && text(entry.kind) === 'refund' && text(entry.status) === 'success') as Json[];
  const currency = upperCurrency(refunds[0]?.currency);
  const occurredAt = instant(refund.processed_at) ?? instant(refund.created_at);
  if (transactionId === null || currency === null || occurredAt === null) return null;
  let amount = 0;
  for (const entry of refunds) {
    const part = majorFromDecimal(entry.amount, currency);
    if (part === null) return null;
    amount += part;
  }
  return {
    transactionId,
    amount: majorFromDecimal(amount.toFixed(6), currency) ?? amount,
    currency,
    occurredAt,
    visitorId: null,
    sessionId: null,
    email: null,
    customerId: null,
    customerName: null,
    renewal: false,
    refunded: true,
    isFreeTrial: false,
  };
}
