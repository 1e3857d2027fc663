import type { Kysely } from 'kysely';
import { isPostgres } from './engine.ts';
import type { Database } from './schema.ts';

// Check-then-write sequences (a limit, a uniqueness rule) lock their parent row first, inside
// the transaction, so two concurrent requests cannot both pass the check. PostgreSQL takes a
// row lock (read committed would let both read the same snapshot); SQLite already runs one
// transaction at a time on its single connection, and has no FOR UPDATE.

export async function lockAccount(db: Kysely<Database>, accountId: string): Promise<void> {
  if (isPostgres(db)) await db.selectFrom('accounts').select('id').where('id', '=', accountId).forUpdate().execute();
}

export async function lockWebsite(db: Kysely<Database>, websiteId: string): Promise<void> {
  if (isPostgres(db)) await db.selectFrom('websites').select('id').where('id', '=', websiteId).forUpdate().execute();
}

/**
 * The website's row for its rollups: derivers of one website take turns under it on PostgreSQL.
 * NO KEY UPDATE, so event inserts (whose foreign key takes KEY SHARE) never wait for it.
 */
export async function lockWebsiteRollups(db: Kysely<Database>, websiteId: string): Promise<void> {
  if (isPostgres(db)) await db.selectFrom('websites').select('id').where('id', '=', websiteId).forNoKeyUpdate().execute();
}
