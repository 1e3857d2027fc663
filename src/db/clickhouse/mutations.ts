import { type RawBuilder, sql } from 'kysely';
import type { ClickHouse } from './clickhouse.ts';

// Deletes and updates on ClickHouse are mutations, which run in the background: the call waits until they
// are done, so an answer is only sent once the rows are gone from every read.

/** How long a delete or update waits for its mutation before answering 503. */
const MUTATION_TIMEOUT_MS = 60_000;
const MUTATION_POLL_MS = 50;

export async function deleteAndWait(ch: ClickHouse, table: string, condition: RawBuilder<unknown>): Promise<void> {
  // A mutation deletes the rows where its condition is NULL too (18.16: `0 and NULL` is NULL, so
  // `type = 'custom' and name = 'x'` would take every event without a name): only a true one counts.
  await ch.command(sql`alter table ${sql.table(table)} delete where ifNull((${condition}), 0) = 1`);
  await untilMutationsDone(ch, table);
}

/**
 * Sets columns of the rows where `condition` holds (`assignments`: `column = value, ...`), and
 * waits for it. The columns must not be in the sorting key; a mutation rewrites the parts of the
 * rows it matches, so it is for rare changes. Running it twice sets the same values: idempotent.
 */
export async function updateAndWait(ch: ClickHouse, table: string, assignments: RawBuilder<unknown>, condition: RawBuilder<unknown>): Promise<void> {
  await ch.command(sql`alter table ${sql.table(table)} update ${assignments} where ifNull((${condition}), 0) = 1`);
  await untilMutationsDone(ch, table);
}

async function untilMutationsDone(ch: ClickHouse, table: string): Promise<void> {
  const deadline = Date.now() + MUTATION_TIMEOUT_MS;
  for (;;) {
    const [pending] = await ch.rows<{ pending: string }>(
      sql`select count() as pending from system.mutations where database = currentDatabase() and table = ${table} and is_done = 0`,
    );
    if (Number(pending?.pending ?? 0) === 0) return;
    if (Date.now() > deadline) throw Object.assign(new Error('ClickHouse did not finish a delete or update in time'), { code: 'ETIMEDOUT' });
    await new Promise((resolve) => setTimeout(resolve, MUTATION_POLL_MS));
  }
}
