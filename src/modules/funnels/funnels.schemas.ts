import { type Static, Type } from 'typebox';
import { GoalName, Id, Timestamp } from '../../http/schemas.ts';
import { ID_PATTERN } from '../../lib/ids.ts';

export const STEP_TYPES = ['pageview', 'goal'] as const;
export type StepType = (typeof STEP_TYPES)[number];
export const MIN_STEPS = 2;
export const MAX_STEPS = 8;
export const MAX_URL_LENGTH = 2048;

const FunnelName = Type.String({ minLength: 1, maxLength: 100 });

export const FunnelStep = Type.Object({
  id: Id,
  name: Type.String(),
  type: Type.Enum([...STEP_TYPES]),
  url: Type.Optional(Type.String({ description: 'pageview steps only' })),
  goalName: Type.Optional(Type.String({ description: 'goal steps only' })),
});
export type FunnelStepView = Static<typeof FunnelStep>;

export const Funnel = Type.Object({
  id: Id,
  _id: Id,
  websiteId: Id,
  name: Type.String(),
  slug: Type.String(),
  steps: Type.Array(FunnelStep),
  isActive: Type.Boolean(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type FunnelView = Static<typeof Funnel>;

const StepInput = Type.Object(
  {
    id: Type.Optional(Type.String({ pattern: ID_PATTERN, description: "an existing step's id, to keep it (PUT only)" })),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'defaults to the url or goalName' })),
    type: Type.Enum([...STEP_TYPES]),
    url: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: MAX_URL_LENGTH,
        description: 'pageview steps: a path starting with / or an absolute http(s) URL',
      }),
    ),
    goalName: Type.Optional(GoalName),
  },
  { additionalProperties: false },
);
export type StepInputValue = Static<typeof StepInput>;

const Steps = Type.Array(StepInput, { minItems: MIN_STEPS, maxItems: MAX_STEPS });

export const CreateFunnelBody = Type.Object(
  { name: FunnelName, steps: Steps },
  {
    additionalProperties: false,
    examples: [
      {
        name: 'Pricing to sign-up',
        steps: [
          { type: 'pageview', url: '/pricing', name: 'Saw the prices' },
          { type: 'goal', goalName: 'signup', name: 'Signed up' },
        ],
      },
    ],
  },
);
export type CreateFunnelInput = Static<typeof CreateFunnelBody>;

export const UpdateFunnelBody = Type.Object(
  {
    name: Type.Optional(FunnelName),
    steps: Type.Optional(Steps),
    isActive: Type.Optional(Type.Boolean({ description: 'true revives a deleted funnel' })),
  },
  { additionalProperties: false, minProperties: 1, examples: [{ name: 'Pricing to sign-up (all plans)' }] },
);
export type UpdateFunnelInput = Static<typeof UpdateFunnelBody>;

export const FunnelParams = Type.Object({ websiteId: Id, funnelId: Id }, { additionalProperties: false });
