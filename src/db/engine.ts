import { type Kysely, PostgresAdapter } from 'kysely';
import type { Engine } from './database.ts';
import type { Database } from './schema.ts';

/** For the few places where SQL must differ between the engines. */
export function isPostgres(db: Kysely<Database>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

/** The engine behind a Kysely instance (or one of its transactions). */
export function engineOf(db: Kysely<Database>): Engine {
  return isPostgres(db) ? 'postgres' : 'sqlite';
}
