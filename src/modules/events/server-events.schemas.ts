import { type Static, Type } from 'typebox';
import { Id, Nullable, WebsiteRef } from '../../http/schemas.ts';

// The server-side website API (contract section 5, website-api.md section 4): goals and payments
// sent by a backend with a `df_` key (its own website) or an account token and `?websiteId=`.

export const METADATA_MAX_KEYS = 10;
export const METADATA_KEY = /^[a-z0-9_-]{1,64}$/;
export const METADATA_VALUE_MAX = 255;
export const GOAL_DESCRIPTION_MAX = 300;
/** What a goal name sent may be before it is normalised (the name rules apply after). */
export const RAW_GOAL_NAME_MAX = 255;
/** The largest amount accepted, in major units (safely inside a 64-bit integer of minor units). */
export const AMOUNT_MAX = 1_000_000_000_000;

export const WebsiteIdQuery = Type.Object(
  { websiteId: Type.Optional(WebsiteRef) },
  { additionalProperties: false },
);

const VisitorId = Type.String({ minLength: 1, maxLength: 255, description: 'the datafast_visitor_id cookie of the visitor' });

const Metadata = Type.Record(Type.String(), Type.Union([Type.String({ maxLength: METADATA_VALUE_MAX }), Type.Number(), Type.Boolean()]), {
  maxProperties: METADATA_MAX_KEYS,
  description:
    `at most ${METADATA_MAX_KEYS} properties; keys [a-z0-9_-] up to 64 characters, values strings up to ` +
    `${METADATA_VALUE_MAX} characters (numbers and booleans are stored as strings)`,
});

export const ServerGoalBody = Type.Object(
  {
    datafast_visitor_id: Type.Optional(VisitorId),
    visitorId: Type.Optional(VisitorId),
    name: Type.String({
      minLength: 1,
      maxLength: RAW_GOAL_NAME_MAX,
      description:
        'the goal name, normalised first (trimmed, lower-cased, white space to _), then: lower case letters, digits, _ : -; ' +
        '1-64 characters; not "identify"',
      examples: ['signup'],
    }),
    description: Type.Optional(Nullable(Type.String({ maxLength: GOAL_DESCRIPTION_MAX, description: 'what this completion was about' }))),
    metadata: Type.Optional(Nullable(Metadata)),
  },
  { additionalProperties: false, examples: [{ datafast_visitor_id: 'visitor-3f9a2c', name: 'signup', metadata: { plan: 'pro' } }] },
);
export type ServerGoalInput = Static<typeof ServerGoalBody>;

export const GoalRecorded = Type.Object({ message: Type.String(), eventId: Id });

const CustomerText = (description: string) => Type.String({ minLength: 1, maxLength: 255, description });
const Email = (description: string) => Type.String({ maxLength: 254, description });

export const PaymentBody = Type.Object(
  {
    amount: Type.Number({ minimum: 0, maximum: AMOUNT_MAX, description: 'in major units, e.g. 29.99 (0 is accepted); no more decimals than the currency has' }),
    currency: Type.String({ minLength: 3, maxLength: 3, description: 'ISO-4217 code, e.g. USD' }),
    transaction_id: Type.String({ minLength: 1, maxLength: 255, description: "the provider's id; the same id twice records one payment" }),
    datafast_visitor_id: Type.Optional(Nullable(VisitorId)),
    email: Type.Optional(Nullable(Email("the customer's e-mail"))),
    customer_email: Type.Optional(Nullable(Email('another spelling of email'))),
    customer_id: Type.Optional(Nullable(CustomerText("the provider's customer id"))),
    customer_name: Type.Optional(Nullable(CustomerText("the customer's name"))),
    name: Type.Optional(Nullable(CustomerText('another spelling of customer_name'))),
    is_free_trial: Type.Optional(Type.Boolean({ description: 'the payment starts a free trial' })),
    renewal: Type.Optional(Type.Boolean()),
    refunded: Type.Optional(Type.Boolean({ description: 'true on a transaction already recorded marks it refunded' })),
    timestamp: Type.Optional(
      Type.Union([Type.String({ format: 'date-time' }), Type.Integer({ minimum: 0 })], {
        description: 'when the payment happened: an ISO-8601 instant with a zone, or epoch milliseconds; default now',
      }),
    ),
  },
  {
    additionalProperties: false,
    examples: [{ amount: 29.99, currency: 'USD', transaction_id: 'txn_1001', datafast_visitor_id: 'visitor-3f9a2c', email: 'customer@example.com' }],
  },
);
export type PaymentInput = Static<typeof PaymentBody>;

/** The hosted service answers payments without the envelope. */
export const PaymentRecorded = Type.Object({ message: Type.String(), transaction_id: Type.String() });
export type PaymentRecordedView = Static<typeof PaymentRecorded>;
