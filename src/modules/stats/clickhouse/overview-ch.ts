import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { ClickHouse } from '../../../db/clickhouse/clickhouse.ts';
import type { Database } from '../../../db/schema.ts';
import type { MoneyRules, OverviewCounts } from '../event-store.ts';
import { rollupReadable, rollupStates } from './event-rollups-ch.ts';
import { paymentCondition } from './payments-ch.ts';
import { sessionRollupsReadable, sessionStates } from './session-rollups-ch.ts';
import { scaled } from './sampling-ch.ts';
import { BOUNCE, type ClickHouseScope, type SessionColumn, num, sampledTable, scopeCondition, sessionsTable } from './scope-ch.ts';
import { storedSessionRows } from './stored-sessions-ch.ts';
import { paidMinor } from '../sql/money-sql.ts';

// Overview counts, as ../sql/overview-sql.ts: visitors, pageviews and converted visitors from the
// events in scope; sessions, bounces and duration from the sessions that started in the range
// (and, when filtered, hold an event in scope); revenue from the payments in the range (when
// filtered, of the visitors in scope), which stay in the relational database. Unfiltered, the
// counts of events and sessions come from their rollups, with the same answer.

/**
 * The sessions in scope, as a table (`from ${sessionsInScope(scope)}`): those that started in the
 * range and, when the scope filters, hold an event in scope (tested before grouping, so only the
 * events of those sessions are grouped).
 */
export function sessionsInScope(scope: ClickHouseScope, columns: readonly SessionColumn[]): RawBuilder<unknown> {
  return sessionsTable(scope.websiteId, scope.range, 'started', columns, inScopeSessions(scope), scope.sessions, scope.sample);
}

/** The sessions that hold an event in scope (every one when the scope does not filter), as a condition on session_id. */
function inScopeSessions(scope: ClickHouseScope): RawBuilder<unknown> {
  if (scope.filters.length === 0) return sql`1 = 1`;
  return sql`session_id in (select session_id from ${sampledTable('events', scope.sample)} where ${scopeCondition(scope)} and isNotNull(session_id))`;
}

export async function overview(ch: ClickHouse, db: Kysely<Database>, unsampled: ClickHouseScope, money: MoneyRules): Promise<OverviewCounts> {
  // Only filtered counts read raw rows (sampling-ch.ts): the unfiltered ones come from the rollups, exact.
  const rate = unsampled.filters.length > 0 ? (unsampled.sample ?? null) : null;
  const scope = { ...unsampled, sample: rate };
  const exact: ClickHouseScope = { ...unsampled, sample: null };
  const [t, s, payments] = await Promise.all([
    trafficCounts(ch, scope),
    sessionCounts(ch, scope),
    // Payments are few and relational: which visitors paid is read exactly.
    paymentCondition(ch, db, exact, money).then((where) =>
      sql<Record<string, unknown>>`select sum(${paidMinor(money)}) as minor, count(*) as payments from payments p where ${where}`.execute(db),
    ),
  ]);
  const p = payments.rows[0] ?? {};
  return {
    visitors: scaled(num(t.visitors), rate),
    pageviews: scaled(num(t.pageview_count), rate),
    convertedVisitors: scaled(num(t.converted), rate),
    sessions: scaled(num(s.session_count), rate),
    bounces: scaled(num(s.bounces), rate),
    sessionMillis: scaled(num(s.millis), rate),
    revenueMinor: num(p.minor),
    payments: num(p.payments),
    ...(rate ? { sampleRate: rate } : {}),
  };
}

/**
 * Visitors, pageviews and converted visitors: unfiltered, from the event rollups (the devices
 * breakdown keeps every event, the goals breakdown every goal); otherwise from the events in scope.
 * Visitors are counted with uniqCombined either way, as the breakdowns count them.
 */
async function trafficCounts(ch: ClickHouse, scope: ClickHouseScope): Promise<Record<string, unknown>> {
  if (await rollupReadable(ch, 'devices', scope)) {
    const [[all], [goals]] = await Promise.all([
      ch.rows<Record<string, unknown>>(sql`select uniqCombinedMerge(visitors) as visitors, sumMerge(pageviews) as pageview_count from ${rollupStates('devices', scope)}`),
      ch.rows<Record<string, unknown>>(sql`select uniqCombinedMerge(visitors) as converted from ${rollupStates('goals', scope)}`),
    ]);
    return { ...all, ...goals };
  }
  const [row] = await ch.rows<Record<string, unknown>>(sql`
    select uniqCombined(visitor_id) as visitors, countIf(type = 'pageview') as pageview_count,
      uniqCombinedIf(visitor_id, type = 'custom' and isNotNull(name)) as converted
    from ${sampledTable('events', scope.sample)} where ${scopeCondition(scope)}`);
  return row ?? {};
}

/**
 * Sessions, bounces and duration: unfiltered, from the session rollups; otherwise from the
 * sessions table (sums weighted by sign, no grouping), or from the events until it is filled.
 */
async function sessionCounts(ch: ClickHouse, scope: ClickHouseScope): Promise<Record<string, unknown>> {
  if (scope.sessions === 'table' && scope.filters.length > 0) {
    const [row] = await ch.rows<Record<string, unknown>>(sql`select sum(sign) as session_count, sum(sign * toInt64(${BOUNCE})) as bounces,
        sum(sign * toInt64(ended_ms - started_ms)) as millis
      from ${sampledTable('sessions', scope.sample)} where ${storedSessionRows(scope.websiteId, scope.range, 'started')} and ${inScopeSessions(scope)}`);
    return row ?? {};
  }
  const closedUntil = await sessionRollupsReadable(ch, 'overview', scope);
  const [row] = await ch.rows<Record<string, unknown>>(
    closedUntil !== null
      ? sql`select countMerge(sessions) as session_count, sumMerge(bounces) as bounces, sumMerge(millis) as millis
          from ${sessionStates('overview', scope, closedUntil)}`
      : sql`select count() as session_count, countIf(${BOUNCE}) as bounces, sum(ended_ms - started_ms) as millis
          from ${sessionsInScope(scope, ['pageviews', 'goals'])}`,
  );
  return row ?? {};
}
