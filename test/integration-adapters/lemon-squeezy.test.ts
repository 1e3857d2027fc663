import { afterEach, describe, expect, it } from 'vitest';
import { WebhookSignatureError } from '../../src/modules/integrations/adapters/adapter.ts';
import { lemonSqueezyAdapter } from '../../src/modules/integrations/adapters/lemon-squeezy.ts';
import { lemonSqueezySignature } from '../helpers/provider-webhooks.ts';
import { type FakeProvider, type RecordedRequest, deadBaseUrl, expectProviderError, startFakeProvider } from './fake-provider.ts';

// Lemon Squeezy's JSON:API as documented: GET /v1/stores/:id and /v1/orders?filter[store_id]=
// &page[number]=&page[size]=, errors as { errors: [{ status, title, detail }] }, webhooks signed
// with X-Signature = hex HMAC-SHA256 of the body, custom checkout data in meta.custom_data.

const GOOD = 'eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9.good-key-payload.signature';
const REVOKED = 'eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9.revoked-key.signature';
const FOREIGN_STORE = '999';
const SECRET = 'ls-signing-secret';

function order(id: string, createdAt: string, status = 'paid') {
  return {
    type: 'orders',
    id,
    attributes: {
      store_id: 42,
      customer_id: 7,
      identifier: `uuid-${id}`,
      order_number: Number(id),
      user_name: 'Darlene Example',
      user_email: 'darlene@example.com',
      currency: 'USD',
      subtotal: 999,
      tax: 200,
      total: 1199,
      status,
      refunded: status === 'refunded',
      created_at: createdAt,
      updated_at: createdAt,
    },
  };
}

/** A store selling in EUR: each order carries its total in USD cents too (total_usd). */
function euroRoute(request: RecordedRequest) {
  if (request.path !== '/v1/orders') return null;
  const euros = (id: string, total: number, totalUsd: number) => {
    const base = order(id, '2026-05-01T10:00:00.000000Z');
    return { ...base, attributes: { ...base.attributes, currency: 'EUR', total, total_usd: totalUsd, currency_rate: '1.0900000' } };
  };
  return { status: 200, body: { meta: { page: { currentPage: 1, lastPage: 1, perPage: 100, total: 2 } }, data: [euros('11', 1200, 1308), order('12', '2026-05-01T11:00:00.000000Z')] } };
}

function route(request: RecordedRequest) {
  const key = request.authorization?.replace(/^Bearer /, '');
  if (key === REVOKED) return { status: 401, body: { jsonapi: { version: '1.0' }, errors: [{ detail: 'Unauthenticated.', status: '401', title: 'Unauthorized' }] } };
  if (request.path === `/v1/stores/${FOREIGN_STORE}`) return { status: 403, body: { errors: [{ detail: 'This action is unauthorized.', status: '403', title: 'Forbidden' }] } };
  if (request.path === '/v1/stores/42') return { status: 200, body: { data: { type: 'stores', id: '42', attributes: { name: 'Darlene Goods', currency: 'usd' } } } };
  if (request.path === '/v1/orders') {
    const page = Number(request.query.get('page[number]'));
    const pages = [
      [order('1', '2026-05-01T10:00:00.000000Z'), order('2', '2026-04-01T10:00:00.000000Z', 'pending')],
      [order('3', '2026-03-01T10:00:00.000000Z', 'refunded'), order('4', '2026-02-01T10:00:00.000000Z')],
      [order('5', '2025-01-01T10:00:00.000000Z')],
    ];
    return { status: 200, body: { meta: { page: { currentPage: page, lastPage: 3, perPage: 100, total: 5 } }, data: pages[page - 1] ?? [] } };
  }
  return null;
}

let fake: FakeProvider;
afterEach(async () => fake?.close());

describe('Lemon Squeezy adapter: verifying a key', () => {
  it("answers the store's name and currency", async () => {
    fake = await startFakeProvider(route);
    const adapter = lemonSqueezyAdapter({ baseUrl: fake.baseUrl });
    await expect(adapter.verifyCredential({ providerTwoApiKey: GOOD, providerTwoStoreId: '42' })).resolves.toEqual({ accountName: 'Darlene Goods', currency: 'USD' });
    expect(fake.requests[0]?.authorization).toBe(`Bearer ${GOOD}`);
  });

  it('calls a rejected key revoked, without the key', async () => {
    fake = await startFakeProvider(route);
    const credentials = { providerTwoApiKey: REVOKED, providerTwoStoreId: '42' };
    const error = await expectProviderError(lemonSqueezyAdapter({ baseUrl: fake.baseUrl }).verifyCredential(credentials), 'revoked', credentials);
    expect(error.message).toBe('the key was rejected (401): Unauthenticated.');
  });

  it("calls a key that may not read the store forbidden", async () => {
    fake = await startFakeProvider(route);
    const credentials = { providerTwoApiKey: GOOD, providerTwoStoreId: FOREIGN_STORE };
    const error = await expectProviderError(lemonSqueezyAdapter({ baseUrl: fake.baseUrl }).verifyCredential(credentials), 'forbidden', credentials);
    expect(error.message).toBe('the key lacks a permission (403): This action is unauthorized.');
  });

  it('calls a server that does not answer unreachable', async () => {
    const credentials = { providerTwoApiKey: GOOD, providerTwoStoreId: '42' };
    await expectProviderError(lemonSqueezyAdapter({ baseUrl: await deadBaseUrl() }).verifyCredential(credentials), 'unreachable', credentials);
  });
});

describe('Lemon Squeezy adapter: history', () => {
  it("reads the store's paid and refunded orders since a date over three pages", async () => {
    fake = await startFakeProvider(route);
    const adapter = lemonSqueezyAdapter({ baseUrl: fake.baseUrl });
    const credentials = { providerTwoApiKey: GOOD, providerTwoStoreId: '42' };
    const since = new Date('2026-01-01T00:00:00Z');
    const seen: string[][] = [];
    let cursor: string | null = null;
    do {
      const page = await adapter.listPayments(credentials, since, cursor);
      seen.push(page.payments.map((p) => `${p.transactionId}${p.refunded ? ' refunded' : ''}`));
      cursor = page.nextCursor;
    } while (cursor !== null);
    expect(seen).toEqual([['order:1'], ['order:3 refunded', 'order:4'], []]); // order 5 is before `since`
    expect(fake.requests.map((r) => [r.query.get('filter[store_id]'), r.query.get('page[number]')])).toEqual([
      ['42', '1'],
      ['42', '2'],
      ['42', '3'],
    ]);
  });
});

const sign = (body: string, secret = SECRET) => ({ 'x-signature': lemonSqueezySignature(body, secret), 'x-event-name': 'order_created' });

describe('Lemon Squeezy adapter: webhooks', () => {
  const adapter = lemonSqueezyAdapter();

  it('maps order_created with custom data to an attributed payment, and a renewal invoice', () => {
    const body = JSON.stringify({ meta: { event_name: 'order_created', custom_data: { datafast_visitor_id: 'v-1', datafast_session_id: 's-1' } }, data: order('77', '2026-05-02T10:00:00.000000Z') });
    const parsed = adapter.parseWebhook(Buffer.from(body), sign(body), SECRET);
    expect(parsed.eventId).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(parsed.payments).toEqual([
      {
        transactionId: 'order:77',
        amount: 11.99,
        currency: 'USD',
        occurredAt: new Date('2026-05-02T10:00:00Z'),
        visitorId: 'v-1',
        sessionId: 's-1',
        email: 'darlene@example.com',
        customerId: '7',
        customerName: 'Darlene Example',
        renewal: false,
        refunded: false,
        isFreeTrial: false,
      },
    ]);
    const renewal = JSON.stringify({
      meta: { event_name: 'subscription_payment_success', custom_data: { datafast_visitor_id: 'v-1' } },
      data: { type: 'subscription-invoices', id: '501', attributes: { billing_reason: 'renewal', status: 'paid', currency: 'EUR', total: 900, created_at: '2026-06-02T10:00:00.000000Z', user_email: 'darlene@example.com', user_name: 'Darlene Example', customer_id: 7 } },
    });
    expect(adapter.parseWebhook(Buffer.from(renewal), sign(renewal), SECRET).payments).toMatchObject([{ transactionId: 'subscription-invoice:501', amount: 9, currency: 'EUR', renewal: true, visitorId: 'v-1' }]);
  });

  it('names a redelivered event the same, and ignores an event that is no payment', () => {
    const body = JSON.stringify({ meta: { event_name: 'subscription_updated' }, data: { type: 'subscriptions', id: '1', attributes: {} } });
    const first = adapter.parseWebhook(Buffer.from(body), sign(body), SECRET);
    expect(first.payments).toEqual([]);
    expect(adapter.parseWebhook(Buffer.from(body), sign(body), SECRET).eventId).toBe(first.eventId);
  });

  it('rejects a forged, a missing and a tampered signature', () => {
    const body = JSON.stringify({ meta: { event_name: 'order_created' }, data: order('78', '2026-05-02T10:00:00.000000Z') });
    expect(() => adapter.parseWebhook(Buffer.from(body), sign(body, 'not-the-secret'), SECRET)).toThrow(WebhookSignatureError);
    expect(() => adapter.parseWebhook(Buffer.from(body), {}, SECRET)).toThrow(WebhookSignatureError);
    expect(() => adapter.parseWebhook(Buffer.from(body.replace('1199', '1')), sign(body), SECRET)).toThrow(WebhookSignatureError);
  });
});

describe("Lemon Squeezy adapter: the provider's conversion", () => {
  it('keeps an order\'s total_usd as its conversion into USD, and none for an order in USD', async () => {
    fake = await startFakeProvider(euroRoute);
    const page = await lemonSqueezyAdapter({ baseUrl: fake.baseUrl }).listPayments({ providerTwoApiKey: GOOD, providerTwoStoreId: '42' }, new Date('2026-01-01T00:00:00Z'), null);
    expect(page.payments).toMatchObject([
      { transactionId: 'order:11', amount: 12, currency: 'EUR', converted: { amountMinor: 1308, currency: 'USD' } },
      { transactionId: 'order:12', amount: 11.99, currency: 'USD' },
    ]);
    expect(page.payments[1]?.converted).toBeUndefined();
  });
});
