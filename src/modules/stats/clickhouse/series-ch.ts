import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { ClickHouse } from '../../../db/clickhouse/clickhouse.ts';
import type { Database } from '../../../db/schema.ts';
import type { MoneyRules, SpanTraffic } from '../event-store.ts';
import type { StatsScope } from '../stats.params.ts';
import { type DayTotals, type MoneyCounts, type Span, paymentTotals as relationalPayments } from '../sql/series-sql.ts';
import { visitorsInScope } from './payments-ch.ts';
import { scaled } from './sampling-ch.ts';
import { type ClickHouseScope, msOf, msRange, num, sampledTable, scopeCondition } from './scope-ch.ts';
import { countedPayment } from '../sql/money-sql.ts';

// The time series' reads over ClickHouse's events, with the meaning of ../sql/series-sql.ts. A
// series asks for many spans (its buckets, plus the whole range for the totals) in one query:
// the events are counted per piece of time (or local day), distinct counts kept as aggregate
// states, and each piece is joined to the spans that hold it (`arrayJoin` of the matching ids
// from array literals of ids, starts and ends), where the states are merged per span.
// The day rollups of the relational store (daily_totals, visitor_recency) do not exist here:
// their numbers are computed from the raw events grouped by the website's local day.

const DAY_MS = 24 * 60 * 60 * 1000;

/** The ids of the spans that hold the row (`at` is the row's value, compared with `>=` / `<` or `<=`). */
function spanIds(spans: Span[], at: RawBuilder<unknown>, starts: RawBuilder<unknown>, ends: RawBuilder<unknown>, closed: boolean): RawBuilder<unknown> {
  const below = closed ? sql`<=` : sql`<`;
  return sql`arrayJoin(arrayFilter((i, s, t) -> ${at} >= s and ${at} ${below} t, ${spans.map((span) => span.id)}, ${starts}, ${ends}))`;
}

/** Cells of the lookup table that places an instant among the spans' bounds. */
const CELLS = 4096;

/**
 * The spans' bounds cut the time into pieces (every span is a run of them); an event's piece is
 * its number of bounds at or before it, found without a scan of the bounds per event (this
 * release has no binary search): the range is cut into at most CELLS equal cells, a table gives
 * the count at each cell's start, and the few bounds inside a cell are compared one by one.
 */
function pieces(spans: Span[]) {
  const bounds = [...new Set(spans.flatMap((span) => [msOf(span.from), msOf(span.to)]))].sort((a, b) => a - b);
  const first = bounds[0]!;
  const last = bounds.at(-1)!;
  const cell = Math.max(1, Math.ceil((last - first) / CELLS));
  const atOrBefore = (ms: number) => {
    let lo = 0;
    let hi = bounds.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (bounds[mid]! <= ms) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  const table: number[] = [];
  let inside = 0;
  for (let start = first; start < last; start += cell) {
    const count = atOrBefore(start);
    table.push(count);
    inside = Math.max(inside, atOrBefore(start + cell - 1) - count);
  }
  // Past the last bound, comparisons with it are false (events lie before it).
  const padded = [...bounds, ...Array<number>(inside).fill(last)];
  const base = sql`arrayElement(${table}, intDiv(occurred_ms - ${first}, ${cell}) + 1)`;
  const steps = Array.from({ length: inside }, (_, j) => sql` + (occurred_ms >= arrayElement(${padded}, base + ${j + 1}))`);
  return {
    first,
    last,
    /** The event's piece: piece k is [bounds[k-1], bounds[k]) (1-based). */
    piece: sql`(${base} as base)${sql.join(steps, sql``)}`,
    /** A span holds the pieces from its start's number to before its end's. */
    starts: spans.map((span) => atOrBefore(msOf(span.from))),
    ends: spans.map((span) => atOrBefore(msOf(span.to))),
  };
}

/**
 * Traffic from the raw events, per span [from, to): distinct visitors, distinct sessions,
 * pageviews and distinct visitors with a goal. The scope's filters apply (its range does not:
 * the spans are the range). The events are counted per piece between bounds (distinct counts as
 * states), then the pieces of each span are merged.
 */
export async function eventTraffic(ch: ClickHouse, scope: ClickHouseScope, spans: Span[]): Promise<SpanTraffic> {
  if (spans.length === 0) return new Map();
  const cut = pieces(spans);
  if (cut.first >= cut.last) return new Map();
  // `piece > 0` names the column outside the lambda on purpose: this release drops a subquery's
  // columns that only a lambda reads.
  const rows = await ch.rows<Record<'i' | 'visitors' | 'sessions' | 'pageviews' | 'converted', unknown>>(sql`
    select ${spanIds(spans, sql.ref('piece'), sql`${cut.starts}`, sql`${cut.ends}`, false)} as i,
      uniqMerge(visitors) as visitors,
      uniqMerge(sessions) as sessions,
      sum(pageviews) as pageviews,
      uniqIfMerge(converted) as converted
    from (
      select ${cut.piece} as piece,
        uniqState(visitor_id) as visitors,
        uniqState(session_id) as sessions,
        countIf(type = 'pageview') as pageviews,
        uniqIfState(visitor_id, type = 'custom' and isNotNull(name)) as converted
      from ${sampledTable('events', scope.sample)}
      where ${scopeCondition(scope, { range: false })} and ${msRange(cut.first, cut.last)}
      group by piece
    )
    where piece > 0
    group by i`);
  const rate = scope.sample ?? null;
  const counts: SpanTraffic = new Map(
    rows.map((row) => [
      num(row.i),
      {
        visitors: scaled(num(row.visitors), rate),
        sessions: scaled(num(row.sessions), rate),
        pageviews: scaled(num(row.pageviews), rate),
        converted: scaled(num(row.converted), rate),
      },
    ]),
  );
  if (rate) counts.sampleRate = rate;
  return counts;
}

/** The website's time zone (its local days), or null when there is no such website. */
async function timezoneOf(db: Kysely<Database>, websiteId: string): Promise<string | null> {
  const row = await db.selectFrom('websites').select('timezone').where('id', '=', websiteId).executeTakeFirst();
  return row?.timezone ?? null;
}

/**
 * The events that may fall on the local days [firstDay, lastDay] of any time zone (UTC-12 to
 * UTC+14 lie within a day of UTC), so the primary key skips the rest; the exact test is on
 * `toDate(occurred_at, tz)`.
 */
function daysWindow(firstDay: string, lastDay: string): RawBuilder<unknown> {
  return msRange(msOf(`${firstDay}T00:00:00Z`) - DAY_MS, msOf(`${lastDay}T00:00:00Z`) + 2 * DAY_MS);
}

/**
 * A visitor-day's sessions as the rollups count them (../../analytics/visitor-day-book.ts): in
 * time order (ties by id, as the rebuild replays them), each session id different from the
 * previous one seen that day starts a session; events without a session id count none.
 */
const DAY_SESSIONS = sql.raw(`arrayCount((s, k) -> k = 1 or s != ids[k - 1], ids, arrayEnumerate(ids))`);
const SESSION_IDS = sql.raw(
  `arrayMap(x -> tupleElement(x, 3), arraySort(groupArrayIf((occurred_ms, id, assumeNotNull(session_id)), isNotNull(session_id)))) as ids`,
);

/**
 * The numbers of the relational daily_totals rows of [firstDay, lastDay] (local days), one row
 * per day with events: visitors (visitor-days), sessions (see DAY_SESSIONS), pageviews and
 * converted visitors (visitor-days with a goal).
 */
export async function dailyTotals(ch: ClickHouse, db: Kysely<Database>, websiteId: string, firstDay: string, lastDay: string): Promise<DayTotals[]> {
  const tz = await timezoneOf(db, websiteId);
  if (tz === null) return [];
  const rows = await ch.rows<Record<'day' | 'visitors' | 'sessions' | 'pageviews' | 'converted_visitors', unknown>>(sql`
    select day, count() as visitors, sum(sessions) as sessions, sum(pageviews) as pageviews, countIf(goals > 0) as converted_visitors
    from (
      select toDate(occurred_at, ${tz}) as day, visitor_id,
        countIf(type = 'pageview') as pageviews,
        countIf(type = 'custom' and isNotNull(name)) as goals,
        ${SESSION_IDS}, ${DAY_SESSIONS} as sessions
      from events
      where website_id = ${websiteId} and ${daysWindow(firstDay, lastDay)}
        and toDate(occurred_at, ${tz}) >= toDate(${firstDay}) and toDate(occurred_at, ${tz}) <= toDate(${lastDay})
      group by day, visitor_id
    )
    group by day
    order by day`);
  return rows.map((row) => ({
    day: String(row.day),
    visitors: num(row.visitors),
    sessions: num(row.sessions),
    pageviews: num(row.pageviews),
    converted_visitors: num(row.converted_visitors),
  }));
}

/**
 * Distinct visitors and distinct converted visitors per span of local days [from, to], both
 * included: what the relational store sums from visitor_recency (a visitor counts once in a span
 * with any active day in it, and once as converted with any converting day in it).
 */
export async function distinctVisitors(
  ch: ClickHouse,
  db: Kysely<Database>,
  websiteId: string,
  spans: Span[],
): Promise<Map<number, { visitors: number; converted: number }>> {
  if (spans.length === 0) return new Map();
  const tz = await timezoneOf(db, websiteId);
  if (tz === null) return new Map();
  const firstDay = spans.reduce((min, span) => (span.from < min ? span.from : min), spans[0]!.from);
  const lastDay = spans.reduce((max, span) => (span.to > max ? span.to : max), spans[0]!.to);
  const starts = sql`arrayMap(d -> toDate(d), ${spans.map((span) => span.from)})`;
  const ends = sql`arrayMap(d -> toDate(d), ${spans.map((span) => span.to)})`;
  // Counted per day (distinct counts as states), merged per span. The day bounds are tested at
  // the outer level on purpose: this release drops a subquery's columns that only a lambda reads.
  const rows = await ch.rows<Record<'i' | 'visitors' | 'converted', unknown>>(sql`
    select ${spanIds(spans, sql.ref('day'), starts, ends, true)} as i,
      uniqMerge(visitors) as visitors, uniqIfMerge(converted) as converted
    from (
      select toDate(occurred_at, ${tz}) as day,
        uniqState(visitor_id) as visitors,
        uniqIfState(visitor_id, type = 'custom' and isNotNull(name)) as converted
      from events
      where website_id = ${websiteId} and ${daysWindow(firstDay, lastDay)}
      group by day
    )
    where day >= toDate(${firstDay}) and day <= toDate(${lastDay})
    group by i`);
  return new Map(rows.map((row) => [num(row.i), { visitors: num(row.visitors), converted: num(row.converted) }]));
}

/** Visitor ids per relational query (bound parameters; SQLite allows 32766). */
const VISITORS_PER_QUERY = 5000;

/**
 * Payments per span [from, to) in the currency (relational, ../sql/series-sql.ts). With filters,
 * those of the visitors with an event in the scope (range and filters), as the SQL store's
 * subquery keeps them: the paying visitors of the spans are read from the relational side and
 * ClickHouse says which of them the scope keeps; the sums of the chunks of visitors add up.
 */
export async function paymentTotals(
  ch: ClickHouse,
  db: Kysely<Database>,
  scope: StatsScope,
  spans: Span[],
  money: MoneyRules,
): Promise<Map<number, MoneyCounts>> {
  if (scope.filters.length === 0 || spans.length === 0) return relationalPayments(db, scope.websiteId, spans, money);
  const from = spans.reduce((min, span) => (msOf(span.from) < msOf(min) ? span.from : min), spans[0]!.from);
  const to = spans.reduce((max, span) => (msOf(span.to) > msOf(max) ? span.to : max), spans[0]!.to);
  const paying = await sql<{ visitor_id: string }>`
    select distinct p.visitor_id from payments p
    where p.website_id = ${scope.websiteId} and p.occurred_at >= ${from} and p.occurred_at < ${to} and ${countedPayment(money)} and p.visitor_id is not null`.execute(db);
  const kept = await visitorsInScope(ch, scope, paying.rows.map((row) => row.visitor_id));
  const out = new Map<number, MoneyCounts>();
  for (let i = 0; i < kept.length; i += VISITORS_PER_QUERY) {
    const chunk = kept.slice(i, i + VISITORS_PER_QUERY);
    const part = await relationalPayments(db, scope.websiteId, spans, money, sql.join(chunk));
    for (const [id, counts] of part) {
      const sum = out.get(id);
      if (!sum) out.set(id, { ...counts });
      else for (const key of Object.keys(counts) as (keyof MoneyCounts)[]) sum[key] += counts[key];
    }
  }
  return out;
}
