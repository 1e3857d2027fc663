import { type ProviderPayment, WebhookSignatureError, type WebhookOnlyAdapter } from './adapter.ts';
import { VISITOR_KEY, SESSION_KEY, asObject, headerValue, instant, joinName, majorFromDecimal, pairsToObject, text, upperCurrency, type Json } from './fields.ts';
import { digestMatches, hmacSha256, requireSecret } from './signatures.ts';

// WooCommerce (provider-six) connects by webhook alone: the owner adds a webhook (topic "Order
// updated", API v3) with the URL and a secret. Signature: X-WC-Webhook-Signature, base64
// HMAC-SHA256 of the raw body. No timestamp is signed; X-WC-Webhook-Delivery-ID names the
// delivery, and the order id keeps a payment recorded once.
//
// What is a payment: an order whose status is processing or completed (paid; both arrive, once
// each, and record one payment), keyed by the order id; status refunded marks it refunded. An
// order made by WooCommerce Subscriptions for a renewal carries the _subscription_renewal meta.
// The visitor is in the order's meta_data under datafast_visitor_id (or _datafast_visitor_id,
// WordPress's spelling for meta hidden from the order screen).

const PAID = new Set(['processing', 'completed']);
/** The check WooCommerce posts, unsigned, when a webhook is saved (WC_Webhook::deliver_ping). */
const PING = /^webhook_id=\d{1,20}$/;

export function wooCommerceAdapter(): WebhookOnlyAdapter {
  return {
    provider: 'provider-six',
    connection: 'webhook-only',

    isPing(rawBody, headers) {
      return headerValue(headers, 'x-wc-webhook-signature') === null && rawBody.length <= 40 && PING.test(rawBody.toString('latin1'));
    },

    parseWebhook(rawBody, headers, secret) {
      const signature = headerValue(headers, 'x-wc-webhook-signature');
      if (signature === null) throw new WebhookSignatureError('the X-WC-Webhook-Signature header is missing');
      if (!digestMatches(hmacSha256(requireSecret(secret), rawBody), signature, 'base64')) {
        throw new WebhookSignatureError('the X-WC-Webhook-Signature does not match the body');
      }
      const eventId = headerValue(headers, 'x-wc-webhook-delivery-id');
      if (eventId === null) throw new WebhookSignatureError('the X-WC-Webhook-Delivery-ID header is missing');
      const topic = headerValue(headers, 'x-wc-webhook-topic') ?? '';
      // The delivery that tests a new webhook is a form body (webhook_id=12), not an order.
      let body: Json | null;
      try {
        body = asObject(JSON.parse(rawBody.toString('utf8')));
      } catch {
        body = null;
      }
      const eventType = topic || 'unknown';
      if (body === null || !topic.startsWith('order.')) return { eventId, eventType, payments: [] };
      const payment = paymentOfOrder(body);
      return { eventId, eventType, payments: payment ? [payment] : [] };
    },
  };
}

function paymentOfOrder(order: Json): ProviderPayment | null {
  const status = text(order.status) ?? '';
  if (!PAID.has(status) && status !== 'refunded') return null;
  const transactionId = text(order.id);
  const currency = upperCurrency(order.currency);
  if (transactionId === null || currency === null) return null;
  const amount = majorFromDecimal(order.total, currency);
  // WooCommerce writes *_gmt times without a zone.
  const paidAt = text(order.date_paid_gmt) ?? text(order.date_created_gmt);
  const occurredAt = paidAt === null ? null : instant(/[zZ]|[+-]\d\d:\d\d$/.test(paidAt) ? paidAt : `${paidAt}Z`);
  if (amount === null || occurredAt === null) return null;
  const meta = pairsToObject(order.meta_data, 'key', 'value');
  const billing = asObject(order.billing);
  const customerId = text(order.customer_id);
  return {
    transactionId,
    amount,
    currency,
    occurredAt,
    visitorId: text(meta[VISITOR_KEY]) ?? text(meta[`_${VISITOR_KEY}`]),
    sessionId: text(meta[SESSION_KEY]) ?? text(meta[`_${SESSION_KEY}`]),
    email: text(billing?.email),
    customerId: customerId === '0' ? null : customerId, // 0 is a guest checkout
    customerName: joinName(billing?.first_name, billing?.last_name),
    renewal: meta._subscription_renewal !== undefined,
    refunded: status === 'refunded',
    isFreeTrial: false,
  };
}
