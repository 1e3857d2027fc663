import { type Kysely, sql } from 'kysely';
import { lockWebsiteRollups } from '../../src/db/locks.ts';
import type { Database } from '../../src/db/schema.ts';
import { countPayments } from '../../src/modules/analytics/maintainer.ts';
import { insertPaymentOnce, markRefunded } from '../../src/modules/events/server-events.repository.ts';

// Payments written as a fixture writes them: the row, then counted at once into the derived tables
// under the website's derived-data lock (as an import does), so a suite need not fold the backlog
// (the payments route queues the count for the fold instead: payment-counts.ts).

export type PaymentRow = Parameters<typeof insertPaymentOnce>[1];

/** Stores the payment and counts it; false when its transaction was already recorded. */
export async function storePayment(db: Kysely<Database>, row: PaymentRow): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    await lockWebsiteRollups(trx, row.website_id);
    if (!(await insertPaymentOnce(trx, row))) return false;
    await countPayments(trx, row.website_id, sql`p.id = ${row.id}`);
    return true;
  });
}

/** Marks the payment refunded and counts it so (it stops counting). */
export async function refundPayment(db: Kysely<Database>, websiteId: string, transactionId: string): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await lockWebsiteRollups(trx, websiteId);
    const changed = await markRefunded(trx, websiteId, transactionId);
    if (changed !== undefined) await countPayments(trx, websiteId, sql`p.id = ${changed}`);
  });
}
