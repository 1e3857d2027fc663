import { AsyncLocalStorage } from 'node:async_hooks';
import { type Kysely, type Transaction, sql } from 'kysely';
import { isPostgres } from './engine.ts';
import type { Database } from './schema.ts';

// Transactions whose commits need not be on disk when they resolve: background work that keeps
// its own cursor in the rows it commits (a build or a move of derived data), so a crash that
// loses its last commits loses their cursor with them, and the work does them again. Waiting
// for each commit's flush would only slow it: on SQLite a chunk of a few milliseconds waited as
// long again for the fdatasync of the log (sqlite-durability.ts), on PostgreSQL for the flush of
// its WAL. Such a commit is still atomic and ordered: it is on disk with the next durable commit
// of anyone, and a crash keeps a prefix of the commits.

const lazy = new AsyncLocalStorage<true>();

/** Whether the commit under way belongs to a lazy transaction (sqlite-durability.ts asks). */
export function commitIsLazy(): boolean {
  return lazy.getStore() === true;
}

/** Runs `work` in a transaction whose commit resolves without waiting for the disk. */
export function lazyTransaction<T>(db: Kysely<Database>, work: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
  return lazy.run(true, () =>
    db.transaction().execute(async (trx) => {
      if (isPostgres(trx)) await sql`set local synchronous_commit = off`.execute(trx);
      return work(trx);
    }),
  );
}
