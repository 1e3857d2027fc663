import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.ts';
import { lockWebsite } from '../../db/locks.ts';
import { AppError, invalidField, notFound } from '../../errors.ts';
import { type InstantRange, parseRange } from '../goals/tracked-goals.range.ts';
import { findWebsiteTimezone } from '../websites/websites.repository.ts';
import type { EventLog } from './event-log.ts';
import { presentGoalsDeleted, presentPaymentsDeleted } from './server-deletes.presenter.ts';
import * as repo from './server-deletes.repository.ts';
import type { DeleteGoalsQueryInput, DeletePaymentsQueryInput, GoalsDeletedView, PaymentsDeletedView } from './server-deletes.schemas.ts';
import { normaliseGoalName } from './server-events.service.ts';

// Deleting what a backend sent (website-api.md section 4): server-recorded goal completions and
// payments, matched by the filters of the query (at least one). Browser-recorded goals are never
// touched. A goal delete keeps every rollup that counts goals consistent in the same
// transaction; alert history stays as history.

/** One value sent under either of two names: both only when they agree. */
function either(query: Record<string, string | undefined>, name: string, alias: string): { value?: string; field: string } {
  const value = query[name];
  const aliased = query[alias];
  if (value !== undefined && aliased !== undefined && value !== aliased) {
    throw invalidField(`query.${alias}`, `is another spelling of ${name}; send one of them, or both with the same value`);
  }
  return value !== undefined ? { value, field: `query.${name}` } : { value: aliased, field: `query.${aliased === undefined ? name : alias}` };
}

/** startAt/endAt (or start/end) as a range in the website's time zone, or null when neither is sent. */
function rangeOf(query: Record<string, string | undefined>, timezone: string): InstantRange | null {
  const start = either(query, 'startAt', 'start');
  const end = either(query, 'endAt', 'end');
  try {
    return parseRange({ startAt: start.value, endAt: end.value }, timezone);
  } catch (error) {
    // The range parser names startAt and endAt; name the spelling the client sent.
    const detail = error instanceof AppError && error.details?.length === 1 ? error.details[0]! : undefined;
    if (detail?.path === 'query.startAt' && start.field !== detail.path) throw invalidField(start.field, detail.message);
    if (detail?.path === 'query.endAt' && end.field !== detail.path) throw invalidField(end.field, detail.message);
    throw error;
  }
}

const NO_FILTER = 'send at least one filter';

async function timezoneOf(db: Kysely<Database>, websiteId: string): Promise<string> {
  const timezone = await findWebsiteTimezone(db, websiteId);
  if (timezone === undefined) throw notFound('Website not found');
  return timezone;
}

export async function deleteServerGoals(db: Kysely<Database>, events: EventLog, websiteId: string, query: DeleteGoalsQueryInput): Promise<GoalsDeletedView> {
  const name = either(query, 'name', 'goalName');
  const filters: repo.GoalFilters = {
    visitorId: query.datafast_visitor_id,
    name: name.value === undefined ? undefined : normaliseGoalName(name.value, name.field),
    range: rangeOf(query, await timezoneOf(db, websiteId)),
  };
  if (filters.visitorId === undefined && filters.name === undefined && filters.range === null) {
    throw invalidField('query', `${NO_FILTER}: datafast_visitor_id, name (or goalName), or startAt and endAt`);
  }
  return presentGoalsDeleted(filters, await events.deleteServerGoals(websiteId, filters));
}

export async function deletePayments(db: Kysely<Database>, websiteId: string, query: DeletePaymentsQueryInput): Promise<PaymentsDeletedView> {
  const filters: repo.PaymentFilters = {
    transactionId: either(query, 'transaction_id', 'tx_id').value,
    visitorId: query.datafast_visitor_id,
    range: rangeOf(query, await timezoneOf(db, websiteId)),
  };
  if (filters.transactionId === undefined && filters.visitorId === undefined && filters.range === null) {
    throw invalidField('query', `${NO_FILTER}: transaction_id (or tx_id), datafast_visitor_id, or startAt and endAt`);
  }
  const deleted = await db.transaction().execute(async (trx) => {
    await lockWebsite(trx, websiteId);
    return repo.deletePayments(trx, websiteId, filters);
  });
  return presentPaymentsDeleted(filters, deleted);
}
