import { type RawBuilder, sql } from 'kysely';
import type { InstantRange } from '../../goals/tracked-goals.range.ts';
import { type Filter, PATH_DIMENSIONS, isSubstringFilter } from '../stats.filters.ts';
import type { StatsScope } from '../stats.params.ts';
import { EVENT_COLUMN, SESSION_COLUMN, isNegated, likePattern } from '../stats.dimensions.ts';
import { type SessionAttribute, attributeColumn } from '../../../db/clickhouse/session-attributes.ts';
import { storedSessionsTable } from './stored-sessions-ch.ts';

// The WHERE clause of a scope over ClickHouse's events table: website, range and filters, with
// the same meaning as the relational store's (../sql/scope-sql.ts). Queries name columns without
// a table alias (each level of a ClickHouse query reads one table). Values are written as vetted
// literals by the compiler (src/db/clickhouse/clickhouse.ts); column names come from fixed tables.

/** Epoch milliseconds of an ISO instant. */
export const msOf = (iso: string): number => Date.parse(iso);

/** ISO instant of epoch milliseconds as ClickHouse returns them (UInt64 as text). */
export const isoOf = (ms: unknown): string => new Date(Number(ms)).toISOString();

/** Counts come back as text (64-bit integers are quoted in JSON) and as null over no rows. */
export function num(value: unknown): number {
  return Number(value ?? 0);
}

/**
 * Events with from <= occurred < to (epoch ms): the DateTime bounds let the primary key and the
 * monthly partitions skip what is outside, the millisecond bounds are exact.
 */
export function msRange(fromMs: number, toMs: number): RawBuilder<unknown> {
  return sql`occurred_at >= toDateTime(${Math.floor(fromMs / 1000)}) and occurred_at <= toDateTime(${Math.ceil(toMs / 1000)}) and occurred_ms >= ${fromMs} and occurred_ms < ${toMs}`;
}

export function rangeCondition(range: InstantRange | null): RawBuilder<unknown> {
  return range ? msRange(msOf(range.from), msOf(range.to)) : sql`1 = 1`;
}

/**
 * How far before and after the range a session's events are looked for. A session's start, end,
 * entry page and source are computed from its events; SDK sessions end after 30 minutes without
 * an event, so a day is far beyond any real one (a session longer than a day is cut there).
 */
export const SESSION_REACH_MS = 24 * 60 * 60 * 1000;

function sessionWindow(range: InstantRange | null): RawBuilder<unknown> {
  return range ? msRange(msOf(range.from) - SESSION_REACH_MS, msOf(range.to) + SESSION_REACH_MS) : sql`1 = 1`;
}

/** A session (a row of `sessionsTable`) bounces when it has at most one pageview and no goal. */
export const BOUNCE = sql`(pageviews <= 1 and goals = 0)`;

/** A column's value on the session's first event, null kept (aggregates would skip nulls). */
export function firstOf(column: string): RawBuilder<unknown> {
  return sql`nullIf(argMin(ifNull(${sql.ref(column)}, '\\0'), occurred_ms), '\\0')`;
}

/**
 * A column of the session's first (argMinIf) or last (argMaxIf) pageview, null kept, and null for
 * a session without one (18.16's argMinIf answers '' there).
 */
function onFirstPageview(pick: 'argMinIf' | 'argMaxIf', column: string): string {
  return `if(countIf(type = 'pageview') = 0, NULL, nullIf(${pick}(ifNull(${column}, '\\0'), occurred_ms, type = 'pageview'), '\\0'))`;
}

/** The session columns beyond its id, start and end, with the relational `sessions` table's names and meaning. */
const SESSION_COLUMNS = {
  visitor_id: 'argMin(visitor_id, occurred_ms)',
  pageviews: "countIf(type = 'pageview')",
  events: 'count()',
  goals: "countIf(type = 'custom' and isNotNull(name))",
  entry_hostname: onFirstPageview('argMinIf', 'hostname'),
  entry_path: onFirstPageview('argMinIf', 'path'),
  exit_path: onFirstPageview('argMaxIf', 'path'),
  entry_ms: "minIf(occurred_ms, type = 'pageview')",
  exit_ms: "maxIf(occurred_ms, type = 'pageview')",
} as const;

/** Where the session came from: its first event's referrer and campaign parameters. */
const SOURCE_NAMES = ['referrer_host', 'referrer_source', 'utm_source', 'utm_medium', 'utm_campaign', 'utm_term', 'utm_content', 'ref_param', 'source_param', 'via_param'] as const;

export type SessionColumn = keyof typeof SESSION_COLUMNS | (typeof SOURCE_NAMES)[number];
const ALL_SESSION_COLUMNS = [...Object.keys(SESSION_COLUMNS), ...SOURCE_NAMES] as SessionColumn[];

function sessionColumn(name: SessionColumn): RawBuilder<unknown> {
  const aggregate = (SESSION_COLUMNS as Record<string, string>)[name];
  return aggregate ? sql`${sql.raw(aggregate)} as ${sql.ref(name)}` : sql`${firstOf(name)} as ${sql.ref(name)}`;
}

/**
 * A table of the website's sessions (use as `from ${sessionsTable(...)}`), one row each, with
 * session_id, started_ms and ended_ms (epoch ms, for the relational started_at and ended_at) and
 * the `columns` asked for (each one costs an aggregate over every event of the range, so ask for
 * what the query reads): those that started in the range (`started`) or overlap it
 * (`overlapping`), or every one when the range is null. `only`, a condition on session_id, keeps
 * just those sessions, and is tested before the events are grouped, so the others cost no group.
 */
export function sessionsTable(
  websiteId: string,
  range: InstantRange | null,
  which: 'started' | 'overlapping',
  columns: readonly SessionColumn[] = ALL_SESSION_COLUMNS,
  only: RawBuilder<unknown> = sql`1 = 1`,
  source: SessionSource = 'events',
  sample: number | null = null,
): RawBuilder<unknown> {
  if (source === 'table') return storedSessionsTable(websiteId, range, which, columns, only, sample);
  const selected = sql.join([sql`session_id, min(occurred_ms) as started_ms, max(occurred_ms) as ended_ms`, ...columns.map(sessionColumn)]);
  let kept = sql`1 = 1`;
  if (range) {
    const from = msOf(range.from);
    const to = msOf(range.to);
    kept = which === 'started' ? sql`started_ms >= ${from} and started_ms < ${to}` : sql`started_ms < ${to} and ended_ms >= ${from}`;
  }
  return sql`(select * from (select ${selected} from ${sampledTable('events', sample)}
    where website_id = ${websiteId} and isNotNull(session_id) and ${sessionWindow(range)} and ${only}
    group by session_id) where ${kept})`;
}

/**
 * One value test on a column: exact, or a case-insensitive LIKE for substrings (contains,
 * does_not_contain) and path wildcards; a substring filter's `alsoIs` names are matched exactly.
 */
export function matches(column: RawBuilder<unknown>, filter: Filter): RawBuilder<unknown> {
  const contains = isSubstringFilter(filter);
  const tests = filter.values.map((value) =>
    contains || (PATH_DIMENSIONS.includes(filter.dimension) && value.includes('*'))
      ? sql`lowerUTF8(${column}) like lowerUTF8(${likePattern(value, contains)})`
      : sql`${column} = ${value}`,
  );
  for (const stored of filter.alsoIs ?? []) tests.push(sql`${column} = ${stored}`);
  return sql`(${sql.join(tests, sql` or `)})`;
}

/**
 * The events of the sessions (overlapping the range) whose first event passes `test`. An event
 * without a session (a goal recorded through the API) belongs to its visitor's sessions: it passes
 * when its visitor has a session in the range that passes, and a negated filter keeps it when
 * none does, as on the relational engines (scope-sql.ts).
 */
function sessionCondition(test: RawBuilder<unknown>, columns: SessionColumn[], filter: Filter, scope: ClickHouseScope): RawBuilder<unknown> {
  const sessions = (wanted: SessionColumn[]) => sessionsTable(scope.websiteId, scope.range, 'overlapping', wanted, sql`1 = 1`, scope.sessions, scope.sample);
  const inSessions = sql`session_id in (select session_id from ${sessions(columns)} where ${test})`;
  const withVisitor: SessionColumn[] = columns.includes('visitor_id') ? columns : [...columns, 'visitor_id'];
  const visitorPasses = sql`visitor_id in (select visitor_id from ${sessions(withVisitor)} where ${test})`;
  if (isNegated(filter)) return sql`if(isNull(session_id), not ${visitorPasses}, not ${inSessions})`;
  return sql`(${inSessions} or (isNull(session_id) and ${visitorPasses}))`;
}

/**
 * As `sessionCondition`, once the events carry their sessions' attributes: `test` is on the
 * event's own `s_` columns, and `sessionTest` (the same test on the sessions table's columns) is
 * only needed for the events without a session, so it reads only the sessions of their visitors.
 */
function attributeCondition(test: RawBuilder<unknown>, sessionTest: RawBuilder<unknown>, columns: SessionColumn[], filter: Filter, scope: ClickHouseScope): RawBuilder<unknown> {
  const events = sampledTable('events', scope.sample);
  const sessionless = sql`visitor_id in (select visitor_id from ${events} where website_id = ${scope.websiteId} and ${rangeCondition(scope.range)} and isNull(session_id))`;
  const wanted: SessionColumn[] = columns.includes('visitor_id') ? columns : [...columns, 'visitor_id'];
  const sessions = sessionsTable(scope.websiteId, scope.range, 'overlapping', wanted, sessionless, scope.sessions, scope.sample);
  const visitorPasses = sql`visitor_id in (select visitor_id from ${sessions} where ${sessionTest})`;
  const passes = sql`ifNull(${test}, 0) = 1`;
  if (isNegated(filter)) return sql`if(isNull(session_id), not ${visitorPasses}, not ${passes})`;
  return sql`((isNotNull(session_id) and ${passes}) or (isNull(session_id) and ${visitorPasses}))`;
}

/** A filter on a session's attribute (its columns, their test on those columns): on the events' copies of them, or looking the sessions up. */
function onSession(scope: ClickHouseScope, filter: Filter, columns: SessionAttribute[], test: (column: (name: SessionAttribute) => RawBuilder<unknown>) => RawBuilder<unknown>) {
  const sessionTest = test((name) => sql.ref(name));
  if (scope.attributes && scope.sessions === 'table') {
    return attributeCondition(test((name) => sql.ref(attributeColumn(name))), sessionTest, columns, filter, scope);
  }
  return sessionCondition(sessionTest, columns, filter, scope);
}

function filterCondition(filter: Filter, scope: ClickHouseScope): RawBuilder<unknown> {
  if (filter.dimension === 'referrer') {
    return onSession(scope, filter, ['referrer_source', 'referrer_host'], (column) => sql`(${matches(column('referrer_source'), filter)} or ${matches(column('referrer_host'), filter)})`);
  }
  if (filter.dimension === 'goal') {
    const completed = sql`visitor_id in (select visitor_id from ${sampledTable('events', scope.sample)} where website_id = ${scope.websiteId} and type = 'custom' and ${matches(sql.ref('name'), filter)} and ${rangeCondition(scope.range)})`;
    return isNegated(filter) ? sql`not ${completed}` : completed;
  }
  const sessionColumn = SESSION_COLUMN[filter.dimension] as SessionAttribute | undefined;
  if (sessionColumn) return onSession(scope, filter, [sessionColumn], (column) => matches(column(sessionColumn), filter));
  const column = sql.ref(EVENT_COLUMN[filter.dimension]!);
  const test = matches(column, filter);
  return isNegated(filter) ? sql`(isNull(${column}) or not ${test})` : test;
}

/**
 * Where a read takes its sessions from: the sessions table written at ingestion once it holds
 * every session (`table`), else grouped from the events (`events`, the fallback during an upgrade).
 */
export type SessionSource = 'events' | 'table';

/**
 * A scope on ClickHouse, with where its sessions come from (the events when unsaid), the rate
 * its raw reads sample at (sampling-ch.ts; every row when unsaid), and whether the events carry
 * their sessions' attributes (`s_` columns, clickhouse-session-attributes.ts; with the sessions
 * table only), so filters on them test the event's row.
 */
export type ClickHouseScope = StatsScope & { sessions?: SessionSource; sample?: number | null; attributes?: boolean };

/**
 * The events or sessions table as a read takes it: `events sample 0.1` when it samples. Both are
 * sampled by the visitor, so a sampled read and its sampled subqueries keep the same visitors.
 */
export function sampledTable(table: 'events' | 'sessions', sample: number | null | undefined): RawBuilder<unknown> {
  return sample ? sql`${sql.table(table)} sample ${sample}` : sql.table(table);
}

/** `website_id = ? and <range> and <filters>` over the events table. */
export function scopeCondition(scope: ClickHouseScope, options: { range?: boolean } = {}): RawBuilder<unknown> {
  const parts = [sql`website_id = ${scope.websiteId}`];
  if (options.range !== false) parts.push(rangeCondition(scope.range));
  for (const filter of scope.filters) parts.push(filterCondition(filter, scope));
  return sql.join(parts, sql` and `);
}
