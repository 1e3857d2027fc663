import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { ClickHouse } from '../../db/clickhouse/clickhouse.ts';
import { deleteAndWait } from '../../db/clickhouse/mutations.ts';
import { deleteWithCopy } from './clickhouse-sampling-upgrade.ts';
import type { Database } from '../../db/schema.ts';
import { notFound } from '../../errors.ts';
import { type GoalCompletions, recountGoalStats } from '../goals/goal-stats.ts';
import { isoOf, num, rangeCondition } from '../stats/clickhouse/scope-ch.ts';
import { SPANS, daysOf, rebuildEventRollups } from './clickhouse-event-rollups.ts';
import { refillSessionDays } from './clickhouse-session-fill.ts';
import { SESSION_SPANS, rebuildSessionRollups, sessionDaysOf } from './clickhouse-session-rollups.ts';
import type { EventLog } from './event-log.ts';
import { clickhouseEventPage } from './event-export.ts';
import * as deletes from './server-deletes.repository.ts';
import type { PageviewContext } from './server-events.repository.ts';

// The EventLog on ClickHouse. Every call first lets the relay ship what this process accepted,
// so a lookup sees an event acknowledged before it and a delete reaches it. Deletes are
// ClickHouse mutations that the call waits for (src/db/clickhouse/mutations.ts); the rollups of
// the deleted events' days are computed again while the relay ships nothing.

/** Deletes a website's events and their rollups (of events and of sessions). */
export async function deleteWebsiteRows(ch: ClickHouse, websiteId: string): Promise<void> {
  await deleteWithCopy(ch, 'events', sql`website_id = ${websiteId}`);
  await deleteWithCopy(ch, 'sessions', sql`website_id = ${websiteId}`);
  for (const { table } of [...Object.values(SPANS), ...Object.values(SESSION_SPANS)]) await deleteAndWait(ch, table, sql`website_id = ${websiteId}`);
}

function serverGoalCondition(websiteId: string, filters: deletes.GoalFilters): RawBuilder<unknown> {
  const parts = [sql`website_id = ${websiteId}`, sql`type = 'custom'`, sql`isNotNull(name)`, sql`source = 'api'`];
  if (filters.name !== undefined) parts.push(sql`name = ${filters.name}`);
  if (filters.visitorId !== undefined) parts.push(sql`visitor_id = ${filters.visitorId}`);
  if (filters.range) parts.push(rangeCondition(filters.range));
  return sql.join(parts, sql` and `);
}

function clickhouseCompletions(ch: ClickHouse): GoalCompletions {
  const goals = (websiteId: string, names: string[]) => sql`website_id = ${websiteId} and type = 'custom' and name in (${sql.join(names)})`;
  return {
    pairs: (websiteId, names, visitors) =>
      ch.rows(sql`select distinct name, visitor_id from events where ${goals(websiteId, names)} and visitor_id in (${sql.join(visitors)})`),
    async totals(websiteId, names) {
      const rows = await ch.rows<{ name: string; completions: string; visitors: string; last: string }>(
        sql`select name, count() as completions, uniqExact(visitor_id) as visitors, max(occurred_ms) as last from events where ${goals(websiteId, names)} group by name`,
      );
      return rows.map((row) => ({ name: row.name, completions: num(row.completions), visitors: num(row.visitors), last_completed_at: isoOf(row.last) }));
    },
  };
}

/**
 * Deletes these events of the website (an import's, src/modules/imports/sightline-import-delete.ts)
 * with everything ClickHouse derives from them: the rollups of their days, the sessions of the
 * days they may have been part of (grouped again from the events left) and their rollups, then
 * the goal statistics on the relational side. Run again after a crash, it finds what is left.
 */
export async function deleteClickHouseEvents(ch: ClickHouse, db: Kysely<Database>, relay: RelayAccess, websiteId: string, ids: string[]): Promise<void> {
  await relay.settle();
  const condition = sql`website_id = ${websiteId} and id in (${sql.join(ids)})`;
  const rows = await relay.exclusive(async () => {
    const found = await ch.rows<{ name: string | null; visitor_id: string; website_id: string; occurred_ms: string }>(
      sql`select name, visitor_id, website_id, occurred_ms from events where ${condition}`,
    );
    if (found.length === 0) return found;
    await deleteWithCopy(ch, 'events', condition);
    await rebuildEventRollups(ch, daysOf(found));
    await refillSessionDays(ch, found);
    // The relay's kept states of these sessions are gone from ClickHouse: the next events of a session read it again.
    relay.forgetSessions?.();
    await rebuildSessionRollups(ch, sessionDaysOf(found));
    return found;
  });
  const goals = rows.filter((row) => row.name !== null && row.name !== '');
  if (goals.length === 0) return;
  await db.transaction().execute(async (trx) => {
    if ((await deletes.lockWebsiteTimezone(trx, websiteId)) === undefined) return;
    await recountGoalStats(trx, websiteId, [...new Set(goals.map((row) => row.name!))], [...new Set(goals.map((row) => row.visitor_id))], clickhouseCompletions(ch));
  });
}

/**
 * Which of these event ids the website already holds in ClickHouse, the events being between
 * `fromMs` and `toMs` (an import's chunk, in time order: the range keeps the lookup on the
 * table's sorting key). Events still waiting in the relay are not looked at.
 */
export async function clickHouseEventIds(ch: ClickHouse, websiteId: string, ids: string[], fromMs: number, toMs: number): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await ch.rows<{ id: string }>(sql`select id from events where website_id = ${websiteId}
    and occurred_at >= toDateTime(${Math.floor(fromMs / 1000)}) and occurred_at <= toDateTime(${Math.ceil(toMs / 1000)})
    and id in (${sql.join(ids)})`);
  return new Set(rows.map((row) => row.id));
}

/** What the event log needs of the relay: to ship what waits, and to work while it ships nothing. */
export interface RelayAccess {
  settle(): Promise<void>;
  exclusive<T>(work: () => Promise<T>): Promise<T>;
  /** Drops the kept session states (after sessions were grouped again from the events). */
  forgetSessions?(): void;
}

export function clickhouseEventLog(ch: ClickHouse, db: Kysely<Database>, relay: RelayAccess): EventLog {
  const settle = () => relay.settle();
  return {
    async visitorHasEvent(websiteId, visitorId) {
      await settle();
      const rows = await ch.rows(sql`select 1 as found from events where website_id = ${websiteId} and visitor_id = ${visitorId} limit 1`);
      return rows.length > 0;
    },
    async findLatestPageview(websiteId, visitorId) {
      await settle();
      const [row] = await ch.rows<PageviewContext>(sql`select hostname, country, region, city, browser, os, device from events
        where website_id = ${websiteId} and visitor_id = ${visitorId} and type = 'pageview'
        order by occurred_ms desc limit 1`);
      return row;
    },
    async goalStatsBetween(websiteId, from, to) {
      await settle();
      const rows = await ch.rows<{ name: string; completions: string; visitors: string; last: string }>(sql`select name,
          count() as completions, uniqExact(visitor_id) as visitors, max(occurred_ms) as last
        from events where website_id = ${websiteId} and type = 'custom' and isNotNull(name) and ${rangeCondition({ from, to })}
        group by name`);
      return rows.map((row) => ({ goal_name: row.name, completions: num(row.completions), visitors: num(row.visitors), last_completed_at: isoOf(row.last) }));
    },
    async deleteServerGoals(websiteId, filters) {
      await settle();
      const condition = serverGoalCondition(websiteId, filters);
      const rows = await relay.exclusive(async () => {
        const found = await ch.rows<{ name: string; visitor_id: string; website_id: string; occurred_ms: string }>(
          sql`select name, visitor_id, website_id, occurred_ms from events where ${condition}`,
        );
        if (found.length === 0) return found;
        await deleteWithCopy(ch, 'events', condition);
        await rebuildEventRollups(ch, daysOf(found));
        // The sessions those goals were part of, grouped again from the events left (a session of
        // server goals alone is gone; the others count fewer goals).
        await refillSessionDays(ch, found);
        relay.forgetSessions?.();
        await rebuildSessionRollups(ch, sessionDaysOf(found));
        return found;
      });
      // Goal statistics live on the relational side: counted again from what ClickHouse still holds.
      await db.transaction().execute(async (trx) => {
        const timezone = await deletes.lockWebsiteTimezone(trx, websiteId);
        if (timezone === undefined) throw notFound('Website not found');
        if (rows.length > 0) {
          await recountGoalStats(trx, websiteId, rows.map((row) => row.name), rows.map((row) => row.visitor_id), clickhouseCompletions(ch));
        }
      });
      return rows.length;
    },
    async deleteWebsiteEvents(websiteId) {
      await settle();
      // While the relay ships nothing: an upgrade's copy (clickhouse-sampling-upgrade.ts) runs in its turns.
      await relay.exclusive(() => deleteWebsiteRows(ch, websiteId));
    },
    async eventPage(websiteId, after, limit) {
      await settle();
      return clickhouseEventPage(ch, websiteId, after, limit);
    },
  };
}
