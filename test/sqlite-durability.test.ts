import { mkdtempSync, rmSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kysely, SqliteDialect, sql } from 'kysely';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createDatabase } from '../src/db/database.ts';
import { WalFlusher, flushCommits } from '../src/db/sqlite-durability.ts';
import { openSqlite } from '../src/db/sqlite-driver.ts';

// A commit on SQLite is answered only once the write-ahead log holding it is flushed to disk
// (src/db/sqlite-durability.ts): the main connection commits with synchronous = NORMAL and the
// caller waits for an fdatasync of the log off the event loop. The real log file is flushed
// here; the test only watches each flush start and end.

const scratch = mkdtempSync(join(tmpdir(), 'sightline-durability-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

interface Flush {
  started: number;
  ended: number | null;
}

let clock = 0;
const tick = () => ++clock;

/** A database whose log flushes are recorded, and held back while `hold` is set. */
function open(options: { fail?: boolean } = {}) {
  const path = join(scratch, `d-${Math.random().toString(36).slice(2)}.db`);
  const flushes: Flush[] = [];
  let release: (() => void) | null = null;
  const gate = { hold: false, release: () => release?.() };
  const flusher = new WalFlusher(`${path}-wal`, async (handle: FileHandle) => {
    const flush: Flush = { started: tick(), ended: null };
    flushes.push(flush);
    if (gate.hold) await new Promise<void>((resolve) => (release = resolve));
    if (options.fail) throw Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' });
    await handle.datasync();
    flush.ended = tick();
  });
  const { database, raw } = openSqlite(path, { flushedByCaller: true, onWrite: () => flusher.noteWrite() });
  const db = new Kysely<{ t: { id: number; v: string } }>({ dialect: flushCommits(new SqliteDialect({ database }), flusher) });
  return { db, raw, flushes, gate };
}

const opened: Kysely<any>[] = [];
afterEach(async () => {
  for (const db of opened.splice(0)) await db.destroy();
});

async function table() {
  const handle = open();
  opened.push(handle.db);
  await sql`create table t (id integer primary key, v text)`.execute(handle.db);
  return handle;
}

describe('SQLite commits flushed off the event loop', () => {
  it('commits with synchronous = NORMAL on a file, FULL where nothing flushes for it', async () => {
    const { raw } = await table();
    expect(raw.pragma('synchronous', { simple: true })).toBe(1);
    const path = join(scratch, 'plain.db');
    const plain = openSqlite(path).raw;
    expect(plain.pragma('synchronous', { simple: true })).toBe(2);
    plain.close();
  });

  it('resolves a transaction only after a flush that started after its COMMIT has ended', async () => {
    const { db, raw, flushes, gate } = await table();
    const before = flushes.length;
    gate.hold = true;
    let committedAt = 0;
    let resolvedAt = 0;
    const writing = db
      .transaction()
      .execute(async (trx) => {
        await trx.insertInto('t').values({ id: 1, v: 'a' }).execute();
      })
      .then(() => (resolvedAt = tick()));
    // The COMMIT has run (another connection sees the row) while the flush is held back.
    await until(() => flushes.length === before + 1);
    const flush = flushes[before]!;
    committedAt = flush.started;
    expect(raw.prepare('select count(*) from t').pluck().get()).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(resolvedAt).toBe(0);
    gate.hold = false;
    gate.release();
    await writing;
    expect(flush.ended).not.toBeNull();
    expect(resolvedAt).toBeGreaterThan(flush.ended!);
    expect(committedAt).toBeGreaterThan(0);
  });

  it('flushes a write outside a transaction, and no read', async () => {
    const { db, flushes } = await table();
    const before = flushes.length;
    await db.selectFrom('t').selectAll().execute();
    await sql`select count(*) from t`.execute(db);
    expect(flushes.length).toBe(before);
    await db.insertInto('t').values({ id: 2, v: 'b' }).execute();
    expect(flushes.length).toBe(before + 1);
    await db.transaction().execute(async (trx) => void (await trx.selectFrom('t').selectAll().execute()));
    expect(flushes.length).toBe(before + 1);
  });

  it('lets commits that arrive during a flush share the next one, which starts after them', async () => {
    const { db, raw, flushes, gate } = await table();
    const before = flushes.length;
    gate.hold = true;
    const first = db.insertInto('t').values({ id: 10, v: 'first' }).execute();
    await until(() => flushes.length === before + 1);
    // The connection is free while the first flush runs: these commit now and wait for the next.
    const resolved: number[] = [];
    const later = Array.from({ length: 10 }, (_, i) =>
      db
        .insertInto('t')
        .values({ id: 20 + i, v: 'later' })
        .execute()
        .then(() => resolved.push(tick())),
    );
    await until(() => Number(raw.prepare('select count(*) from t').pluck().get()) === 11);
    expect(resolved).toEqual([]);
    gate.hold = false;
    gate.release();
    await Promise.all([first, ...later]);
    expect(flushes.length - before).toBe(2);
    const shared = flushes[before + 1]!;
    expect(shared.ended).not.toBeNull();
    expect(resolved.every((at) => at > shared.ended!)).toBe(true);
  });

  it('fails the commit when the log cannot be flushed (the caller answers 503, nothing acknowledged)', async () => {
    const handle = open({ fail: true });
    opened.push(handle.db);
    await expect(sql`create table t (id integer primary key, v text)`.execute(handle.db)).rejects.toMatchObject({ code: 'SQLITE_IOERR_FSYNC' });
    await expect(handle.db.transaction().execute((trx) => trx.insertInto('t').values({ id: 1, v: 'x' }).execute())).rejects.toMatchObject({ code: 'SQLITE_IOERR_FSYNC' });
  });

  it('is how createDatabase opens a SQLite file; an in-memory database keeps FULL', async () => {
    const file = createDatabase(`sqlite:${join(scratch, 'app.db')}`);
    const memory = createDatabase('sqlite::memory:');
    try {
      const level = async (db: typeof file) => (await sql<{ synchronous: number }>`pragma synchronous`.execute(db.kysely)).rows[0]!.synchronous;
      expect(await level(file)).toBe(1);
      expect(await level(memory)).toBe(2);
    } finally {
      await file.close();
      await memory.close();
    }
  });
});

async function until(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met within 5 s');
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}
