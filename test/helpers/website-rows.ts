import { type Kysely, sql } from 'kysely';
import { isPostgres } from '../../src/db/engine.ts';
import type { Database } from '../../src/db/schema.ts';

// What is left of a website in the database, read from the database's own catalog, so a table
// added later cannot be forgotten by a deletion test.

/** The tables that have a website_id column, as the database itself lists them. */
export async function tablesWithWebsiteId(db: Kysely<Database>): Promise<string[]> {
  const rows = isPostgres(db)
    ? await sql<{ name: string }>`select table_name as name from information_schema.columns
        where column_name = 'website_id' and table_schema = current_schema()`.execute(db)
    : await sql<{ name: string }>`select m.name as name from sqlite_master m, pragma_table_info(m.name) c
        where m.type = 'table' and c.name = 'website_id'`.execute(db);
  return rows.rows.map((row) => row.name).sort();
}

/** Rows per table that reference the website (tables without any are left out), the website and token scopes included. */
export async function rowsReferencing(db: Kysely<Database>, websiteId: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of await tablesWithWebsiteId(db)) {
    const { rows } = await sql<{ n: number | string }>`select count(*) as n from ${sql.table(table)} where website_id = ${websiteId}`.execute(db);
    const n = Number(rows[0]!.n);
    if (n > 0) counts[table] = n;
  }
  const websites = await db.selectFrom('websites').select('id').where('id', '=', websiteId).execute();
  if (websites.length > 0) counts.websites = websites.length;
  const tokens = await db.selectFrom('access_tokens').select('id').where('website_ids', 'like', `%${websiteId}%`).execute();
  if (tokens.length > 0) counts['access_tokens.website_ids'] = tokens.length;
  return counts;
}
