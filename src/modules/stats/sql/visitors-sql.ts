import { type Kysely, type RawBuilder, sql } from 'kysely';
import { isPostgres } from '../../../db/engine.ts';
import type { Database } from '../../../db/schema.ts';
import type { RowsPage, VisitorActivity, VisitorListItem, VisitorListOptions, VisitorSummary } from '../event-store.ts';
import type { PageRequest, StatsScope } from '../stats.params.ts';
import { attributeMask } from '../../analytics/visitor-attributes.ts';
import { visitedPageFilters } from '../visitor-list.params.ts';
import { answerRead, shapeOf } from '../read-planner.ts';
import { columnCondition, matches, num, pageTotal, scopeCondition } from './scope-sql.ts';
import { type EventRow, type VisitStats, urlOf, visitorListItem, visitorSummary } from '../visitor-shapes.ts';
import { firstSessions, iso, latestEvents, visitStats } from './visitor-rows.ts';
import { filteredVisitorCount, variedVisitorsReaching } from './visitor-list-varied.ts';

// One visitor's page, and the list of a website's visitors, newest activity first.

const VISITED_PAGES = 100;
const GOALS = 100;

interface VisitorTotals {
  visitor_id: string;
  first_at: string;
  last_at: string;
  pageviews: unknown;
}

function summary(totals: VisitorTotals, latest: EventRow | undefined, first: EventRow | undefined, visits: VisitStats | undefined): VisitorSummary {
  const { visitor_id: visitorId, pageviews, first_at: firstAt, last_at: lastAt } = totals;
  return visitorSummary({ visitorId, pageViewCount: num(pageviews), firstVisitAt: iso(firstAt), lastVisitAt: iso(lastAt) }, latest, first, visits);
}

export async function visitor(db: Kysely<Database>, websiteId: string, visitorId: string): Promise<(VisitorSummary & VisitorActivity) | null> {
  const { rows } = await sql<VisitorTotals>`
    select e.visitor_id, min(e.occurred_at) as first_at, max(e.occurred_at) as last_at,
      sum(case when e.type = 'pageview' then 1 else 0 end) as pageviews
    from events e where e.website_id = ${websiteId} and e.visitor_id = ${visitorId}
    group by e.visitor_id`.execute(db);
  const totals = rows[0];
  if (!totals) return null;
  const [latest, visits, first, pages, goals] = await Promise.all([
    latestEvents(db, websiteId, [visitorId]),
    visitStats(db, websiteId, [visitorId]),
    db.selectFrom('events').selectAll().where('website_id', '=', websiteId).where('visitor_id', '=', visitorId).orderBy('occurred_at').orderBy('id').limit(1).executeTakeFirst(),
    db
      .selectFrom('events')
      .select(['hostname', 'path', 'occurred_at'])
      .where('website_id', '=', websiteId)
      .where('visitor_id', '=', visitorId)
      .where('type', '=', 'pageview')
      .orderBy('occurred_at', 'desc')
      .orderBy('id', 'desc')
      .limit(VISITED_PAGES)
      .execute(),
    db
      .selectFrom('events')
      .select(['name', 'description', 'occurred_at', 'source'])
      .where('website_id', '=', websiteId)
      .where('visitor_id', '=', visitorId)
      .where('type', '=', 'custom')
      .where('name', 'is not', null)
      .orderBy('occurred_at', 'desc')
      .orderBy('id', 'desc')
      .limit(GOALS)
      .execute(),
  ]);
  return {
    ...summary(totals, latest.get(visitorId), first, visits.get(visitorId)),
    visitedPages: pages.map((row) => ({ url: urlOf(row) ?? '', occurredAt: iso(row.occurred_at) })).filter((page) => page.url !== ''),
    completedGoals: goals.map((row) => ({ name: row.name!, description: row.description, occurredAt: iso(row.occurred_at), isServer: row.source === 'api' })),
  };
}

/** Whether the list asks for visitors by what they did (a goal, a page, a payment), beyond the scope's events. */
const narrowsVisitors = (options: VisitorListOptions): boolean => Object.values(options).some((value) => value !== undefined);

export async function visitors(db: Kysely<Database>, scope: StatsScope, options: VisitorListOptions, page: PageRequest): Promise<RowsPage<VisitorListItem>> {
  // What the visitors did (a goal, a page, a payment) filters them as any event filter does.
  const shape = shapeOf(scope);
  if (narrowsVisitors(options)) shape.filters = 'any';
  const { rows, total } = await answerRead('visitor-list', shape, scope.derivedState ?? 'ready', {
    // All time, with filters on visitor attributes only, the list reads visitor_totals.
    visitor_totals: () => {
      const mask = attributeMask(scope.filters);
      return mask === 0 ? visitorTotalsPage(db, scope.websiteId, page) : attributeFilteredPage(db, scope, mask!, page, 'rows');
    },
    // The same rows, and the total from the sums per profile instead of every visitor's row.
    profile_totals: () => attributeFilteredPage(db, scope, attributeMask(scope.filters)!, page, 'profiles'),
    events: () => groupedVisitors(db, scope, options, page),
  });
  const ids = rows.map((row) => row.visitor_id);
  const [latest, firsts] = await Promise.all([latestEvents(db, scope.websiteId, ids), firstSessions(db, scope.websiteId, ids)]);
  return {
    rows: rows.map((row) => visitorListItem(row.visitor_id, iso(row.last_at), latest.get(row.visitor_id), firsts.get(row.visitor_id))),
    total,
  };
}

/** All time without filters: a page of visitor_totals (kept by src/modules/analytics/visitor-totals.ts) in the order of its index. */
async function visitorTotalsPage(db: Kysely<Database>, websiteId: string, page: PageRequest): Promise<{ rows: VisitorTotals[]; total: number }> {
  const rows = await db
    .selectFrom('visitor_totals')
    .select(['visitor_id', 'first_at', 'last_at', 'pageviews'])
    .where('website_id', '=', websiteId)
    .orderBy('last_at', 'desc')
    .orderBy('visitor_id')
    .limit(page.limit)
    .offset(page.offset)
    .execute();
  // A short page that is not past the end tells the count; otherwise the index counts them.
  if (rows.length > 0 && rows.length < page.limit) return { rows, total: page.offset + rows.length };
  const counted = await db.selectFrom('visitor_totals').select((eb) => eb.fn.countAll().as('n')).where('website_id', '=', websiteId).executeTakeFirst();
  return { rows, total: num(counted?.n) };
}

/**
 * All time, filtered on visitor attributes only (mask: their bits): the visitors whose filtered
 * attributes never varied pass or fail whole, so their visitor_totals rows are theirs in the
 * filtered list too; the few whose did are grouped from their events that pass. Each side gives
 * its first offset + limit rows in list order, and the page is cut from both: the steady side walks
 * the recency index, the varied side only the varied visitors recent enough to reach the page
 * (visitor-list-varied.ts). `count`: how the total counts the steady visitors, from the sums per
 * profile (profile_totals, which a build clears) or from their rows (while it runs).
 */
async function attributeFilteredPage(db: Kysely<Database>, scope: StatsScope, mask: number, page: PageRequest, count: 'profiles' | 'rows'): Promise<{ rows: VisitorTotals[]; total: number }> {
  const bits = sql.lit(mask);
  const passes = scope.filters.map((filter) => columnCondition(sql.ref(`v.${filter.dimension}`), filter));
  const steady = sql.join([sql`v.website_id = ${scope.websiteId}`, sql`(v.varied & ${bits}) = 0`, ...passes], sql` and `);
  const window = page.offset + page.limit;
  const steadyTimes = async () => {
    const { rows } = await sql<{ last_at: unknown }>`select v.last_at from visitor_totals v where ${steady} order by v.last_at desc, v.visitor_id limit ${window}`.execute(db);
    return rows.map((row) => row.last_at);
  };
  const variedIds = await variedVisitorsReaching(db, scope, mask, window, steadyTimes);
  // The varied visitors' rows, from their events that pass (none walked: no such part).
  const varied = sql`union all select * from (
    select e.visitor_id, min(e.occurred_at) as first_at, max(e.occurred_at) as last_at, sum(case when e.type = 'pageview' then 1 else 0 end) as pageviews
    from events e where ${scopeCondition(scope, { byVisitor: !isPostgres(db) })} and e.visitor_id in (${sql.join(variedIds)}) group by e.visitor_id
    order by max(e.occurred_at) desc, e.visitor_id limit ${window}) varied`;
  const { rows } = await sql<VisitorTotals>`
    select visitor_id, first_at, last_at, pageviews from (
      select * from (
        select v.visitor_id, v.first_at, v.last_at, v.pageviews from visitor_totals v where ${steady}
        order by v.last_at desc, v.visitor_id limit ${window}) steady
      ${variedIds.length > 0 ? varied : sql``}
    ) x order by last_at desc, visitor_id limit ${page.limit} offset ${page.offset}`.execute(db);
  if (rows.length > 0 && rows.length < page.limit) return { rows, total: page.offset + rows.length };
  return { rows, total: await filteredVisitorCount(db, scope, mask, count) };
}

/** The visitors of the events in scope, grouped from the raw events. */
async function groupedVisitors(db: Kysely<Database>, scope: StatsScope, options: VisitorListOptions, page: PageRequest): Promise<{ rows: VisitorTotals[]; total: number }> {
  const parts = [scopeCondition(scope), ...visitorConditions(scope.websiteId, options)];
  const where = sql.join(parts, sql` and `);
  const found = await sql<VisitorTotals & { total_rows: unknown }>`
    select e.visitor_id, min(e.occurred_at) as first_at, max(e.occurred_at) as last_at,
      sum(case when e.type = 'pageview' then 1 else 0 end) as pageviews, count(*) over () as total_rows
    from events e where ${where}
    group by e.visitor_id
    order by max(e.occurred_at) desc, e.visitor_id
    limit ${page.limit} offset ${page.offset}`.execute(db);
  const total = await pageTotal(found.rows, page, async () => {
    const { rows } = await sql<{ n: unknown }>`select count(distinct e.visitor_id) as n from events e where ${where}`.execute(db);
    return rows[0]?.n;
  });
  return { rows: found.rows, total };
}

/** The conditions on `e.visitor_id` of the list's options: a goal completed, a page viewed, a payment made or not. */
function visitorConditions(websiteId: string, options: VisitorListOptions): RawBuilder<unknown>[] {
  const parts: RawBuilder<unknown>[] = [];
  if (options.completedGoal !== undefined) {
    parts.push(sql`e.visitor_id in (select g.visitor_id from events g where g.website_id = ${websiteId} and g.type = 'custom' and g.name = ${options.completedGoal})`);
  }
  for (const filter of visitedPageFilters(options)) {
    parts.push(sql`e.visitor_id in (select v.visitor_id from events v where v.website_id = ${websiteId} and v.type = 'pageview' and ${matches(sql.ref('v.path'), filter)})`);
  }
  if (options.isCustomer !== undefined) {
    const paying = sql`select p.visitor_id from payments p where p.website_id = ${websiteId} and p.visitor_id is not null`;
    parts.push(options.isCustomer ? sql`e.visitor_id in (${paying})` : sql`e.visitor_id not in (${paying})`);
  }
  return parts;
}
