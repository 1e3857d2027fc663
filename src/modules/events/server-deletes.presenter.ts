import type { InstantRange } from '../goals/tracked-goals.range.ts';
import type { GoalFilters, PaymentFilters } from './server-deletes.repository.ts';
import type { GoalsDeletedView, PaymentsDeletedView } from './server-deletes.schemas.ts';

// The answers of DELETE /api/v1/goals and /api/v1/payments: the hosted service's documented row,
// which names each filter the delete applied (a filter not sent is left out) beside the count.

const plural = (count: number, one: string, many: string) => `${count} ${count === 1 ? one : many}`;

/** The period as its first and last included instant (the range itself ends just after it). */
function presentTimeRange(range: InstantRange | null) {
  if (range === null) return {};
  return { timeRange: { start: range.from, end: new Date(Date.parse(range.to) - 1).toISOString() } };
}

export function presentGoalsDeleted(filters: GoalFilters, deleted: number): GoalsDeletedView {
  return {
    message: `Deleted ${plural(deleted, 'server-side goal', 'server-side goals')}`,
    deleted,
    ...(filters.visitorId === undefined ? {} : { datafast_visitor_id: filters.visitorId }),
    ...(filters.name === undefined ? {} : { goal_name: filters.name }),
    ...presentTimeRange(filters.range),
  };
}

export function presentPaymentsDeleted(filters: PaymentFilters, deleted: number): PaymentsDeletedView {
  return {
    message: `Deleted ${plural(deleted, 'payment', 'payments')}`,
    deleted,
    ...(filters.transactionId === undefined ? {} : { transaction_id: filters.transactionId }),
    ...(filters.visitorId === undefined ? {} : { datafast_visitor_id: filters.visitorId }),
    ...presentTimeRange(filters.range),
  };
}
