import { type Kysely, sql } from 'kysely';
import type { Engine } from '../database.ts';
import { deleteRows } from '../../modules/analytics/breakdown-rollup-tables.ts';
import { deriveSessionBreakdownRollups } from '../../modules/analytics/session-breakdown-rollups.ts';
import { SESSION_BREAKDOWNS } from '../../modules/stats/sql/breakdown-keys-sql.ts';

/**
 * The all-time session breakdowns (entry and exit pages, referrers, campaigns) as rollups in the
 * tables of migration 0013, kept by ingestion (src/modules/analytics/session-breakdown-rollups.ts)
 * and derived here from the sessions already stored.
 */
export function sessionBreakdownRollups(engine: Engine) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await deriveSessionBreakdownRollups(db, engine);
      if (engine === 'postgres') await sql`analyze breakdown_visitors, breakdown_totals`.execute(db);
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await deleteRows(db, null, SESSION_BREAKDOWNS);
    },
  };
}
