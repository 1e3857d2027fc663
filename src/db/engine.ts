import { type Kysely, PostgresAdapter } from 'kysely';
import type { Database } from './schema.ts';

/** For the few places where SQL must differ between the engines. */
export function isPostgres(db: Kysely<Database>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}
