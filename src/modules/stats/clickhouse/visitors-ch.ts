import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { ClickHouse } from '../../../db/clickhouse/clickhouse.ts';
import type { Database } from '../../../db/schema.ts';
import type { RowsPage, VisitorActivity, VisitorListItem, VisitorListOptions, VisitorSummary } from '../event-store.ts';
import type { PageRequest } from '../stats.params.ts';
import { visitedPageFilters } from '../visitor-list.params.ts';
import { type VisitStats, urlOf, visitorListItem, visitorSummary } from '../visitor-shapes.ts';
import { type ClickHouseScope, type SessionSource, isoOf, matches, num, sampledTable, scopeCondition } from './scope-ch.ts';
import { type ListTotal, TOTALS, type VisitorTotals, customerPage, visitorsPage } from './visitor-pages-ch.ts';
import { type ChEventRow, firstSessions, firstVisitEvents, latestEvents, ofVisitors, visitStats } from './visitor-rows-ch.ts';

// One visitor's page, and the list of a website's visitors, newest activity first (the meaning
// of ../sql/visitors-sql.ts). `db` (the relational engine) holds the payments a list of
// customers asks about; the visitor's page does not use it.

const VISITED_PAGES = 100;
const GOALS = 100;

function summary(totals: VisitorTotals, latest: ChEventRow | undefined, first: ChEventRow | undefined, visits: VisitStats | undefined): VisitorSummary {
  const { visitor_id: visitorId, pageviews, first_ms: firstMs, last_ms: lastMs } = totals;
  return visitorSummary({ visitorId, pageViewCount: num(pageviews), firstVisitAt: isoOf(firstMs), lastVisitAt: isoOf(lastMs) }, latest, first, visits);
}

export async function visitor(
  ch: ClickHouse,
  _db: Kysely<Database>,
  websiteId: string,
  visitorId: string,
  sessions: SessionSource,
): Promise<(VisitorSummary & VisitorActivity) | null> {
  const ofVisitor = sql`website_id = ${websiteId} and ${ofVisitors([visitorId])}`;
  const rows = await ch.rows<VisitorTotals>(sql`select ${TOTALS} from events where ${ofVisitor} group by visitor_id`);
  const totals = rows[0];
  if (!totals) return null;
  type Page = Pick<ChEventRow, 'hostname' | 'path' | 'occurred_ms'>;
  type Goal = Pick<ChEventRow, 'name' | 'description' | 'source' | 'occurred_ms'>;
  const [latest, visits, first, pages, goals] = await Promise.all([
    latestEvents(ch, websiteId, [visitorId]),
    visitStats(ch, websiteId, [visitorId], sessions),
    ch.rows<ChEventRow>(sql`select * from events where ${ofVisitor} order by occurred_ms, id limit 1`),
    ch.rows<Page>(sql`
      select hostname, path, occurred_ms from events where ${ofVisitor} and type = 'pageview'
      order by occurred_ms desc, id desc limit ${VISITED_PAGES}`),
    ch.rows<Goal>(sql`
      select name, description, source, occurred_ms from events where ${ofVisitor} and type = 'custom' and isNotNull(name)
      order by occurred_ms desc, id desc limit ${GOALS}`),
  ]);
  return {
    ...summary(totals, latest.get(visitorId), first[0], visits.get(visitorId)),
    visitedPages: pages.map((row) => ({ url: urlOf(row) ?? '', occurredAt: isoOf(row.occurred_ms) })).filter((page) => page.url !== ''),
    completedGoals: goals.map((row) => ({ name: row.name!, description: row.description, occurredAt: isoOf(row.occurred_ms), isServer: row.source === 'api' })),
  };
}

/**
 * The events a visitor list reads: the scope's, of the visitors with the goal or the pages asked
 * for (payments aside: ./visitor-pages-ch.ts). With `scope.sample`, its subqueries read the same
 * sample (of the same visitors) as the query it goes into.
 */
function listCondition(scope: ClickHouseScope, options: VisitorListOptions): RawBuilder<unknown> {
  const events = sampledTable('events', scope.sample);
  const parts = [scopeCondition(scope)];
  if (options.completedGoal !== undefined) {
    parts.push(sql`visitor_id in (select visitor_id from ${events} where website_id = ${scope.websiteId} and type = 'custom' and name = ${options.completedGoal})`);
  }
  for (const filter of visitedPageFilters(options)) {
    parts.push(sql`visitor_id in (select visitor_id from ${events} where website_id = ${scope.websiteId} and type = 'pageview' and ${matches(sql.ref('path'), filter)})`);
  }
  return sql.join(parts, sql` and `);
}

/**
 * The list: its page read exactly, its total from `scope.sample` of the visitors when the read
 * may sample (a range above the sampling threshold; ./sampling-ch.ts), else exact.
 */
export async function visitors(
  ch: ClickHouse,
  db: Kysely<Database>,
  scope: ClickHouseScope,
  options: VisitorListOptions,
  page: PageRequest,
): Promise<RowsPage<VisitorListItem>> {
  const sample = scope.sample ?? null;
  const where = listCondition({ ...scope, sample: null }, options);
  const total: ListTotal = { where: sample ? listCondition(scope, options) : where, sample };
  const found =
    options.isCustomer === undefined
      ? await visitorsPage(ch, where, scope.range, page, total)
      : await customerPage(ch, db, scope.websiteId, where, options.isCustomer, scope.range, page, total);
  const ids = found.rows.map((row) => row.visitor_id);
  // Per visitor, not per event: the latest from the window the page came from, the first visit
  // from the sessions table once it is filled (docs/decisions.md, "The ClickHouse visitor list
  // reads a bounded amount").
  const [latest, firsts] = await Promise.all([
    latestEvents(ch, scope.websiteId, ids, found.since ?? null),
    scope.sessions === 'table' ? firstSessions(ch, scope.websiteId, ids) : firstVisitEvents(ch, scope.websiteId, ids),
  ]);
  return {
    rows: found.rows.map((row) => visitorListItem(row.visitor_id, isoOf(row.last_ms), latest.get(row.visitor_id), firsts.get(row.visitor_id))),
    total: found.total,
    hasMore: found.hasMore,
    ...(found.sampleRate ? { sampleRate: found.sampleRate } : {}),
  };
}
