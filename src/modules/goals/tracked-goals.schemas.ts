import { type Static, Type } from 'typebox';
import { Nullable, Timestamp } from '../../http/schemas.ts';

export const TrackedGoal = Type.Object({
  goalName: Type.String(),
  completions: Type.Integer({ description: 'goal events recorded' }),
  visitors: Type.Integer({ description: 'distinct visitors who completed the goal' }),
  lastCompletedAt: Timestamp,
  displayName: Nullable(Type.String()),
  color: Nullable(Type.String()),
  description: Nullable(Type.String()),
});
export type TrackedGoalView = Static<typeof TrackedGoal>;

const rangeBound = {
  maxLength: 40,
  description: "a YYYY-MM-DD day in the website's time zone (the whole day counts) or an ISO-8601 instant with a zone",
};

export const TrackedGoalsQuery = Type.Object(
  {
    startAt: Type.Optional(Type.String({ ...rangeBound, examples: ['2026-03-01'] })),
    endAt: Type.Optional(Type.String({ ...rangeBound, examples: ['2026-03-31'] })),
  },
  { additionalProperties: false },
);
export type TrackedGoalsQueryInput = Static<typeof TrackedGoalsQuery>;
