import { type Kysely, sql } from 'kysely';
import type { Database } from '../../db/schema.ts';
import { SOURCE_COLUMNS as SESSION_SOURCES } from './session-rollup.ts';

// The sessions of a website rebuilt from its raw events, as ingestion keeps them: counts and
// times over every event of the session, entry and exit pages from its first and last pageview,
// and its source from its first event. For bulk loads (the bench) and repairs.

const SOURCE_COLUMNS = SESSION_SOURCES.map(([column]) => column);

export async function rebuildSessions(db: Kysely<Database>, websiteId: string): Promise<void> {
  await sql`delete from sessions where website_id = ${websiteId}`.execute(db);
  // The triggers of session_buckets followed the delete down to zero; the insert below refills them.
  await sql`delete from session_buckets where website_id = ${websiteId}`.execute(db);
  await sql`
    insert into sessions (website_id, session_id, visitor_id, started_at, ended_at, pageviews, events, goals)
    select website_id, session_id, min(visitor_id), min(occurred_at), max(occurred_at),
      sum(case when type = 'pageview' then 1 else 0 end), count(*),
      sum(case when type = 'custom' and name is not null then 1 else 0 end)
    from events where website_id = ${websiteId} and session_id is not null
    group by website_id, session_id`.execute(db);
  const ranked = (where: string, order: 'asc' | 'desc') => sql`
    select session_id, path, hostname, ${sql.join(SOURCE_COLUMNS.map((c) => sql.ref(c)))},
      row_number() over (partition by session_id order by occurred_at ${sql.raw(order)}, id ${sql.raw(order)}) as rn
    from events where website_id = ${websiteId} and session_id is not null ${sql.raw(where)}`;
  const source = sql.join(SOURCE_COLUMNS.map((c) => sql`${sql.ref(c)} = f.${sql.ref(c)}`));
  await sql`
    update sessions set ${source} from (${ranked('', 'asc')}) f
    where f.rn = 1 and sessions.website_id = ${websiteId} and f.session_id = sessions.session_id`.execute(db);
  await sql`
    update sessions set entry_path = f.path, entry_hostname = f.hostname from (${ranked("and type = 'pageview'", 'asc')}) f
    where f.rn = 1 and sessions.website_id = ${websiteId} and f.session_id = sessions.session_id`.execute(db);
  await sql`
    update sessions set exit_path = f.path from (${ranked("and type = 'pageview'", 'desc')}) f
    where f.rn = 1 and sessions.website_id = ${websiteId} and f.session_id = sessions.session_id`.execute(db);
}
