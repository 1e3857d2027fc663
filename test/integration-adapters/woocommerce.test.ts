import { describe, expect, it } from 'vitest';
import { WebhookSignatureError } from '../../src/modules/integrations/adapters/adapter.ts';
import { wooCommerceAdapter } from '../../src/modules/integrations/adapters/woocommerce.ts';
import { wooCommerceSignature } from '../helpers/provider-webhooks.ts';

// WooCommerce's webhooks as documented: X-WC-Webhook-Topic, X-WC-Webhook-Delivery-ID and
// X-WC-Webhook-Signature (base64 HMAC-SHA256 of the raw body with the webhook's secret); the
// order payload of its REST API v3.

const SECRET = 'wc-webhook-secret';

function headers(body: string, delivery: string, secret = SECRET) {
  return {
    'x-wc-webhook-source': 'https://shop.example.com/',
    'x-wc-webhook-topic': 'order.updated',
    'x-wc-webhook-resource': 'order',
    'x-wc-webhook-event': 'updated',
    'x-wc-webhook-id': '12',
    'x-wc-webhook-delivery-id': delivery,
    'x-wc-webhook-signature': wooCommerceSignature(body, secret),
  };
}

function order(status: string, meta: { key: string; value: string }[] = []) {
  return {
    id: 727,
    status,
    currency: 'EUR',
    total: '29.35',
    customer_id: 0,
    date_created_gmt: '2026-05-04T09:00:00',
    date_paid_gmt: status === 'pending' ? null : '2026-05-04T09:01:00',
    billing: { first_name: 'John', last_name: 'Doe', email: 'john.doe@example.com' },
    meta_data: [{ id: 1, key: '_datafast_visitor_id', value: 'visitor-woo' }, { id: 2, key: 'datafast_session_id', value: 'session-woo' }, ...meta.map((m, i) => ({ id: 10 + i, ...m }))],
  };
}

describe('WooCommerce adapter', () => {
  const adapter = wooCommerceAdapter();

  it('maps a processing order to an attributed payment of a guest', () => {
    const body = JSON.stringify(order('processing'));
    expect(adapter.parseWebhook(Buffer.from(body), headers(body, 'd-1'), SECRET)).toEqual({
      eventId: 'd-1',
      eventType: 'order.updated',
      payments: [
        {
          transactionId: '727',
          amount: 29.35,
          currency: 'EUR',
          occurredAt: new Date('2026-05-04T09:01:00Z'),
          visitorId: 'visitor-woo',
          sessionId: 'session-woo',
          email: 'john.doe@example.com',
          customerId: null,
          customerName: 'John Doe',
          renewal: false,
          refunded: false,
          isFreeTrial: false,
        },
      ],
    });
  });

  it('maps a refunded order to a refund, a subscription renewal order to a renewal, and a pending order to nothing', () => {
    const refunded = JSON.stringify(order('refunded'));
    expect(adapter.parseWebhook(Buffer.from(refunded), headers(refunded, 'd-2'), SECRET).payments).toMatchObject([{ transactionId: '727', refunded: true }]);
    const renewal = JSON.stringify(order('completed', [{ key: '_subscription_renewal', value: '700' }]));
    expect(adapter.parseWebhook(Buffer.from(renewal), headers(renewal, 'd-3'), SECRET).payments).toMatchObject([{ renewal: true, refunded: false }]);
    const pending = JSON.stringify(order('pending'));
    expect(adapter.parseWebhook(Buffer.from(pending), headers(pending, 'd-4'), SECRET).payments).toEqual([]);
  });

  it("answers the new webhook's test delivery (a form body) with no payment", () => {
    const body = 'webhook_id=12';
    expect(adapter.parseWebhook(Buffer.from(body), headers(body, 'd-5'), SECRET)).toEqual({ eventId: 'd-5', eventType: 'order.updated', payments: [] });
  });

  it('tells the unsigned ping WooCommerce sends when a webhook is saved (WC_Webhook::deliver_ping) from an event', () => {
    expect(adapter.isPing?.(Buffer.from('webhook_id=12'), {})).toBe(true);
    // Signed, it is an event like any other; anything else unsigned is no ping.
    expect(adapter.isPing?.(Buffer.from('webhook_id=12'), headers('webhook_id=12', 'd-6'))).toBe(false);
    expect(adapter.isPing?.(Buffer.from('{"id":12}'), {})).toBe(false);
    expect(adapter.isPing?.(Buffer.from('webhook_id=12&status=paid'), {})).toBe(false);
  });

  it('rejects a forged, a missing and a tampered signature', () => {
    const body = JSON.stringify(order('completed'));
    expect(() => adapter.parseWebhook(Buffer.from(body), headers(body, 'd-6', 'another'), SECRET)).toThrow(WebhookSignatureError);
    const { 'x-wc-webhook-signature': _signature, ...unsigned } = headers(body, 'd-6');
    expect(() => adapter.parseWebhook(Buffer.from(body), unsigned, SECRET)).toThrow(WebhookSignatureError);
    expect(() => adapter.parseWebhook(Buffer.from(body.replace('29.35', '0.35')), headers(body, 'd-6'), SECRET)).toThrow(WebhookSignatureError);
  });
});
