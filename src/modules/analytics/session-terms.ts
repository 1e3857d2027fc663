import { type Kysely, type RawBuilder, sql } from 'kysely';
import { isPostgres } from '../../db/engine.ts';
import type { Database } from '../../db/schema.ts';

// What a session counts as, shared by the rollups that keep session totals (visitor-totals.ts)
// and the reads that count the raw sessions (src/modules/stats/sql/overview-sql.ts): a bounce
// (over the sessions table `s`) and a session's duration.

/** A session bounces when it has at most one pageview and no goal. */
export const BOUNCE = sql`(s.pageviews <= 1 and s.goals = 0)`;

/** Whole milliseconds between two timestamp columns, on either engine (as session_buckets sums them). */
export function millisBetween(db: Kysely<Database>, from: string, to: string): RawBuilder<number> {
  return isPostgres(db)
    ? sql<number>`round(extract(epoch from (${sql.ref(to)} - ${sql.ref(from)})) * 1000)`
    : sql<number>`round((julianday(${sql.ref(to)}) - julianday(${sql.ref(from)})) * 86400000.0)`;
}
