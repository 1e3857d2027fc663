import { type Kysely, sql } from 'kysely';
import type { Database } from '../../src/db/schema.ts';
import { DERIVED_TABLES, type DerivedTableName } from '../../src/modules/analytics/derived-tables.ts';
import { rebuildWebsite } from '../../src/modules/analytics/maintainer.ts';

// Every table ingestion derives from the raw events (the declared catalogue,
// src/modules/analytics/derived-tables.ts), read in a stable order, and the same tables as a
// rebuild from the stored raw events gives them: what "the rollups equal the raw events" means in
// the crash, backlog and time-zone tests.

/** Rows of one website's table, in a stable order, for comparing two states. */
export async function rowsOf(db: Kysely<Database>, table: DerivedTableName, websiteId: string) {
  let query = db.selectFrom(table).selectAll().where('website_id', '=', websiteId);
  // A count the writers brought back to zero (a bucket emptied by a session that moved to an
  // earlier one, a key's day whose visitors all came back later, revenue whose payers left a key)
  // stays as a row; the rebuild has none.
  const nonZero = DERIVED_TABLES.find((declared) => declared.name === table)?.nonZero;
  if (nonZero) query = query.where((eb) => eb.or(nonZero.map((column) => eb(sql.ref(column), '<>', 0))));
  const rows = await query.execute();
  const normal = rows.map((row) => JSON.stringify(Object.entries(row).map(([k, v]) => [k, typeof v === 'bigint' ? Number(v) : (v as unknown) instanceof Date ? (v as unknown as Date).toISOString() : v])));
  return normal.sort();
}

/**
 * Every declared derived table the rebuild below recomputes: all but those kept at ingestion (the
 * goal statistics, which the goals module recounts; the crash and goal tests compare those with
 * the raw events).
 */
export const DERIVED = DERIVED_TABLES.filter((table) => !table.keptAtIngestion).map((table) => table.name);

/** The derived tables rebuilt from the raw events, read inside a transaction that is rolled back. */
export async function rebuilt(db: Kysely<Database>, websiteId: string, timezone: string) {
  const rolledBack = new Error('rolled back on purpose');
  const tables: Record<string, string[]> = {};
  await db
    .transaction()
    .execute(async (trx) => {
      await rebuildWebsite(trx, websiteId, timezone);
      for (const table of DERIVED) tables[table] = await rowsOf(trx, table, websiteId);
      throw rolledBack;
    })
    .catch((error) => {
      if (error !== rolledBack) throw error;
    });
  return tables;
}

