import { type AdapterOptions, type ApiAdapter, type ProviderPayment } from './adapter.ts';
import { asObject, attributionFrom, instant, majorFromMinor, requireCredential, text, upperCurrency, type Json } from './fields.ts';
import { getJson } from './http.ts';
import { providerError } from './scrub.ts';
import { verifyStandardWebhook } from './standard-webhooks.ts';

// Polar (provider-three): an organization access token and the organization's id.
//
// Its official SDK (@polar-sh/sdk) is not used. Its releases from 1.0 need Node 22, so this
// server would be held to 0.x, whose responses are checked against that release's complete
// schemas: a field or enum value Polar adds later fails the whole page (SDKValidationError) and
// stops a history import. Its webhook helper (validateEvent) checks the same schemas and reads the
// clock itself. The two reads are done with fetch, and webhooks are verified in
// standard-webhooks.ts, Polar's documented scheme.
//
// What is a payment: order.paid (billing_reason subscription_cycle is a renewal), and
// order.refunded once the order's status is refunded (partially_refunded leaves it counted). The
// transaction id is the order's id; the visitor is in the order's metadata, which Polar copies
// from the checkout's metadata, where the hosted service's guide puts it.

const DEFAULT_BASE_URL = 'https://api.polar.sh';
const PAGE_SIZE = 100;

export function polarAdapter(options: AdapterOptions = {}): ApiAdapter {
  const base = options.baseUrl ?? DEFAULT_BASE_URL;

  return {
    provider: 'provider-three',
    connection: 'api-credential',

    async verifyCredential(credentials) {
      const token = requireCredential(credentials, 'providerThreeAccessToken');
      const organizationId = requireCredential(credentials, 'providerThreeOrgId');
      const organization = asObject(await getJson(new URL(`/v1/organizations/${encodeURIComponent(organizationId)}`, base), token, credentials));
      if (!organization) throw providerError('invalid', null, 'the organization answer is not an object', credentials);
      // The history import reads orders: a token without orders:read fails now, not at re-sync.
      await getJson(ordersUrl(base, organizationId, 1, 1), token, credentials);
      return { accountName: text(organization.name) ?? organizationId, currency: upperCurrency(organization.default_presentment_currency) };
    },

    async listPayments(credentials, since, cursor) {
      const token = requireCredential(credentials, 'providerThreeAccessToken');
      const organizationId = requireCredential(credentials, 'providerThreeOrgId');
      const page = cursor === null ? 1 : Math.max(1, Number.parseInt(cursor, 10) || 1);
      const body = asObject(await getJson(ordersUrl(base, organizationId, page, PAGE_SIZE), token, credentials));
      const items = Array.isArray(body?.items) ? body.items.map(asObject).filter((item) => item !== null) : [];
      const payments: ProviderPayment[] = [];
      let reachedSince = false;
      for (const order of items) {
        const payment = paymentOfOrder(order);
        if (payment === null) continue;
        if (payment.occurredAt < since) reachedSince = true;
        else payments.push(payment);
      }
      const maxPage = Number(asObject(body?.pagination)?.max_page ?? page);
      // Sorted newest first, so the first order older than `since` ends the import.
      const more = !reachedSince && items.length > 0 && page < maxPage;
      return { payments, nextCursor: more ? String(page + 1) : null };
    },

    parseWebhook(rawBody, headers, secret, now = new Date()) {
      const eventId = verifyStandardWebhook(rawBody, headers, secret, now);
      let body: Json | null = null;
      try {
        body = asObject(JSON.parse(rawBody.toString('utf8')));
      } catch {
        return { eventId, eventType: 'unknown', payments: [] };
      }
      const type = text(body?.type);
      const eventType = type ?? 'unknown';
      const order = asObject(body?.data);
      if (order === null || (type !== 'order.paid' && type !== 'order.refunded')) return { eventId, eventType, payments: [] };
      const payment = paymentOfOrder(order);
      if (payment === null || (type === 'order.refunded') !== payment.refunded) return { eventId, eventType, payments: [] };
      return { eventId, eventType, payments: [payment] };
    },
  };
}

function ordersUrl(base: string, organizationId: string, page: number, limit: number): URL {
  const url = new URL('/v1/orders/', base);
  url.searchParams.set('organization_id', organizationId);
  url.searchParams.set('page', String(page));
  url.searchParams.set('limit', String(limit));
  url.searchParams.set('sorting', '-created_at');
  return url;
}

function paymentOfOrder(order: Json): ProviderPayment | null {
  const status = text(order.status);
  if (status !== 'paid' && status !== 'refunded' && status !== 'partially_refunded') return null;
  const id = text(order.id);
  const currency = upperCurrency(order.currency);
  if (id === null || currency === null) return null;
  const amount = majorFromMinor(order.total_amount, currency);
  const occurredAt = instant(order.created_at);
  if (amount === null || occurredAt === null) return null;
  const customer = asObject(order.customer);
  const reason = text(order.billing_reason);
  return {
    transactionId: id,
    amount,
    currency,
    occurredAt,
    ...attributionFrom(order.metadata),
    email: text(customer?.email),
    customerId: text(order.customer_id) ?? text(customer?.id),
    customerName: text(customer?.name) ?? text(order.billing_name),
    renewal: reason === 'subscription_cycle',
    refunded: status === 'refunded',
    isFreeTrial: amount === 0 && reason !== 'subscription_cycle',
  };
}
