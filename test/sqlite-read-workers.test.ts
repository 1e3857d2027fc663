import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Db, createDatabase } from '../src/db/database.ts';
import { isDatabaseUnavailable } from '../src/db/faults.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { sqliteReadWorkers } from '../src/db/sqlite-read-workers.ts';

// Long analytics reads on SQLite run in worker threads: the event loop stays free while they
// scan, they see what the main connection committed, and they cannot write.

// A read that takes a while on any machine: counting a few million generated rows.
const LONG_READ = sql<{ n: number }>`with recursive c(x) as (select 1 union all select x + 1 from c where x < 3000000) select count(*) as n from c`;

/** Which settles first: a 1 ms timer started with the read, or the read. */
async function firstToSettle(run: () => Promise<unknown>): Promise<'timer' | 'read'> {
  const order: string[] = [];
  const timer = new Promise<void>((resolve) => setTimeout(() => resolve(void order.push('timer')), 1));
  await Promise.all([run().then(() => order.push('read')), timer]);
  return order[0] as 'timer' | 'read';
}

describe('SQLite read workers', () => {
  let dir: string;
  let db: Db;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sightline-readers-'));
    db = createDatabase(`sqlite:${join(dir, 'test.db')}`);
    await migrateToLatest(db);
  });
  afterAll(async () => {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps the event loop free during a long read, which the main connection does not', async () => {
    expect(await firstToSettle(() => LONG_READ.execute(db.reads))).toBe('timer');
    expect(await firstToSettle(() => LONG_READ.execute(db.kysely))).toBe('read');
  });

  it('reads what the main connection committed', async () => {
    await sql`insert into daily_salts (day, salt) values ('2026-01-01', 'x')`.execute(db.kysely);
    const { rows } = await sql<{ salt: string }>`select salt from daily_salts where day = ${'2026-01-01'}`.execute(db.reads);
    expect(rows).toEqual([{ salt: 'x' }]);
  });

  it('cannot write, and reports an SQL error as an error', async () => {
    await expect(sql`insert into daily_salts (day, salt) values ('2026-01-02', 'y')`.execute(db.reads)).rejects.toThrow(/readonly/);
    await expect(sql`select * from no_such_table`.execute(db.reads)).rejects.toThrow(/no such table/);
  });

  it('answers "database unavailable" when a worker cannot open its file, and starts a new worker for the next read', async () => {
    const path = join(dir, 'later.db');
    const reads = sqliteReadWorkers(path, 1);
    try {
      const failure = await sql`select 1 as one`.execute(reads).then(
        () => null,
        (error: unknown) => error,
      );
      expect(isDatabaseUnavailable(failure)).toBe(true);
      const later = createDatabase(`sqlite:${path}`);
      await migrateToLatest(later);
      await later.close();
      const { rows } = await sql<{ one: number }>`select 1 as one`.execute(reads);
      expect(rows).toEqual([{ one: 1 }]);
    } finally {
      await reads.destroy();
    }
  });

  it('binds booleans as SQLite does on the main connection', async () => {
    const { rows } = await sql<{ v: number }>`select ${true} as v`.execute(db.reads);
    expect(rows).toEqual([{ v: 1 }]);
  });
});
