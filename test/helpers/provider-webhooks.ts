import { createHmac, randomUUID } from 'node:crypto';
import Stripe from 'stripe';

// Signed webhook deliveries of the six payment providers, as each documents its payloads and
// signature scheme: the signing primitives (shared with the adapters' unit tests in
// test/integration-adapters/) and, per provider, builders of a checkout or order paid, a
// subscription renewal, a refund of the checkout and a forged delivery, for the receiver's tests.
//
// Every builder takes the event id to send (a redelivery keeps it), the checkout's number (made
// into the provider's id shapes: cs_/pi_ for Stripe, txn_ for Paddle, the number itself for
// Shopify and WooCommerce) and the visitor and e-mail to carry. Times default to now: Stripe,
// Polar and Paddle refuse a signature older than 300 s, and a payment more than an hour ahead.

/** What a provider posts: the exact bytes it signed, and its headers. */
export interface SignedDelivery {
  payload: string;
  headers: Record<string, string>;
}

export interface DeliveryOptions {
  /** The signing secret the owner pasted into Sightline. */
  secret: string;
  /** The provider's id of the event (or delivery): the same id again is a redelivery. */
  eventId: string;
  /** The checkout, order or transaction (a refund names the checkout's). */
  id: number;
  /** Carried as datafast_visitor_id where the provider has checkout metadata; none when null or left out. */
  visitorId?: string | null;
  email?: string | null;
  /** In major units: 49 for a checkout, 19 for a renewal unless given. */
  amount?: number;
  /** ISO-4217, upper case; USD unless given. */
  currency?: string;
  /** When it happened, and when it was signed. */
  at?: Date;
  /**
   * The provider's own conversion of the amount (major units), in its documented field: Lemon
   * Squeezy's total_usd (currency USD), Shopify's shop money, Paddle's payout totals. Stripe's
   * webhooks carry none (the balance transaction is named by id).
   */
  converted?: { amount: number; currency: string };
}

export interface ProviderDeliveries {
  /** Sightline's name, and the hosted service's, both accepted in the receiver's path. */
  provider: string;
  hostedName: string;
  /** Whether the checkout carries the customer's e-mail (Paddle's transaction events name the customer by id only). */
  sendsEmail: boolean;
  checkout(options: DeliveryOptions): SignedDelivery;
  /** Null where the adapter maps no renewal. */
  renewal: ((options: DeliveryOptions) => SignedDelivery) | null;
  /** A full refund of the checkout numbered `id`. */
  refund(options: DeliveryOptions): SignedDelivery;
  /** The checkout, signed with a secret that is not the owner's. */
  forged(options: DeliveryOptions): SignedDelivery;
}

// ---------------------------------------------------------------------------------------------
// Signatures

const hmac = (secret: string | Buffer, ...parts: string[]) => {
  const mac = createHmac('sha256', secret);
  for (const part of parts) mac.update(part, 'utf8');
  return mac;
};

export const epochSeconds = (at: Date = new Date()) => Math.floor(at.getTime() / 1000);

/** Stripe-Signature "t=<ts>,v1=<hex>", made by Stripe's own SDK. */
export function stripeSignatureHeaders(payload: string, secret: string, timestamp = epochSeconds()): Record<string, string> {
  return { 'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp }) };
}

/** Lemon Squeezy's X-Signature: hex HMAC-SHA256 of the body. */
export const lemonSqueezySignature = (payload: string, secret: string) => hmac(secret, payload).digest('hex');

/** Standard Webhooks (Polar): "v1,<base64 HMAC-SHA256 of '<id>.<ts>.<body>'>", the key the secret's UTF-8 bytes. */
export function standardWebhookHeaders(payload: string, secret: string, id: string, timestamp = epochSeconds()): Record<string, string> {
  const signature = hmac(Buffer.from(secret, 'utf8'), `${id}.${timestamp}.${payload}`).digest('base64');
  return { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': `v1,${signature}` };
}

/** Paddle-Signature "ts=<s>;h1=<hex HMAC-SHA256 of '<ts>:<body>'>". */
export const paddleSignature = (payload: string, secret: string, timestamp = epochSeconds()) =>
  `ts=${timestamp};h1=${hmac(secret, `${timestamp}:${payload}`).digest('hex')}`;

/** Shopify's X-Shopify-Hmac-Sha256: base64 HMAC-SHA256 of the body. */
export const shopifySignature = (payload: string, secret: string) => hmac(secret, payload).digest('base64');

/** WooCommerce's X-WC-Webhook-Signature: base64 HMAC-SHA256 of the body. */
export const wooCommerceSignature = (payload: string, secret: string) => hmac(secret, payload).digest('base64');

// ---------------------------------------------------------------------------------------------
// Payloads

/** A secret no owner pasted: what a forger signs with. */
export const FORGER_SECRET = 'whsec_forged_0123456789abcdef';

const CHECKOUT_AMOUNT = 49;
const RENEWAL_AMOUNT = 19;
const minor = (amount: number) => Math.round(amount * 100);
const decimal = (amount: number) => amount.toFixed(2);

function resolve(options: DeliveryOptions, defaultAmount: number) {
  const at = options.at ?? new Date();
  const currency = options.currency ?? 'USD';
  return { ...options, at, currency, lower: currency.toLowerCase(), amount: options.amount ?? defaultAmount, visitorId: options.visitorId ?? null, email: options.email ?? null };
}

const withForged = (deliveries: Omit<ProviderDeliveries, 'forged'>): ProviderDeliveries => ({
  ...deliveries,
  forged: (options) => deliveries.checkout({ ...options, secret: FORGER_SECRET }),
});

const stripe = (() => {
  const sign = (event: object, options: { secret: string; at: Date }): SignedDelivery => {
    const payload = JSON.stringify(event);
    return { payload, headers: { 'content-type': 'application/json; charset=utf-8', ...stripeSignatureHeaders(payload, options.secret, epochSeconds(options.at)) } };
  };
  const event = (id: string, type: string, at: Date, object: object) => ({ id, object: 'event', api_version: '2025-03-31.basil', created: epochSeconds(at), livemode: false, type, data: { object } });
  return withForged({
    provider: 'provider-one',
    hostedName: 'stripe',
    sendsEmail: true,
    checkout(options) {
      const o = resolve(options, CHECKOUT_AMOUNT);
      return sign(
        event(o.eventId, 'checkout.session.completed', o.at, {
          id: `cs_test_${o.id}`,
          object: 'checkout.session',
          mode: 'payment',
          status: 'complete',
          payment_status: 'paid',
          amount_total: minor(o.amount),
          currency: o.lower,
          created: epochSeconds(o.at),
          payment_intent: `pi_${o.id}`,
          invoice: null,
          customer: `cus_${o.id}`,
          customer_details: { email: o.email, name: 'Zoë Bùyer' },
          customer_email: o.email,
          metadata: o.visitorId ? { datafast_visitor_id: o.visitorId } : {},
        }),
        o,
      );
    },
    renewal(options) {
      const o = resolve(options, RENEWAL_AMOUNT);
      return sign(
        event(o.eventId, 'invoice.paid', o.at, {
          id: `in_${o.id}`,
          object: 'invoice',
          status: 'paid',
          billing_reason: 'subscription_cycle',
          amount_paid: minor(o.amount),
          currency: o.lower,
          created: epochSeconds(o.at),
          status_transitions: { paid_at: epochSeconds(o.at) },
          customer: `cus_${o.id}`,
          customer_email: o.email,
          customer_name: 'Zoë Bùyer',
          parent: { type: 'subscription_details', subscription_details: { subscription: `sub_${o.id}`, metadata: o.visitorId ? { datafast_visitor_id: o.visitorId } : {} } },
        }),
        o,
      );
    },
    refund(options) {
      const o = resolve(options, CHECKOUT_AMOUNT);
      const amount = minor(o.amount);
      return sign(
        event(o.eventId, 'charge.refunded', o.at, {
          id: `ch_${o.id}`,
          object: 'charge',
          amount,
          amount_refunded: amount,
          refunded: true,
          currency: o.lower,
          created: epochSeconds(o.at),
          payment_intent: `pi_${o.id}`,
          customer: `cus_${o.id}`,
          billing_details: { email: o.email, name: 'Zoë Bùyer' },
          metadata: {},
        }),
        o,
      );
    },
  });
})();

// Lemon Squeezy's events carry no id, and its signature no timestamp: the adapter names an event
// by its body's digest, so the same options (and `at`) build the same event again, and eventId
// is not sent.
const lemonSqueezy = (() => {
  const sign = (body: object, secret: string, eventName: string): SignedDelivery => {
    const payload = JSON.stringify(body);
    return { payload, headers: { 'content-type': 'application/json', 'x-event-name': eventName, 'x-signature': lemonSqueezySignature(payload, secret) } };
  };
  const meta = (eventName: string, visitorId: string | null) => ({
    event_name: eventName,
    test_mode: false,
    webhook_id: 'a4ed9b16-5dde-4a6a-9e4b-5d3d5a0e8c1f',
    ...(visitorId ? { custom_data: { datafast_visitor_id: visitorId } } : {}),
  });
  const order = (o: ReturnType<typeof resolve>, status: 'paid' | 'refunded') => ({
    type: 'orders',
    id: String(o.id),
    attributes: {
      store_id: 42,
      customer_id: 7000 + o.id,
      identifier: `order-uuid-${o.id}`,
      order_number: o.id,
      user_name: 'Zoë Bùyer',
      user_email: o.email,
      currency: o.currency,
      subtotal: minor(o.amount),
      tax: 0,
      total: minor(o.amount),
      ...(o.converted?.currency === 'USD' ? { total_usd: minor(o.converted.amount) } : o.currency === 'USD' ? { total_usd: minor(o.amount) } : {}),
      status,
      refunded: status === 'refunded',
      created_at: o.at.toISOString(),
      updated_at: o.at.toISOString(),
    },
  });
  return withForged({
    provider: 'provider-two',
    hostedName: 'lemonsqueezy',
    sendsEmail: true,
    checkout(options) {
      const o = resolve(options, CHECKOUT_AMOUNT);
      return sign({ meta: meta('order_created', o.visitorId), data: order(o, 'paid') }, o.secret, 'order_created');
    },
    renewal(options) {
      const o = resolve(options, RENEWAL_AMOUNT);
      const invoice = {
        type: 'subscription-invoices',
        id: String(o.id),
        attributes: {
          store_id: 42,
          subscription_id: 900 + o.id,
          customer_id: 7000 + o.id,
          user_name: 'Zoë Bùyer',
          user_email: o.email,
          billing_reason: 'renewal',
          currency: o.currency,
          status: 'paid',
          total: minor(o.amount),
          created_at: o.at.toISOString(),
          updated_at: o.at.toISOString(),
        },
      };
      return sign({ meta: meta('subscription_payment_success', o.visitorId), data: invoice }, o.secret, 'subscription_payment_success');
    },
    refund(options) {
      const o = resolve(options, CHECKOUT_AMOUNT);
      return sign({ meta: meta('order_refunded', o.visitorId), data: order(o, 'refunded') }, o.secret, 'order_refunded');
    },
  });
})();

const polar = (() => {
  const sign = (body: object, o: { secret: string; eventId: string; at: Date }): SignedDelivery => {
    const payload = JSON.stringify(body);
    return { payload, headers: { 'content-type': 'application/json', ...standardWebhookHeaders(payload, o.secret, o.eventId, epochSeconds(o.at)) } };
  };
  const order = (o: ReturnType<typeof resolve>, status: 'paid' | 'refunded', billingReason: string) => ({
    id: `0b9e6a2c-0000-4000-8000-${String(o.id).padStart(12, '0')}`,
    created_at: o.at.toISOString(),
    modified_at: null,
    status,
    paid: true,
    subtotal_amount: minor(o.amount),
    discount_amount: 0,
    net_amount: minor(o.amount),
    tax_amount: 0,
    total_amount: minor(o.amount),
    refunded_amount: status === 'refunded' ? minor(o.amount) : 0,
    currency: o.lower,
    billing_reason: billingReason,
    billing_name: 'Zoë Bùyer',
    customer_id: `cust_${o.id}`,
    product_id: 'prod_1',
    subscription_id: billingReason === 'purchase' ? null : `sub_${o.id}`,
    checkout_id: `chk_${o.id}`,
    metadata: o.visitorId ? { datafast_visitor_id: o.visitorId } : {},
    customer: { id: `cust_${o.id}`, email: o.email, name: 'Zoë Bùyer' },
  });
  const event = (type: string, o: ReturnType<typeof resolve>, data: object) => ({ type, timestamp: o.at.toISOString(), data });
  return withForged({
    provider: 'provider-three',
    hostedName: 'polar',
    sendsEmail: true,
    checkout(options) {
      const o = resolve(options, CHECKOUT_AMOUNT);
      return sign(event('order.paid', o, order(o, 'paid', 'purchase')), o);
    },
    renewal(options) {
      const o = resolve(options, RENEWAL_AMOUNT);
      return sign(event('order.paid', o, order(o, 'paid', 'subscription_cycle')), o);
    },
    refund(options) {
      const o = resolve(options, CHECKOUT_AMOUNT);
      return sign(event('order.refunded', o, order(o, 'refunded', 'purchase')), o);
    },
  });
})();

// Paddle's transaction events carry customer_id only (no customer object, so no e-mail).
const paddle = (() => {
  const sign = (body: object, o: { secret: string; at: Date }): SignedDelivery => {
    const payload = JSON.stringify(body);
    return { payload, headers: { 'content-type': 'application/json', 'paddle-signature': paddleSignature(payload, o.secret, epochSeconds(o.at)) } };
  };
  const event = (type: string, o: ReturnType<typeof resolve>, data: object) => ({
    event_id: o.eventId,
    event_type: type,
    occurred_at: o.at.toISOString(),
    notification_id: `ntf_${o.eventId}`,
    data,
  });
  const transaction = (o: ReturnType<typeof resolve>, origin: string) => {
    const total = String(minor(o.amount));
    const payout = String(minor(o.converted?.amount ?? o.amount));
    return {
      id: `txn_${o.id}`,
      status: 'completed',
      customer_id: `ctm_${o.id}`,
      address_id: `add_${o.id}`,
      business_id: null,
      custom_data: o.visitorId ? { datafast_visitor_id: o.visitorId } : null,
      currency_code: o.currency,
      origin,
      subscription_id: origin === 'web' ? null : `sub_${o.id}`,
      collection_mode: 'automatic',
      details: {
        tax_rates_used: [],
        totals: { subtotal: total, tax: '0', discount: '0', total, grand_total: total, fee: null, credit: '0', balance: '0', earnings: null, currency_code: o.currency },
        // In the seller's payout currency.
        payout_totals: { subtotal: payout, tax: '0', discount: '0', total: payout, grand_total: payout, fee: '0', credit: '0', balance: '0', earnings: payout, currency_code: o.converted?.currency ?? o.currency },
        line_items: [],
      },
      payments: [],
      created_at: o.at.toISOString(),
      updated_at: o.at.toISOString(),
      billed_at: o.at.toISOString(),
    };
  };
  return withForged({
    provider: 'provider-four',
    hostedName: 'paddle',
    sendsEmail: false,
    checkout(options) {
      const o = resolve(options, CHECKOUT_AMOUNT);
      return sign(event('transaction.completed', o, transaction(o, 'web')), o);
    },
    renewal(options) {
      const o = resolve(options, RENEWAL_AMOUNT);
      return sign(event('transaction.completed', o, transaction(o, 'subscription_recurring')), o);
    },
    refund(options) {
      const o = resolve(options, CHECKOUT_AMOUNT);
      const total = String(minor(o.amount));
      const adjustment = {
        id: `adj_${o.id}`,
        action: 'refund',
        type: 'full',
        transaction_id: `txn_${o.id}`,
        customer_id: `ctm_${o.id}`,
        reason: 'requested by the customer',
        status: 'approved',
        currency_code: o.currency,
        totals: { subtotal: total, tax: '0', total, fee: '0', earnings: '0', currency_code: o.currency },
        created_at: o.at.toISOString(),
        updated_at: o.at.toISOString(),
      };
      return sign(event('adjustment.updated', o, adjustment), o);
    },
  });
})();

// Shopify maps no renewal: orders/paid is every order, a subscription app's included, and the
// adapter cannot tell a renewal from a first order, so `renewal` is null.
const shopify = (() => {
  const sign = (body: object, topic: string, o: { secret: string; eventId: string; at: Date }): SignedDelivery => {
    const payload = JSON.stringify(body);
    return {
      payload,
      headers: {
        'content-type': 'application/json',
        'x-shopify-topic': topic,
        'x-shopify-shop-domain': 'example.myshopify.com',
        'x-shopify-api-version': '2025-01',
        // A redelivery keeps the event id; every delivery has a webhook id of its own.
        'x-shopify-event-id': o.eventId,
        'x-shopify-webhook-id': randomUUID(),
        'x-shopify-triggered-at': o.at.toISOString(),
        'x-shopify-hmac-sha256': shopifySignature(payload, o.secret),
      },
    };
  };
  return withForged({
    provider: 'provider-five',
    hostedName: 'shopify',
    sendsEmail: true,
    checkout(options) {
      const o = resolve(options, CHECKOUT_AMOUNT);
      const order = {
        id: o.id,
        email: o.email,
        created_at: o.at.toISOString(),
        processed_at: o.at.toISOString(),
        // order.currency and total_price are the shop's; total_price_set has both sides.
        currency: o.converted?.currency ?? o.currency,
        total_price: decimal(o.converted?.amount ?? o.amount),
        presentment_currency: o.currency,
        total_price_set: {
          shop_money: { amount: decimal(o.converted?.amount ?? o.amount), currency_code: o.converted?.currency ?? o.currency },
          presentment_money: { amount: decimal(o.amount), currency_code: o.currency },
        },
        financial_status: 'paid',
        note_attributes: o.visitorId ? [{ name: 'datafast_visitor_id', value: o.visitorId }] : [],
        customer: { id: 115310627314723950 + o.id, email: o.email, first_name: 'Zoë', last_name: 'Bùyer' },
      };
      return sign(order, 'orders/paid', o);
    },
    renewal: null,
    refund(options) {
      const o = resolve(options, CHECKOUT_AMOUNT);
      const refund = {
        id: 929361462 + o.id,
        order_id: o.id,
        created_at: o.at.toISOString(),
        processed_at: o.at.toISOString(),
        transactions: [{ id: 1, kind: 'refund', status: 'success', amount: decimal(o.amount), currency: o.currency }],
      };
      return sign(refund, 'refunds/create', o);
    },
  });
})();

const wooCommerce = (() => {
  const sign = (body: object, o: { secret: string; eventId: string }): SignedDelivery => {
    const payload = JSON.stringify(body);
    return {
      payload,
      headers: {
        'content-type': 'application/json',
        'x-wc-webhook-source': 'https://shop.example.com/',
        'x-wc-webhook-topic': 'order.updated',
        'x-wc-webhook-resource': 'order',
        'x-wc-webhook-event': 'updated',
        'x-wc-webhook-id': '12',
        'x-wc-webhook-delivery-id': o.eventId,
        'x-wc-webhook-signature': wooCommerceSignature(payload, o.secret),
      },
    };
  };
  const gmt = (at: Date) => at.toISOString().slice(0, 19); // WooCommerce's *_gmt: no zone
  const order = (o: ReturnType<typeof resolve>, status: string, meta: { key: string; value: string }[] = []) => ({
    id: o.id,
    status,
    currency: o.currency,
    total: decimal(o.amount),
    customer_id: 0,
    date_created_gmt: gmt(o.at),
    date_paid_gmt: gmt(o.at),
    billing: { first_name: 'Zoë', last_name: 'Bùyer', email: o.email ?? '' },
    meta_data: [...(o.visitorId ? [{ key: '_datafast_visitor_id', value: o.visitorId }] : []), ...meta].map((entry, i) => ({ id: i + 1, ...entry })),
  });
  return withForged({
    provider: 'provider-six',
    hostedName: 'woocommerce',
    sendsEmail: true,
    checkout(options) {
      const o = resolve(options, CHECKOUT_AMOUNT);
      return sign(order(o, 'processing'), o);
    },
    renewal(options) {
      // WooCommerce Subscriptions' renewal order: an order of its own, marked with its subscription.
      const o = resolve(options, RENEWAL_AMOUNT);
      return sign(order(o, 'processing', [{ key: '_subscription_renewal', value: String(o.id - 1) }]), o);
    },
    refund(options) {
      const o = resolve(options, CHECKOUT_AMOUNT);
      return sign(order(o, 'refunded'), o);
    },
  });
})();

/** The six providers, in Sightline's order. */
export const PROVIDER_DELIVERIES: readonly ProviderDeliveries[] = [stripe, lemonSqueezy, polar, paddle, shopify, wooCommerce];

export function deliveriesOf(provider: string): ProviderDeliveries {
  const found = PROVIDER_DELIVERIES.find((d) => d.provider === provider || d.hostedName === provider);
  if (!found) throw new Error(`no deliveries for ${provider}`);
  return found;
}
