import { describe, expect, it } from 'vitest';
import { WebhookSignatureError } from '../../src/modules/integrations/adapters/adapter.ts';
import { shopifyAdapter } from '../../src/modules/integrations/adapters/shopify.ts';
import { shopifySignature } from '../helpers/provider-webhooks.ts';

// Shopify's webhooks as documented: X-Shopify-Topic, X-Shopify-Webhook-Id and
// X-Shopify-Hmac-Sha256 (base64 HMAC-SHA256 of the raw body with the app's or store's secret);
// order and refund payloads from its REST Admin API reference.

const SECRET = 'shpss_secret_0123456789abcdef';

function headers(body: string, topic: string, id: string, secret = SECRET): Record<string, string> {
  return {
    'x-shopify-topic': topic,
    'x-shopify-webhook-id': id,
    'x-shopify-shop-domain': 'example.myshopify.com',
    'x-shopify-hmac-sha256': shopifySignature(body, secret),
  };
}

const order = {
  id: 5678901234567,
  email: 'jon@example.com',
  created_at: '2026-05-01T12:00:00-04:00',
  processed_at: '2026-05-01T12:00:05-04:00',
  currency: 'CAD',
  total_price: '403.00',
  financial_status: 'paid',
  note_attributes: [
    { name: 'datafast_visitor_id', value: 'visitor-shop-1' },
    { name: 'datafast_session_id', value: 'session-shop-1' },
    { name: 'gift_wrap', value: 'yes' },
  ],
  customer: { id: 115310627314723950, email: 'jon@example.com', first_name: 'Jon', last_name: 'Snow' },
};

describe('Shopify adapter', () => {
  const adapter = shopifyAdapter();

  it("keeps the shop's conversion (shop_money) of what the customer paid (presentment_money)", () => {
    // A shop in CAD; the customer paid 250.00 EUR, which the shop counts as 403.00 CAD.
    const multiCurrency = {
      ...order,
      presentment_currency: 'EUR',
      total_price_set: { shop_money: { amount: '403.00', currency_code: 'CAD' }, presentment_money: { amount: '250.00', currency_code: 'EUR' } },
    };
    const body = JSON.stringify(multiCurrency);
    expect(adapter.parseWebhook(Buffer.from(body), headers(body, 'orders/paid', 'w-multi'), SECRET).payments).toMatchObject([
      { transactionId: '5678901234567', amount: 250, currency: 'EUR', converted: { amountMinor: 40300, currency: 'CAD' } },
    ]);
    // Paid in the shop's own currency: nothing was converted.
    const same = { ...order, total_price_set: { shop_money: { amount: '403.00', currency_code: 'CAD' }, presentment_money: { amount: '403.00', currency_code: 'CAD' } } };
    const sameBody = JSON.stringify(same);
    const [payment] = adapter.parseWebhook(Buffer.from(sameBody), headers(sameBody, 'orders/paid', 'w-same'), SECRET).payments;
    expect(payment).toMatchObject({ amount: 403, currency: 'CAD' });
    expect(payment?.converted).toBeUndefined();
  });

  it('connects by webhook only', () => {
    expect(adapter.connection).toBe('webhook-only');
    expect('verifyCredential' in adapter).toBe(false);
  });

  it('maps orders/paid with cart attributes to an attributed payment', () => {
    const body = JSON.stringify(order);
    expect(adapter.parseWebhook(Buffer.from(body), headers(body, 'orders/paid', 'b54557e4-bdd9-4b37-8a5f-bf7d70bcd043'), SECRET)).toEqual({
      eventId: 'b54557e4-bdd9-4b37-8a5f-bf7d70bcd043',
      eventType: 'orders/paid',
      payments: [
        {
          transactionId: '5678901234567',
          amount: 403,
          currency: 'CAD',
          occurredAt: new Date('2026-05-01T16:00:05Z'),
          visitorId: 'visitor-shop-1',
          sessionId: 'session-shop-1',
          email: 'jon@example.com',
          customerId: '115310627314723950',
          customerName: 'Jon Snow',
          renewal: false,
          refunded: false,
          isFreeTrial: false,
        },
      ],
    });
  });

  it('maps refunds/create to a refund of its order, summing the successful refund transactions', () => {
    const refund = {
      id: 929361462,
      order_id: 5678901234567,
      created_at: '2026-05-03T10:00:00-04:00',
      processed_at: '2026-05-03T10:00:00-04:00',
      transactions: [
        { id: 1, kind: 'refund', status: 'success', amount: '400.00', currency: 'CAD' },
        { id: 2, kind: 'refund', status: 'success', amount: '3.00', currency: 'CAD' },
        { id: 3, kind: 'refund', status: 'failure', amount: '50.00', currency: 'CAD' },
      ],
    };
    const body = JSON.stringify(refund);
    expect(adapter.parseWebhook(Buffer.from(body), headers(body, 'refunds/create', 'w-2'), SECRET).payments).toMatchObject([
      { transactionId: '5678901234567', amount: 403, currency: 'CAD', refunded: true, occurredAt: new Date('2026-05-03T14:00:00Z') },
    ]);
  });

  it('ignores other topics', () => {
    const body = JSON.stringify({ id: 1 });
    expect(adapter.parseWebhook(Buffer.from(body), headers(body, 'products/update', 'w-3'), SECRET)).toEqual({ eventId: 'w-3', eventType: 'products/update', payments: [] });
  });

  it("names the event by X-Shopify-Event-Id, which a redelivery keeps, else by the delivery's webhook id", () => {
    const body = JSON.stringify(order);
    const first = { ...headers(body, 'orders/paid', 'delivery-1'), 'x-shopify-event-id': 'event-1' };
    const again = { ...headers(body, 'orders/paid', 'delivery-2'), 'x-shopify-event-id': 'event-1' };
    expect(adapter.parseWebhook(Buffer.from(body), first, SECRET).eventId).toBe('event-1');
    expect(adapter.parseWebhook(Buffer.from(body), again, SECRET).eventId).toBe('event-1');
    expect(adapter.parseWebhook(Buffer.from(body), headers(body, 'orders/paid', 'delivery-3'), SECRET).eventId).toBe('delivery-3');
  });

  it('rejects a forged, a missing and a tampered signature', () => {
    const body = JSON.stringify(order);
    expect(() => adapter.parseWebhook(Buffer.from(body), headers(body, 'orders/paid', 'w-4', 'shpss_other'), SECRET)).toThrow(WebhookSignatureError);
    const { 'x-shopify-hmac-sha256': _signature, ...unsigned } = headers(body, 'orders/paid', 'w-4');
    expect(() => adapter.parseWebhook(Buffer.from(body), unsigned, SECRET)).toThrow(WebhookSignatureError);
    expect(() => adapter.parseWebhook(Buffer.from(body.replace('403.00', '4.00')), headers(body, 'orders/paid', 'w-4'), SECRET)).toThrow(WebhookSignatureError);
  });
});
