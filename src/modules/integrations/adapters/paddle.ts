import { ApiError, type Environment, Paddle, type Transaction } from '@paddle/paddle-node-sdk';
import { type AdapterOptions, type ApiAdapter, type ProviderPayment, WebhookSignatureError } from './adapter.ts';
import { asObject, attributionFrom, conversionFromMinor, withConversion, headerValue, instant, majorFromMinor, requireCredential, text, upperCurrency, type Json } from './fields.ts';
import { unreachable } from './http.ts';
import { providerError } from './scrub.ts';
import { assertFresh, digestMatches, hmacSha256, requireSecret } from './signatures.ts';

// Paddle Billing (provider-four), with the official SDK for its API. The SDK takes its API root
// as `environment`: a value outside its map of environments is used as the URL itself.
//
// Webhooks are verified here rather than with the SDK's webhooks.unmarshal: that call is
// async (parseWebhook is not), reads the clock itself (no `now` to test replays with) and compares
// signatures with ===. The scheme is the documented one: Paddle-Signature "ts=<s>;h1=<hex>" with
// h1 = HMAC-SHA256(secret, "<ts>:<raw body>"). The SDK allows ts 5 s of age; here it is 300 s, as
// Stripe's and Standard Webhooks' windows: a server clock a few seconds off would refuse every
// event, and a replay inside the window records nothing (event ids and transaction ids are kept).
//
// What is a payment: transaction.completed (origin subscription_recurring is a renewal; a total
// of 0 from a checkout starts a free trial), keyed by the transaction id; adjustment.created or
// adjustment.updated with action refund, status approved and type full marks that transaction
// refunded (a partial refund leaves it counted). The visitor is in the transaction's custom_data,
// which Paddle.js fills from Checkout.open({ customData }) and copies to the subscription, so
// renewals carry it too. The amount converted by Paddle is details.payout_totals (grand_total,
// in the seller's payout currency, currency_code). Paddle's API has no seller name: the account name stays null.
//
// Paddle answers a revoked or unknown key with 403 invalid_token (its error reference), a missing
// permission with 403 forbidden: the error code tells them apart, not the status.

const DEFAULT_BASE_URL = 'https://api.paddle.com';
const PAGE_SIZE = 100;
const SIGNATURE_TOLERANCE_SECONDS = 300;
const REVOKED_CODES = new Set(['invalid_token', 'authentication_malformed', 'authentication_missing', 'invalid_access_token']);

export function paddleAdapter(options: AdapterOptions = {}): ApiAdapter {
  const baseUrl = (options.baseUrl ?? DEFAULT_BASE_URL).replace(/\/+$/, '');
  const client = (credentials: Record<string, string>) =>
    new Paddle(requireCredential(credentials, 'providerFourApiKey'), { environment: baseUrl as Environment });

  return {
    provider: 'provider-four',
    connection: 'api-credential',

    async verifyCredential(credentials) {
      const paddle = client(credentials);
      const [latest] = await callPaddle(credentials, baseUrl, () => paddle.transactions.list({ perPage: 1 }).next());
      return { accountName: null, currency: upperCurrency(latest?.currencyCode) };
    },

    async listPayments(credentials, since, cursor) {
      const paddle = client(credentials);
      const collection = paddle.transactions.list({
        status: ['completed'],
        'createdAt[GTE]': since.toISOString(),
        include: ['customer'],
        perPage: PAGE_SIZE,
        ...(cursor ? { after: cursor } : {}),
      });
      const transactions = await callPaddle(credentials, baseUrl, () => collection.next());
      const payments = transactions.map(fromSdkTransaction).filter((payment) => payment !== null);
      const last = transactions.at(-1);
      // Paddle pages by id: `after` the last id read is where the next page starts.
      return { payments, nextCursor: collection.hasMore && last ? last.id : null };
    },

    parseWebhook(rawBody, headers, secret, now = new Date()) {
      const header = headerValue(headers, 'paddle-signature');
      if (header === null) throw new WebhookSignatureError('the Paddle-Signature header is missing');
      const parts = header.split(';').map((part) => part.trim());
      const ts = parts.find((part) => part.startsWith('ts='))?.slice(3);
      const h1 = parts.filter((part) => part.startsWith('h1=')).map((part) => part.slice(3));
      if (!ts || !/^\d+$/.test(ts) || h1.length === 0) throw new WebhookSignatureError('the Paddle-Signature header is not ts=...;h1=...');
      assertFresh(Number(ts), now, SIGNATURE_TOLERANCE_SECONDS);
      const expected = hmacSha256(requireSecret(secret), `${ts}:`, rawBody);
      // Several h1 values are sent while a secret rotates.
      if (!h1.some((signature) => digestMatches(expected, signature, 'hex'))) {
        throw new WebhookSignatureError('no h1 signature matches the body');
      }
      let body: Json | null = null;
      try {
        body = asObject(JSON.parse(rawBody.toString('utf8')));
      } catch {
        body = null;
      }
      const eventId = text(body?.event_id) ?? `ts:${ts}`;
      const data = asObject(body?.data);
      const type = text(body?.event_type);
      const eventType = type ?? 'unknown';
      if (data === null) return { eventId, eventType, payments: [] };
      if (type === 'transaction.completed') {
        const payment = fromWebhookTransaction(data);
        return { eventId, eventType, payments: payment ? [payment] : [] };
      }
      if (type === 'adjustment.created' || type === 'adjustment.updated') {
        const refund = refundOfAdjustment(data);
        return { eventId, eventType, payments: refund ? [refund] : [] };
      }
      return { eventId, eventType, payments: [] };
    },
  };
}

async function callPaddle<T>(credentials: Record<string, string>, baseUrl: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof ApiError) {
      const code = error.code ?? '';
      const kind = REVOKED_CODES.has(code) ? 'revoked' : code === 'forbidden' ? 'forbidden' : error.type === 'api_error' ? 'unreachable' : 'invalid';
      const status = kind === 'revoked' || kind === 'forbidden' ? 403 : null;
      throw providerError(kind, status, `${error.detail ?? error.message} [${code}]`, credentials);
    }
    // fetch's own failures (refused, reset, DNS) and an answer that is not JSON (a proxy's page)
    // mean Paddle was not really reached; anything else is an answer the SDK could not read.
    if ((error instanceof TypeError && error.message === 'fetch failed') || error instanceof SyntaxError) throw unreachable(baseUrl, error, credentials);
    throw providerError('invalid', null, `the answer could not be read: ${error instanceof Error ? error.message : String(error)}`, credentials);
  }
}

interface TransactionView {
  id: string | null;
  status: string | null;
  currency: string | null;
  grandTotal: unknown;
  customData: unknown;
  customerId: string | null;
  origin: string | null;
  at: Date | null;
  email: string | null;
  name: string | null;
  /** details.payout_totals: the totals in the seller's payout currency, null until completed. */
  payoutTotal: unknown;
  payoutCurrency: unknown;
}

function fromSdkTransaction(transaction: Transaction): ProviderPayment | null {
  return paymentOf({
    id: transaction.id,
    status: transaction.status,
    currency: upperCurrency(transaction.currencyCode),
    grandTotal: transaction.details?.totals?.grandTotal ?? transaction.details?.totals?.total,
    customData: transaction.customData,
    customerId: transaction.customerId,
    origin: transaction.origin,
    at: instant(transaction.billedAt) ?? instant(transaction.createdAt),
    email: text(transaction.customer?.email),
    name: text(transaction.customer?.name),
    payoutTotal: transaction.details?.payoutTotals?.grandTotal ?? transaction.details?.payoutTotals?.total,
    payoutCurrency: transaction.details?.payoutTotals?.currencyCode,
  });
}

function fromWebhookTransaction(data: Json): ProviderPayment | null {
  const totals = asObject(asObject(data.details)?.totals);
  const payout = asObject(asObject(data.details)?.payout_totals);
  const customer = asObject(data.customer);
  return paymentOf({
    id: text(data.id),
    status: text(data.status),
    currency: upperCurrency(data.currency_code),
    grandTotal: totals?.grand_total ?? totals?.total,
    customData: data.custom_data,
    customerId: text(data.customer_id),
    origin: text(data.origin),
    at: instant(data.billed_at) ?? instant(data.created_at),
    email: text(customer?.email),
    name: text(customer?.name),
    payoutTotal: payout?.grand_total ?? payout?.total,
    payoutCurrency: payout?.currency_code,
  });
}

function paymentOf(view: TransactionView): ProviderPayment | null {
  if (view.status !== 'completed' || view.id === null || view.currency === null || view.at === null) return null;
  const amount = majorFromMinor(view.grandTotal, view.currency);
  if (amount === null) return null;
  const renewal = view.origin === 'subscription_recurring';
  return {
    transactionId: view.id,
    amount,
    currency: view.currency,
    occurredAt: view.at,
    ...attributionFrom(view.customData),
    email: view.email,
    customerId: view.customerId,
    customerName: view.name,
    renewal,
    refunded: false,
    isFreeTrial: amount === 0 && !renewal,
    ...withConversion(conversionFromMinor(view.payoutTotal, view.payoutCurrency, view.currency)),
  };
}

function refundOfAdjustment(adjustment: Json): ProviderPayment | null {
  if (text(adjustment.action) !== 'refund' || text(adjustment.status) !== 'approved' || text(adjustment.type) !== 'full') return null;
  const transactionId = text(adjustment.transaction_id);
  const currency = upperCurrency(adjustment.currency_code);
  const at = instant(adjustment.updated_at) ?? instant(adjustment.created_at);
  if (transactionId === null || currency === null || at === null) return null;
  const amount = majorFromMinor(asObject(adjustment.totals)?.total, currency);
  if (amount === null) return null;
  return {
    transactionId,
    amount,
    currency,
    occurredAt: at,
    visitorId: null,
    sessionId: null,
    email: null,
    customerId: text(adjustment.customer_id),
    customerName: null,
    renewal: false,
    refunded: true,
    isFreeTrial: false,
  };
}
