import type { Kysely } from 'kysely';
import type { Database } from '../../src/db/schema.ts';

// Locks held open by a test, to show what proceeds and what waits while they are held
// (test/website-locks.test.ts, test/payment-backlog.test.ts, test/read-settle-wait.test.ts).

export type Held = { release: () => void; done: Promise<void> };

/** Opens a transaction that takes `lock` and holds it until released. */
export async function hold(db: Kysely<Database>, lock: (trx: Kysely<Database>) => Promise<void>): Promise<Held> {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let locked!: () => void;
  const taken = new Promise<void>((resolve) => (locked = resolve));
  const done = db.transaction().execute(async (trx) => {
    await lock(trx);
    locked();
    await released;
  });
  await taken;
  return { release, done };
}

/** 'done' when the work ends within `ms`, else 'waiting' (the work goes on). */
export async function within<T>(work: Promise<T>, ms: number): Promise<'done' | 'waiting'> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'waiting'>((resolve) => (timer = setTimeout(() => resolve('waiting'), ms)));
  try {
    return await Promise.race([work.then(() => 'done' as const), late]);
  } finally {
    clearTimeout(timer);
  }
}
