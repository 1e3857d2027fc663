import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { ClickHouse } from '../../../db/clickhouse/clickhouse.ts';
import type { Database } from '../../../db/schema.ts';
import type { BreakdownRow, MoneyRules, RowsPage } from '../event-store.ts';
import type { Breakdown } from '../../analytics/breakdowns.ts';
import { ONLY, rolledUpKey } from '../../events/clickhouse-event-rollups.ts';
import type { SessionRollup } from '../../events/clickhouse-session-rollups.ts';
import { type BreakdownSpec, BREAKDOWN_SPECS } from '../../analytics/breakdown-specs.ts';
import type { PageRequest } from '../stats.params.ts';
import { paymentScope } from '../sql/overview-sql.ts';
import { rollupReadable, rollupStates } from './event-rollups-ch.ts';
import { sessionsInScope } from './overview-ch.ts';
import { sessionRollupsReadable, sessionStates } from './session-rollups-ch.ts';
import { scaled } from './sampling-ch.ts';
import { type ClickHouseScope, type SessionColumn, num, sampledTable, scopeCondition } from './scope-ch.ts';
import { paidMinor } from '../sql/money-sql.ts';

// Breakdowns, as ../sql/breakdowns-sql.ts: rows of distinct visitors per key, sorted by visitors.
// Event breakdowns group the events in scope; session breakdowns (entry and exit pages,
// referrers, campaigns) group the sessions in scope, since where a session came from is its first
// event's. Each row's revenue is what its visitors paid in the range, each payment counted once
// per row; payments are relational, so the paying visitors are read there and their amounts
// summed per key here. Unfiltered breakdowns over events read the rollups instead
// (event-rollups-ch.ts), and unfiltered breakdowns over sessions with at most two keys the session
// rollups (session-rollups-ch.ts), with the same answer. Visitors are counted with uniqCombined, whose
// states the rollups keep (see clickhouse-event-rollups.ts).


/** Visitor ids per ClickHouse query when summing their payments per key. */
const IDS_PER_QUERY = 2000;

const keyNames = (spec: BreakdownSpec) => Object.keys(spec.keys);
const keyColumns = (spec: BreakdownSpec) => keyNames(spec).map((name) => sql.ref(spec.keys[name]!));
const keyOf = (row: Record<string, unknown>, names: string[]) => JSON.stringify(names.map((name) => row[`k_${name}`] ?? null));

/** `from ... where ...` of the rows the breakdown groups (and that pass `extra`). */
function rowsOf(spec: BreakdownSpec, scope: ClickHouseScope, extra: RawBuilder<unknown> = sql`1 = 1`): RawBuilder<unknown> {
  if (spec.from === 'sessions') {
    const columns = ['visitor_id', 'pageviews', ...Object.values(spec.keys)] as SessionColumn[];
    return sql`from ${sessionsInScope(scope, columns)} where ${extra}`;
  }
  const condition = spec.only ? sql`${scopeCondition(scope)} and ${ONLY[spec.only]}` : scopeCondition(scope);
  return sql`from ${sampledTable('events', scope.sample)} where ${condition} and ${extra}`;
}

/** A breakdown's queries: one page of its rows (k_<name> keys, counts) and the count of all its rows. */
interface BreakdownQueries {
  page: RawBuilder<unknown>;
  count: RawBuilder<unknown>;
  /** The rate they sample the rows at (sampling-ch.ts), null when they read every one. */
  rate: number | null;
}

export async function breakdown(
  ch: ClickHouse,
  db: Kysely<Database>,
  kind: Breakdown,
  scope: ClickHouseScope,
  page: PageRequest,
  money: MoneyRules,
): Promise<RowsPage<BreakdownRow>> {
  const spec = BREAKDOWN_SPECS[kind];
  const names = keyNames(spec);
  const queries = await queriesFor(ch, kind, scope, page);
  // Payments are few and relational: what each key's visitors paid is read exactly.
  const [found, revenue] = await Promise.all([ch.rows<Record<string, unknown>>(queries.page), revenueByKey(ch, db, spec, { ...scope, sample: null }, money)]);
  // The total needs its own count only when this page does not show where the rows end.
  const ended = found.length < page.limit && (found.length > 0 || page.offset === 0);
  const total = ended ? page.offset + found.length : num((await ch.rows<{ n: unknown }>(queries.count))[0]?.n);
  const rows = found.map((row) => rowOf(spec, names, row, revenue, queries.rate));
  return { rows, total, ...(queries.rate ? { sampleRate: queries.rate } : {}) };
}

/** From the event or session rollups when they can answer (exact), else from the events (sampled when the scope says so). */
async function queriesFor(ch: ClickHouse, kind: Breakdown, scope: ClickHouseScope, page: PageRequest): Promise<BreakdownQueries> {
  const exact = { ...scope, sample: null };
  if (await rollupReadable(ch, kind, scope)) return { ...rolledUpQueries(kind, rollupStates(kind, exact), sql`events`, page), rate: null };
  const closedUntil = await sessionRollupsReadable(ch, kind, scope);
  if (closedUntil !== null) return { ...rolledUpQueries(kind, sessionStates(kind as SessionRollup, exact, closedUntil), sql`sessions`, page), rate: null };
  return { ...eventQueries(BREAKDOWN_SPECS[kind], scope, page), rate: scope.sample ?? null };
}

/** Grouping the events (or sessions) in scope. */
function eventQueries(spec: BreakdownSpec, scope: ClickHouseScope, page: PageRequest): Omit<BreakdownQueries, 'rate'> {
  const names = keyNames(spec);
  const columns = keyColumns(spec);
  const selected = sql.join(columns.map((column, i) => sql`${column} as ${sql.ref(`k_${names[i]}`)}`));
  const groupBy = sql.join(names.map((name) => sql.ref(`k_${name}`)));
  // Unknown (null) keys sort after known ones, as on the relational engines.
  const tieBreak = sql.join(names.map((name) => sql`isNull(${sql.ref(`k_${name}`)}), ${sql.ref(`k_${name}`)}`));
  const pageviews = sql.raw(spec.from === 'events' ? "countIf(type = 'pageview')" : 'sum(pageviews)');
  const from = rowsOf(spec, scope);
  return {
    page: sql`
      select ${selected}, uniqCombined(visitor_id) as visitor_count, ${pageviews} as pageview_count, count() as n
      ${from}
      group by ${groupBy}
      order by visitor_count desc, n desc, ${tieBreak}
      limit ${page.limit} offset ${page.offset}`,
    count: sql`select count() as n from (select ${selected} ${from} group by ${groupBy})`,
  };
}

/**
 * Merging rollup states (`states`, with the counted rows' state in `counted`: events, or
 * sessions): the same rows, counts and order as grouping the events.
 */
function rolledUpQueries(kind: Breakdown, states: RawBuilder<unknown>, counted: RawBuilder<unknown>, page: PageRequest): Omit<BreakdownQueries, 'rate'> {
  const names = keyNames(BREAKDOWN_SPECS[kind]);
  const keys = sql.join(names.map((name, i) => sql`${rolledUpKey(kind, i)} as ${sql.ref(`k_${name}`)}`));
  const groupBy = sql`key1_null, key1, key2_null, key2`;
  return {
    page: sql`
      select ${keys}, uniqCombinedMerge(visitors) as visitor_count, sumMerge(pageviews) as pageview_count, countMerge(${counted}) as n
      from ${states}
      group by ${groupBy}
      order by visitor_count desc, n desc, ${groupBy}
      limit ${page.limit} offset ${page.offset}`,
    count: sql`select count() as n from (select 1 from ${states} group by ${groupBy})`,
  };
}

function rowOf(spec: BreakdownSpec, names: string[], row: Record<string, unknown>, revenue: Map<string, number>, rate: number | null): BreakdownRow {
  return {
    keys: Object.fromEntries(names.map((name) => [name, (row[`k_${name}`] as string | null) ?? null])),
    visitors: scaled(num(row.visitor_count), rate),
    pageviews: scaled(num(row.pageview_count), rate),
    count: spec.counts ? scaled(num(row.n), rate) : 0,
    revenueMinor: revenue.get(keyOf(row, names)) ?? 0,
  };
}

/**
 * What each key's visitors paid: the paying visitors of the range (relational), then, per key,
 * the sum of what its paying visitors in scope paid (each visitor, hence each payment, once).
 */
async function revenueByKey(ch: ClickHouse, db: Kysely<Database>, spec: BreakdownSpec, scope: ClickHouseScope, money: MoneyRules): Promise<Map<string, number>> {
  const paying = await sql<{ visitor_id: string; minor: unknown }>`
    select p.visitor_id, sum(${paidMinor(money)}) as minor from payments p
    where ${paymentScope({ ...scope, filters: [] }, money)} and p.visitor_id is not null
    group by p.visitor_id`.execute(db);
  const byKey = new Map<string, number>();
  if (paying.rows.length === 0) return byKey;
  const names = keyNames(spec);
  const columns = keyColumns(spec);
  const selected = sql.join(columns.map((column, i) => sql`${column} as ${sql.ref(`k_${names[i]}`)}`));
  const groupBy = sql.join(names.map((name) => sql.ref(`k_${name}`)));
  for (let i = 0; i < paying.rows.length; i += IDS_PER_QUERY) {
    const chunk = paying.rows.slice(i, i + IDS_PER_QUERY);
    const ids = chunk.map((row) => row.visitor_id);
    // Amounts as text, whatever their size and sign.
    const amounts = chunk.map((row) => String(num(row.minor)));
    const rows = await ch.rows<Record<string, unknown>>(sql`
      select ${groupBy}, sum(toInt64(transform(visitor_id, ${ids}, ${amounts}, '0'))) as minor
      from (select distinct ${selected}, visitor_id ${rowsOf(spec, scope, sql`visitor_id in (${sql.join(ids)})`)})
      group by ${groupBy}`);
    for (const row of rows) {
      const key = keyOf(row, names);
      byKey.set(key, (byKey.get(key) ?? 0) + num(row.minor));
    }
  }
  return byKey;
}
