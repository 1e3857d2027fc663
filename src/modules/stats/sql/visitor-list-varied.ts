import { type Kysely, sql } from 'kysely';
import { engineOf, isPostgres } from '../../../db/engine.ts';
import type { Database } from '../../../db/schema.ts';
import type { StatsScope } from '../stats.params.ts';
import { num, scopeCondition } from './scope-sql.ts';
import { attributeFilters, profileFilters } from './steady-split-sql.ts';

// The visitor list filtered on visitor attributes alone, all time (visitors-sql.ts), reads what is
// bounded by the page and by the number of profiles, not by the website's visitors or events:
//
// - its rows: the steady visitors' (whose filtered attributes never varied) walk visitor_totals'
//   recency index; the varied visitors' are grouped from their events, but only for those recent
//   enough to reach the page. They are walked newest first (by visitor_totals.last_at, through the
//   partial recency index of migration 0037), a batch at a time, and the walk stops once the
//   page's last row is later than the last one walked: a visitor's filtered events end no later
//   than all of theirs, so no visitor left can reach the page.
// - its total: the visitors who never varied, from the sums per profile (profile_totals); those
//   who varied on other attributes than the filtered ones, from their rows (the partial index of
//   varied visitors); those who varied on a filtered one, from their events that pass.

/** Varied visitors read per statement while walking. */
const BATCH = 200;

const millis = (value: unknown) => new Date(value as string).getTime();

/** The `k`-th largest of `values` (1-based), or undefined when there are fewer. */
function kthLargest(values: number[], k: number): number | undefined {
  if (values.length < k) return undefined;
  return [...values].sort((a, b) => b - a)[k - 1];
}

/**
 * The visitors whose filtered attributes varied (`mask`: the filters' bits) who have an event that
 * passes and may be among the first `window` rows of the list, given the last seen times of the
 * first `window` steady rows (`steadyTimes`, asked for once there is a varied visitor to walk).
 */
export async function variedVisitorsReaching(db: Kysely<Database>, scope: StatsScope, mask: number, window: number, steadyTimes: () => Promise<unknown[]>): Promise<string[]> {
  const bits = sql.lit(mask);
  const passing = scopeCondition(scope, { byVisitor: !isPostgres(db) });
  let seen: number[] | undefined;
  const ids: string[] = [];
  let after: { lastAt: unknown; visitorId: string } | undefined;
  for (;;) {
    const next = after ? sql`and (w.last_at < ${after.lastAt} or (w.last_at = ${after.lastAt} and w.visitor_id > ${after.visitorId}))` : sql``;
    const { rows: candidates } = await sql<{ visitor_id: string; last_at: unknown }>`
      select w.visitor_id, w.last_at from visitor_totals w
      where w.website_id = ${scope.websiteId} and w.varied <> 0 and (w.varied & ${bits}) <> 0 ${next}
      order by w.last_at desc, w.visitor_id limit ${BATCH}`.execute(db);
    if (candidates.length === 0) return ids;
    seen ??= (await steadyTimes()).map(millis);
    const { rows: found } = await sql<{ visitor_id: string; last_at: unknown }>`
      select e.visitor_id, max(e.occurred_at) as last_at from events e
      where ${passing} and e.visitor_id in (${sql.join(candidates.map((row) => row.visitor_id))}) group by e.visitor_id`.execute(db);
    for (const row of found) {
      ids.push(row.visitor_id);
      seen.push(millis(row.last_at));
    }
    const last = candidates.at(-1)!;
    const pageEnd = kthLargest(seen, window);
    if (candidates.length < BATCH || (pageEnd !== undefined && pageEnd > millis(last.last_at))) return ids;
    after = { lastAt: last.last_at, visitorId: last.visitor_id };
  }
}

/**
 * The number of visitors in the filtered list. `count`: the visitors who never varied from the
 * sums per profile ('profiles') or, while a build has cleared those, from their rows ('rows').
 */
export async function filteredVisitorCount(db: Kysely<Database>, scope: StatsScope, mask: number, count: 'profiles' | 'rows'): Promise<number> {
  const bits = sql.lit(mask);
  const passes = attributeFilters(scope, (attribute) => sql.ref(`v.${attribute}`));
  const rowsOf = (which: ReturnType<typeof sql>) => sql`(select count(*) from visitor_totals v where v.website_id = ${scope.websiteId} and ${which} and ${passes})`;
  const steady =
    count === 'rows'
      ? rowsOf(sql`(v.varied & ${bits}) = 0`)
      : sql`(select coalesce(sum(p.visitors), 0) from profile_totals p where p.website_id = ${scope.websiteId} and ${profileFilters(engineOf(db), scope, sql.ref('p.profile'))})
          + ${rowsOf(sql`v.varied <> 0 and (v.varied & ${bits}) = 0`)}`;
  const varied = sql`${scopeCondition(scope, { byVisitor: !isPostgres(db) })} and e.visitor_id in (
    select w.visitor_id from visitor_totals w where w.website_id = ${scope.websiteId} and w.varied <> 0 and (w.varied & ${bits}) <> 0)`;
  const { rows } = await sql<{ steady: unknown; varied: unknown }>`
    select ${steady} as steady, (select count(distinct e.visitor_id) from events e where ${varied}) as varied`.execute(db);
  return num(rows[0]?.steady) + num(rows[0]?.varied);
}
