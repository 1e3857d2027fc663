import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { ClickHouse } from '../../../db/clickhouse/clickhouse.ts';
import type { Database } from '../../../db/schema.ts';
import type { InstantRange } from '../../goals/tracked-goals.range.ts';
import type { PageRequest } from '../stats.params.ts';
import { scaled } from './sampling-ch.ts';
import { num, sampledTable } from './scope-ch.ts';
import { atOrAfter } from './visitor-rows-ch.ts';

// The pages of ClickHouse's visitor list (./visitors-ch.ts): the visitors of the events a list
// keeps, newest activity first, and those with or without a payment. Payments are in the
// relational engine and few (one per sale): the paying visitors are read from there, ClickHouse
// gives the totals of those the list keeps, and the page is cut from both, so no list of ids in
// a query grows with the traffic. The page is always exact; the total, a count of every visitor of
// the range, is counted from a sample of the visitors when the range is large (ListTotal), so the
// list says whether more rows follow (`hasMore`) from the page itself, one row further.

export interface VisitorTotals {
  visitor_id: string;
  first_ms: unknown;
  last_ms: unknown;
  pageviews: unknown;
}

export const TOTALS = sql.raw(`visitor_id, min(occurred_ms) as first_ms, max(occurred_ms) as last_ms, countIf(type = 'pageview') as pageviews`);

/** Visitor ids per ClickHouse query (each is an id of at most 64 bytes in the query text). */
const IDS_PER_QUERY = 2000;

/** A row of the list's page: the visitor and its last event in the list's scope (all the page needs). */
export type ListedVisitor = Pick<VisitorTotals, 'visitor_id' | 'last_ms'>;

interface TotalsPage {
  rows: ListedVisitor[];
  total: number;
  /** Whether rows follow the page's (read one row further, so exact even when the total is not). */
  hasMore: boolean;
  /** The total was counted from a sample of this rate and scaled up. */
  sampleRate?: number;
  /**
   * The start (epoch ms) of the window the rows were read from: every listed visitor has an
   * event at or after it (its last in the list's scope), so their latest events are read from
   * there on (./visitor-rows-ch.ts, latestEvents). Absent when the rows came from every event.
   */
  since?: number;
}

/**
 * What a list's total counts: the visitors of the events `where` keeps, in `sample` of the
 * visitors when set (the events are sampled by visitor, so the count scales by 1/sample).
 */
export interface ListTotal {
  where: RawBuilder<unknown>;
  sample: number | null;
}

/** The list's total, exact or estimated from its sample (marked by the rate). */
async function totalOf(ch: ClickHouse, total: ListTotal): Promise<{ total: number; sampleRate?: number }> {
  const [row] = await ch.rows<{ n: unknown }>(sql`select uniqExact(visitor_id) as n from ${sampledTable('events', total.sample)} where ${total.where}`);
  return { total: scaled(num(row?.n), total.sample), ...(total.sample ? { sampleRate: total.sample } : {}) };
}

/** The window a list reads first, back from its range's end; doubled until it holds the page. */
const FIRST_WINDOW_MS = 3_600_000;

/**
 * How far back from now a list over all time widens its window before it reads every event. A
 * window has no end of its own (events after now are in it too), so the argument holds as for a
 * range; only a website quiet for longer than this reads all its events.
 */
const ALL_TIME_WINDOWS_MS = 400 * 86_400_000;

/**
 * `count` visitors of the events `where` keeps from `offset` on, newest last event first. A
 * visitor whose last event is in the range's last window has it as its last event in the whole
 * range, and every visitor missing from the window's events has an earlier one: the window's
 * visitors, ordered, are the head of the whole list. So the newest hour is read first, and twice
 * as much each time it holds fewer than the page; the whole range only when it must (docs/decisions.md,
 * "The visitor list reads the newest visitors first"). A list over all time does the same back from now.
 */
async function newestVisitors(
  ch: ClickHouse,
  where: RawBuilder<unknown>,
  range: InstantRange | null,
  count: number,
  offset: number,
): Promise<{ rows: ListedVisitor[]; since?: number }> {
  const page = (condition: RawBuilder<unknown>) =>
    ch.rows<ListedVisitor>(sql`
      select visitor_id, max(occurred_ms) as last_ms from events where ${condition}
      group by visitor_id
      order by last_ms desc, visitor_id
      limit ${count} offset ${offset}`);
  if (count > 0) {
    const to = range ? Date.parse(range.to) : Date.now();
    const from = range ? Date.parse(range.from) : to - ALL_TIME_WINDOWS_MS;
    for (let span = FIRST_WINDOW_MS; to - span > from; span *= 2) {
      const start = to - span;
      const rows = await page(sql`${where} and ${atOrAfter(start)}`);
      if (rows.length === count) return { rows, since: start };
    }
  }
  return { rows: await page(where) };
}

/** A page of the visitors of the events `where` keeps (within `range`), newest activity first (`extra` rows more), with their count. */
export async function visitorsPage(
  ch: ClickHouse,
  where: RawBuilder<unknown>,
  range: InstantRange | null,
  page: PageRequest,
  total: ListTotal,
  extra = 0,
): Promise<TotalsPage> {
  // No window count on this release: the total is its own query, run beside the page's. It is
  // exact below the sampling threshold (uniqExact, unlike the reports' visitor counts), and an
  // estimate marked as such above it: a client pages by hasMore, which the page gives exactly.
  const wanted = page.limit + extra;
  const [found, counted] = await Promise.all([newestVisitors(ch, where, range, wanted + 1, page.offset), totalOf(ch, total)]);
  return { rows: found.rows.slice(0, wanted), hasMore: found.rows.length > wanted, ...counted, ...(found.since === undefined ? {} : { since: found.since }) };
}

/** The list's order: the later last event first, then the smaller visitor id. */
function listsBefore(a: ListedVisitor, b: ListedVisitor): boolean {
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
  range: InstantRange | null,
  page: PageRequest,
  total: ListTotal,
): Promise<TotalsPage> {
  const payers = await payersListed(ch, db, websiteId, where);
  if (isCustomer) return { rows: payers.slice(page.offset, page.offset + page.limit), total: payers.length, hasMore: page.offset + page.limit < payers.length };
  // One row further than the page, to tell whether more follow.
  const all = await visitorsPage(ch, where, range, { ...page, limit: page.limit + 1 }, total, payers.length);
  const paying = new Set(payers.map((row) => row.visitor_id));
  const first = all.rows[0];
  const skipped = first ? payers.filter((payer) => listsBefore(payer, first)).length : 0;
  const rows = all.rows.filter((row) => !paying.has(row.visitor_id)).slice(skipped, skipped + page.limit + 1);
  return {
    rows: rows.slice(0, page.limit),
    hasMore: rows.length > page.limit,
    total: Math.max(0, all.total - payers.length),
    ...(all.sampleRate ? { sampleRate: all.sampleRate } : {}),
    ...(all.since === undefined ? {} : { since: all.since }),
  };
}
