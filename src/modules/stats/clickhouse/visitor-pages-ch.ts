import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { ClickHouse } from '../../../db/clickhouse/clickhouse.ts';
import type { Database } from '../../../db/schema.ts';
import type { PageRequest } from '../stats.params.ts';
import { num } from './scope-ch.ts';

// The pages of ClickHouse's visitor list (./visitors-ch.ts): the visitors of the events a list
// keeps, newest activity first, and those with or without a payment. Payments are in the
// relational engine and few (one per sale): the paying visitors are read from there, ClickHouse
// gives the totals of those the list keeps, and the page is cut from both, so no list of ids in
// a query grows with the traffic.

export interface VisitorTotals {
  visitor_id: string;
  first_ms: unknown;
  last_ms: unknown;
  pageviews: unknown;
}

export const TOTALS = sql.raw(`visitor_id, min(occurred_ms) as first_ms, max(occurred_ms) as last_ms, countIf(type = 'pageview') as pageviews`);

/** Visitor ids per ClickHouse query (each is an id of at most 64 bytes in the query text). */
const IDS_PER_QUERY = 2000;

interface TotalsPage {
  rows: VisitorTotals[];
  total: number;
}

/** A page of the visitors of the events `where` keeps, newest activity first (`extra` rows more), with their count. */
export async function visitorsPage(ch: ClickHouse, where: RawBuilder<unknown>, page: PageRequest, extra = 0): Promise<TotalsPage> {
  // No window count on this release: the total is its own query, run beside the page's. It is
  // exact (unlike the visitor counts of the reports): a client pages until it reaches it.
  const [found, counted] = await Promise.all([
    ch.rows<VisitorTotals>(sql`
      select ${TOTALS} from events where ${where}
      group by visitor_id
      order by last_ms desc, visitor_id
      limit ${page.limit + extra} offset ${page.offset}`),
    ch.rows<{ n: unknown }>(sql`select uniqExact(visitor_id) as n from events where ${where}`),
  ]);
  return { rows: found, total: num(counted[0]?.n) };
}

/** The list's order: the later last event first, then the smaller visitor id. */
function listsBefore(a: VisitorTotals, b: VisitorTotals): boolean {
  const [aLast, bLast] = [num(a.last_ms), num(b.last_ms)];
  return aLast > bLast || (aLast === bLast && a.visitor_id < b.visitor_id);
}

/** The paying visitors of the events `where` keeps, with their totals, in list order. */
async function payersListed(ch: ClickHouse, db: Kysely<Database>, websiteId: string, where: RawBuilder<unknown>): Promise<VisitorTotals[]> {
  const paying = await db
    .selectFrom('payments')
    .select('visitor_id')
    .distinct()
    .where('website_id', '=', websiteId)
    .where('visitor_id', 'is not', null)
    .execute();
  const ids = paying.map((row) => row.visitor_id!);
  const listed: VisitorTotals[] = [];
  for (let i = 0; i < ids.length; i += IDS_PER_QUERY) {
    const chunk = ids.slice(i, i + IDS_PER_QUERY);
    listed.push(...(await ch.rows<VisitorTotals>(sql`select ${TOTALS} from events where ${where} and visitor_id in (${sql.join(chunk)}) group by visitor_id`)));
  }
  return listed.sort((a, b) => (listsBefore(a, b) ? -1 : listsBefore(b, a) ? 1 : 0));
}

/**
 * A page of the visitors with a payment (isCustomer) or without one. Without: the rows from
 * `offset` on, as many more as there are payers, hold the page once the payers are taken out;
 * the payers listed before the first of those rows say how many of the others to skip.
 */
export async function customerPage(
  ch: ClickHouse,
  db: Kysely<Database>,
  websiteId: string,
  where: RawBuilder<unknown>,
  isCustomer: boolean,
  page: PageRequest,
): Promise<TotalsPage> {
  const payers = await payersListed(ch, db, websiteId, where);
  if (isCustomer) return { rows: payers.slice(page.offset, page.offset + page.limit), total: payers.length };
  const all = await visitorsPage(ch, where, page, payers.length);
  const paying = new Set(payers.map((row) => row.visitor_id));
  const first = all.rows[0];
  const skipped = first ? payers.filter((payer) => listsBefore(payer, first)).length : 0;
  const rows = all.rows.filter((row) => !paying.has(row.visitor_id)).slice(skipped, skipped + page.limit);
  return { rows, total: all.total - payers.length };
}
