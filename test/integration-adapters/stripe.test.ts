import { afterEach, describe, expect, it } from 'vitest';
import { WebhookSignatureError, toPaymentInput } from '../../src/modules/integrations/adapters/adapter.ts';
import { stripeAdapter } from '../../src/modules/integrations/adapters/stripe.ts';
import { stripeSignatureHeaders as signed } from '../helpers/provider-webhooks.ts';
import { type FakeProvider, type RecordedRequest, deadBaseUrl, expectProviderError, startFakeProvider } from './fake-provider.ts';

// Stripe's API as its reference documents it: GET /v1/account, /v1/checkout/sessions and
// /v1/invoices with list objects paged by starting_after, errors as { error: { message, type } },
// and webhooks signed "t=<ts>,v1=<hex HMAC-SHA256 of '<ts>.<body>'>".

const GOOD = 'rk_test_51GoodKeyAbcdefghijklmnop';
const REVOKED = 'rk_test_51RevokedKeyAbcdefghijkl';
const NARROW = 'rk_test_51NarrowKeyAbcdefghijklm';
const SECRET = 'whsec_test_secret_value';
const NO_ACCOUNT_READ = 'rk_test_sessions_and_invoices_only';

const keyOf = (request: RecordedRequest) => request.authorization?.replace(/^Bearer /, '') ?? '';
const list = (data: unknown[], hasMore: boolean, url: string) => ({ status: 200, body: { object: 'list', data, has_more: hasMore, url } });

function session(id: string, overrides: Record<string, unknown> = {}) {
  return {
    id,
    object: 'checkout.session',
    mode: 'payment',
    status: 'complete',
    payment_status: 'paid',
    amount_total: 2999,
    currency: 'usd',
    created: 1_780_000_000,
    payment_intent: `pi_${id}`,
    invoice: null,
    customer: `cus_${id}`,
    customer_details: { email: `${id}@example.com`, name: `Customer ${id}` },
    metadata: { datafast_visitor_id: `visitor-${id}`, datafast_session_id: `session-${id}` },
    ...overrides,
  };
}

function invoice(id: string, billingReason: string) {
  return {
    id,
    object: 'invoice',
    status: 'paid',
    billing_reason: billingReason,
    amount_paid: 1500,
    currency: 'eur',
    created: 1_781_000_000,
    status_transitions: { paid_at: 1_781_000_100 },
    customer: 'cus_renew',
    customer_email: 'renew@example.com',
    customer_name: 'Renewing Customer',
    parent: { type: 'subscription_details', subscription_details: { subscription: 'sub_1', metadata: { datafast_visitor_id: 'visitor-renew' } } },
  };
}

function route(request: RecordedRequest) {
  const key = keyOf(request);
  if (key === REVOKED) {
    // Stripe quotes the key back; the adapter must not pass it on.
    return { status: 401, body: { error: { message: `Invalid API Key provided: ${key}`, type: 'invalid_request_error' } } };
  }
  if (request.path === '/v1/account' && key === NO_ACCOUNT_READ) {
    return {
      status: 403,
      body: { error: { message: `The provided key '${key}' does not have the required permissions for this endpoint on account 'acct_1'.`, type: 'invalid_request_error' } },
    };
  }
  if (request.path === '/v1/account') {
    return { status: 200, body: { id: 'acct_1', object: 'account', default_currency: 'eur', settings: { dashboard: { display_name: 'Acme Studio' } }, business_profile: { name: 'Acme' } } };
  }
  if (key === NARROW) {
    return {
      status: 403,
      body: {
        error: {
          message: `The provided key '${key}' does not have the required permissions for this endpoint on account 'acct_1'. Having the 'rak_checkout_session_read' permission would allow this request to continue.`,
          type: 'invalid_request_error',
        },
      },
    };
  }
  if (request.path === '/v1/checkout/sessions') {
    const after = request.query.get('starting_after');
    if (after === null) return list([session('cs_1'), session('cs_2', { payment_status: 'unpaid' })], true, request.path);
    if (after === 'cs_2') return list([session('cs_3', { mode: 'subscription', payment_intent: null, invoice: 'in_first', amount_total: 0, payment_status: 'no_payment_required' })], false, request.path);
  }
  if (request.path === '/v1/invoices') return list([invoice('in_renew', 'subscription_cycle'), invoice('in_first', 'subscription_create')], false, request.path);
  return null;
}

let fake: FakeProvider;
afterEach(async () => fake?.close());

describe('Stripe adapter: verifying a key', () => {
  it('answers the account name and its default currency', async () => {
    fake = await startFakeProvider(route);
    const adapter = stripeAdapter({ baseUrl: fake.baseUrl });
    await expect(adapter.verifyCredential({ providerOneRestrictedKey: GOOD })).resolves.toEqual({ accountName: 'Acme Studio', currency: 'EUR' });
    expect(fake.requests.map((r) => r.path)).toEqual(['/v1/account', '/v1/checkout/sessions', '/v1/invoices']);
    expect(fake.requests[0]?.authorization).toBe(`Bearer ${GOOD}`);
  });

  it('still verifies a restricted key that may not read the account, with no name or currency', async () => {
    fake = await startFakeProvider(route);
    const adapter = stripeAdapter({ baseUrl: fake.baseUrl });
    await expect(adapter.verifyCredential({ providerOneRestrictedKey: NO_ACCOUNT_READ })).resolves.toEqual({ accountName: null, currency: null });
    expect(fake.requests.map((r) => r.path)).toEqual(['/v1/account', '/v1/checkout/sessions', '/v1/invoices']);
  });

  it('calls a rejected key revoked, with what Stripe said and without the key', async () => {
    fake = await startFakeProvider(route);
    const credentials = { providerOneRestrictedKey: REVOKED };
    const error = await expectProviderError(stripeAdapter({ baseUrl: fake.baseUrl }).verifyCredential(credentials), 'revoked', credentials);
    expect(error.message).toBe('the key was rejected (401): Invalid API Key provided: [redacted]');
  });

  it("calls a restricted key that cannot read Checkout Sessions forbidden, naming Stripe's missing permission", async () => {
    fake = await startFakeProvider(route);
    const credentials = { providerOneRestrictedKey: NARROW };
    const error = await expectProviderError(stripeAdapter({ baseUrl: fake.baseUrl }).verifyCredential(credentials), 'forbidden', credentials);
    expect(error.message).toContain('(403)');
    expect(error.message).toContain("Having the 'rak_checkout_session_read' permission");
    expect(error.message).not.toContain('rk_test_');
  });

  it('calls a server that does not answer unreachable', async () => {
    const credentials = { providerOneRestrictedKey: GOOD };
    const error = await expectProviderError(stripeAdapter({ baseUrl: await deadBaseUrl() }).verifyCredential(credentials), 'unreachable', credentials);
    expect(error.message).toMatch(/^the provider could not be reached/);
  });
});

describe('Stripe adapter: history', () => {
  it('reads completed checkouts then renewal invoices over three pages, resuming from each cursor', async () => {
    fake = await startFakeProvider(route);
    const adapter = stripeAdapter({ baseUrl: fake.baseUrl });
    const credentials = { providerOneRestrictedKey: GOOD };
    const since = new Date('2026-01-01T00:00:00Z');

    const first = await adapter.listPayments(credentials, since, null);
    expect(first.payments.map((p) => p.transactionId)).toEqual(['pi_cs_1']); // cs_2 is unpaid
    expect(first.nextCursor).toBe('sessions:cs_2');
    expect(fake.requests[0]?.query.get('created[gte]')).toBe(String(since.getTime() / 1000));
    expect(fake.requests[0]?.query.get('status')).toBe('complete');

    const second = await adapter.listPayments(credentials, since, first.nextCursor);
    expect(fake.requests[1]?.query.get('starting_after')).toBe('cs_2');
    expect(second.payments).toMatchObject([{ transactionId: 'in_first', amount: 0, isFreeTrial: true, renewal: false }]);
    expect(second.nextCursor).toBe('invoices:');

    const third = await adapter.listPayments(credentials, since, second.nextCursor);
    expect(fake.requests[2]?.path).toBe('/v1/invoices');
    expect(third.nextCursor).toBeNull();
    expect(third.payments).toEqual([
      {
        transactionId: 'in_renew',
        amount: 15,
        currency: 'EUR',
        occurredAt: new Date(1_781_000_100 * 1000),
        visitorId: 'visitor-renew',
        sessionId: null,
        email: 'renew@example.com',
        customerId: 'cus_renew',
        customerName: 'Renewing Customer',
        renewal: true,
        refunded: false,
        isFreeTrial: false,
      },
    ]);
  });
});

describe('Stripe adapter: webhooks', () => {
  const adapter = stripeAdapter();
  const now = new Date('2026-06-01T12:00:00Z');
  const ts = Math.floor(now.getTime() / 1000);

  it('maps a signed checkout.session.completed to an attributed payment', () => {
    const body = JSON.stringify({ id: 'evt_1', object: 'event', type: 'checkout.session.completed', data: { object: session('cs_9', { amount_total: 4900, currency: 'jpy' }) } });
    const parsed = adapter.parseWebhook(Buffer.from(body), signed(body, SECRET, ts), SECRET, now);
    expect(parsed.eventId).toBe('evt_1');
    expect(parsed.payments).toHaveLength(1);
    expect(toPaymentInput(parsed.payments[0]!)).toEqual({
      amount: 4900, // JPY has no minor unit
      currency: 'JPY',
      transaction_id: 'pi_cs_9',
      datafast_visitor_id: 'visitor-cs_9',
      email: 'cs_9@example.com',
      customer_id: 'cus_cs_9',
      customer_name: 'Customer cs_9',
      renewal: false,
      refunded: false,
      is_free_trial: false,
      timestamp: new Date(1_780_000_000 * 1000).toISOString(),
    });
  });

  it('maps a full refund to the refunded payment and ignores a partial one', () => {
    const charge = { id: 'ch_1', object: 'charge', amount: 2999, amount_refunded: 2999, refunded: true, currency: 'usd', created: 1_780_000_500, payment_intent: 'pi_cs_1', customer: 'cus_1', billing_details: { email: 'a@example.com', name: 'A' }, metadata: {} };
    const full = JSON.stringify({ id: 'evt_2', type: 'charge.refunded', data: { object: charge } });
    expect(adapter.parseWebhook(Buffer.from(full), signed(full, SECRET, ts), SECRET, now).payments).toMatchObject([{ transactionId: 'pi_cs_1', refunded: true, amount: 29.99 }]);
    const partial = JSON.stringify({ id: 'evt_3', type: 'charge.refunded', data: { object: { ...charge, refunded: false, amount_refunded: 100 } } });
    expect(adapter.parseWebhook(Buffer.from(partial), signed(partial, SECRET, ts), SECRET, now).payments).toEqual([]);
  });

  it('ignores an event type that is no payment', () => {
    const body = JSON.stringify({ id: 'evt_4', type: 'customer.created', data: { object: { id: 'cus_1' } } });
    expect(adapter.parseWebhook(Buffer.from(body), signed(body, SECRET, ts), SECRET, now)).toEqual({ eventId: 'evt_4', eventType: 'customer.created', payments: [] });
  });

  it('rejects a forged signature, a missing one and a replay of an old delivery', () => {
    const body = JSON.stringify({ id: 'evt_5', type: 'checkout.session.completed', data: { object: session('cs_5') } });
    expect(() => adapter.parseWebhook(Buffer.from(body), signed(body, 'whsec_someone_else', ts), SECRET, now)).toThrow(WebhookSignatureError);
    expect(() => adapter.parseWebhook(Buffer.from(body), {}, SECRET, now)).toThrow(WebhookSignatureError);
    expect(() => adapter.parseWebhook(Buffer.from(body), signed(body, SECRET, ts - 600), SECRET, now)).toThrow(WebhookSignatureError);
    const tampered = body.replace('2999', '1');
    expect(() => adapter.parseWebhook(Buffer.from(tampered), signed(body, SECRET, ts), SECRET, now)).toThrow(WebhookSignatureError);
  });
});

describe("Stripe adapter: the provider's conversion", () => {
  const EXPANSION = 'data.payment_intent.latest_charge.balance_transaction';
  const expanded = (request: RecordedRequest) => [...request.query.entries()].some(([name, value]) => name.startsWith('expand') && value === EXPANSION);
  /** A EUR checkout whose charge settled as 43.60 USD, as Stripe answers the expansion. */
  const settled = session('cs_eur', {
    currency: 'eur',
    amount_total: 4000,
    payment_intent: { id: 'pi_eur', object: 'payment_intent', latest_charge: { id: 'ch_eur', object: 'charge', balance_transaction: { id: 'txn_eur', object: 'balance_transaction', amount: 4360, net: 4200, fee: 160, currency: 'usd', exchange_rate: 1.09 } } },
  });

  it('expands the balance transaction of each checkout in the history and keeps its amount and currency', async () => {
    fake = await startFakeProvider((request) => (request.path === '/v1/checkout/sessions' ? (expanded(request) ? list([settled], false, request.path) : list([session('cs_eur')], false, request.path)) : null));
    const page = await stripeAdapter({ baseUrl: fake.baseUrl }).listPayments({ providerOneRestrictedKey: GOOD }, new Date('2026-01-01T00:00:00Z'), null);
    expect(expanded(fake.requests[0]!)).toBe(true);
    expect(page.payments).toMatchObject([{ transactionId: 'pi_eur', amount: 40, currency: 'EUR', converted: { amountMinor: 4360, currency: 'USD' } }]);
  });

  it('lists without the expansion, unconverted, for a restricted key that may not read charges', async () => {
    fake = await startFakeProvider((request) => {
      if (request.path !== '/v1/checkout/sessions') return null;
      if (expanded(request)) return { status: 403, body: { error: { message: "The provided key does not have the required permissions for this endpoint. Having the 'rak_charge_read' permission would allow this request to continue.", type: 'invalid_request_error' } } };
      return list([session('cs_usd')], false, request.path);
    });
    const page = await stripeAdapter({ baseUrl: fake.baseUrl }).listPayments({ providerOneRestrictedKey: GOOD }, new Date('2026-01-01T00:00:00Z'), null);
    expect(fake.requests.map(expanded)).toEqual([true, false]);
    expect(page.payments).toMatchObject([{ transactionId: 'pi_cs_usd', amount: 29.99, currency: 'USD' }]);
    expect(page.payments[0]?.converted).toBeUndefined();
  });
});
