import { type Kysely, type RawBuilder, sql } from 'kysely';
import { sqlList } from '../../db/prepared.ts';
import type { Database } from '../../db/schema.ts';
import { chunks } from '../../lib/chunks.ts';
import { DERIVATIONS } from './derivations.ts';

// How the derived tables hold each payment: `payments.counted` (migration 0038), 0 not at all, 1
// its paid amount without its provider's conversion, 2 with it. A payment's writer changes its own
// columns at once (refunded, converted_*) and queues a backlog row naming it (rollup-backlog.ts),
// with no derived-data lock; the fold then brings the derived tables to the payment as it is now:
// what they held of it goes (the `payments` hooks, sign -1, read `counted`), `counted` is set to
// what the payment's columns say, and the payment comes back as that (sign 1). Refunds and
// conversions change their columns only one way (refunded false -> true, converted null -> a value),
// and the derived tables read the payment through `counted`, so whatever order writes, folds and
// event folds interleave in, the tables hold each payment once, as its `counted` says.

/** Rows per statement when many payments are counted at once (an import's page). */
const PAYMENTS_PER_STATEMENT = 400;

/** What `counted` should say for the payment's columns (`column` spells a column, aliased or not). */
function countedAsRecorded(column: (name: 'refunded' | 'converted_currency') => RawBuilder<unknown>): RawBuilder<number> {
  return sql<number>`case when ${column('refunded')} = ${true} then 0 when ${column('converted_currency')} is null then 1 else 2 end`;
}

const asRecorded = countedAsRecorded((name) => sql.ref(`p.${name}`));

/**
 * Brings the derived tables to the payments `payments` (a condition over payments `p`) as they are
 * now; in a transaction holding the website's derived-data lock (the fold, an import). Payments
 * already held as they are cost one read.
 */
export async function countPayments(trx: Kysely<Database>, websiteId: string, payments: RawBuilder<unknown>): Promise<void> {
  const { rows } = await sql<{ id: string }>`select p.id from payments p where p.website_id = ${websiteId} and ${payments} and p.counted <> ${asRecorded}`.execute(trx);
  for (const part of chunks(rows.map((row) => row.id), PAYMENTS_PER_STATEMENT)) {
    const these = sql`p.website_id = ${websiteId} and p.id in (${sqlList(part)})`;
    for (const derivation of DERIVATIONS) await derivation.payments?.(trx, these, -1);
    await sql`update payments set counted = ${countedAsRecorded((name) => sql.ref(name))} where website_id = ${websiteId} and id in (${sqlList(part)})`.execute(trx);
    for (const derivation of DERIVATIONS) await derivation.payments?.(trx, these, 1);
  }
}

/** Before payments are deleted: what the derived tables hold of them goes. In a transaction holding the website's lock. */
export async function uncountPayments(trx: Kysely<Database>, payments: RawBuilder<unknown>): Promise<void> {
  for (const derivation of DERIVATIONS) await derivation.payments?.(trx, payments, -1);
}

/** Every payment of the website counted as it is, before a whole-website rebuild derives the tables from them. */
export async function countAllAsRecorded(trx: Kysely<Database>, websiteId: string): Promise<void> {
  await sql`update payments set counted = ${countedAsRecorded((name) => sql.ref(name))} where website_id = ${websiteId}`.execute(trx);
}
