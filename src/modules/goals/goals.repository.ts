import type { Kysely, Selectable, Updateable } from 'kysely';
import type { Database, GoalCustomizationsTable } from '../../db/schema.ts';

export type GoalCustomizationRow = Selectable<GoalCustomizationsTable>;
export type CustomizationChanges = Pick<Updateable<GoalCustomizationsTable>, 'display_name' | 'color' | 'description'>;

/** A website's customizations in no particular order (the tracked-goals list merges them by name). */
export async function listCustomizations(db: Kysely<Database>, websiteId: string): Promise<GoalCustomizationRow[]> {
  return db.selectFrom('goal_customizations').selectAll().where('website_id', '=', websiteId).execute();
}

export async function findCustomization(
  db: Kysely<Database>,
  websiteId: string,
  goalName: string,
): Promise<GoalCustomizationRow | undefined> {
  return db
    .selectFrom('goal_customizations')
    .selectAll()
    .where('website_id', '=', websiteId)
    .where('goal_name', '=', goalName)
    .executeTakeFirst();
}

/** Creates the row or changes only the given fields of the existing one. */
export async function upsertCustomization(
  db: Kysely<Database>,
  websiteId: string,
  goalName: string,
  changes: CustomizationChanges,
  at: string,
): Promise<void> {
  await db
    .insertInto('goal_customizations')
    .values({ display_name: null, color: null, description: null, ...changes, website_id: websiteId, goal_name: goalName, updated_at: at })
    .onConflict((oc) => oc.columns(['website_id', 'goal_name']).doUpdateSet({ ...changes, updated_at: at }))
    .execute();
}

export async function deleteCustomization(db: Kysely<Database>, websiteId: string, goalName: string): Promise<boolean> {
  const result = await db
    .deleteFrom('goal_customizations')
    .where('website_id', '=', websiteId)
    .where('goal_name', '=', goalName)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
