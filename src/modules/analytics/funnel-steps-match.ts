import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.ts';
import { pathOf } from '../../lib/page-path.ts';

// The steps of a stored funnel as its derived tables match them (funnel-crossings.ts), the same
// rule as the raw report's SQL (src/modules/stats/sql/funnel-sql.ts stepCondition): a page step
// is a pageview whose path equals the step's path, a goal step a custom event of that name. A
// page step with a wildcard (`*`) is matched by LIKE in SQL, whose case folding differs between
// the engines: such funnels are not kept, and their reports stay raw.

/** A step as the funnel's tables see it. */
export type MatchedStep = { type: 'pageview'; path: string } | { type: 'goal'; name: string };

/** What a step is stored or asked as (the admin API's steps, the report's FunnelStepSpec). */
export interface StepLike {
  type: string;
  url?: string | null;
  goalName?: string | null;
}

/** The steps as matched, or null when the funnel is not kept (a wildcard page step). */
export function matchedSteps(steps: readonly StepLike[]): MatchedStep[] | null {
  const matched: MatchedStep[] = [];
  for (const step of steps) {
    if (step.type === 'goal') matched.push({ type: 'goal', name: step.goalName ?? '' });
    else {
      const path = pathOf(step.url ?? '/');
      if (path.includes('*')) return null;
      matched.push({ type: 'pageview', path });
    }
  }
  return matched;
}

/** Whether two funnels' steps match the same events in the same order (their tables are the same). */
export const sameSteps = (a: readonly MatchedStep[], b: readonly MatchedStep[]): boolean => JSON.stringify(a) === JSON.stringify(b);

/** An event as a step sees it. */
export interface StepCandidate {
  type: string;
  name: string | null;
  path: string | null;
}

/** The steps the event matches: bit i for step i + 1. */
export function stepBits(steps: readonly MatchedStep[], event: StepCandidate): number {
  let bits = 0;
  steps.forEach((step, i) => {
    const hit = step.type === 'goal' ? event.type === 'custom' && event.name === step.name : event.type === 'pageview' && event.path === step.path;
    if (hit) bits |= 1 << i;
  });
  return bits;
}

/**
 * The website's kept funnels (funnel_crossings_kept) with their steps as matched, in id order; with
 * `building`, those whose build runs too (funnel_builds, funnel-build.ts): the writers keep both,
 * the read answers from kept ones only.
 */
export async function keptFunnelSteps(db: Kysely<Database>, websiteId: string, { building = false } = {}): Promise<{ id: string; steps: MatchedStep[] }[]> {
  const listed = (table: 'funnel_crossings_kept' | 'funnel_builds') => db.selectFrom(table).select('funnel_id').where('website_id', '=', websiteId);
  const rows = await db
    .selectFrom('funnels as f')
    .select(['f.id', 'f.steps'])
    .where('f.website_id', '=', websiteId)
    .where('f.id', 'in', building ? listed('funnel_crossings_kept').union(listed('funnel_builds')) : listed('funnel_crossings_kept'))
    .orderBy('f.id')
    .execute();
  return rows.flatMap((row) => {
    const steps = matchedSteps(JSON.parse(row.steps) as { type: string; url?: string; goalName?: string }[]);
    return steps ? [{ id: row.id, steps }] : [];
  });
}
