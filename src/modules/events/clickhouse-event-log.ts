import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { ClickHouse } from '../../db/clickhouse/clickhouse.ts';
import type { Database } from '../../db/schema.ts';
import { notFound } from '../../errors.ts';
import { type GoalCompletions, recountGoalStats } from '../goals/goal-stats.ts';
import { isoOf, num, rangeCondition } from '../stats/clickhouse/scope-ch.ts';
import type { EventLog } from './event-log.ts';
import * as deletes from './server-deletes.repository.ts';
import type { PageviewContext } from './server-events.repository.ts';

// The EventLog on ClickHouse. Every call first lets the relay ship what this process accepted,
// so a lookup sees an event acknowledged before it and a delete reaches it. Deletes are
// ClickHouse mutations, which run in the background: the call waits until they are done, so the
// answer is only sent once the rows are gone from every read.

/** How long a delete waits for its mutation before answering 503. */
const MUTATION_TIMEOUT_MS = 60_000;
const MUTATION_POLL_MS = 50;

export async function deleteAndWait(ch: ClickHouse, condition: RawBuilder<unknown>): Promise<void> {
  // A mutation deletes the rows where its condition is NULL too (18.16: `0 and NULL` is NULL, so
  // `type = 'custom' and name = 'x'` would take every event without a name): only a true one counts.
  await ch.command(sql`alter table events delete where ifNull((${condition}), 0) = 1`);
  const deadline = Date.now() + MUTATION_TIMEOUT_MS;
  for (;;) {
    const [pending] = await ch.rows<{ pending: string }>(
      sql`select count() as pending from system.mutations where database = currentDatabase() and table = 'events' and is_done = 0`,
    );
    if (num(pending?.pending) === 0) return;
    if (Date.now() > deadline) throw Object.assign(new Error('ClickHouse did not finish a delete in time'), { code: 'ETIMEDOUT' });
    await new Promise((resolve) => setTimeout(resolve, MUTATION_POLL_MS));
  }
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

export function clickhouseEventLog(ch: ClickHouse, db: Kysely<Database>, settle: () => Promise<void>): EventLog {
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
      const rows = await ch.rows<{ name: string; visitor_id: string }>(sql`select name, visitor_id from events where ${condition}`);
      if (rows.length > 0) await deleteAndWait(ch, condition);
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
      await deleteAndWait(ch, sql`website_id = ${websiteId}`);
    },
  };
}
