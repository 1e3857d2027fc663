import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Db, createDatabase } from '../src/db/database.ts';
import { migrateToLatest } from '../src/db/migrate.ts';

// The main connection's writers take turns at the write gate with the derived-data thread
// (src/db/sqlite-write-gate.ts): while the gate is held, a transaction or a write of the main
// connection waits for it without holding the event loop, and a read goes on.

/** Resolves after `ms`: whether it does while a wait is under way shows the event loop is free. */
const timer = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('SQLite write gate', () => {
  let dir: string;
  let db: Db;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sightline-gate-'));
    db = createDatabase(`sqlite:${join(dir, 'test.db')}`);
    await migrateToLatest(db);
  });
  afterAll(async () => {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('exists on a SQLite file only', async () => {
    expect(db.writeGate).not.toBeNull();
    const memory = createDatabase('sqlite::memory:');
    expect(memory.writeGate).toBeNull();
    await memory.close();
  });

  it('holds transactions and writes of the main connection while it is held, not its reads', async () => {
    const release = await db.writeGate!.acquire();
    const order: string[] = [];
    const transaction = db.kysely
      .transaction()
      .execute((trx) => sql`insert into daily_salts (day, salt) values ('2026-03-01', 'in a transaction')`.execute(trx))
      .then(() => order.push('transaction'));
    const write = sql`insert into daily_salts (day, salt) values ('2026-03-02', 'alone')`.execute(db.kysely).then(() => order.push('write'));
    await timer(20);
    expect(order, 'both wait, and timers fire meanwhile').toEqual([]);
    release();
    await Promise.all([transaction, write]);
    expect(order).toEqual(['transaction', 'write']);

    const held = await db.writeGate!.acquire();
    try {
      const { rows } = await sql<{ salt: string }>`select salt from daily_salts where day in ('2026-03-01', '2026-03-02') order by day`.execute(db.kysely);
      expect(rows.map((row) => row.salt), 'a read does not wait').toEqual(['in a transaction', 'alone']);
    } finally {
      held();
    }
  });

  it("lets the main connection's reads run while its writers wait for the gate", async () => {
    // Before: a transaction waiting for the gate held Kysely's one connection, so every read of
    // the main connection (admin reads, every request's credential lookup) waited for the fold
    // holding the gate too (issue 38).
    const release = await db.writeGate!.acquire();
    const waiting = [
      db.kysely.transaction().execute((trx) => sql`insert into daily_salts (day, salt) values ('2026-03-04', 'waited in a transaction')`.execute(trx)),
      sql`insert into daily_salts (day, salt) values ('2026-03-05', 'waited alone')`.execute(db.kysely),
    ];
    try {
      await timer(10);
      const read = sql<{ n: number }>`select count(*) as n from daily_salts where day in ('2026-03-04', '2026-03-05')`.execute(db.kysely);
      const answered = await Promise.race([read.then((result) => Number(result.rows[0]!.n)), timer(2000).then(() => 'still waiting')]);
      expect(answered, 'the read answers while both writers wait, and sees neither').toBe(0);
    } finally {
      release();
    }
    await Promise.all(waiting);
    const { rows } = await sql<{ salt: string }>`select salt from daily_salts where day in ('2026-03-04', '2026-03-05') order by day`.execute(db.kysely);
    expect(rows.map((row) => row.salt)).toEqual(['waited in a transaction', 'waited alone']);
  });

  it('is given back when a transaction fails or cannot begin', async () => {
    await expect(
      db.kysely.transaction().execute(async (trx) => {
        await sql`insert into daily_salts (day, salt) values ('2026-03-03', 'rolled back')`.execute(trx);
        throw new Error('the work failed');
      }),
    ).rejects.toThrow('the work failed');
    await expect(sql`insert into no_such_table values (1)`.execute(db.kysely)).rejects.toThrow(/no such table/);
    const release = await Promise.race([db.writeGate!.acquire(), timer(1000).then(() => null)]);
    expect(release, 'the gate is free again').not.toBeNull();
    release!();
    expect((await sql`select salt from daily_salts where day = '2026-03-03'`.execute(db.kysely)).rows).toEqual([]);
  });
});
