import type { Kysely } from 'kysely';
import type { EventLog } from '../events/event-log.ts';
import type { Database } from '../../db/schema.ts';
import { notFound } from '../../errors.ts';
import { customizationsByGoalName } from './goals.service.ts';
import { presentTrackedGoal } from './goals.presenter.ts';
import { parseRange } from './tracked-goals.range.ts';
import * as repo from './tracked-goals.repository.ts';
import type { TrackedGoalView, TrackedGoalsQueryInput } from './tracked-goals.schemas.ts';
import { findWebsiteTimezone } from '../websites/websites.repository.ts';

// Most completions first; ties in code-point order of the name, the same on both engines.
function byFrequency(a: repo.GoalStatsRow, b: repo.GoalStatsRow): number {
  if (a.completions !== b.completions) return b.completions - a.completions;
  return a.goal_name < b.goal_name ? -1 : a.goal_name > b.goal_name ? 1 : 0;
}


/**
 * The goals the website has tracked, with their display customizations. All time from the
 * rollup; over a period (startAt/endAt) from the raw events.
 */
export async function listTrackedGoals(db: Kysely<Database>, events: EventLog, websiteId: string, query: TrackedGoalsQueryInput): Promise<TrackedGoalView[]> {
  let rows: repo.GoalStatsRow[];
  if (query.startAt === undefined && query.endAt === undefined) {
    rows = await repo.listGoalStats(db, websiteId);
  } else {
    const timezone = await findWebsiteTimezone(db, websiteId);
    if (timezone === undefined) throw notFound('Website not found');
    const range = parseRange(query, timezone)!;
    rows = await events.goalStatsBetween(websiteId, range.from, range.to);
  }
  const customizations = await customizationsByGoalName(db, websiteId);
  return rows.sort(byFrequency).map((row) => presentTrackedGoal(row, customizations.get(row.goal_name)));
}
