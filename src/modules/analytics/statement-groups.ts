import { type Kysely, type RawBuilder, sql } from 'kysely';
import { isPostgres } from '../../db/engine.ts';
import type { Database } from '../../db/schema.ts';

// The fold's writes as groups of statements that may run as one (issue 38: on PostgreSQL each
// statement of a fold is a round trip, which under load costs milliseconds, and each computed a
// batch's CTEs again). A group's statements read nothing another of them writes, and no two write
// the same table, so running them one after the other or all at once from one snapshot gives the
// same rows: PostgreSQL runs a group as one statement (each a data-modifying CTE, the shared CTEs
// computed once), SQLite one after the other in the order given (where a statement costs no round
// trip and the shared rows come from temporary tables: breakdown-rollup-tables.ts).

/**
 * Runs `statements` (INSERT, UPDATE or DELETE without a WITH of their own) after the CTEs of `ctes`
 * (a `with ...`, or null), as one statement on PostgreSQL and one after the other on SQLite.
 * Only for statements of which none reads a table another writes, and no two write one table.
 */
export async function runTogether(db: Kysely<Database>, ctes: RawBuilder<unknown> | null, statements: RawBuilder<unknown>[]): Promise<void> {
  if (statements.length === 0) return;
  if (!isPostgres(db) || statements.length === 1) {
    for (const statement of statements) await sql`${ctes ?? sql``} ${statement}`.execute(db);
    return;
  }
  const steps = sql.join(
    statements.map((statement, i) => sql`${sql.raw(`step_${i}`)} as (${statement})`),
    sql`, `,
  );
  await sql`${ctes ? sql`${ctes},` : sql`with`} ${steps} select 1`.execute(db);
}
