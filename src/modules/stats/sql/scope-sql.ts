import { type RawBuilder, sql } from 'kysely';
import type { PageRequest, StatsScope } from '../stats.params.ts';
import { type Filter, PATH_DIMENSIONS, isSubstringFilter } from '../stats.filters.ts';
import { EVENT_COLUMN, SESSION_COLUMN, isNegated, likePattern } from '../stats.dimensions.ts';

// The WHERE clause of a scope over the events table (alias `e`): website, range and filters.
// Every value is a bound parameter; column names come from the fixed table below, never from
// the request.

/**
 * One value test on a column: exact, or a case-insensitive LIKE for substrings (contains,
 * does_not_contain) and path wildcards; a substring filter's `alsoIs` names are matched exactly.
 */
export function matches(column: RawBuilder<unknown>, filter: Filter): RawBuilder<unknown> {
  const contains = isSubstringFilter(filter);
  const tests = filter.values.map((value) =>
    contains || (PATH_DIMENSIONS.includes(filter.dimension) && value.includes('*'))
      ? sql`lower(${column}) like lower(${likePattern(value, contains)}) escape '\\'`
      : sql`${column} = ${value}`,
  );
  for (const stored of filter.alsoIs ?? []) tests.push(sql`${column} = ${stored}`);
  return sql`(${sql.join(tests, sql` or `)})`;
}

/** A filter on a column of `e`; a negated one keeps rows whose value is unknown. */
export function columnCondition(column: RawBuilder<unknown>, filter: Filter): RawBuilder<unknown> {
  const test = matches(column, filter);
  return isNegated(filter) ? sql`(${column} is null or not ${test})` : test;
}

export function rangeCondition(scope: StatsScope, column: RawBuilder<unknown> = sql.ref('e.occurred_at')): RawBuilder<unknown> {
  return scope.range ? sql`${column} >= ${scope.range.from} and ${column} < ${scope.range.to}` : sql`1 = 1`;
}

/**
 * The events of the sessions that pass `test`. The subqueries name the website by value, never by
 * `e.website_id`: a correlated subquery is run again for every event (minutes over a million),
 * while these are computed once, and only over the sessions that overlap the range.
 *
 * An event without a session (a goal recorded through the API) belongs to its visitor's sessions:
 * it passes when its visitor has a session in the range that passes, and a negated filter keeps
 * it when none does (issue 35 item 2; the ClickHouse scope says the same).
 */
function sessionCondition(test: RawBuilder<unknown>, filter: Filter, scope: StatsScope): RawBuilder<unknown> {
  const overlapping = scope.range ? sql` and s.started_at < ${scope.range.to} and s.ended_at >= ${scope.range.from}` : sql``;
  const passing = (column: 'session_id' | 'visitor_id') =>
    sql`(select ${sql.ref(`s.${column}`)} from sessions s where s.website_id = ${scope.websiteId}${overlapping} and ${test})`;
  const inSessions = sql`e.session_id in ${passing('session_id')}`;
  const visitorPasses = sql`e.visitor_id in ${passing('visitor_id')}`;
  if (isNegated(filter)) return sql`(case when e.session_id is null then not ${visitorPasses} else not ${inSessions} end)`;
  return sql`(${inSessions} or (e.session_id is null and ${visitorPasses}))`;
}

function filterCondition(filter: Filter, scope: StatsScope): RawBuilder<unknown> {
  if (filter.dimension === 'referrer') {
    // A source name ("Google", "Direct/None") or a referring host.
    return sessionCondition(sql`(${matches(sql.ref('s.referrer_source'), filter)} or ${matches(sql.ref('s.referrer_host'), filter)})`, filter, scope);
  }
  if (filter.dimension === 'goal') {
    // Visitors who completed one of the goals in the range.
    const completed = sql`e.visitor_id in (select g.visitor_id from events g where g.website_id = ${scope.websiteId} and g.type = 'custom' and ${matches(sql.ref('g.name'), filter)} and ${rangeCondition(scope, sql.ref('g.occurred_at'))})`;
    return isNegated(filter) ? sql`not ${completed}` : completed;
  }
  const sessionColumn = SESSION_COLUMN[filter.dimension];
  if (sessionColumn) return sessionCondition(matches(sql.ref(`s.${sessionColumn}`), filter), filter, scope);
  return columnCondition(sql.ref(`e.${EVENT_COLUMN[filter.dimension]!}`), filter);
}

export interface ScopeOptions {
  /** False: leave the range out. */
  range?: boolean;
  /**
   * The events are probed per visitor (the inner side of a join): keep SQLite from walking the
   * time index instead of the visitor index (a unary + makes a column unusable for an index).
   */
  byVisitor?: boolean;
}

/** `e.website_id = ? and <range> and <filters>`. */
export function scopeCondition(scope: StatsScope, options: ScopeOptions = {}): RawBuilder<unknown> {
  const parts = [sql`e.website_id = ${scope.websiteId}`];
  if (options.range !== false) parts.push(rangeCondition(scope, options.byVisitor ? sql`+e.occurred_at` : undefined));
  for (const filter of scope.filters) parts.push(filterCondition(filter, scope));
  return sql.join(parts, sql` and `);
}

/** Aggregates come back as bigint text on PostgreSQL and as null over no rows. */
export function num(value: unknown): number {
  return Number(value ?? 0);
}

/**
 * A page's `pagination.total`, from the window count (`count(*) over () as total_rows`) its rows
 * carry, so one scan gives rows and total; a page past the end has no row to carry it, and only
 * then is it counted on its own.
 */
export async function pageTotal(rows: { total_rows?: unknown }[], page: PageRequest, countAlone: () => Promise<unknown>): Promise<number> {
  if (rows.length > 0) return num(rows[0]!.total_rows);
  return page.offset === 0 ? 0 : num(await countAlone());
}
