import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { ClickHouse } from '../../../db/clickhouse/clickhouse.ts';
import type { Database } from '../../../db/schema.ts';
import type { MoneyRules } from '../event-store.ts';
import type { StatsScope } from '../stats.params.ts';
import { paymentScope } from '../sql/overview-sql.ts';
import { scopeCondition } from './scope-ch.ts';

// Payments stay in the relational engine beside the events' ClickHouse: there are few of them
// (one per sale, not per page view) and they change (refunds, deletions). A filtered scope keeps
// the payments of the visitors it keeps: the paying visitors are read from the relational side
// and ClickHouse says which of them the scope keeps, so no list grows with the traffic.

/** Visitor ids per ClickHouse query (each is an id of at most 64 bytes in the query text). */
const IDS_PER_QUERY = 2000;

/** Which of `visitorIds` have an event in the scope (range and filters). */
export async function visitorsInScope(ch: ClickHouse, scope: StatsScope, visitorIds: string[]): Promise<string[]> {
  const kept: string[] = [];
  for (let i = 0; i < visitorIds.length; i += IDS_PER_QUERY) {
    const chunk = visitorIds.slice(i, i + IDS_PER_QUERY);
    const rows = await ch.rows<{ visitor_id: string }>(
      sql`select distinct visitor_id from events where ${scopeCondition(scope)} and visitor_id in (${sql.join(chunk)})`,
    );
    for (const row of rows) kept.push(row.visitor_id);
  }
  return kept;
}

/**
 * A condition on the relational `payments p` equal to ../sql/overview-sql.ts's paymentScope: the
 * payments in the range, currency and renewal rules, and, when the scope filters, of the
 * visitors it keeps.
 */
export async function paymentCondition(ch: ClickHouse, db: Kysely<Database>, scope: StatsScope, money: MoneyRules): Promise<RawBuilder<unknown>> {
  const unfiltered = paymentScope({ ...scope, filters: [] }, money);
  if (scope.filters.length === 0) return unfiltered;
  const paying = await sql<{ visitor_id: string }>`select distinct p.visitor_id from payments p where ${unfiltered} and p.visitor_id is not null`.execute(db);
  const kept = await visitorsInScope(ch, scope, paying.rows.map((row) => row.visitor_id));
  if (kept.length === 0) return sql`${unfiltered} and 1 = 0`;
  return sql`${unfiltered} and p.visitor_id in (${sql.join(kept)})`;
}
