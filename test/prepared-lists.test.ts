import { Kysely, type SqliteDatabase, SqliteDialect, sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { Database } from '../src/db/schema.ts';
import { openSqlite } from '../src/db/sqlite-driver.ts';
import { pieceLengths, prepareListQuery, sqlList } from '../src/db/prepared.ts';

// The fold's statements keep a few texts whatever the length of their lists (src/db/prepared.ts),
// so SQLite finds them prepared: an IN list padded to a power of two, a VALUES list in pieces. The
// answers are those of the whole list.

/** An in-memory SQLite connection that records the text of every statement it prepares. */
function database() {
  const { database: inner } = openSqlite(':memory:');
  const texts = new Set<string>();
  const recording: SqliteDatabase = {
    close: () => inner.close(),
    prepare: (text: string) => {
      texts.add(text);
      return inner.prepare(text);
    },
  };
  return { db: new Kysely<Database>({ dialect: new SqliteDialect({ database: recording }) }), texts };
}

type Row = [k: number, v: string];
// A table the schema does not know: the builders are cast.
const insertRows = prepareListQuery(2, (db, rows: Row[]) => (db as Kysely<any>).insertInto('t').values(rows.map(([k, v]) => ({ k, v }))) as never, { pieces: true });
const selectRows = prepareListQuery(1, (db, keys: [number][]) => (db as Kysely<any>).selectFrom('t').selectAll().where('k', 'in', keys.map(([k]) => k)) as never, { pieces: true });

describe('lists of any length in a few statement texts', () => {
  it('splits a long list into powers of two and a rest of at most 16', () => {
    expect(pieceLengths(250)).toEqual([128, 64, 32, 16, 10]);
    expect(pieceLengths(16)).toEqual([16]);
    expect(pieceLengths(17)).toEqual([16, 1]);
    expect(pieceLengths(512)).toEqual([512]);
    for (let n = 1; n <= 600; n++) expect(pieceLengths(n).reduce((a, b) => a + b, 0)).toBe(n);
  });

  it('inserts and selects every row of a list run in pieces, with one text per piece length', async () => {
    const { db, texts } = database();
    await sql`create table t (k integer primary key, v text not null)`.execute(db);
    let next = 0;
    for (let length = 1; length <= 300; length++) {
      const rows = Array.from({ length }, (): Row => [next, `v${next++}`]);
      await insertRows.all(db, rows);
    }
    const stored = await sql<{ n: number }>`select count(*) as n from t`.execute(db);
    expect(stored.rows[0]!.n).toBe(next);
    const keys = Array.from({ length: 250 }, (_, i): [number] => [i * 7]);
    const found = (await selectRows.all(db, keys)) as unknown as { k: number; v: string }[];
    expect(found.map((row) => row.k).sort((a, b) => a - b)).toEqual(keys.map(([k]) => k));
    expect(found.every((row) => row.v === `v${row.k}`)).toBe(true);
    // 1 to 16 as they are, then 32, 64, 128 and 256: 20 insert texts for 300 lengths.
    const inserts = [...texts].filter((text) => text.startsWith('insert'));
    expect(inserts.length).toBe(20);
    await db.destroy();
  });

  it('pads an IN list to a power of two with values of the list, so it keeps its set', async () => {
    const { db, texts } = database();
    await sql`create table t (k integer primary key)`.execute(db);
    await sql`insert into t (k) select value from json_each(${JSON.stringify(Array.from({ length: 100 }, (_, i) => i))})`.execute(db);
    for (let length = 1; length <= 100; length++) {
      const wanted = Array.from({ length }, (_, i) => i);
      const { rows } = await sql<{ n: number }>`select count(*) as n from t where k in (${sqlList(wanted)})`.execute(db);
      expect(rows[0]!.n).toBe(length);
    }
    // Lengths 1 to 100 in the texts of 1, 2, 4, ..., 128 values.
    expect([...texts].filter((text) => text.includes('count(*)')).length).toBe(8);
    expect(() => sqlList([])).toThrow();
    await db.destroy();
  });
});
