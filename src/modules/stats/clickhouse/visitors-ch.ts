import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { ClickHouse } from '../../../db/clickhouse/clickhouse.ts';
import type { Database } from '../../../db/schema.ts';
import type { RowsPage, VisitorActivity, VisitorListOptions, VisitorSummary } from '../event-store.ts';
import { pathOf } from '../stats.filters.ts';
import type { PageRequest, StatsScope } from '../stats.params.ts';
import { urlOf, visitorSummary } from '../visitor-shapes.ts';
import { isoOf, matches, num, scopeCondition } from './scope-ch.ts';
import { type ChEventRow, latestEvents, sessionCounts } from './visitor-rows-ch.ts';

// One visitor's page, and the list of a website's visitors, newest activity first (the meaning
// of ../sql/visitors-sql.ts). `db` is unused by these reads (no relational record joins them)
// but kept in the signatures, like the other ClickHouse reads that need it.

const VISITED_PAGES = 100;
const GOALS = 100;

interface VisitorTotals {
  visitor_id: string;
  first_ms: unknown;
  last_ms: unknown;
  pageviews: unknown;
}

const TOTALS = sql.raw(`visitor_id, min(occurred_ms) as first_ms, max(occurred_ms) as last_ms, countIf(type = 'pageview') as pageviews`);

function summary(totals: VisitorTotals, latest: ChEventRow | undefined, first: ChEventRow | undefined, visits: number): VisitorSummary {
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
  type Goal = Pick<ChEventRow, 'name' | 'source' | 'occurred_ms'>;
  const [latest, visits, first, pages, goals] = await Promise.all([
    latestEvents(ch, websiteId, [visitorId]),
    sessionCounts(ch, websiteId, [visitorId]),
    ch.rows<ChEventRow>(sql`select * from events where ${ofVisitor} order by occurred_ms, id limit 1`),
    ch.rows<Page>(sql`
      select hostname, path, occurred_ms from events where ${ofVisitor} and type = 'pageview'
      order by occurred_ms desc, id desc limit ${VISITED_PAGES}`),
    ch.rows<Goal>(sql`
      select name, source, occurred_ms from events where ${ofVisitor} and type = 'custom' and isNotNull(name)
      order by occurred_ms desc, id desc limit ${GOALS}`),
  ]);
  return {
    ...summary(totals, latest.get(visitorId), first[0], visits.get(visitorId) ?? 0),
    visitedPages: pages.map((row) => ({ url: urlOf(row) ?? '', occurredAt: isoOf(row.occurred_ms) })).filter((page) => page.url !== ''),
    completedGoals: goals.map((row) => ({ name: row.name!, occurredAt: isoOf(row.occurred_ms), isServer: row.source === 'api' })),
  };
}

/** The events a visitor list reads: the scope's, of the visitors with the goal or the page asked for. */
function listCondition(scope: StatsScope, options: VisitorListOptions): RawBuilder<unknown> {
  const parts = [scopeCondition(scope)];
  if (options.completedGoal !== undefined) {
    parts.push(sql`visitor_id in (select visitor_id from events where website_id = ${scope.websiteId} and type = 'custom' and name = ${options.completedGoal})`);
  }
  if (options.visitedPage !== undefined) {
    const path = matches(sql.ref('path'), { dimension: 'page', operator: 'is', values: [pathOf(options.visitedPage)] });
    parts.push(sql`visitor_id in (select visitor_id from events where website_id = ${scope.websiteId} and type = 'pageview' and ${path})`);
  }
  return sql.join(parts, sql` and `);
}

export async function visitors(
  ch: ClickHouse,
  _db: Kysely<Database>,
  scope: StatsScope,
  options: VisitorListOptions,
  page: PageRequest,
): Promise<RowsPage<VisitorSummary>> {
  const where = listCondition(scope, options);
  // No window count on this release: the total is its own query, run beside the page's. It is
  // exact (unlike the visitor counts of the reports): a client pages until it reaches it.
  const [found, counted] = await Promise.all([
    ch.rows<VisitorTotals>(sql`
      select ${TOTALS} from events where ${where}
      group by visitor_id
      order by last_ms desc, visitor_id
      limit ${page.limit} offset ${page.offset}`),
    ch.rows<{ n: unknown }>(sql`select uniqExact(visitor_id) as n from events where ${where}`),
  ]);
  const ids = found.map((row) => row.visitor_id);
  const [latest, visits] = await Promise.all([latestEvents(ch, scope.websiteId, ids), sessionCounts(ch, scope.websiteId, ids)]);
  return {
    rows: found.map((row) => summary(row, latest.get(row.visitor_id), latest.get(row.visitor_id), visits.get(row.visitor_id) ?? 0)),
    total: num(counted[0]?.n),
  };
}
