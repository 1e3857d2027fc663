import { type Kysely, sql } from 'kysely';
import { isPostgres } from './engine.ts';
import type { Database } from './schema.ts';

// Check-then-write sequences (a limit, a uniqueness rule) lock their parent row first, inside
// the transaction, so two concurrent requests cannot both pass the check. PostgreSQL takes a
// row lock (read committed would let both read the same snapshot); SQLite already runs one
// transaction at a time on its single connection, and has no FOR UPDATE.
//
// The website's row is the hottest row of the database: every insert that references it (each
// event, payment, note, derived row) takes FOR KEY SHARE on it through its foreign key. So no
// lock here but the deletion's takes FOR UPDATE on it (which would hold every such insert, ingestion included, for
// the rest of the holder's transaction): the website's check-then-write sequences take FOR NO KEY
// UPDATE, and its derived data is serialized by a transaction-level advisory lock, which nothing
// but the derived-data writers touches (a settings change no longer waits for a fold, nor a fold
// for a payment's row lock). The order is always the advisory lock first, then the row, so no
// two of them wait on each other in a cycle.

/** The advisory lock class of a website's derived data (two-int4 form; the relay's one-bigint lock is another key space). */
const DERIVED_DATA_LOCK_CLASS = 0x534c_4452; // 'SLDR'
/** The advisory lock class of a website's event inserts (shared by writers, exclusive while events are re-derived). */
const EVENT_INSERTS_LOCK_CLASS = 0x534c_4549; // 'SLEI'

export async function lockAccount(db: Kysely<Database>, accountId: string): Promise<void> {
  if (isPostgres(db)) await db.selectFrom('accounts').select('id').where('id', '=', accountId).forUpdate().execute();
}

/**
 * The website's check-then-write lock. It also holds the website's derived data, as the row lock
 * it replaces did: a caller may change events or payments (server-side deletes, imports, payments
 * on ClickHouse), and so must not interleave with a fold. Payments on SQLite and PostgreSQL take
 * neither: the fold counts them (src/modules/analytics/payment-counts.ts).
 */
export async function lockWebsite(db: Kysely<Database>, websiteId: string): Promise<void> {
  if (!isPostgres(db)) return;
  await lockWebsiteRollups(db, websiteId);
  await db.selectFrom('websites').select('id').where('id', '=', websiteId).forNoKeyUpdate().execute();
}

/**
 * Before the website's row is deleted: FOR UPDATE, so every concurrent insert that references it
 * waits, then fails its foreign-key check, and none slips in between the deletes of its rows.
 */
export async function lockWebsiteForDeletion(db: Kysely<Database>, websiteId: string): Promise<void> {
  if (!isPostgres(db)) return;
  await lockWebsiteRollups(db, websiteId);
  await db.selectFrom('websites').select('id').where('id', '=', websiteId).forUpdate().execute();
}

/**
 * The website's derived data: derivers of one website (the background fold, a read settling its
 * backlog, a build's chunk, a time-zone move, a delete's repair, an import's payments) take turns under it
 * on PostgreSQL. An advisory lock held to the end of the transaction, re-entrant within it, on no
 * row: event inserts, settings changes and admin writes never wait for it.
 */
export async function lockWebsiteRollups(db: Kysely<Database>, websiteId: string): Promise<void> {
  if (isPostgres(db)) await sql`select pg_advisory_xact_lock(${DERIVED_DATA_LOCK_CLASS}::int4, hashtext(${websiteId}))`.execute(db);
}

/**
 * In the transaction that inserts events (record-events.ts), before the first insert, on
 * PostgreSQL: the websites' event-insert locks, shared (writers never wait for each other), taken
 * in id order. A transaction that also takes a website's derived-data lock (an import's page with
 * payments) takes it before this one, as `freezeEventInserts`' callers do, so no two wait on each
 * other in a circle.
 */
export async function shareEventInserts(db: Kysely<Database>, websiteIds: string[]): Promise<void> {
  if (!isPostgres(db) || websiteIds.length === 0) return;
  const ids = [...new Set(websiteIds)].sort();
  await sql`select pg_advisory_xact_lock_shared(${EVENT_INSERTS_LOCK_CLASS}::int4, hashtext(w)) from unnest(${ids}::text[]) with ordinality as t(w, n) order by n`.execute(db);
}

/**
 * On PostgreSQL, to the end of the caller's transaction, no new event of the website commits:
 * taken (after the derived-data lock) by whatever folds the waiting events in and then derives
 * visitors again from their raw events in the same transaction (a time-zone move's chunk, a
 * delete's repair). Under read committed each statement sees what committed before it, so an
 * event committed between the fold and the raw read would be counted by the read and, its backlog
 * row still waiting, again by the next fold. SQLite commits one transaction at a time.
 */
export async function freezeEventInserts(db: Kysely<Database>, websiteId: string): Promise<void> {
  if (isPostgres(db)) await sql`select pg_advisory_xact_lock(${EVENT_INSERTS_LOCK_CLASS}::int4, hashtext(${websiteId}))`.execute(db);
}
