import { type Kysely, type RawBuilder, sql } from 'kysely';
import { isPostgres } from '../../../db/engine.ts';
import type { Database } from '../../../db/schema.ts';
import type { FunnelStepCounts, FunnelStepSpec, MoneyRules } from '../event-store.ts';
import { pathOf } from '../stats.filters.ts';
import { type ReadShape, answerRead, shapeOf } from '../read-planner.ts';
import { funnelFromCrossings } from './funnel-crossing-reads.ts';
import type { StatsScope } from '../stats.params.ts';
import { attributeMask } from '../../analytics/visitor-attributes.ts';
import { paymentScope } from './overview-sql.ts';
import { matches, num, scopeCondition } from './scope-sql.ts';
import { steadyPassingVisitors, variedVisitors } from './steady-split-sql.ts';
import { paidMinor } from './money-sql.ts';

// A funnel report in one statement: step n's visitors are those with a matching event at or
// after the time they reached step n-1, all within the scope; each step keeps the first such time.
// A page step reads events_website_page_idx (path, visitor, time), a goal step
// events_website_goal_idx (goal, time, visitor): both cover what a step reads (migration 0018).
// Filtered on visitor attributes alone, the report is the sum of two that count disjoint
// visitors: the steady visitors who pass the filters, with every event of theirs (a steady
// visitor's events all pass or all fail), and the varied visitors' events that pass (the split of
// steady-split-sql.ts), so the filters are not tested on every step event.

/** The condition on an event `e` of matching a step (also what the transitions of a funnel kept per day match, analytics/funnel-transitions.ts). */
export function stepCondition(step: FunnelStepSpec) {
  if (step.type === 'goal') return sql`e.type = 'custom' and e.name = ${step.goalName ?? ''}`;
  return sql`e.type = 'pageview' and ${matches(sql.ref('e.path'), { dimension: 'page', operator: 'is', values: [pathOf(step.url ?? '/')] })}`;
}

/** The report over the events `scope` keeps, of `visitors` (a subquery of visitor ids) when given. */
async function funnelOf(db: Kysely<Database>, scope: StatsScope, steps: FunnelStepSpec[], money: MoneyRules, visitors?: RawBuilder<unknown>): Promise<FunnelStepCounts[]> {
  const inScope = visitors ? sql`${scopeCondition(scope)} and e.visitor_id in (${visitors})` : scopeCondition(scope);
  // SQLite would probe each later step by visitor (events_website_visitor_idx, every event of
  // theirs); a unary + on the visitor column keeps it on the step's own index.
  const visitor = isPostgres(db) ? sql`e.visitor_id` : sql`+e.visitor_id`;
  const ctes = steps.map((step, i) => {
    const name = sql.raw(`s${i + 1}`);
    if (i === 0) {
      return sql`${name} as (select e.visitor_id, min(e.occurred_at) as t from events e where ${inScope} and ${stepCondition(step)} group by e.visitor_id)`;
    }
    const previous = sql.raw(`s${i}`);
    return sql`${name} as (select e.visitor_id, min(e.occurred_at) as t from events e join ${previous} on ${previous}.visitor_id = ${visitor} and e.occurred_at >= ${previous}.t
      where ${inScope} and ${stepCondition(step)} group by ${visitor})`;
  });
  const payments = paymentScope({ ...scope, filters: [] }, money);
  const selects = steps.map((_, i) => {
    const name = sql.raw(`s${i + 1}`);
    return sql`select ${i} as i, (select count(*) from ${name}) as visitors, (select sum(${paidMinor(money)}) from payments p where ${payments} and p.visitor_id in (select visitor_id from ${name})) as minor`;
  });
  const { rows } = await sql<{ i: unknown; visitors: unknown; minor: unknown }>`
    with ${sql.join(ctes)} ${sql.join(selects, sql` union all `)}`.execute(db);
  const byStep = new Map(rows.map((row) => [num(row.i), row]));
  return steps.map((_, i) => ({ visitors: num(byStep.get(i)?.visitors), revenueMinor: num(byStep.get(i)?.minor) }));
}

/** The report with the filters tested on every step event (what the split must equal). */
export const rawFunnel = (db: Kysely<Database>, scope: StatsScope, steps: FunnelStepSpec[], money: MoneyRules) => funnelOf(db, scope, steps, money);

/**
 * The report: a stored funnel's, unfiltered, from its derived tables when the planner says they
 * are there (funnel-crossing-reads.ts, which also answers ranges that cut their first and last
 * days, and gives up on what it cannot answer); else from the raw events.
 */
export async function funnel(db: Kysely<Database>, scope: StatsScope, steps: FunnelStepSpec[], money: MoneyRules): Promise<FunnelStepCounts[]> {
  const shape: ReadShape = { ...shapeOf(scope), range: scope.range === null ? 'all-time' : 'whole-days' };
  return answerRead('funnel', shape, scope.derivedState ?? 'ready', {
    funnel_crossings: () => funnelFromCrossings(db, scope, steps, money),
    events: () => rawOrSplit(db, scope, steps, money),
  });
}

async function rawOrSplit(db: Kysely<Database>, scope: StatsScope, steps: FunnelStepSpec[], money: MoneyRules): Promise<FunnelStepCounts[]> {
  if (scope.filters.length === 0 || attributeMask(scope.filters) === null) return funnelOf(db, scope, steps, money);
  const steady = await funnelOf(db, { ...scope, filters: [] }, steps, money, steadyPassingVisitors(scope));
  const varied = await funnelOf(db, scope, steps, money, variedVisitors(scope.websiteId));
  return steady.map((counts, i) => ({ visitors: counts.visitors + varied[i]!.visitors, revenueMinor: counts.revenueMinor + varied[i]!.revenueMinor }));
}
