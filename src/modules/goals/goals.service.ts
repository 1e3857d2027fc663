import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.ts';
import { invalidField } from '../../errors.ts';
import { GOAL_PALETTE, paletteColor } from './goal-palette.ts';
import { presentCustomization, presentDefaultCustomization, presentPalette, presentReset } from './goals.presenter.ts';
import * as repo from './goals.repository.ts';
import type { GoalCustomizationView, UpdateGoalCustomizationInput } from './goals.schemas.ts';

// Sorted here rather than in SQL: PostgreSQL orders text by the database's collation, which may
// ignore "-" and ":", while SQLite compares bytes; code-point order is the same on both.
const byGoalName = (a: { goal_name: string }, b: { goal_name: string }) =>
  a.goal_name < b.goal_name ? -1 : a.goal_name > b.goal_name ? 1 : 0;

export async function listGoalCustomizations(db: Kysely<Database>, websiteId: string): Promise<GoalCustomizationView[]> {
  return (await repo.listCustomizations(db, websiteId)).sort(byGoalName).map(presentCustomization);
}

/** The customizations of a website keyed by goal name, for lists that merge them into goals. */
export async function customizationsByGoalName(db: Kysely<Database>, websiteId: string): Promise<Map<string, GoalCustomizationView>> {
  const rows = await repo.listCustomizations(db, websiteId);
  return new Map(rows.map((row) => [row.goal_name, presentCustomization(row)]));
}

export function goalPalette() {
  return presentPalette(GOAL_PALETTE);
}

const PALETTE_RULE = `must be a palette color, one of: ${GOAL_PALETTE.map((entry) => entry.color).join(', ')}`;

function customizationChanges(input: UpdateGoalCustomizationInput): repo.CustomizationChanges {
  const changes: repo.CustomizationChanges = {};
  if (input.displayName !== undefined && input.name !== undefined) {
    throw invalidField('body.name', 'is another spelling of displayName; send only one of them');
  }
  const displayName = input.displayName !== undefined ? input.displayName : input.name;
  if (displayName !== undefined) changes.display_name = displayName;
  if (input.description !== undefined) changes.description = input.description;
  if (input.color !== undefined) {
    const color = input.color === null ? null : paletteColor(input.color);
    if (color === null && input.color !== null) throw invalidField('body.color', PALETTE_RULE);
    changes.color = color;
  }
  if (Object.keys(changes).length === 0) {
    throw invalidField('body', 'send at least one of displayName, color or description besides goalName');
  }
  return changes;
}

/**
 * Upsert: only the fields sent change and null clears one. A customization left with every
 * field null is removed, exactly as a reset would.
 */
export async function updateGoalCustomization(
  db: Kysely<Database>,
  websiteId: string,
  input: UpdateGoalCustomizationInput,
): Promise<GoalCustomizationView> {
  const changes = customizationChanges(input);
  const at = new Date().toISOString();
  return db.transaction().execute(async (trx) => {
    await repo.upsertCustomization(trx, websiteId, input.goalName, changes, at);
    const row = await repo.findCustomization(trx, websiteId, input.goalName);
    if (row && (row.display_name !== null || row.color !== null || row.description !== null)) return presentCustomization(row);
    await repo.deleteCustomization(trx, websiteId, input.goalName);
    return presentDefaultCustomization(input.goalName, at);
  });
}

export async function resetGoalCustomization(db: Kysely<Database>, websiteId: string, goalName: string) {
  return presentReset(goalName, await repo.deleteCustomization(db, websiteId, goalName));
}
