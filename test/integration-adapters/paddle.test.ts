import { afterEach, describe, expect, it } from 'vitest';
import { WebhookSignatureError } from '../../src/modules/integrations/adapters/adapter.ts';
import { paddleAdapter } from '../../src/modules/integrations/adapters/paddle.ts';
import { paddleSignature } from '../helpers/provider-webhooks.ts';
import { type FakeProvider, type RecordedRequest, deadBaseUrl, expectProviderError, startFakeProvider } from './fake-provider.ts';

// Paddle Billing's API as documented: GET /transactions with status, created_at[GTE], include,
// per_page and after; lists as { data, meta: { pagination: { per_page, next, has_more,
// estimated_total } } }; errors as { error: { type, code, detail } } (403 invalid_token for a
// revoked key, 403 forbidden for a missing permission); webhooks signed
// Paddle-Signature "ts=<s>;h1=<hex HMAC-SHA256 of '<ts>:<body>'>".

const GOOD = 'pdl_sdbx_apikey_01good000000000000000000_AbCdEfGhIjKlMnOpQrStUv_AbC';
const REVOKED = 'pdl_sdbx_apikey_01revoked0000000000000000_AbCdEfGhIjKlMnOpQrSt_AbC';
const NARROW = 'pdl_sdbx_apikey_01narrow00000000000000000_AbCdEfGhIjKlMnOpQrStU_AbC';
const SECRET = 'pdl_ntfset_01secret_AbCdEfGhIjKl';

const totals = (total: string) => ({ subtotal: total, tax: '0', discount: '0', total, grand_total: total, fee: null, credit: '0', credit_to_balance: '0', balance: '0', earnings: null });
const details = (total: string) => ({ tax_rates_used: [], totals: totals(total), line_items: [] });

function transaction(id: string, overrides: Record<string, unknown> = {}) {
  return {
    id,
    status: 'completed',
    customer_id: 'ctm_1',
    address_id: 'add_1',
    business_id: null,
    custom_data: { datafast_visitor_id: `visitor-${id}`, datafast_session_id: `session-${id}` },
    currency_code: 'GBP',
    origin: 'web',
    subscription_id: null,
    invoice_id: null,
    invoice_number: null,
    collection_mode: 'automatic',
    discount_id: null,
    billing_details: null,
    billing_period: null,
    items: [],
    details: { tax_rates_used: [], totals: { subtotal: '1000', tax: '200', discount: '0', total: '1200', grand_total: '1200', fee: null, credit: '0', credit_to_balance: '0', balance: '0', earnings: null, currency_code: 'GBP' }, line_items: [] },
    payments: [],
    checkout: { url: null },
    created_at: '2026-05-01T10:00:00.000000Z',
    updated_at: '2026-05-01T10:00:05.000000Z',
    billed_at: '2026-05-01T10:00:04.000000Z',
    customer: { id: 'ctm_1', name: 'Sam Payer', email: 'sam@example.com', marketing_consent: false, status: 'active', custom_data: null, locale: 'en', created_at: '2026-05-01T09:00:00Z', updated_at: '2026-05-01T09:00:00Z', import_meta: null },
    ...overrides,
  };
}

function route(baseUrl: () => string) {
  return (request: RecordedRequest) => {
    const key = request.authorization?.replace(/^bearer /i, '');
    if (key === REVOKED) return { status: 403, body: { error: { type: 'request_error', code: 'invalid_token', detail: 'Invalid or revoked API key.', documentation_url: 'https://developer.paddle.com/errors/shared/invalid_token' }, meta: { request_id: 'r1' } } };
    if (key === NARROW) return { status: 403, body: { error: { type: 'request_error', code: 'forbidden', detail: "You aren't permitted to perform this request.", documentation_url: 'https://developer.paddle.com/errors/shared/forbidden' }, meta: { request_id: 'r2' } } };
    if (request.path !== '/transactions') return null;
    if (request.query.get('per_page') === '1') return { status: 200, body: { data: [transaction('txn_latest')], meta: { request_id: 'r3', pagination: { per_page: 1, next: `${baseUrl()}/transactions?after=txn_latest&per_page=1`, has_more: true, estimated_total: 5 } } } };
    const after = request.query.get('after');
    const pages: Record<string, [unknown[], string | null]> = {
      '': [[transaction('txn_1'), transaction('txn_2', { origin: 'subscription_recurring', subscription_id: 'sub_1' })], 'txn_2'],
      txn_2: [[transaction('txn_3', { currency_code: 'JPY', details: details('5000') }), transaction('txn_4')], 'txn_4'],
      txn_4: [[transaction('txn_5', { details: details('0') })], null],
    };
    const [data, last] = pages[after ?? ''] ?? [[], null];
    const next = `${baseUrl()}/transactions?after=${last ?? 'end'}&per_page=100`;
    return { status: 200, body: { data, meta: { request_id: 'r4', pagination: { per_page: 100, next, has_more: last !== null, estimated_total: 5 } } } };
  };
}

let fake: FakeProvider;
afterEach(async () => fake?.close());

async function start() {
  let base = '';
  fake = await startFakeProvider(route(() => base));
  base = fake.baseUrl;
  return paddleAdapter({ baseUrl: fake.baseUrl });
}

describe('Paddle adapter: verifying a key', () => {
  it("answers the currency of the latest transaction (Paddle's API has no seller name)", async () => {
    const adapter = await start();
    await expect(adapter.verifyCredential({ providerFourApiKey: GOOD })).resolves.toEqual({ accountName: null, currency: 'GBP' });
    expect(fake.requests[0]?.authorization).toBe(`bearer ${GOOD}`);
  });

  it("calls Paddle's invalid_token revoked, without the key", async () => {
    const adapter = await start();
    const credentials = { providerFourApiKey: REVOKED };
    const error = await expectProviderError(adapter.verifyCredential(credentials), 'revoked', credentials);
    expect(error.message).toBe('the key was rejected (403): Invalid or revoked API key. [invalid_token]');
  });

  it('calls a key without transaction.read forbidden', async () => {
    const adapter = await start();
    const credentials = { providerFourApiKey: NARROW };
    const error = await expectProviderError(adapter.verifyCredential(credentials), 'forbidden', credentials);
    expect(error.message).toBe("the key lacks a permission (403): You aren't permitted to perform this request. [forbidden]");
  });

  it('calls a server that does not answer unreachable', async () => {
    const credentials = { providerFourApiKey: GOOD };
    await expectProviderError(paddleAdapter({ baseUrl: await deadBaseUrl() }).verifyCredential(credentials), 'unreachable', credentials);
  });
});

describe('Paddle adapter: history', () => {
  it('reads completed transactions since a date over three pages with the after cursor', async () => {
    const adapter = await start();
    const credentials = { providerFourApiKey: GOOD };
    const since = new Date('2026-01-01T00:00:00Z');
    const first = await adapter.listPayments(credentials, since, null);
    expect(first.payments.map((p) => [p.transactionId, p.renewal])).toEqual([
      ['txn_1', false],
      ['txn_2', true],
    ]);
    expect(first.payments[0]).toEqual({
      transactionId: 'txn_1',
      amount: 12,
      currency: 'GBP',
      occurredAt: new Date('2026-05-01T10:00:04Z'),
      visitorId: 'visitor-txn_1',
      sessionId: 'session-txn_1',
      email: 'sam@example.com',
      customerId: 'ctm_1',
      customerName: 'Sam Payer',
      renewal: false,
      refunded: false,
      isFreeTrial: false,
    });
    expect(first.nextCursor).toBe('txn_2');
    const query = fake.requests[0]!.query;
    expect([query.get('status'), query.get('created_at[GTE]'), query.get('include')]).toEqual(['completed', since.toISOString(), 'customer']);

    const second = await adapter.listPayments(credentials, since, first.nextCursor);
    expect(fake.requests[1]?.query.get('after')).toBe('txn_2');
    expect(second.payments.map((p) => [p.transactionId, p.amount, p.currency])).toEqual([
      ['txn_3', 5000, 'JPY'],
      ['txn_4', 12, 'GBP'],
    ]);
    const third = await adapter.listPayments(credentials, since, second.nextCursor);
    expect(third.payments).toMatchObject([{ transactionId: 'txn_5', amount: 0, isFreeTrial: true }]);
    expect(third.nextCursor).toBeNull();
  });
});

function signed(body: string, secret: string, ts: number) {
  return { 'paddle-signature': paddleSignature(body, secret, ts) };
}

describe('Paddle adapter: webhooks', () => {
  const adapter = paddleAdapter();
  const now = new Date('2026-06-01T12:00:00Z');
  const ts = Math.floor(now.getTime() / 1000);

  it('maps transaction.completed to a payment and a full refund adjustment to its refund', () => {
    const { customer: _customer, ...withoutCustomer } = transaction('txn_9');
    const completed = JSON.stringify({ event_id: 'evt_1', event_type: 'transaction.completed', occurred_at: now.toISOString(), notification_id: 'ntf_1', data: withoutCustomer });
    expect(adapter.parseWebhook(Buffer.from(completed), signed(completed, SECRET, ts), SECRET, now)).toEqual({
      eventId: 'evt_1',
      eventType: 'transaction.completed',
      payments: [expect.objectContaining({ transactionId: 'txn_9', amount: 12, currency: 'GBP', visitorId: 'visitor-txn_9', email: null, customerId: 'ctm_1' })],
    });
    const adjustment = { id: 'adj_1', action: 'refund', type: 'full', transaction_id: 'txn_9', customer_id: 'ctm_1', status: 'approved', currency_code: 'GBP', totals: { subtotal: '1000', tax: '200', total: '1200', fee: '60', earnings: '940', currency_code: 'GBP' }, created_at: '2026-06-01T11:00:00Z', updated_at: '2026-06-01T11:30:00Z' };
    const refund = JSON.stringify({ event_id: 'evt_2', event_type: 'adjustment.updated', data: adjustment });
    expect(adapter.parseWebhook(Buffer.from(refund), signed(refund, SECRET, ts), SECRET, now).payments).toMatchObject([{ transactionId: 'txn_9', amount: 12, refunded: true }]);
    const pending = JSON.stringify({ event_id: 'evt_3', event_type: 'adjustment.created', data: { ...adjustment, status: 'pending_approval' } });
    expect(adapter.parseWebhook(Buffer.from(pending), signed(pending, SECRET, ts), SECRET, now).payments).toEqual([]);
  });

  it('rejects a forged signature, a missing one and one older than five seconds', () => {
    const body = JSON.stringify({ event_id: 'evt_4', event_type: 'transaction.completed', data: transaction('txn_10') });
    expect(() => adapter.parseWebhook(Buffer.from(body), signed(body, 'pdl_ntfset_other', ts), SECRET, now)).toThrow(WebhookSignatureError);
    expect(() => adapter.parseWebhook(Buffer.from(body), {}, SECRET, now)).toThrow(WebhookSignatureError);
    expect(() => adapter.parseWebhook(Buffer.from(body), signed(body, SECRET, ts - 301), SECRET, now)).toThrow(/replay/);
    expect(adapter.parseWebhook(Buffer.from(body), signed(body, SECRET, ts - 299), SECRET, now).eventId).toBe('evt_4');
  });
});

describe("Paddle adapter: the provider's conversion", () => {
  it('keeps details.payout_totals, in the payout currency, as the conversion of a transaction in another', async () => {
    const payout = { subtotal: '1100', tax: '220', discount: '0', total: '1320', grand_total: '1320', fee: '90', credit: '0', credit_to_balance: '0', balance: '0', earnings: '1230', currency_code: 'USD' };
    const inGbp = transaction('txn_payout');
    const converted = { ...inGbp, details: { ...inGbp.details, payout_totals: payout } };
    const sameCurrency = { ...inGbp, id: 'txn_gbp', details: { ...inGbp.details, payout_totals: { ...payout, grand_total: '1200', total: '1200', currency_code: 'GBP' } } };
    fake = await startFakeProvider((request) =>
      request.path === '/transactions' ? { status: 200, body: { data: [converted, sameCurrency], meta: { request_id: 'r5', pagination: { per_page: 100, next: 'x', has_more: false, estimated_total: 2 } } } } : null,
    );
    const page = await paddleAdapter({ baseUrl: fake.baseUrl }).listPayments({ providerFourApiKey: GOOD }, new Date('2026-01-01T00:00:00Z'), null);
    expect(page.payments).toMatchObject([
      { transactionId: 'txn_payout', amount: 12, currency: 'GBP', converted: { amountMinor: 1320, currency: 'USD' } },
      { transactionId: 'txn_gbp', amount: 12, currency: 'GBP' },
    ]);
    expect(page.payments[1]?.converted).toBeUndefined();
  });
});
