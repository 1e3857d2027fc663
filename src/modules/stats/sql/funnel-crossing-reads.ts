import { type Kysely, sql } from 'kysely';
import { DateTime } from 'luxon';
import type { Database } from '../../../db/schema.ts';
import { isPostgres } from '../../../db/engine.ts';
import { type MatchedStep, keptFunnelSteps, matchedSteps, sameSteps, stepBits } from '../../analytics/funnel-steps-match.ts';
import { type StepEvent, dayTransition, foldTransitions, transitionOf } from '../../analytics/funnel-transitions.ts';
import type { FunnelStepCounts, FunnelStepSpec, MoneyRules } from '../event-store.ts';
import type { StatsScope } from '../stats.params.ts';
import { paidMinor } from './money-sql.ts';
import { paymentScope } from './overview-sql.ts';
import { num } from './scope-sql.ts';

// A stored funnel's report from its derived tables (analytics/funnel-crossings.ts), unfiltered,
// in the website's own zone: the whole local days [a, b] of the range are the sums of
// funnel_crossings (rows bounded by days and steps); revenue is each paying visitor's payments in
// range at the depth their fold over their kept days reaches. A last day cut after the website's
// latest event that day is whole so far. A first or last day the range cuts otherwise can be
// corrected per visitor who has step events on its part in range (their fold over the whole days
// out, their fold with that part in), when asked (`correctCutDays`). Gives up (the raw events
// answer) for steps no stored kept funnel has, another zone, a range within one local day, and a
// cut day it is not asked to correct.

/** The stored funnel whose tables answer these steps: any of the website's kept funnels (funnel_crossings_kept) with the same steps. */
async function keptFunnelOf(db: Kysely<Database>, websiteId: string, steps: MatchedStep[]): Promise<string | undefined> {
  return (await keptFunnelSteps(db, websiteId)).find((funnel) => sameSteps(funnel.steps, steps))?.id;
}

const dayAfter = (day: string) => DateTime.fromISO(day, { zone: 'UTC' }).plus({ days: 1 }).toISODate()!;
const dayBefore = (day: string) => DateTime.fromISO(day, { zone: 'UTC' }).minus({ days: 1 }).toISODate()!;

/** The range as whole local days [a, b] with the parts of its cut first and last days, in `zone`. */
interface DayPlan {
  a: string;
  b: string;
  /** The parts in range of the days it cuts, as instants [from, to): slot 0 the first day's, 1 the last's. */
  edges: { from: string; to: string; slot: 0 | 1 }[];
}

async function dayPlan(db: Kysely<Database>, scope: StatsScope, zone: string): Promise<DayPlan | undefined> {
  if (scope.range === null) return { a: '0000-01-01', b: '9999-12-31', edges: [] };
  const from = DateTime.fromISO(scope.range.from, { zone });
  const to = DateTime.fromISO(scope.range.to, { zone });
  if (!from.isValid || !to.isValid || to <= from) return undefined;
  const first = from.toISODate()!;
  const last = to.minus({ milliseconds: 1 }).toISODate()!;
  const firstStart = from.startOf('day');
  const lastEnd = to.minus({ milliseconds: 1 }).startOf('day').plus({ days: 1 }).startOf('day');
  const cutFirst = firstStart.toMillis() !== from.toMillis();
  let cutLast = lastEnd.toMillis() !== to.toMillis();
  if (cutLast) {
    // Cut after the website's latest event of that day: the day is whole so far.
    const later = await sql`select 1 from events e where e.website_id = ${scope.websiteId} and e.occurred_at >= ${scope.range.to} and e.occurred_at < ${iso(lastEnd)} limit 1`.execute(db);
    cutLast = later.rows.length > 0;
  }
  if (first === last && (cutFirst || cutLast)) return undefined;
  const edges: DayPlan['edges'] = [];
  if (cutFirst) edges.push({ from: scope.range.from, to: iso(firstStart.plus({ days: 1 }).startOf('day')), slot: 0 });
  if (cutLast) edges.push({ from: iso(to.minus({ milliseconds: 1 }).startOf('day')), to: scope.range.to, slot: 1 });
  return { a: cutFirst ? dayAfter(first) : first, b: cutLast ? dayBefore(last) : last, edges };
}

const iso = (time: DateTime) => new Date(time.toMillis()).toISOString();

/** Steps 1..depth of `counts` moved by `amount`. */
const addDepth = (counts: number[], depth: number, amount: number) => {
  for (let n = 0; n < depth; n += 1) counts[n]! += amount;
};

/**
 * `correctCutDays`: also answer a range whose first or last day is cut (with events after it) by
 * the per-visitor correction. Off for the reads: at a million events it took about twice the raw
 * report (docs/decisions.md), since it reads every such visitor's kept days; kept and tested so a
 * bounded form of it can replace it.
 */
export async function funnelFromCrossings(
  db: Kysely<Database>,
  scope: StatsScope,
  specs: FunnelStepSpec[],
  money: MoneyRules,
  { correctCutDays = false }: { correctCutDays?: boolean } = {},
): Promise<FunnelStepCounts[] | undefined> {
  if (scope.filters.length > 0) return undefined;
  const steps = matchedSteps(specs);
  if (!steps) return undefined;
  const website = await db.selectFrom('websites').select('timezone').where('id', '=', scope.websiteId).executeTakeFirst();
  if (!website || website.timezone !== scope.timezone) return undefined;
  const funnelId = await keptFunnelOf(db, scope.websiteId, steps);
  if (funnelId === undefined) return undefined;
  const plan = await dayPlan(db, scope, website.timezone);
  if (!plan || (plan.edges.length > 0 && !correctCutDays)) return undefined;
  const stepCount = steps.length;
  const visitors = steps.map(() => 0);
  if (plan.a <= plan.b) {
    const { rows } = await sql<{ depth: unknown; visitors: unknown }>`select depth, sum(visitors) as visitors from funnel_crossings
      where website_id = ${scope.websiteId} and funnel_id = ${funnelId} and start_day >= ${plan.a} and after_day < ${plan.a} and day <= ${plan.b}
      group by depth`.execute(db);
    for (const row of rows) visitors[num(row.depth) - 1]! += num(row.visitors);
  }
  // The parts of the cut days: each visitor's transitions over them, by edge.
  const edgeTransitions = new Map<string, (number[] | null)[]>();
  for (const edge of plan.edges) {
    const { rows } = await sql<{ visitor_id: string; occurred_at: unknown; type: string; name: string | null; path: string | null }>`
      select e.visitor_id, e.occurred_at, e.type, e.name, e.path from events e
      where e.website_id = ${scope.websiteId} and e.occurred_at >= ${edge.from} and e.occurred_at < ${edge.to} and ${anyStep(steps)}`.execute(db);
    const byVisitor = new Map<string, StepEvent[]>();
    for (const row of rows) {
      const bits = stepBits(steps, row);
      if (bits === 0) continue;
      const at = typeof row.occurred_at === 'string' ? Date.parse(row.occurred_at) : (row.occurred_at as Date).getTime();
      (byVisitor.get(row.visitor_id) ?? byVisitor.set(row.visitor_id, []).get(row.visitor_id)!).push({ at, steps: bits });
    }
    for (const [visitorId, events] of byVisitor) {
      const both = edgeTransitions.get(visitorId) ?? edgeTransitions.set(visitorId, [null, null]).get(visitorId)!;
      both[edge.slot] = dayTransition(events, stepCount);
    }
  }
  const payers = await payingVisitors(db, scope, money);
  // A visitor who does not pass the first step on the cut first day's part, and has no part of a cut last day, keeps the depth the sums gave.
  for (const [visitorId, [firstPart, lastPart]] of edgeTransitions) if (lastPart === null && firstPart![0] === 0) edgeTransitions.delete(visitorId);
  const perVisitor = [...new Set([...edgeTransitions.keys(), ...payers.keys()])];
  const interior = await interiorDays(db, scope.websiteId, funnelId, plan, perVisitor);
  const revenue = steps.map(() => 0);
  for (const visitorId of perVisitor) {
    const days = interior.get(visitorId) ?? [];
    const [firstPart, lastPart] = edgeTransitions.get(visitorId) ?? [null, null];
    const depth = foldTransitions([...(firstPart ? [firstPart] : []), ...days, ...(lastPart ? [lastPart] : [])], stepCount);
    if (edgeTransitions.has(visitorId)) {
      addDepth(visitors, foldTransitions(days, stepCount), -1);
      addDepth(visitors, depth, 1);
    }
    const paid = payers.get(visitorId);
    if (paid !== undefined) addDepth(revenue, depth, paid);
  }
  return visitors.map((count, i) => ({ visitors: count, revenueMinor: revenue[i]! }));
}

/** The condition on events `e` of matching any of the steps (matched again per step in JS). */
function anyStep(steps: readonly MatchedStep[]) {
  return sql`(${sql.join(
    steps.map((step) => (step.type === 'goal' ? sql`(e.type = 'custom' and e.name = ${step.name})` : sql`(e.type = 'pageview' and e.path = ${step.path})`)),
    sql` or `,
  )})`;
}

/** The visitors with payments in range, and what they paid (the raw report's payments). */
async function payingVisitors(db: Kysely<Database>, scope: StatsScope, money: MoneyRules): Promise<Map<string, number>> {
  const { rows } = await sql<{ visitor_id: string; minor: unknown }>`select p.visitor_id, sum(${paidMinor(money)}) as minor from payments p
    where ${paymentScope({ ...scope, filters: [] }, money)} and p.visitor_id is not null group by p.visitor_id`.execute(db);
  return new Map(rows.map((row) => [row.visitor_id, num(row.minor)]));
}

/**
 * The visitors' kept transitions over the whole days [a, b], in day order: one statement, the ids
 * as one parameter (a JSON array on SQLite, an array on PostgreSQL), each visitor a seek of the key.
 */
async function interiorDays(db: Kysely<Database>, websiteId: string, funnelId: string, plan: DayPlan, visitorIds: string[]): Promise<Map<string, number[][]>> {
  const days = new Map<string, number[][]>();
  if (plan.a > plan.b || visitorIds.length === 0) return days;
  const ids = isPostgres(db) ? sql`d.visitor_id = any(${visitorIds}::text[])` : sql`d.visitor_id in (select value from json_each(${JSON.stringify(visitorIds)}))`;
  const { rows } = await sql<{ visitor_id: string; transition: string }>`select d.visitor_id, d.transition from funnel_visitor_days d
    where d.website_id = ${websiteId} and d.funnel_id = ${funnelId} and ${ids} and d.day >= ${plan.a} and d.day <= ${plan.b}
    order by d.visitor_id, d.day`.execute(db);
  for (const row of rows) (days.get(row.visitor_id) ?? days.set(row.visitor_id, []).get(row.visitor_id)!).push(transitionOf(row.transition));
  return days;
}
