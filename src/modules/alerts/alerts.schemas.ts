import { type Static, Type } from 'typebox';
import { GoalName, Id, Nullable, NullableTimestamp, Timestamp } from '../../http/schemas.ts';

/** queued: the e-mail waits in the outbox; the worker turns it into sent or failed. */
export const ALERT_HISTORY_STATUSES = ['queued', 'sent', 'failed', 'skipped', 'throttled'] as const;
export type AlertHistoryStatus = (typeof ALERT_HISTORY_STATUSES)[number];

export const HISTORY_DEFAULT_LIMIT = 50;
export const HISTORY_MAX_LIMIT = 100;

const AlertName = Type.String({ minLength: 1, maxLength: 100 });
const Subject = Nullable(Type.String({ maxLength: 200 }));
const TemplateMessage = Type.String({ minLength: 10, maxLength: 2000 });

// Goal triggers and email delivery are the only kinds today; the `type` members let clients of
// the hosted service send them, and leave room for more kinds without a breaking change.
const Trigger = Type.Object(
  { type: Type.Optional(Type.Literal('goal')), goalName: GoalName },
  { additionalProperties: false },
);
const Destination = Type.Object({ type: Type.Literal('email') }, { additionalProperties: false });

export const Alert = Type.Object({
  id: Id,
  _id: Id,
  websiteId: Id,
  name: Type.String(),
  trigger: Type.Object({ type: Type.Literal('goal'), goalName: Type.String() }),
  destination: Type.Object({ type: Type.Literal('email') }),
  template: Type.Object({ subject: Nullable(Type.String()), message: Type.String() }),
  isEnabled: Type.Boolean(),
  lastTriggeredAt: NullableTimestamp,
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type AlertView = Static<typeof Alert>;

export const CreateAlertBody = Type.Object(
  {
    name: AlertName,
    trigger: Trigger,
    template: Type.Object(
      { subject: Type.Optional(Subject), message: TemplateMessage },
      { additionalProperties: false },
    ),
    isEnabled: Type.Optional(Type.Boolean({ description: 'defaults to true' })),
    destination: Type.Optional(Destination),
  },
  {
    additionalProperties: false,
    examples: [
      {
        name: 'New sign-up',
        trigger: { type: 'goal', goalName: 'signup' },
        template: { subject: 'Someone signed up', message: 'A visitor just created an account.' },
        isEnabled: true,
      },
    ],
  },
);
export type CreateAlertInput = Static<typeof CreateAlertBody>;

/** Partial: only the fields sent change; `template` merges, so sending only its message keeps the subject. */
export const UpdateAlertBody = Type.Object(
  {
    name: Type.Optional(AlertName),
    trigger: Type.Optional(Trigger),
    template: Type.Optional(
      Type.Object(
        { subject: Type.Optional(Subject), message: Type.Optional(TemplateMessage) },
        { additionalProperties: false, minProperties: 1 },
      ),
    ),
    isEnabled: Type.Optional(Type.Boolean()),
    destination: Type.Optional(Destination),
  },
  { additionalProperties: false, minProperties: 1, examples: [{ isEnabled: false }] },
);
export type UpdateAlertInput = Static<typeof UpdateAlertBody>;

export const AlertParams = Type.Object({ websiteId: Id, alertId: Id }, { additionalProperties: false });

export const AlertHistoryEntry = Type.Object({
  id: Id,
  alertId: Id,
  alertName: Type.String(),
  goalName: Type.String(),
  status: Type.Enum(ALERT_HISTORY_STATUSES, {
    description: 'queued: the e-mail waits in the outbox; sent, failed: its outcome; skipped: no e-mail is configured (error says why); throttled: within the cooldown',
  }),
  error: Nullable(Type.String()),
  visitorId: Nullable(Type.String()),
  triggeredAt: Timestamp,
});
export type AlertHistoryView = Static<typeof AlertHistoryEntry>;

/** Over every matching row (before the limit); the statuses add up to `total`. */
export const AlertHistoryCounts = Type.Object({
  queued: Type.Integer(),
  sent: Type.Integer(),
  failed: Type.Integer(),
  skipped: Type.Integer(),
  throttled: Type.Integer(),
  total: Type.Integer(),
});
export type AlertHistoryCountsView = Static<typeof AlertHistoryCounts>;

export const AlertHistoryQuery = Type.Object(
  {
    alertId: Type.Optional(Id),
    limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        default: HISTORY_DEFAULT_LIMIT,
        description: `entries to return, newest first; values above ${HISTORY_MAX_LIMIT} are capped`,
      }),
    ),
  },
  { additionalProperties: false },
);
export type AlertHistoryQueryInput = Static<typeof AlertHistoryQuery>;
