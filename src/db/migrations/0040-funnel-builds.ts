import { type Kysely, sql } from 'kysely';

/**
 * funnel_builds: a stored funnel whose rows of funnel_visitor_days and funnel_crossings are being
 * derived from the website's raw events in the background, a chunk of visitors at a time, after
 * its creation or a change of its steps on a website with events
 * (src/modules/analytics/funnel-build.ts). Its visitors with step events up to `cursor` (the
 * database's order of text; none while it is null) are derived; the fold keeps every visitor's
 * rows of a building funnel as it keeps a kept one's, so once the last chunk passes the funnel is
 * kept (funnel_crossings_kept) and its reports read the sums.
 *
 * Going down drops the builds and the rows they derived so far: the older release keeps a funnel
 * created on a website with events from the website's next build, and reads it raw until then.
 */
export function funnelBuilds() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await sql`CREATE TABLE funnel_builds (
        website_id text NOT NULL REFERENCES websites(id) ON DELETE CASCADE,
        funnel_id text NOT NULL,
        cursor text,
        visitors_done bigint NOT NULL DEFAULT 0,
        visitors_total bigint,
        started_at text NOT NULL,
        PRIMARY KEY (website_id, funnel_id)
      )`.execute(db);
    },
    async down(db: Kysely<unknown>): Promise<void> {
      for (const table of ['funnel_crossings', 'funnel_visitor_days']) {
        await sql`delete from ${sql.table(table)} where exists (select 1 from funnel_builds b
          where b.website_id = ${sql.ref(`${table}.website_id`)} and b.funnel_id = ${sql.ref(`${table}.funnel_id`)})`.execute(db);
      }
      await db.schema.dropTable('funnel_builds').execute();
    },
  };
}
