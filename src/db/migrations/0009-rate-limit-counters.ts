import { type Kysely, sql } from 'kysely';
import type { Engine } from '../database.ts';
import { columnTypes } from './column-types.ts';

/**
 * Rate-limit counters shared by every instance on one PostgreSQL (src/http/rate-limit-store.ts):
 * one row per key and fixed window. On PostgreSQL the table is UNLOGGED: a counter needs no
 * durability (a crash empties the table, which only restarts the windows), and a transaction that
 * touches nothing but unlogged tables commits without waiting for a WAL flush, so a hit costs one
 * round trip and no fsync. SQLite (one process) counts in memory: the table exists, unused.
 */
export function rateLimitCounters(engine: Engine) {
  const t = columnTypes(engine);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      if (engine === 'postgres') {
        await sql`CREATE UNLOGGED TABLE rate_limit_counters (
          key text PRIMARY KEY,
          count integer NOT NULL,
          reset_at timestamptz NOT NULL
        )`.execute(db);
        return;
      }
      await db.schema
        .createTable('rate_limit_counters')
        .addColumn('key', 'text', (c) => c.primaryKey())
        .addColumn('count', 'integer', (c) => c.notNull())
        .addColumn('reset_at', t.timestamp, (c) => c.notNull())
        .execute();
    },
    async down(db: Kysely<unknown>): Promise<void> {
      await db.schema.dropTable('rate_limit_counters').execute();
    },
  };
}
