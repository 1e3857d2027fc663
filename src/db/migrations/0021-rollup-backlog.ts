import { type Kysely, sql } from 'kysely';
import type { Engine } from '../database.ts';

/**
 * rollup_backlog: the events accepted but not yet derived into the rollups. Ingestion commits an
 * event with its row here, in the transaction that answers the request; the rollup deriver
 * (src/modules/analytics/rollup-backlog.ts) later derives the rollups of many such events in one
 * transaction and deletes their rows in it. `seq` orders the derivation. Going down refuses while
 * rows wait: the older release would never derive them (a graceful stop of this release derives
 * them all).
 */
export function rollupBacklog(engine: Engine) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      const seq = engine === 'postgres' ? sql`seq bigserial PRIMARY KEY` : sql`seq integer PRIMARY KEY AUTOINCREMENT`;
      await sql`CREATE TABLE rollup_backlog (
        ${seq},
        website_id text NOT NULL REFERENCES websites(id) ON DELETE CASCADE,
        event_id text NOT NULL
      )`.execute(db);
      await db.schema.createIndex('rollup_backlog_website_idx').on('rollup_backlog').columns(['website_id', 'seq']).execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      const waiting = await sql<{ n: number }>`select count(*) as n from rollup_backlog`.execute(db);
      const count = Number(waiting.rows[0]?.n ?? 0);
      if (count > 0) throw new Error(`rollup_backlog holds ${count} events not yet in the rollups: start and stop this release's server once (a graceful stop derives them), then migrate down`);
      await db.schema.dropTable('rollup_backlog').execute();
    },
  };
}
