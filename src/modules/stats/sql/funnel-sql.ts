import { type Kysely, sql } from 'kysely';
import type { Database } from '../../../db/schema.ts';
import type { FunnelStepCounts, FunnelStepSpec, MoneyRules } from '../event-store.ts';
import { pathOf } from '../stats.filters.ts';
import type { StatsScope } from '../stats.params.ts';
import { paymentScope } from './overview-sql.ts';
import { matches, num, scopeCondition } from './scope-sql.ts';

// A funnel report in one statement: step n's visitors are those with a matching event at or
// after the time they reached step n-1, all within the scope; each step keeps the first such time.

function stepCondition(step: FunnelStepSpec) {
  if (step.type === 'goal') return sql`e.type = 'custom' and e.name = ${step.goalName ?? ''}`;
  return sql`e.type = 'pageview' and ${matches(sql.ref('e.path'), { dimension: 'page', operator: 'is', values: [pathOf(step.url ?? '/')] })}`;
}

export async function funnel(db: Kysely<Database>, scope: StatsScope, steps: FunnelStepSpec[], money: MoneyRules): Promise<FunnelStepCounts[]> {
  const ctes = steps.map((step, i) => {
    const name = sql.raw(`s${i + 1}`);
    if (i === 0) {
      return sql`${name} as (select e.visitor_id, min(e.occurred_at) as t from events e where ${scopeCondition(scope)} and ${stepCondition(step)} group by e.visitor_id)`;
    }
    const previous = sql.raw(`s${i}`);
    return sql`${name} as (select e.visitor_id, min(e.occurred_at) as t from events e join ${previous} on ${previous}.visitor_id = e.visitor_id and e.occurred_at >= ${previous}.t where ${scopeCondition(scope)} and ${stepCondition(step)} group by e.visitor_id)`;
  });
  const payments = paymentScope({ ...scope, filters: [] }, money);
  const selects = steps.map((_, i) => {
    const name = sql.raw(`s${i + 1}`);
    return sql`select ${i} as i, (select count(*) from ${name}) as visitors, (select sum(p.amount_minor) from payments p where ${payments} and p.visitor_id in (select visitor_id from ${name})) as minor`;
  });
  const { rows } = await sql<{ i: unknown; visitors: unknown; minor: unknown }>`
    with ${sql.join(ctes)} ${sql.join(selects, sql` union all `)}`.execute(db);
  const byStep = new Map(rows.map((row) => [num(row.i), row]));
  return steps.map((_, i) => ({ visitors: num(byStep.get(i)?.visitors), revenueMinor: num(byStep.get(i)?.minor) }));
}
