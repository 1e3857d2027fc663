import type { PaletteColor } from './goal-palette.ts';
import type { GoalCustomizationView } from './goals.schemas.ts';
import type { GoalCustomizationRow } from './goals.repository.ts';
import type { GoalStatsRow } from './tracked-goals.repository.ts';
import type { TrackedGoalView } from './tracked-goals.schemas.ts';

export function presentCustomization(row: GoalCustomizationRow): GoalCustomizationView {
  return {
    goalName: row.goal_name,
    displayName: row.display_name,
    color: row.color,
    description: row.description,
    updatedAt: row.updated_at,
  };
}

/** A goal without a customization (after a reset): every display field null. */
export function presentDefaultCustomization(goalName: string, at: string): GoalCustomizationView {
  return { goalName, displayName: null, color: null, description: null, updatedAt: at };
}

export function presentReset(goalName: string, deleted: boolean) {
  return { deleted, goalName };
}

export function presentPalette(palette: readonly PaletteColor[]) {
  return palette.map(({ color, family, label }) => ({ color, family, label }));
}

export function presentTrackedGoal(row: GoalStatsRow, customization: GoalCustomizationView | undefined): TrackedGoalView {
  return {
    goalName: row.goal_name,
    completions: row.completions,
    visitors: row.visitors,
    lastCompletedAt: row.last_completed_at,
    displayName: customization?.displayName ?? null,
    color: customization?.color ?? null,
    description: customization?.description ?? null,
  };
}
