import { type Static, Type } from 'typebox';
import { GoalName, Nullable, Timestamp } from '../../http/schemas.ts';
import { KPI_COLOR_SCHEMES } from '../websites/websites.schemas.ts';

export const DISPLAY_NAME_MAX = 80;
export const DESCRIPTION_MAX = 300;
/** Goal customization bodies are tiny; anything larger is refused with 413 before parsing. */
export const CUSTOMIZATION_BODY_LIMIT = 4 * 1024;

export const GoalCustomization = Type.Object({
  goalName: Type.String(),
  displayName: Nullable(Type.String()),
  color: Nullable(Type.String()),
  description: Nullable(Type.String()),
  updatedAt: Timestamp,
});
export type GoalCustomizationView = Static<typeof GoalCustomization>;

export const PaletteColor = Type.Object({
  color: Type.String({ description: 'lower-case #rrggbb' }),
  family: Type.Enum([...KPI_COLOR_SCHEMES]),
  label: Type.String(),
});

export const UpdateGoalCustomizationBody = Type.Object(
  {
    goalName: GoalName,
    displayName: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: DISPLAY_NAME_MAX }))),
    name: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: DISPLAY_NAME_MAX, description: 'another spelling of displayName (send one of them)' }))),
    color: Type.Optional(Nullable(Type.String({ description: 'one of the `color` values of the palette (GET lists it as `colors`)' }))),
    description: Type.Optional(Nullable(Type.String({ maxLength: DESCRIPTION_MAX }))),
  },
  {
    additionalProperties: false,
    examples: [{ goalName: 'signup', displayName: 'Sign-up', color: '#22c55e', description: 'A visitor created an account' }],
  },
);
export type UpdateGoalCustomizationInput = Static<typeof UpdateGoalCustomizationBody>;

export const GoalNameQuery = Type.Object({ goalName: GoalName }, { additionalProperties: false });

export const CustomizationReset = Type.Object({
  deleted: Type.Boolean({ description: 'whether a customization existed' }),
  goalName: Type.String(),
});
