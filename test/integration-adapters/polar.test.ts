import { afterEach, describe, expect, it } from 'vitest';
import { WebhookSignatureError } from '../../src/modules/integrations/adapters/adapter.ts';
import { polarAdapter } from '../../src/modules/integrations/adapters/polar.ts';
import { standardWebhookHeaders as signed } from '../helpers/provider-webhooks.ts';
import { type FakeProvider, type RecordedRequest, deadBaseUrl, expectProviderError, startFakeProvider } from './fake-provider.ts';

// Polar's API as documented: GET /v1/organizations/:id and /v1/orders/?organization_id=&page=
// &limit= answering { items, pagination: { total_count, max_page } }; 401 invalid_token and 403
// insufficient_scope; webhooks by Standard Webhooks (webhook-id, webhook-timestamp,
// webhook-signature "v1,<base64 HMAC-SHA256 of '<id>.<ts>.<body>'>").

const GOOD = 'polar_oat_GoodTokenAbcdefghijklmnopqrstuvwxyz';
const REVOKED = 'polar_oat_RevokedTokenAbcdefghijklmnopqrstu';
const NARROW = 'polar_oat_NarrowTokenAbcdefghijklmnopqrstuv';
const ORG = '1dbfc517-0bbf-4301-9ba8-555ca42b9737';
const SECRET = 'polar_whs_signing_secret';

function order(id: string, createdAt: string, overrides: Record<string, unknown> = {}) {
  return {
    id,
    created_at: createdAt,
    modified_at: null,
    status: 'paid',
    paid: true,
    subtotal_amount: 2000,
    discount_amount: 0,
    net_amount: 2000,
    tax_amount: 400,
    total_amount: 2400,
    currency: 'usd',
    billing_reason: 'purchase',
    billing_name: 'Ana Buyer',
    customer_id: 'cust_1',
    product_id: 'prod_1',
    subscription_id: null,
    checkout_id: 'chk_1',
    metadata: { datafast_visitor_id: `visitor-${id}`, datafast_session_id: `session-${id}` },
    customer: { id: 'cust_1', email: 'ana@example.com', name: 'Ana Buyer' },
    ...overrides,
  };
}

function route(request: RecordedRequest) {
  const token = request.authorization?.replace(/^Bearer /, '');
  if (token === REVOKED) return { status: 401, body: { error: 'invalid_token', error_description: 'The access token provided is expired, revoked, malformed, or invalid for other reasons.' } };
  if (request.path === `/v1/organizations/${ORG}`) return { status: 200, body: { id: ORG, name: 'Ana Labs', slug: 'ana-labs', default_presentment_currency: 'eur' } };
  if (token === NARROW) return { status: 403, body: { error: 'insufficient_scope', error_description: 'The token lacks the orders:read scope.' } };
  if (request.path === '/v1/orders/') {
    const page = Number(request.query.get('page'));
    const pages = [
      [order('o1', '2026-05-03T00:00:00Z'), order('o2', '2026-05-02T00:00:00Z', { billing_reason: 'subscription_cycle' })],
      [order('o3', '2026-05-01T00:00:00Z', { status: 'refunded' }), order('o4', '2026-04-01T00:00:00Z', { status: 'pending', paid: false })],
      [order('o5', '2026-03-01T00:00:00Z'), order('o6', '2025-01-01T00:00:00Z')],
      [order('o7', '2024-01-01T00:00:00Z')],
    ];
    return { status: 200, body: { items: pages[page - 1] ?? [], pagination: { total_count: 7, max_page: 4 } } };
  }
  return null;
}

let fake: FakeProvider;
afterEach(async () => fake?.close());

describe('Polar adapter: verifying a token', () => {
  it("answers the organization's name and currency", async () => {
    fake = await startFakeProvider(route);
    const adapter = polarAdapter({ baseUrl: fake.baseUrl });
    await expect(adapter.verifyCredential({ providerThreeAccessToken: GOOD, providerThreeOrgId: ORG })).resolves.toEqual({ accountName: 'Ana Labs', currency: 'EUR' });
  });

  it('calls a rejected token revoked, without the token', async () => {
    fake = await startFakeProvider(route);
    const credentials = { providerThreeAccessToken: REVOKED, providerThreeOrgId: ORG };
    const error = await expectProviderError(polarAdapter({ baseUrl: fake.baseUrl }).verifyCredential(credentials), 'revoked', credentials);
    expect(error.message).toMatch(/^the key was rejected \(401\): The access token provided is expired, revoked/);
  });

  it('calls a token without orders:read forbidden', async () => {
    fake = await startFakeProvider(route);
    const credentials = { providerThreeAccessToken: NARROW, providerThreeOrgId: ORG };
    const error = await expectProviderError(polarAdapter({ baseUrl: fake.baseUrl }).verifyCredential(credentials), 'forbidden', credentials);
    expect(error.message).toBe('the key lacks a permission (403): The token lacks the orders:read scope.');
  });

  it('calls a server that does not answer unreachable', async () => {
    const credentials = { providerThreeAccessToken: GOOD, providerThreeOrgId: ORG };
    await expectProviderError(polarAdapter({ baseUrl: await deadBaseUrl() }).verifyCredential(credentials), 'unreachable', credentials);
  });
});

describe('Polar adapter: history', () => {
  it('reads orders newest first over three pages and stops at the first one before `since`', async () => {
    fake = await startFakeProvider(route);
    const adapter = polarAdapter({ baseUrl: fake.baseUrl });
    const credentials = { providerThreeAccessToken: GOOD, providerThreeOrgId: ORG };
    const since = new Date('2026-01-01T00:00:00Z');
    const pages: string[][] = [];
    let cursor: string | null = null;
    do {
      const page = await adapter.listPayments(credentials, since, cursor);
      pages.push(page.payments.map((p) => `${p.transactionId}${p.renewal ? ' renewal' : ''}${p.refunded ? ' refunded' : ''}`));
      cursor = page.nextCursor;
    } while (cursor !== null);
    expect(pages).toEqual([['o1', 'o2 renewal'], ['o3 refunded'], ['o5']]);
    expect(fake.requests.map((r) => r.query.get('page'))).toEqual(['1', '2', '3']); // page 4 is never read
    expect(fake.requests[0]?.query.get('organization_id')).toBe(ORG);
  });
});

describe('Polar adapter: webhooks', () => {
  const adapter = polarAdapter();
  const now = new Date('2026-06-01T12:00:00Z');
  const ts = Math.floor(now.getTime() / 1000);

  it('maps order.paid to an attributed payment, and order.refunded to a refund', () => {
    const paid = JSON.stringify({ type: 'order.paid', timestamp: now.toISOString(), data: order('o9', '2026-06-01T11:59:00Z') });
    expect(adapter.parseWebhook(Buffer.from(paid), signed(paid, SECRET, 'msg_1', ts), SECRET, now)).toEqual({
      eventId: 'msg_1',
      eventType: 'order.paid',
      payments: [
        {
          transactionId: 'o9',
          amount: 24,
          currency: 'USD',
          occurredAt: new Date('2026-06-01T11:59:00Z'),
          visitorId: 'visitor-o9',
          sessionId: 'session-o9',
          email: 'ana@example.com',
          customerId: 'cust_1',
          customerName: 'Ana Buyer',
          renewal: false,
          refunded: false,
          isFreeTrial: false,
        },
      ],
    });
    const refunded = JSON.stringify({ type: 'order.refunded', data: order('o9', '2026-06-01T11:59:00Z', { status: 'refunded' }) });
    expect(adapter.parseWebhook(Buffer.from(refunded), signed(refunded, SECRET, 'msg_2', ts), SECRET, now).payments).toMatchObject([{ transactionId: 'o9', refunded: true }]);
    const partial = JSON.stringify({ type: 'order.refunded', data: order('o9', '2026-06-01T11:59:00Z', { status: 'partially_refunded' }) });
    expect(adapter.parseWebhook(Buffer.from(partial), signed(partial, SECRET, 'msg_3', ts), SECRET, now).payments).toEqual([]);
  });

  it('accepts any of several signatures sent while a secret rotates', () => {
    const body = JSON.stringify({ type: 'checkout.created', data: {} });
    const headers = signed(body, SECRET, 'msg_4', ts);
    headers['webhook-signature'] = `v1,bm90LXRoaXMtb25l ${headers['webhook-signature']}`;
    expect(adapter.parseWebhook(Buffer.from(body), headers, SECRET, now)).toEqual({ eventId: 'msg_4', eventType: 'checkout.created', payments: [] });
  });

  it('rejects a forged signature, missing headers and an old timestamp', () => {
    const body = JSON.stringify({ type: 'order.paid', data: order('o10', '2026-06-01T11:59:00Z') });
    expect(() => adapter.parseWebhook(Buffer.from(body), signed(body, 'another-secret', 'msg_5', ts), SECRET, now)).toThrow(WebhookSignatureError);
    expect(() => adapter.parseWebhook(Buffer.from(body), {}, SECRET, now)).toThrow(WebhookSignatureError);
    expect(() => adapter.parseWebhook(Buffer.from(body), signed(body, SECRET, 'msg_5', ts - 3600), SECRET, now)).toThrow(/replay/);
  });
});
