import { type Static, Type } from 'typebox';
import { WebsiteRef } from '../../http/schemas.ts';

// DELETE /api/v1/goals and DELETE /api/v1/payments (website-api.md section 4): filters in the
// query, at least one of them; the hosted service's spellings goalName, start and end accepted.

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
    datafast_visitor_id: Text(255, 'only the payments of this visitor'),
    ...range,
  },
  { additionalProperties: false },
);
export type DeletePaymentsQueryInput = Static<typeof DeletePaymentsQuery>;

export const Deleted = Type.Object({
  message: Type.String(),
  deleted: Type.Integer({ description: 'how many rows were deleted' }),
});
export type DeletedView = Static<typeof Deleted>;
