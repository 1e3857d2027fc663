import { type Static, Type } from 'typebox';
import { Timestamp, WebsiteRef } from '../../http/schemas.ts';

// DELETE /api/v1/goals and DELETE /api/v1/payments (website-api.md sections 4 and 7): filters in
// the query, at least one of them; the hosted service's spellings goalName, tx_id, start and end
// accepted. The answer names the filters applied, as the hosted service's documented rows do.

/** Query text goes to the database as is: no NUL character (PostgreSQL refuses it in text). */
const NO_NUL = '^[^\\u0000]*$';

const Text = (maxLength: number, description: string, examples?: string[]) =>
  Type.Optional(Type.String({ minLength: 1, maxLength, pattern: NO_NUL, description, ...(examples ? { examples } : {}) }));

const BOUND = "a YYYY-MM-DD day in the website's time zone (the whole day counts) or an ISO-8601 instant with a zone";

const range = {
  startAt: Text(40, `from: ${BOUND}; with endAt (both or neither)`, ['2026-03-01']),
  endAt: Text(40, `to, included: ${BOUND}; with startAt`, ['2026-03-31']),
  start: Text(40, 'another spelling of startAt'),
  end: Text(40, 'another spelling of endAt'),
};

export const DeleteGoalsQuery = Type.Object(
  {
    websiteId: Type.Optional(WebsiteRef),
    datafast_visitor_id: Text(255, 'only the goals of this visitor', ['visitor-3f9a2c']),
    name: Text(255, 'only the goals of this name (normalised as POST /api/v1/goals normalises it)', ['signup']),
    goalName: Text(255, 'another spelling of name'),
    ...range,
  },
  { additionalProperties: false },
);
export type DeleteGoalsQueryInput = Static<typeof DeleteGoalsQuery>;

export const DeletePaymentsQuery = Type.Object(
  {
    websiteId: Type.Optional(WebsiteRef),
    transaction_id: Text(255, 'only the payment of this transaction id', ['txn_1001']),
    tx_id: Text(255, 'another spelling of transaction_id'),
    datafast_visitor_id: Text(255, 'only the payments of this visitor'),
    ...range,
  },
  { additionalProperties: false },
);
export type DeletePaymentsQueryInput = Static<typeof DeletePaymentsQuery>;

const message = Type.String();
const deleted = Type.Integer({ description: 'how many rows were deleted' });
const visitorApplied = Type.Optional(Type.String({ description: 'present when the delete was limited to this visitor' }));

export const TimeRange = Type.Object(
  { start: Timestamp, end: Timestamp },
  { description: 'present when the delete was limited to a period: its first and last included instant, in UTC' },
);

export const GoalsDeleted = Type.Object({
  message,
  deleted,
  datafast_visitor_id: visitorApplied,
  goal_name: Type.Optional(Type.String({ description: 'present when the delete was limited to this goal name (as normalised)' })),
  timeRange: Type.Optional(TimeRange),
});
export type GoalsDeletedView = Static<typeof GoalsDeleted>;

export const PaymentsDeleted = Type.Object({
  message,
  deleted,
  transaction_id: Type.Optional(Type.String({ description: 'present when the delete was limited to this transaction' })),
  datafast_visitor_id: visitorApplied,
  timeRange: Type.Optional(TimeRange),
});
export type PaymentsDeletedView = Static<typeof PaymentsDeleted>;
