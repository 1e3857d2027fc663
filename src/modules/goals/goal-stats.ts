import type { Kysely } from 'kysely';
import { prepareListQuery } from '../../db/prepared.ts';
import type { Database } from '../../db/schema.ts';
import { chunks } from '../../lib/chunks.ts';
import { type RecordedEvent, isGoal } from '../events/event.types.ts';

// The all-time rollup behind the tracked-goals list, kept in the transaction that records the
// events: goal_stats holds completions, distinct visitors and the last completion per goal, and
// goal_visitors remembers which visitors already completed a goal so `visitors` stays distinct.

/** Rows per INSERT, well under both engines' bound-parameter limits. */
const CHUNK = 500;

interface GoalGroup {
  websiteId: string;
  goalName: string;
  completions: number;
  lastCompletedAt: string;
  visitorIds: Set<string>;
  newVisitors: number;
}

const keyOf = (websiteId: string, goalName: string) => `${websiteId}\u0000${goalName}`;
const byKey = (a: GoalGroup, b: GoalGroup) => {
  const ka = keyOf(a.websiteId, a.goalName);
  const kb = keyOf(b.websiteId, b.goalName);
  return ka < kb ? -1 : ka > kb ? 1 : 0;
};

function groupGoals(events: RecordedEvent[]): GoalGroup[] {
  const groups = new Map<string, GoalGroup>();
  for (const event of events) {
    if (!isGoal(event)) continue;
    const goalName = event.name as string;
    // One spelling of time (ISO UTC with milliseconds), so text comparison on SQLite is time order.
    const at = new Date(event.occurredAt).toISOString();
    const key = keyOf(event.websiteId, goalName);
    let group = groups.get(key);
    if (!group) {
      group = { websiteId: event.websiteId, goalName, completions: 0, lastCompletedAt: at, visitorIds: new Set(), newVisitors: 0 };
      groups.set(key, group);
    }
    group.completions += 1;
    if (at > group.lastCompletedAt) group.lastCompletedAt = at;
    group.visitorIds.add(event.visitorId);
  }
  // A fixed order of writes, so two transactions never wait on each other's rows in a cycle.
  return [...groups.values()].sort(byKey);
}

type GoalVisitorTuple = [websiteId: string, goalName: string, visitorId: string];
type GoalStatsTuple = [websiteId: string, goalName: string, completions: number, visitors: number, lastCompletedAt: string];

// Prepared once per list length: building these with Kysely on every batch cost more than running them.
const insertGoalVisitors = prepareListQuery(3, (db, rows: GoalVisitorTuple[]) =>
  db
    .insertInto('goal_visitors')
    .values(rows.map((r) => ({ website_id: r[0], goal_name: r[1], visitor_id: r[2] })))
    .onConflict((oc) => oc.columns(['website_id', 'goal_name', 'visitor_id']).doNothing())
    .returning(['website_id', 'goal_name']),
);

const addGoalStats = prepareListQuery(5, (db, rows: GoalStatsTuple[]) =>
  db
    .insertInto('goal_stats')
    .values(rows.map((r) => ({ website_id: r[0], goal_name: r[1], completions: r[2], visitors: r[3], last_completed_at: r[4] })))
    .onConflict((oc) =>
      oc.columns(['website_id', 'goal_name']).doUpdateSet((eb) => ({
        completions: eb('goal_stats.completions', '+', eb.ref('excluded.completions')),
        visitors: eb('goal_stats.visitors', '+', eb.ref('excluded.visitors')),
        last_completed_at: eb
          .case()
          .when('excluded.last_completed_at', '>', eb.ref('goal_stats.last_completed_at'))
          .then(eb.ref('excluded.last_completed_at'))
          .else(eb.ref('goal_stats.last_completed_at'))
          .end(),
      })),
    ),
);

export async function updateGoalStats(trx: Kysely<Database>, events: RecordedEvent[]): Promise<void> {
  const groups = groupGoals(events);
  if (groups.length === 0) return;
  const byGroupKey = new Map(groups.map((group) => [keyOf(group.websiteId, group.goalName), group]));

  // Visitors seen for the first time on a goal are the ones this insert really adds.
  const pairs = groups.flatMap((group) =>
    [...group.visitorIds].sort().map((visitorId): GoalVisitorTuple => [group.websiteId, group.goalName, visitorId]),
  );
  for (const chunk of chunks(pairs, CHUNK)) {
    const inserted = await insertGoalVisitors.all(trx, chunk);
    for (const row of inserted) byGroupKey.get(keyOf(row.website_id, row.goal_name))!.newVisitors += 1;
  }

  for (const chunk of chunks(groups, CHUNK)) {
    await addGoalStats.all(
      trx,
      chunk.map((group): GoalStatsTuple => [group.websiteId, group.goalName, group.completions, group.newVisitors, group.lastCompletedAt]),
    );
  }
}

/**
 * After completions of `goalNames` by `visitorIds` were deleted: the pairs of goal_visitors that
 * no longer have a completion go, and each goal's statistics are counted again from its events
 * (events_website_goal_idx); a goal without completions left loses its row, and so leaves the
 * tracked-goals list.
 */
export async function recountGoalStats(
  trx: Kysely<Database>,
  websiteId: string,
  goalNames: string[],
  visitorIds: string[],
  completions: GoalCompletions = relationalCompletions(trx),
): Promise<void> {
  const visitorChunks = chunks([...new Set(visitorIds)].sort(), CHUNK);
  for (const names of chunks([...new Set(goalNames)].sort(), CHUNK)) {
    for (const visitors of visitorChunks) {
      const remaining = await completions.pairs(websiteId, names, visitors);
      const kept = new Set(remaining.map((row) => `${row.name}\u0000${row.visitor_id}`));
      const pairs = await trx
        .selectFrom('goal_visitors')
        .select(['goal_name', 'visitor_id'])
        .where('website_id', '=', websiteId)
        .where('goal_name', 'in', names)
        .where('visitor_id', 'in', visitors)
        .execute();
      for (const name of names) {
        const lost = pairs.filter((p) => p.goal_name === name && !kept.has(`${name}\u0000${p.visitor_id}`)).map((p) => p.visitor_id);
        if (lost.length === 0) continue;
        await trx.deleteFrom('goal_visitors').where('website_id', '=', websiteId).where('goal_name', '=', name).where('visitor_id', 'in', lost).execute();
      }
    }

    const counted = await completions.totals(websiteId, names);
    await trx.deleteFrom('goal_stats').where('website_id', '=', websiteId).where('goal_name', 'in', names).execute();
    if (counted.length === 0) continue;
    await trx
      .insertInto('goal_stats')
      .values(
        counted.map((row) => ({
          website_id: websiteId,
          goal_name: row.name,
          completions: row.completions,
          visitors: row.visitors,
          last_completed_at: row.last_completed_at,
        })),
      )
      .execute();
  }
}

/** Where the remaining completions are counted from: the events table, wherever it lives. */
export interface GoalCompletions {
  /** The distinct (goal, visitor) pairs among `names` and `visitors` that still have a completion. */
  pairs(websiteId: string, names: string[], visitors: string[]): Promise<{ name: string; visitor_id: string }[]>;
  /** Completions, distinct visitors and the latest completion (ISO) per goal among `names`. */
  totals(websiteId: string, names: string[]): Promise<{ name: string; completions: number; visitors: number; last_completed_at: string }[]>;
}

/** The relational events table (events_website_goal_idx), inside the caller's transaction. */
function relationalCompletions(trx: Kysely<Database>): GoalCompletions {
  const goalEvents = (websiteId: string, names: string[]) =>
    trx.selectFrom('events').where('website_id', '=', websiteId).where('type', '=', 'custom').where('name', 'in', names);
  return {
    async pairs(websiteId, names, visitors) {
      const rows = await goalEvents(websiteId, names).select(['name', 'visitor_id']).distinct().where('visitor_id', 'in', visitors).execute();
      return rows.map((row) => ({ name: row.name as string, visitor_id: row.visitor_id }));
    },
    async totals(websiteId, names) {
      const rows = await goalEvents(websiteId, names)
        .select((eb) => [
          'name',
          eb.fn.countAll().as('completions'),
          eb.fn.count('visitor_id').distinct().as('visitors'),
          eb.fn.max('occurred_at').as('last_completed_at'),
        ])
        .groupBy('name')
        .execute();
      return rows.map((row) => ({
        name: row.name as string,
        completions: Number(row.completions),
        visitors: Number(row.visitors),
        last_completed_at: new Date(row.last_completed_at).toISOString(),
      }));
    },
  };
}
