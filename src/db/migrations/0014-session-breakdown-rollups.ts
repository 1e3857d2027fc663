import { type Kysely, sql } from 'kysely';
import { markBuilds } from './derived-builds.ts';

/** The session breakdowns as they stood at this migration. */
const SESSION_BREAKDOWNS = ['entry-pages', 'exit-pages', 'referrers', 'campaigns'];

/**
 * The all-time session breakdowns (entry and exit pages, referrers, campaigns) as rollups in the
 * tables of migration 0013, kept by ingestion (src/modules/analytics/session-breakdown-rollups.ts)
 * and derived from the sessions already stored by a background build (./derived-builds.ts).
 */
export function sessionBreakdownRollups() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await markBuilds(db, 'migration 0014: the session breakdowns');
    },
    async down(db: Kysely<unknown>): Promise<void> {
      const kinds = sql.join(SESSION_BREAKDOWNS.map((kind) => sql.lit(kind)));
      await sql`delete from breakdown_visitors where breakdown in (${kinds})`.execute(db);
      await sql`delete from breakdown_totals where breakdown in (${kinds})`.execute(db);
    },
  };
}
