import { type Kysely, sql } from 'kysely';
import type { EventLog } from './event-log.ts';
import type { Database } from '../../db/schema.ts';
import { badRequest, invalidField, notFound } from '../../errors.ts';
import { GoalName } from '../../http/schemas.ts';
import { toMinorUnits } from '../../lib/money.ts';
import { normaliseCurrency, normaliseEmail } from '../../lib/formats.ts';
import { newId } from '../../lib/ids.ts';
import { lockWebsite } from '../../db/locks.ts';
import * as derivedData from '../analytics/maintainer.ts';
import type { EventWriter } from './event-writer.ts';
import type { NewEvent } from './event.types.ts';
import * as repo from './server-events.repository.ts';
import {
  METADATA_KEY,
  type PaymentInput,
  type PaymentRecordedView,
  type ServerGoalInput,
} from './server-events.schemas.ts';

// Goals and payments sent by a website's backend (contract section 5).

function visitorIdOf(input: ServerGoalInput): string {
  if (input.datafast_visitor_id !== undefined && input.visitorId !== undefined) {
    throw badRequest('body: send datafast_visitor_id or its alias visitorId, not both', [
      { path: 'body.visitorId', message: 'is an alias of datafast_visitor_id; send only one of them' },
    ]);
  }
  const visitorId = input.datafast_visitor_id ?? input.visitorId;
  if (visitorId === undefined) throw invalidField('body.datafast_visitor_id', 'is required (or its alias visitorId)');
  return visitorId;
}

/** Numbers and booleans become strings, as the hosted service stores them. */
function metadataOf(input: ServerGoalInput): Record<string, string> | null {
  if (!input.metadata) return null;
  const metadata: Record<string, string> = {};
  for (const [key, value] of Object.entries(input.metadata)) {
    if (!METADATA_KEY.test(key)) throw invalidField('body.metadata', 'keys must be 1-64 characters of a-z, 0-9, _ and -');
    metadata[key] = String(value);
  }
  return Object.keys(metadata).length === 0 ? null : metadata;
}

const GOAL_NAME = new RegExp((GoalName as unknown as { pattern: string }).pattern);
const GOAL_NAME_RULE = 'after normalising (trimmed, lower case, white space to _) must be 1-64 characters of a-z, 0-9, _, : and -, and not "identify"';

/**
 * A goal name as the hosted service normalises it (trimmed, lower-cased, each run of white space
 * turned into one _), then held to the name rules; `field` is named when it breaks them.
 */
export function normaliseGoalName(raw: string, field: string): string {
  const name = raw.trim().toLowerCase().replace(/\s+/g, '_');
  if (!GOAL_NAME.test(name)) throw invalidField(field, GOAL_NAME_RULE);
  return name;
}

/**
 * A goal completed by a visitor the website has seen: the visitor needs a pageview on it. The
 * event carries the device and place (country, region, city) of the visitor's latest pageview,
 * so breakdowns of goals by place or browser include server-side goals, and a visitor's
 * attributes stay steady (src/modules/analytics/visitor-attributes.ts).
 */
export async function recordServerGoal(
  db: Kysely<Database>,
  events: EventWriter,
  log: EventLog,
  websiteId: string,
  input: ServerGoalInput,
): Promise<{ message: string; eventId: string }> {
  const visitorId = visitorIdOf(input);
  const name = normaliseGoalName(input.name, 'body.name');
  const metadata = metadataOf(input);
  const pageview = await log.findLatestPageview(websiteId, visitorId);
  if (!pageview) throw notFound('Visitor not found: this visitor has no pageview on this website');
  const event: NewEvent = {
    websiteId,
    type: 'custom',
    name,
    visitorId,
    sessionId: null,
    hostname: pageview.hostname,
    path: null,
    referrer: null,
    country: pageview.country,
    browser: pageview.browser,
    os: pageview.os,
    device: pageview.device,
    metadata,
    source: 'api',
    occurredAt: new Date().toISOString(),
    details: { description: input.description ?? null, region: pageview.region, city: pageview.city },
  };
  const [recorded] = await events.write([event]);
  return { message: `Goal "${name}" recorded`, eventId: recorded!.id };
}

const EARLIEST_PAYMENT = Date.UTC(2000, 0, 1);
const FUTURE_TOLERANCE_MS = 60 * 60 * 1000;
const TIMESTAMP_RULE = 'must be between 2000-01-01 and one hour from now (an ISO-8601 instant or epoch milliseconds)';

function occurredAtOf(timestamp: PaymentInput['timestamp'], now: number): string {
  if (timestamp === undefined) return new Date(now).toISOString();
  const at = typeof timestamp === 'number' ? timestamp : Date.parse(timestamp);
  if (!Number.isFinite(at) || at < EARLIEST_PAYMENT || at > now + FUTURE_TOLERANCE_MS) throw invalidField('body.timestamp', TIMESTAMP_RULE);
  return new Date(at).toISOString();
}

function amountOf(amount: number, currency: string): number {
  const result = toMinorUnits(amount, currency);
  if (result.ok) return result.minor || 0; // -0 (JSON "-0") stored as 0
  if (result.reason === 'precision') {
    const allowed = result.digits === 0 ? 'no decimals' : `at most ${result.digits} decimal place${result.digits === 1 ? '' : 's'}`;
    throw invalidField('body.amount', `has more decimals than ${currency} has (${allowed})`);
  }
  throw invalidField('body.amount', 'is too large');
}

/**
 * A field the hosted service accepts under two names: either may be sent, or both when they say
 * the same (null counts as not sent).
 */
function eitherSpelling(value: string | null | undefined, field: string, alias: string | null | undefined, aliasField: string): string | null {
  if (value != null && alias != null && value !== alias) {
    throw invalidField(aliasField, `is another spelling of ${field.slice('body.'.length)}; send one of them, or both with the same value`);
  }
  return value ?? alias ?? null;
}

/**
 * The provider's own conversion of a payment, in minor units of its currency (ProviderPayment's
 * `converted`, stored by migration 0028). Only the providers' adapters give one: the public
 * POST /api/v1/payments has no field for it, as the hosted API has none.
 */
export interface ProviderConversion {
  amountMinor: number;
  currency: string;
}

/** A conversion worth keeping: a whole, non-negative amount into another currency than the payment's. */
function conversionOf(converted: ProviderConversion | null | undefined, currency: string): ProviderConversion | null {
  if (!converted) return null;
  const into = normaliseCurrency(converted.currency);
  if (into === null || into === currency || !Number.isSafeInteger(converted.amountMinor) || converted.amountMinor < 0) return null;
  return { amountMinor: converted.amountMinor || 0, currency: into };
}

/**
 * Where recorded payments are counted into the derived tables (breakdown revenue): the rollup
 * deriver's backlog, woken after the commit (SQLite, PostgreSQL); with none (events on ClickHouse,
 * no relational fold runs), at once under the website's lock.
 */
export interface PaymentFold {
  wake(count: number): void;
}

/**
 * Records a payment once per transaction id and website. Sending the same transaction id again
 * changes nothing, except that `refunded: true` marks the recorded payment refunded (a refund
 * cannot be undone this way) and that a provider's `converted` amount is added to a payment
 * recorded without one (a Stripe webhook's, which the history import then converts; a conversion
 * once kept stays). The payments table is the only record of payments: no event is
 * written, and the time series reads revenue from it.
 *
 * With `fold`, the transaction takes no derived-data lock (issue 38): it writes the payment's
 * columns and a backlog row naming the payment, and the fold counts it (payment-counts.ts), so a
 * payment never waits for a fold under way; a read settles the backlog first, so it sees the payment.
 */
export async function recordPayment(
  db: Kysely<Database>,
  websiteId: string,
  input: PaymentInput,
  converted?: ProviderConversion | null,
  fold: PaymentFold | null = null,
): Promise<PaymentRecordedView> {
  const currency = normaliseCurrency(input.currency);
  if (currency === null) throw invalidField('body.currency', 'must be an ISO-4217 currency code such as USD');
  const amountMinor = amountOf(input.amount, currency);
  const conversion = conversionOf(converted, currency);
  const emailField = input.email == null && input.customer_email != null ? 'body.customer_email' : 'body.email';
  const rawEmail = eitherSpelling(input.email, 'body.email', input.customer_email, 'body.customer_email');
  let email: string | null = null;
  if (rawEmail !== null) {
    email = normaliseEmail(rawEmail);
    if (email === null) throw invalidField(emailField, 'must be an e-mail address');
  }
  const customerName = eitherSpelling(input.customer_name, 'body.customer_name', input.name, 'body.name');
  const now = Date.now();
  const row = {
    id: newId(now),
    website_id: websiteId,
    transaction_id: input.transaction_id,
    amount_minor: amountMinor,
    currency,
    visitor_id: input.datafast_visitor_id ?? (email === null ? null : await repo.findVisitorByEmail(db, websiteId, email)),
    email,
    customer_id: input.customer_id ?? null,
    customer_name: customerName,
    is_free_trial: input.is_free_trial ?? false,
    renewal: input.renewal ?? false,
    refunded: input.refunded ?? false,
    occurred_at: occurredAtOf(input.timestamp, now),
    created_at: new Date(now).toISOString(),
    converted_minor: conversion?.amountMinor ?? null,
    converted_currency: conversion?.currency ?? null,
  } satisfies repo.NewPaymentRow;
  const { message, changed } = await db.transaction().execute(async (trx) => {
    if (fold === null) await lockWebsite(trx, websiteId);
    const written = await writePayment(trx, websiteId, row, input.refunded === true, conversion);
    if (written.changed !== undefined) {
      if (fold === null) await derivedData.countPayments(trx, websiteId, sql`p.id = ${written.changed}`);
      else await derivedData.paymentsRecorded(trx, websiteId, [written.changed]);
    }
    return written;
  });
  if (changed !== undefined) fold?.wake(1);
  return { message, transaction_id: input.transaction_id };
}

/** The payment written, or what of it changed: the answer's message, and the payment whose counting may have changed. */
async function writePayment(
  trx: Kysely<Database>,
  websiteId: string,
  row: repo.NewPaymentRow,
  refund: boolean,
  conversion: ProviderConversion | null,
): Promise<{ message: string; changed: string | undefined }> {
  if (await repo.insertPaymentOnce(trx, row)) {
    // A payment recorded refunded never counts: nothing for the fold.
    return row.refunded ? { message: 'Payment recorded as refunded', changed: undefined } : { message: 'Payment recorded', changed: row.id };
  }
  // A payment recorded before its conversion was known (a Stripe webhook, then the history import) gains it.
  const converted = conversion === null ? undefined : await repo.addConversion(trx, websiteId, row.transaction_id, conversion);
  if (!refund) return { message: 'Payment already recorded; nothing changed', changed: converted };
  const refunded = await repo.markRefunded(trx, websiteId, row.transaction_id);
  return refunded !== undefined
    ? { message: 'Payment already recorded; now marked as refunded', changed: refunded }
    : { message: 'Payment already recorded and refunded; nothing changed', changed: converted };
}
