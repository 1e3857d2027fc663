import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { ClickHouse } from '../../../db/clickhouse/clickhouse.ts';
import type { Database } from '../../../db/schema.ts';
import type { RowsPage, VisitorActivity, VisitorListItem, VisitorListOptions, VisitorSummary } from '../event-store.ts';
import type { PageRequest, StatsScope } from '../stats.params.ts';
import { visitedPageFilters } from '../visitor-list.params.ts';
import { type VisitStats, urlOf, visitorListItem, visitorSummary } from '../visitor-shapes.ts';
import { isoOf, matches, num, scopeCondition } from './scope-ch.ts';
import { TOTALS, type VisitorTotals, customerPage, visitorsPage } from './visitor-pages-ch.ts';
import { type ChEventRow, firstVisitEvents, latestEvents, visitStats } from './visitor-rows-ch.ts';

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
): Promise<(VisitorSummary & VisitorActivity) | null> {
  const ofVisitor = sql`website_id = ${websiteId} and visitor_id = ${visitorId}`;
  const rows = await ch.rows<VisitorTotals>(sql`select ${TOTALS} from events where ${ofVisitor} group by visitor_id`);
  const totals = rows[0];
  if (!totals) return null;
  type Page = Pick<ChEventRow, 'hostname' | 'path' | 'occurred_ms'>;
  type Goal = Pick<ChEventRow, 'name' | 'description' | 'source' | 'occurred_ms'>;
  const [latest, visits, first, pages, goals] = await Promise.all([
    latestEvents(ch, websiteId, [visitorId]),
    visitStats(ch, websiteId, [visitorId]),
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

/** The events a visitor list reads: the scope's, of the visitors with the goal or the pages asked for (payments aside: ./visitor-pages-ch.ts). */
function listCondition(scope: StatsScope, options: VisitorListOptions): RawBuilder<unknown> {
  const parts = [scopeCondition(scope)];
  if (options.completedGoal !== undefined) {
    parts.push(sql`visitor_id in (select visitor_id from events where website_id = ${scope.websiteId} and type = 'custom' and name = ${options.completedGoal})`);
  }
  for (const filter of visitedPageFilters(options)) {
    parts.push(sql`visitor_id in (select visitor_id from events where website_id = ${scope.websiteId} and type = 'pageview' and ${matches(sql.ref('path'), filter)})`);
  }
  return sql.join(parts, sql` and `);
}

export async function visitors(
  ch: ClickHouse,
  db: Kysely<Database>,
  scope: StatsScope,
  options: VisitorListOptions,
  page: PageRequest,
): Promise<RowsPage<VisitorListItem>> {
  const where = listCondition(scope, options);
  const { rows, total } = options.isCustomer === undefined ? await visitorsPage(ch, where, page) : await customerPage(ch, db, scope.websiteId, where, options.isCustomer, page);
  const ids = rows.map((row) => row.visitor_id);
  const [latest, firsts] = await Promise.all([latestEvents(ch, scope.websiteId, ids), firstVisitEvents(ch, scope.websiteId, ids)]);
  return {
    rows: rows.map((row) => visitorListItem(row.visitor_id, isoOf(row.last_ms), latest.get(row.visitor_id), firsts.get(row.visitor_id))),
    total,
  };
}
