import type { RecordedRequest, Route } from '../integration-adapters/fake-provider.ts';

// A Stripe account with a payment history, for the integration job suites: three pages of
// Checkout Sessions (2, 2, 1 paid checkouts, each with its visitor in the metadata), then one
// page of invoices with one renewal: six payments. A key that Stripe refuses, and one for which
// Stripe keeps failing. A test may hold any answer back (`hold`) to see a job under way, or to
// kill the instance waiting for it.

export const GOOD_KEY = 'rk_test_51JobsGoodKeyAbcdefghijklmn';
export const REVOKED_KEY = 'rk_test_51JobsRevokedKeyAbcdefgh';
export const DOWN_KEY = 'rk_test_51JobsDownKeyAbcdefghijklm';

export const HISTORY_PAYMENTS = 6;
export const HISTORY_PAGES = 4;

const CREATED = Math.floor(Date.now() / 1000) - 30 * 86_400;
const list = (data: unknown[], hasMore: boolean, url: string) => ({ status: 200, body: { object: 'list', data, has_more: hasMore, url } });

function session(n: number) {
  return {
    id: `cs_${n}`,
    object: 'checkout.session',
    mode: 'payment',
    status: 'complete',
    payment_status: 'paid',
    amount_total: 1000 * n,
    currency: 'eur',
    created: CREATED + n,
    payment_intent: `pi_${n}`,
    invoice: null,
    customer: `cus_${n}`,
    customer_details: { email: `buyer${n}@example.com`, name: `Buyer ${n}` },
    metadata: { datafast_visitor_id: `visitor-${n}`, datafast_session_id: `session-${n}` },
  };
}

const renewal = {
  id: 'in_renew',
  object: 'invoice',
  status: 'paid',
  billing_reason: 'subscription_cycle',
  amount_paid: 1500,
  currency: 'eur',
  created: CREATED + 100,
  status_transitions: { paid_at: CREATED + 100 },
  customer: 'cus_1',
  customer_email: 'buyer1@example.com',
  customer_name: 'Buyer 1',
  parent: { type: 'subscription_details', subscription_details: { subscription: 'sub_1', metadata: { datafast_visitor_id: 'visitor-1' } } },
};

/** Each page of sessions by the id it starts after ('' for the first). */
const SESSION_PAGES: Record<string, { data: number[]; more: boolean }> = {
  '': { data: [1, 2], more: true },
  cs_2: { data: [3, 4], more: true },
  cs_4: { data: [5], more: false },
};

/** A page read of the history (not the one-item probes of the credential check), as "path?starting_after". */
export function historyPageRead(request: RecordedRequest): string | null {
  if (request.path === '/v1/account' || request.query.get('limit') === '1') return null;
  return `${request.path}?${request.query.get('starting_after') ?? ''}`;
}

export interface StripeHistoryControl {
  /** A promise to wait for before answering this request, or null to answer at once. */
  hold: ((request: RecordedRequest) => Promise<void> | null) | null;
}

export function stripeHistory(control: StripeHistoryControl): Route {
  return async (request) => {
    const key = request.authorization?.replace(/^Bearer /, '') ?? '';
    if (key === REVOKED_KEY) return { status: 401, body: { error: { message: `Invalid API Key provided: ${key}`, type: 'invalid_request_error' } } };
    if (key === DOWN_KEY) return { status: 500, body: { error: { message: 'Something went wrong on our end', type: 'api_error' } } };
    if (key !== GOOD_KEY) return { status: 401, body: { error: { message: 'Invalid API Key provided', type: 'invalid_request_error' } } };
    const held = control.hold?.(request);
    if (held) await held;
    if (request.path === '/v1/account') {
      return { status: 200, body: { id: 'acct_1', object: 'account', default_currency: 'eur', settings: { dashboard: { display_name: 'Acme Studio' } } } };
    }
    const probe = request.query.get('limit') === '1';
    if (request.path === '/v1/checkout/sessions') {
      if (probe) return list([], false, request.path);
      const page = SESSION_PAGES[request.query.get('starting_after') ?? ''];
      if (page) return list(page.data.map(session), page.more, request.path);
    }
    if (request.path === '/v1/invoices') return list(probe ? [] : [renewal], false, request.path);
    return null;
  };
}
