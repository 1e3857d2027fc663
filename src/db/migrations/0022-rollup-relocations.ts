import { type Kysely, sql } from 'kysely';

/**
 * rollup_relocations: a website whose day rollups are moving to another time zone, a chunk of
 * visitors at a time, in the background (src/modules/analytics/day-relocation.ts). Visitors up to
 * `cursor` (byte order of their ids; none while it is null) have theirs in `to_timezone`, the rest
 * still in `from_timezone`; `next_timezone` is a later change that waits for this one to end.
 * Going down refuses while rows wait: the older release would read half-moved days as whole.
 */
export function rollupRelocations() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await sql`CREATE TABLE rollup_relocations (
        website_id text PRIMARY KEY REFERENCES websites(id) ON DELETE CASCADE,
        from_timezone text NOT NULL,
        to_timezone text NOT NULL,
        next_timezone text,
        cursor text,
        visitors_done bigint NOT NULL DEFAULT 0,
        visitors_total bigint,
        started_at text NOT NULL
      )`.execute(db);
    },
    async down(db: Kysely<unknown>): Promise<void> {
      const waiting = await sql<{ n: number }>`select count(*) as n from rollup_relocations`.execute(db);
      const count = Number(waiting.rows[0]?.n ?? 0);
      if (count > 0) throw new Error(`rollup_relocations holds ${count} websites whose days are still moving to a new time zone: let this release's server finish them (GET /metrics, sightline_rollup_relocations), then migrate down`);
      await db.schema.dropTable('rollup_relocations').execute();
    },
  };
}
