import { type Kysely, sql } from 'kysely';
import { createDerivedBuilds } from './derived-builds.ts';

/**
 * derived_builds (./derived-builds.ts): the background builds of websites' derived tables, which
 * the migrations that add a derived table now mark instead of filling the table during the
 * upgrade. Going down refuses while builds wait: the older release would read half-built tables.
 */
export function derivedBuilds() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await createDerivedBuilds(db);
    },
    async down(db: Kysely<unknown>): Promise<void> {
      const waiting = await sql<{ n: number }>`select count(*) as n from derived_builds`.execute(db);
      const count = Number(waiting.rows[0]?.n ?? 0);
      if (count > 0) throw new Error(`derived_builds holds ${count} websites whose derived tables are still being built: let this release's server finish them (GET /metrics, sightline_derived_builds), then migrate down`);
      await db.schema.dropTable('derived_builds').execute();
    },
  };
}
