import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.ts';

export interface GoalStatsRow {
  goal_name: string;
  completions: number;
  visitors: number;
  last_completed_at: string;
}

/** All-time statistics from the rollup, in no particular order. */
export async function listGoalStats(db: Kysely<Database>, websiteId: string): Promise<GoalStatsRow[]> {
  const rows = await db
    .selectFrom('goal_stats')
    .select(['goal_name', 'completions', 'visitors', 'last_completed_at'])
    .where('website_id', '=', websiteId)
    .execute();
  return rows.map((row) => ({ ...row, completions: Number(row.completions), visitors: Number(row.visitors) }));
}

/** Statistics over a period (from <= occurred_at < to) from the raw events (events_website_goal_idx). */
export async function goalStatsBetween(db: Kysely<Database>, websiteId: string, from: string, to: string): Promise<GoalStatsRow[]> {
  const rows = await db
    .selectFrom('events')
    .select((eb) => [
      'name',
      eb.fn.countAll().as('completions'),
      eb.fn.count('visitor_id').distinct().as('visitors'),
      eb.fn.max('occurred_at').as('last_completed_at'),
    ])
    .where('website_id', '=', websiteId)
    .where('type', '=', 'custom')
    .where('name', 'is not', null)
    .where('occurred_at', '>=', from)
    .where('occurred_at', '<', to)
    .groupBy('name')
    .execute();
  return rows.map((row) => ({
    goal_name: row.name as string,
    completions: Number(row.completions),
    visitors: Number(row.visitors),
    last_completed_at: new Date(row.last_completed_at).toISOString(),
  }));
}

/** Whether the website has ever recorded a completion of the goal. */
export async function hasTrackedGoal(db: Kysely<Database>, websiteId: string, goalName: string): Promise<boolean> {
  const row = await db
    .selectFrom('goal_stats')
    .select('goal_name')
    .where('website_id', '=', websiteId)
    .where('goal_name', '=', goalName)
    .executeTakeFirst();
  return row !== undefined;
}

