import { type Kysely, sql } from 'kysely';
import type { Database } from '../../db/schema.ts';
import { rebuildSessionBreakdownRollups } from './session-breakdown-rollups.ts';
import { SOURCE_COLUMNS as SESSION_SOURCES } from './session-rollup.ts';

// The sessions of a website rebuilt from its raw events, as ingestion keeps them: counts and
// times over every event of the session, entry and exit pages from its first and last pageview,
// and its source from its first event. For bulk loads (the bench) and repairs.

const SOURCE_COLUMNS = SESSION_SOURCES.map(([column]) => column);

/**
 * One insert, so the triggers of session_buckets see each session once, complete, instead of
 * once per column filled in; then the session breakdowns' rollups are derived again.
 */
export async function rebuildSessions(db: Kysely<Database>, websiteId: string): Promise<void> {
  await sql`delete from sessions where website_id = ${websiteId}`.execute(db);
  // The triggers of session_buckets followed the delete down to zero; the insert below refills them.
  await sql`delete from session_buckets where website_id = ${websiteId}`.execute(db);
  const ranked = (where: string, order: 'asc' | 'desc') => sql`
    select session_id, path, hostname, ${sql.join(SOURCE_COLUMNS.map((c) => sql.ref(c)))},
      row_number() over (partition by session_id order by occurred_at ${sql.raw(order)}, id ${sql.raw(order)}) as rn
    from events where website_id = ${websiteId} and session_id is not null ${sql.raw(where)}`;
  await sql`
    insert into sessions (website_id, session_id, visitor_id, started_at, ended_at, pageviews, events, goals,
      entry_hostname, entry_path, exit_path, ${sql.join(SOURCE_COLUMNS.map((c) => sql.ref(c)))})
    select g.website_id, g.session_id, g.visitor_id, g.started_at, g.ended_at, g.pageviews, g.events, g.goals,
      entry.hostname, entry.path, leaving.path, ${sql.join(SOURCE_COLUMNS.map((c) => sql.ref(`first.${c}`)))}
    from (
      select website_id, session_id, min(visitor_id) as visitor_id, min(occurred_at) as started_at, max(occurred_at) as ended_at,
        sum(case when type = 'pageview' then 1 else 0 end) as pageviews, count(*) as events,
        sum(case when type = 'custom' and name is not null then 1 else 0 end) as goals
      from events where website_id = ${websiteId} and session_id is not null
      group by website_id, session_id
    ) g
    join (${ranked('', 'asc')}) first on first.session_id = g.session_id and first.rn = 1
    left join (${ranked("and type = 'pageview'", 'asc')}) entry on entry.session_id = g.session_id and entry.rn = 1
    left join (${ranked("and type = 'pageview'", 'desc')}) leaving on leaving.session_id = g.session_id and leaving.rn = 1`.execute(db);
  await rebuildSessionBreakdownRollups(db, websiteId);
}
