import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { ClickHouse } from '../../../db/clickhouse/clickhouse.ts';
import type { Database } from '../../../db/schema.ts';
import type { FunnelCounts, FunnelStepSpec, MoneyRules } from '../event-store.ts';
import { pathOf } from '../stats.filters.ts';
import { paymentScope } from '../sql/overview-sql.ts';
import { type ClickHouseScope, matches, num, sampledTable, scopeCondition } from './scope-ch.ts';
import { scaled } from './sampling-ch.ts';
import { ofVisitors } from './visitor-rows-ch.ts';
import { paidMinor } from '../sql/money-sql.ts';

// A funnel report, as ../sql/funnel-sql.ts: step n's visitors are those with a matching event at
// or after the time they reached step n-1, all within the scope; each step keeps the first such
// time. Here each visitor's matching times are gathered per step, walked step by step, and the
// visitor counted at the last step reached. Over a range above the sampling threshold the events
// are read from a sample of the visitors (scope.sample; the funnel is a question per visitor, and
// a sample keeps every event of its visitors) and the counts scaled back up. Step revenue is what
// the visitors who reached it paid in the range, exact: payments are relational, the paying
// visitors are read there first and their depths computed from every event of theirs.

/** Visitor ids per ClickHouse query when placing the paying visitors in the funnel. */
const IDS_PER_QUERY = 2000;

function stepCondition(step: FunnelStepSpec): RawBuilder<unknown> {
  if (step.type === 'goal') return sql`(type = 'custom' and name = ${step.goalName ?? ''})`;
  return sql`(type = 'pageview' and ${matches(sql.ref('path'), { dimension: 'page', operator: 'is', values: [pathOf(step.url ?? '/')] })})`;
}

/**
 * One row per visitor in scope who reached the first step: `visitor_id` and `depth`, the number
 * of steps reached. `reached_i` is when step i was reached in epoch ms (0: not reached; no event
 * is at the epoch itself): the first time at or after step i-1's.
 */
function depths(scope: ClickHouseScope, steps: FunnelStepSpec[], extra: RawBuilder<unknown>): RawBuilder<unknown> {
  const times = steps.map((step, i) => sql`groupArrayIf(occurred_ms, ${stepCondition(step)}) as ${sql.ref(`times_${i}`)}`);
  const reached = steps.map((_, i) => {
    const own = sql.ref(`times_${i}`);
    if (i === 0) return sql`if(empty(${own}), toUInt64(0), arrayReduce('min', ${own})) as reached_0`;
    const previous = sql.ref(`reached_${i - 1}`);
    // The minimum over no time is 0, which reads as not reached.
    const after = sql`arrayFilter((t, since) -> t >= since, ${own}, replicate(${previous}, ${own}))`;
    return sql`if(${previous} = 0, toUInt64(0), arrayReduce('min', ${after})) as ${sql.ref(`reached_${i}`)}`;
  });
  const depth = sql.join(
    steps.map((_, i) => sql`(${sql.ref(`reached_${i}`)} > 0)`),
    sql` + `,
  );
  return sql`(
    select visitor_id, ${sql.join(reached)}, ${depth} as depth from (
      select visitor_id, ${sql.join(times)} from ${sampledTable('events', scope.sample)}
      where ${scopeCondition(scope)} and (${sql.join(steps.map(stepCondition), sql` or `)}) and ${extra}
      group by visitor_id)
    where reached_0 > 0)`;
}

export async function funnel(ch: ClickHouse, db: Kysely<Database>, scope: ClickHouseScope, steps: FunnelStepSpec[], money: MoneyRules): Promise<FunnelCounts> {
  if (steps.length === 0) return [];
  const rate = scope.sample ?? null;
  const [byDepth, paidByDepth] = await Promise.all([
    ch.rows<{ depth: unknown; n: unknown }>(sql`select depth, count() as n from ${depths(scope, steps, sql`1 = 1`)} group by depth`),
    revenueByDepth(ch, db, { ...scope, sample: null }, steps, money),
  ]);
  const visitorsAt = new Map(byDepth.map((row) => [num(row.depth), num(row.n)]));
  // A visitor who reached step n reached every step before it.
  const counts: FunnelCounts = steps.map((_, i) => {
    let visitors = 0;
    let revenueMinor = 0;
    for (let depth = i + 1; depth <= steps.length; depth++) {
      visitors += visitorsAt.get(depth) ?? 0;
      revenueMinor += paidByDepth.get(depth) ?? 0;
    }
    return { visitors: scaled(visitors, rate), revenueMinor };
  });
  if (rate) counts.sampleRate = rate;
  return counts;
}

/** What the paying visitors of the range paid, by the number of steps they reached (every event of theirs: `scope` unsampled). */
async function revenueByDepth(ch: ClickHouse, db: Kysely<Database>, scope: ClickHouseScope, steps: FunnelStepSpec[], money: MoneyRules): Promise<Map<number, number>> {
  const paying = await sql<{ visitor_id: string; minor: unknown }>`
    select p.visitor_id, sum(${paidMinor(money)}) as minor from payments p
    where ${paymentScope({ ...scope, filters: [] }, money)} and p.visitor_id is not null
    group by p.visitor_id`.execute(db);
  const paid = new Map(paying.rows.map((row) => [row.visitor_id, num(row.minor)]));
  const byDepth = new Map<number, number>();
  const ids = [...paid.keys()];
  for (let i = 0; i < ids.length; i += IDS_PER_QUERY) {
    const chunk = ids.slice(i, i + IDS_PER_QUERY);
    const rows = await ch.rows<{ visitor_id: string; depth: unknown }>(
      sql`select visitor_id, depth from ${depths(scope, steps, ofVisitors(chunk))}`,
    );
    for (const row of rows) byDepth.set(num(row.depth), (byDepth.get(num(row.depth)) ?? 0) + (paid.get(row.visitor_id) ?? 0));
  }
  return byDepth;
}
